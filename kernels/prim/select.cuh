// Stream compaction (stable select by flag array or by predicate).
//
// (a) select_by_scan: the textbook three steps on any scan algorithm:
//       map:     offs[i] = selected(i) ? 1 : 0                       (O = u32, or u64 past 2^32)
//       scan:    exclusive sum of offs, in place, with the chosen scan algorithm
//       scatter: out[offs[i]] = in[i] for selected i; the last element writes the count.
// (b) select_fused: single pass with decoupled look-back over per-tile selection counts.
//     Each thread holds 4 rows x 16 bytes of items (warp-striped, as the look-back scan) and
//     their selection bits; the per-row counts of a lane are packed into one 64-bit word (16 bits
//     per row), so ONE 64-bit warp shuffle scan ranks all rows at once. Warp counts meet in
//     shared memory, the tile's global offset comes from the look-back, the selected items are
//     compacted into shared memory in order and written out with coalesced stores; the last tile
//     writes the total count to device memory. Reads n items (+ n flags), writes the selected.
#pragma once

#include <cuda_runtime.h>

#include "block_scan.cuh"
#include "common.cuh"
#include "policy.cuh"
#include "tile_lookback.cuh"
#include "warp_scan.cuh"

namespace gutf8::prim::detail {

// ---- selectors ----
template <class FlagT>
struct flag_selector {
  const FlagT* flags;
  template <int V, class T>
  __device__ __forceinline__ void select_vec(std::size_t i, const T (&)[V], bool (&s)[V]) const {
    FlagT f[V];
    load_vec<V>(flags + i, f);
#pragma unroll
    for (int j = 0; j < V; ++j) s[j] = f[j] != FlagT(0);
  }
  template <class T>
  __device__ __forceinline__ bool select_one(std::size_t i, const T&) const {
    return flags[i] != FlagT(0);
  }
  template <int V>
  bool vector_ok() const {
    return is_aligned(flags, vec_bytes<FlagT, V>);
  }
};

template <class Pred>
struct pred_selector {
  Pred pred;
  template <int V, class T>
  __device__ __forceinline__ void select_vec(std::size_t, const T (&x)[V], bool (&s)[V]) const {
#pragma unroll
    for (int j = 0; j < V; ++j) s[j] = static_cast<bool>(pred(x[j]));
  }
  template <class T>
  __device__ __forceinline__ bool select_one(std::size_t, const T& x) const {
    return static_cast<bool>(pred(x));
  }
  template <int V>
  bool vector_ok() const {
    return true;
  }
};

// ---- (a) flags -> scan -> scatter ----
inline constexpr int select_ew_items = 4;

template <class O, class T, class Sel>
__global__ void __launch_bounds__(elementwise_policy::threads)
    select_map_kernel(const T* in, Sel sel, O* offs, std::size_t n) {
  constexpr int B = elementwise_policy::threads;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * B * select_ew_items + threadIdx.x;
#pragma unroll
  for (int j = 0; j < select_ew_items; ++j) {
    const std::size_t i = base + static_cast<std::size_t>(j) * B;
    if (i < n) offs[i] = sel.select_one(i, in[i]) ? O(1) : O(0);
  }
}

template <class O, class T, class Sel, class NumT>
__global__ void __launch_bounds__(elementwise_policy::threads)
    select_scatter_kernel(const T* in, Sel sel, const O* offs, T* out, NumT* num_selected,
                          std::size_t n) {
  constexpr int B = elementwise_policy::threads;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * B * select_ew_items + threadIdx.x;
#pragma unroll
  for (int j = 0; j < select_ew_items; ++j) {
    const std::size_t i = base + static_cast<std::size_t>(j) * B;
    if (i < n) {
      const T x = in[i];
      const bool s = sel.select_one(i, x);
      const O o = offs[i];
      if (s) out[o] = x;
      if (i == n - 1) *num_selected = static_cast<NumT>(o + (s ? 1 : 0));
    }
  }
}

// ScanFn: cudaError_t(void* temp, size_t& bytes, const O* in, O* out, size_t n, cudaStream_t)
// computing an exclusive sum.
template <class O, class T, class Sel, class NumT, class ScanFn>
cudaError_t select_by_scan(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                           NumT* num_selected, std::size_t n, cudaStream_t stream, ScanFn scan) {
  std::size_t scan_bytes = 0;
  GUTF8_PRIM_TRY(scan(nullptr, scan_bytes, static_cast<const O*>(nullptr), static_cast<O*>(nullptr), n, stream));
  const std::size_t sizes[2] = {n * sizeof(O), scan_bytes};
  void* ptrs[2];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr) return cudaSuccess;
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(NumT), stream);
  O* offs = static_cast<O*>(ptrs[0]);
  constexpr unsigned B = elementwise_policy::threads;
  const auto grid = static_cast<unsigned>(ceil_div(n, std::size_t{B} * select_ew_items));
  select_map_kernel<<<grid, B, 0, stream>>>(in, sel, offs, n);
  GUTF8_PRIM_LAUNCHED();
  GUTF8_PRIM_TRY(scan(ptrs[1], scan_bytes, static_cast<const O*>(offs), offs, n, stream));
  select_scatter_kernel<<<grid, B, 0, stream>>>(in, sel, static_cast<const O*>(offs), out, num_selected, n);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

