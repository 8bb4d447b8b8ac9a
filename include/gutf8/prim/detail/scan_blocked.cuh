// Shared-memory blocked scan (multi-pass, recursive): the classic pre-look-back GPU scan.
//   1. reduce:  each block reduces its tile -> sums[tile]                  (reads n)
//   2. recurse: inclusive scan of sums in place (same algorithm, n/tile)  (tiny)
//   3. scan:    each block scans its tile in shared memory and adds back the scanned sum of the
//               tiles before it                                            (reads n, writes n)
// This is the reduce-then-scan ordering of "scan blocks, scan block sums, add back": the tile
// prefix is added while the tile is still in shared memory, saving a full extra read+write of
// the array compared with scan-then-propagate (3n instead of 4n memory traffic).
// Block-level scan: the tile is staged through shared memory with coalesced 16-byte global
// accesses; each thread then scans `items` consecutive elements serially. The staging array is
// padded by one element every 32 (index i -> i + i/32), which makes both the striped staging
// accesses and the per-thread consecutive accesses bank-conflict-free for 4-byte types (16 items
// per thread). Thread totals are combined with block_scan (warp shuffles).
#pragma once

#include <cuda_runtime.h>

#include "block_scan.cuh"
#include "common.cuh"
#include "tuning.cuh"

