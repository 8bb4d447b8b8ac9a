// Onesweep-style LSD radix sort (Adinets & Merrill 2022), production variant.
//   1. histogram: ONE read of the keys builds the 256-bin histograms of every 8-bit digit
//      (shared-memory atomics per block, one global atomic per bin per block).
//   2. bin scan: one block per digit position turns counts into global bin starts.
//   3. one kernel per digit: each block ranks its tile (radix_tile.cuh: warp match ranking into
//      shared memory), publishes its 256 per-digit counts, and thread d walks back over the
//      preceding tiles' status words of digit d (decoupled look-back: aggregate -> keep adding,
//      inclusive -> stop) to find where its run of digit d goes; then writes keys (and values)
//      in digit-sorted runs. Tile 0 seeds the chains with the global bin starts.
// Traffic per digit: read keys (+values) once, write once. Tiles are blocks (blockIdx order).
// Status words are 64-bit {epoch(pass) << 2 | kind : 32 | value : 32}; all passes share one
// array that is cleared ONCE per sort: a word from an earlier pass has a smaller epoch and reads
// as "not yet published". Positions are 32-bit: n <= 2^32 - 1.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "block_scan.cuh"
#include "common.cuh"
#include "policy.cuh"
#include "radix_tile.cuh"

namespace gutf8::prim::detail {

inline constexpr int onesweep_bins = 256;

template <class K, int Threads>
__global__ void __launch_bounds__(Threads)
    onesweep_histogram_kernel(const K* keys, std::size_t n, unsigned* hist, int begin_bit, int end_bit,
                              int passes, bool vec_ok) {
  constexpr int MaxPasses = static_cast<int>(sizeof(K));
  constexpr int V = vec_items<K>;
  __shared__ unsigned sh[MaxPasses * onesweep_bins];
  for (int i = static_cast<int>(threadIdx.x); i < passes * onesweep_bins; i += Threads) sh[i] = 0;
  __syncthreads();
  auto count = [&](K k) {
    for (int p = 0; p < passes; ++p) {
      const int shift = begin_bit + 8 * p;
      const int bits = end_bit - shift < 8 ? end_bit - shift : 8;
      atomicAdd(&sh[p * onesweep_bins + radix_digit(k, shift, (1u << bits) - 1u)], 1u);
    }
  };
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * Threads;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * Threads + threadIdx.x;
  std::size_t scalar_from = 0;
  if (vec_ok) {
    // 4 independent 16-byte loads in flight per thread before the shared-memory atomics
    constexpr int U = 4;
    const std::size_t nv = n / V;
    for (std::size_t v = first; v < nv; v += U * stride) {
      K k[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v + u * stride < nv) load_vec<V>(keys + (v + u * stride) * V, k[u]);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v + u * stride < nv)
#pragma unroll
          for (int j = 0; j < V; ++j) count(k[u][j]);
    }
    scalar_from = nv * V;
  }
  for (std::size_t i = scalar_from + first; i < n; i += stride) count(keys[i]);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < passes * onesweep_bins; i += Threads)
    if (sh[i]) atomicAdd(&hist[i], sh[i]);
}

// One block per digit position: exclusive scan of its 256 bins, in place.
__global__ void __launch_bounds__(onesweep_bins) onesweep_bin_scan_kernel(unsigned* hist) {
  __shared__ block_scan<unsigned, onesweep_bins>::storage st;
  unsigned* h = hist + blockIdx.x * onesweep_bins;
  unsigned total;
  struct add {
    __device__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
  };
  h[threadIdx.x] = block_scan<unsigned, onesweep_bins>(st).exclusive(h[threadIdx.x], 0u, add{}, total);
}

struct onesweep_offsets {
  unsigned long long* status;  // [tiles][256] of this sort (shared by all passes)
  const unsigned* bin_start;   // [256] global starts of this pass's digits
  unsigned epoch;              // pass index
  unsigned tile;

  static constexpr unsigned kind_aggregate = 1, kind_inclusive = 2;
  __device__ __forceinline__ void store(unsigned d, unsigned kind, unsigned v) const {
    const unsigned long long w =
        (static_cast<unsigned long long>((epoch << 2) | kind) << 32) | v;
    ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
        status[static_cast<std::size_t>(tile) * onesweep_bins + d])
        .store(w, ::cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ void publish(unsigned d, unsigned count) const {
    if (tile == 0) store(d, kind_inclusive, bin_start[d] + count);
    else store(d, kind_aggregate, count);
  }
  __device__ __forceinline__ unsigned offset(unsigned d, unsigned count) const {
    if (tile == 0) return bin_start[d];
    unsigned sum = 0;
    for (unsigned t = tile - 1;; --t) {
      unsigned long long w;
      do {
        w = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
                status[static_cast<std::size_t>(t) * onesweep_bins + d])
                .load(::cuda::memory_order_relaxed);
      } while ((static_cast<unsigned>(w >> 32) >> 2) != epoch || (static_cast<unsigned>(w >> 32) & 3u) == 0);
      sum += static_cast<unsigned>(w);
      if ((static_cast<unsigned>(w >> 32) & 3u) == kind_inclusive) break;
    }
    store(d, kind_inclusive, sum + count);
    return sum;
  }
};