// ---- (b) fused single pass ----
struct plus_op {
  template <class X>
  __device__ __forceinline__ X operator()(const X& a, const X& b) const {
    return a + b;
  }
};

template <class P, class O, class T, class Sel, class NumT>
__global__ void __launch_bounds__(P::threads)
    select_fused_kernel(const T* in, Sel sel, T* out, NumT* num_selected, std::size_t n,
                        tile_state<O> state, bool vec_ok) {
  constexpr int B = P::threads;
  constexpr int V = P::vec;
  constexpr int K = P::vectors;
  constexpr int W = B / warp_threads;
  static_assert(K <= 4 && warp_threads * V < 65536, "row counts are packed 16 bits x 4 rows");
  __shared__ T staged[P::tile];
  __shared__ unsigned warp_counts[W];
  __shared__ typename tile_prefix<O, B>::storage lb;

  const unsigned tile = blockIdx.x;
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const std::size_t tile_base = static_cast<std::size_t>(tile) * P::tile;
  const std::size_t warp_base = tile_base + static_cast<std::size_t>(warp) * (warp_threads * K * V);
  const bool full = vec_ok && tile_base + P::tile <= n;

  T x[K][V];
  bool s[K][V];
  if (full) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const std::size_t i = warp_base + (k * warp_threads + lane) * V;
      load_vec<V>(in + i, x[k]);
      sel.template select_vec<V>(i, x[k], s[k]);
    }
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const std::size_t i = warp_base + (k * warp_threads + lane) * V + j;
        s[k][j] = false;
        if (i < n) {
          x[k][j] = in[i];
          s[k][j] = sel.select_one(i, x[k][j]);
        }
      }
  }

  unsigned long long packed = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    unsigned c = 0;
#pragma unroll
    for (int j = 0; j < V; ++j) c += s[k][j] ? 1u : 0u;
    packed |= static_cast<unsigned long long>(c) << (16 * k);
  }
  const unsigned long long incl = warp_inclusive_scan(packed, plus_op{});
  const unsigned long long excl = incl - packed;
  const unsigned long long tot = warp_shfl_idx(incl, 31);
  unsigned warp_count = 0;
  unsigned row_base[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    row_base[k] = warp_count + static_cast<unsigned>((excl >> (16 * k)) & 0xffffu);
    warp_count += static_cast<unsigned>((tot >> (16 * k)) & 0xffffu);
  }
  if (lane == 0) warp_counts[warp] = warp_count;
  __syncthreads();
  unsigned tile_count = 0, warp_prefix = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if (static_cast<unsigned>(w) == warp) warp_prefix = tile_count;
    tile_count += warp_counts[w];
  }
  O tile_offset = tile_prefix<O, B>::exclusive_prefix(state, tile, static_cast<O>(tile_count), plus_op{}, lb);
  if (tile == 0) tile_offset = 0;

#pragma unroll
  for (int k = 0; k < K; ++k) {
    unsigned r = warp_prefix + row_base[k];
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (s[k][j]) staged[r++] = x[k][j];
  }
  __syncthreads();
  T* dst = out + tile_offset;
  for (unsigned i = threadIdx.x; i < tile_count; i += B) dst[i] = staged[i];
  if (tile == gridDim.x - 1 && threadIdx.x == 0)
    *num_selected = static_cast<NumT>(tile_offset + static_cast<O>(tile_count));
}

template <class O, class T, class Sel, class NumT>
cudaError_t select_fused_impl(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                              NumT* num_selected, std::size_t n, cudaStream_t stream) {
  using P = select_policy<T>;
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t sizes[1] = {tile_state<O>::storage_bytes(tiles)};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr) return cudaSuccess;
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(NumT), stream);
  if (tiles > 0x7fffffffu) return cudaErrorInvalidValue;
  const auto state = tile_state<O>::attach(ptrs[0], tiles);
  if (tiles > 1) GUTF8_PRIM_TRY(state.reset(stream));
  const bool vec_ok = is_aligned(in, vec_bytes<T, P::vec>) && sel.template vector_ok<P::vec>();
  select_fused_kernel<P, O><<<static_cast<unsigned>(tiles), P::threads, 0, stream>>>(
      in, sel, out, num_selected, n, state, vec_ok);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

// 32-bit tile counts (one packed 64-bit status word per tile) while the total fits, else 64-bit.
template <class T, class Sel, class NumT>
cudaError_t select_fused(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                         NumT* num_selected, std::size_t n, cudaStream_t stream) {
  if (n <= 0xffffffffu)
    return select_fused_impl<unsigned>(d_temp, temp_bytes, in, sel, out, num_selected, n, stream);
  return select_fused_impl<unsigned long long>(d_temp, temp_bytes, in, sel, out, num_selected, n, stream);
}

}  // namespace gutf8::prim::detail