namespace gutf8::prim::detail {

template <class P>
__device__ __forceinline__ int blocked_pad(int i) {
  return i + (i >> 5);
}

// Coalesced load of a tile into padded shared memory (vectorised when the tile is full).
template <class P, class T>
__device__ __forceinline__ void blocked_stage_in(const T* in, std::size_t base, std::size_t n, T* sm,
                                                 bool vec_ok) {
  constexpr int V = vec_items<T>;
  const bool full = vec_ok && base + P::tile <= n;
  if (full && P::tile % (P::threads * V) == 0) {
#pragma unroll
    for (int r = 0; r < P::tile / (P::threads * V); ++r) {
      const int i = (r * P::threads + static_cast<int>(threadIdx.x)) * V;
      T v[V];
      load_vec<V>(in + base + i, v);
#pragma unroll
      for (int j = 0; j < V; ++j) sm[blocked_pad<P>(i + j)] = v[j];
    }
  } else {
    for (int i = static_cast<int>(threadIdx.x); i < P::tile; i += P::threads)
      if (base + i < n) sm[blocked_pad<P>(i)] = in[base + i];
  }
}

template <class P, class T>
__device__ __forceinline__ void blocked_stage_out(T* out, std::size_t base, std::size_t n, const T* sm,
                                                  bool vec_ok) {
  constexpr int V = vec_items<T>;
  const bool full = vec_ok && base + P::tile <= n;
  if (full && P::tile % (P::threads * V) == 0) {
#pragma unroll
    for (int r = 0; r < P::tile / (P::threads * V); ++r) {
      const int i = (r * P::threads + static_cast<int>(threadIdx.x)) * V;
      T v[V];
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = sm[blocked_pad<P>(i + j)];
      store_vec<V>(out + base + i, v);
    }
  } else {
    for (int i = static_cast<int>(threadIdx.x); i < P::tile; i += P::threads)
      if (base + i < n) out[base + i] = sm[blocked_pad<P>(i)];
  }
}

template <class P, class T>
struct blocked_smem {
  T items[P::tile + P::tile / 32];
  typename block_scan<T, P::threads>::storage scan;
};

template <class P, class T, class Op>
__global__ void __launch_bounds__(P::threads)
    blocked_reduce_kernel(const T* in, T* sums, std::size_t n, Op op, bool vec_ok) {
  __shared__ blocked_smem<P, T> sm;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * P::tile;
  blocked_stage_in<P>(in, base, n, sm.items, vec_ok);
  __syncthreads();
  const int first = static_cast<int>(threadIdx.x) * P::items;
  const std::size_t valid = n - base < static_cast<std::size_t>(P::tile) ? n - base : P::tile;
  // Threads past the end reuse element 0 of the tile; only valid elements enter the total
  // because a thread's run is a prefix of valid elements or starts past the end.
  T acc = sm.items[blocked_pad<P>(first < static_cast<int>(valid) ? first : 0)];
#pragma unroll
  for (int j = 1; j < P::items; ++j)
    if (first + j < static_cast<int>(valid)) acc = op(acc, sm.items[blocked_pad<P>(first + j)]);
  // Threads whose run starts past the end hold junk but come after every valid run, so the
  // inclusive value of the last owning thread is exactly the tile's reduction.
  T agg;
  const T inc = block_scan<T, P::threads>(sm.scan).inclusive(acc, op, agg);
  const int owners = static_cast<int>((valid + P::items - 1) / P::items);
  if (static_cast<int>(threadIdx.x) == owners - 1) sums[blockIdx.x] = inc;
}

template <class P, class T, class Op>
__global__ void __launch_bounds__(P::threads)
    blocked_scan_kernel(const T* in, T* out, std::size_t n, const T* tile_incl_sums, Op op,
                        bool exclusive, T init, bool vec_ok) {
  __shared__ blocked_smem<P, T> sm;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * P::tile;
  blocked_stage_in<P>(in, base, n, sm.items, vec_ok);
  __syncthreads();
  const std::size_t valid = n - base < static_cast<std::size_t>(P::tile) ? n - base : P::tile;
  const int first = static_cast<int>(threadIdx.x) * P::items;
  const int fill_idx = first < static_cast<int>(valid) ? first : 0;
  T x[P::items];
#pragma unroll
  for (int j = 0; j < P::items; ++j) {
    const int i = first + j < static_cast<int>(valid) ? first + j : fill_idx;
    x[j] = sm.items[blocked_pad<P>(i)];
  }
#pragma unroll
  for (int j = 1; j < P::items; ++j) x[j] = op(x[j - 1], x[j]);
  T agg;
  T thread_prefix = block_scan<T, P::threads>(sm.scan).exclusive(x[P::items - 1], op, agg);
  bool has = threadIdx.x != 0;
  // Tile prefix ("add back"), then init in front for the exclusive scan.
  if (blockIdx.x != 0) {
    const T tp = tile_incl_sums[blockIdx.x - 1];
    thread_prefix = has ? op(tp, thread_prefix) : tp;
    has = true;
  }
  if (exclusive) {
    thread_prefix = has ? op(init, thread_prefix) : init;
    has = true;
#pragma unroll
    for (int j = P::items - 1; j >= 1; --j) x[j] = op(thread_prefix, x[j - 1]);
    x[0] = thread_prefix;
  } else if (has) {
#pragma unroll
    for (int j = 0; j < P::items; ++j) x[j] = op(thread_prefix, x[j]);
  }
#pragma unroll
  for (int j = 0; j < P::items; ++j)
    if (first + j < static_cast<int>(valid)) sm.items[blocked_pad<P>(first + j)] = x[j];
  __syncthreads();
  blocked_stage_out<P>(out, base, n, sm.items, vec_ok);
}

// Temp bytes for the block sums of every recursion level.
template <class T>
std::size_t blocked_levels_bytes(std::size_t n) {
  using P = blocked_scan_policy<T>;
  std::size_t bytes = 0;
  while (n > static_cast<std::size_t>(P::tile)) {
    n = ceil_div(n, P::tile);
    bytes += align_up(n * sizeof(T), temp_alignment);
  }
  return bytes;
}

template <class T, class Op>
cudaError_t blocked_scan_level(const T* in, T* out, std::size_t n, Op op, bool exclusive, T init,
                               unsigned char* level_temp, cudaStream_t stream) {
  using P = blocked_scan_policy<T>;
  const std::size_t tiles = ceil_div(n, P::tile);
  constexpr int V = vec_items<T>;
  const bool vec_ok = is_aligned(in, vec_bytes<T, V>) && is_aligned(out, vec_bytes<T, V>);
  T* sums = nullptr;
  if (tiles > 1) {
    sums = reinterpret_cast<T*>(level_temp);
    blocked_reduce_kernel<P><<<static_cast<unsigned>(tiles), P::threads, 0, stream>>>(in, sums, n, op, vec_ok);
    GUTF8_PRIM_LAUNCHED();
    GUTF8_PRIM_TRY(blocked_scan_level(static_cast<const T*>(sums), sums, tiles, op, false, init,
                                      level_temp + align_up(tiles * sizeof(T), temp_alignment), stream));
  }
  blocked_scan_kernel<P><<<static_cast<unsigned>(tiles), P::threads, 0, stream>>>(
      in, out, n, static_cast<const T*>(sums), op, exclusive, init, vec_ok);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

template <class T, class Op>
cudaError_t blocked_scan(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, std::size_t n,
                         Op op, bool exclusive, T init, cudaStream_t stream) {
  const std::size_t sizes[1] = {blocked_levels_bytes<T>(n)};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr || n == 0) return cudaSuccess;
  if (ceil_div(n, blocked_scan_policy<T>::tile) > 0x7fffffffu) return cudaErrorInvalidValue;
  return blocked_scan_level(in, out, n, op, exclusive, init, static_cast<unsigned char*>(ptrs[0]), stream);
}

}  // namespace gutf8::prim::detail