template <class K, class V, bool HasValues, class P>
__global__ void __launch_bounds__(P::threads, P::min_blocks)
    onesweep_pass_kernel(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, std::size_t n,
                         int shift, unsigned mask, unsigned long long* status, const unsigned* bin_start,
                         unsigned epoch) {
  extern __shared__ __align__(16) unsigned char onesweep_smem[];
  onesweep_offsets off{status, bin_start, epoch, blockIdx.x};
  radix_tile<K, V, HasValues, P::threads, P::items, P::radix_bits>::run(
      keys_in, keys_out, vals_in, vals_out, n, shift, mask, off, onesweep_smem);
}

template <class K, class V, bool HasValues>
cudaError_t onesweep_sort(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                          const V* vals_in, V* vals_out, std::size_t n, int begin_bit, int end_bit,
                          cudaStream_t stream) {
  using P = onesweep_policy<K>;
  using tile_t = radix_tile<K, V, HasValues, P::threads, P::items, P::radix_bits>;
  const int passes = (end_bit - begin_bit + P::radix_bits - 1) / P::radix_bits;
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t hist_bytes = align_up(sizeof(unsigned) * onesweep_bins * sizeof(K), temp_alignment);
  const std::size_t sizes[3] = {
      hist_bytes + tiles * onesweep_bins * sizeof(unsigned long long),  // cleared together
      passes > 0 ? n * sizeof(K) : 0, (passes > 0 && HasValues) ? n * sizeof(V) : 0};
  void* ptrs[3];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr || n == 0) return cudaSuccess;
  if (n > 0xffffffffu) return cudaErrorInvalidValue;
  if (passes == 0) {
    if (keys_out != keys_in)
      GUTF8_PRIM_TRY(cudaMemcpyAsync(keys_out, keys_in, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    if constexpr (HasValues)
      if (vals_out != vals_in)
        GUTF8_PRIM_TRY(cudaMemcpyAsync(vals_out, vals_in, n * sizeof(V), cudaMemcpyDeviceToDevice, stream));
    return cudaSuccess;
  }
  auto* hist = static_cast<unsigned*>(ptrs[0]);
  auto* status = reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ptrs[0]) + hist_bytes);
  GUTF8_PRIM_TRY(cudaMemsetAsync(ptrs[0], 0, sizes[0], stream));

  // 1-2: all digit histograms in one read, then their exclusive scans
  int device = 0, sms = 0;
  GUTF8_PRIM_TRY(cudaGetDevice(&device));
  GUTF8_PRIM_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t hist_chunk = static_cast<std::size_t>(P::hist_threads) * P::hist_items;
  const auto hist_blocks = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(ceil_div(n, hist_chunk), static_cast<std::size_t>(sms) * 4)));
  onesweep_histogram_kernel<K, P::hist_threads><<<hist_blocks, P::hist_threads, 0, stream>>>(
      keys_in, n, hist, begin_bit, end_bit, passes, is_aligned(keys_in, 16));
  GUTF8_PRIM_LAUNCHED();
  onesweep_bin_scan_kernel<<<static_cast<unsigned>(passes), onesweep_bins, 0, stream>>>(hist);
  GUTF8_PRIM_LAUNCHED();

  // 3: one look-back pass per digit
  ping_pong<K> kb{keys_in, keys_out, static_cast<K*>(ptrs[1]), passes};
  ping_pong<V> vb{vals_in, vals_out, static_cast<V*>(ptrs[2]), passes};
  GUTF8_PRIM_TRY(kb.prepare(n, stream));
  if constexpr (HasValues) GUTF8_PRIM_TRY(vb.prepare(n, stream));
  auto kernel = onesweep_pass_kernel<K, V, HasValues, P>;
  GUTF8_PRIM_TRY(allow_dynamic_smem(kernel, tile_t::smem_bytes));
  for (int p = 0; p < passes; ++p) {
    const int shift = begin_bit + p * P::radix_bits;
    const int bits = std::min(P::radix_bits, end_bit - shift);
    kernel<<<static_cast<unsigned>(tiles), P::threads, tile_t::smem_bytes, stream>>>(
        kb.src(p), kb.dst(p), HasValues ? vb.src(p) : nullptr, HasValues ? vb.dst(p) : nullptr, n, shift,
        (1u << bits) - 1u, status, hist + p * onesweep_bins, static_cast<unsigned>(p));
    GUTF8_PRIM_LAUNCHED();
  }
  return cudaSuccess;
}

}  // namespace gutf8::prim::detail
