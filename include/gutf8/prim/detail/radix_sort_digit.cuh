// Multi-bit-digit LSD radix sort (Satish, Harris & Garland 2009 structure), 4-bit digits,
// three kernels per digit:
//   1. histogram: each block counts the 16 digits of its tile (per-warp shared-memory
//      histograms, shared atomics) and writes counts[digit * tiles + tile] (digit-major).
//   2. scan: exclusive sum over the 16 x tiles counts (the library's look-back scan): entry
//      (d, t) becomes the global offset of tile t's first key with digit d.
//   3. scatter: each block re-reads its tile, ranks keys stably by digit inside the block
//      (radix_tile.cuh: warp match ranking + shared-memory digit counters), sorts the tile in
//      shared memory and writes every digit run to its global offset (coalesced runs).
// Traffic per digit: keys read twice, written once (+ values read/written once).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "common.cuh"
#include "tuning.cuh"
#include "radix_tile.cuh"
#include "scan_lookback.cuh"

namespace gutf8::prim::detail {

template <class K, class P>
__global__ void __launch_bounds__(P::threads)
    digit_histogram_kernel(const K* keys, std::size_t n, unsigned* counts, std::size_t tiles, int shift,
                           unsigned mask) {
  constexpr int bins = 1 << P::radix_bits;
  constexpr int W = P::threads / warp_threads;
  __shared__ unsigned h[W][bins];
  for (int i = static_cast<int>(threadIdx.x); i < W * bins; i += P::threads) (&h[0][0])[i] = 0;
  __syncthreads();
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * P::tile;
  unsigned* mine = h[warp_id()];
#pragma unroll
  for (int i = 0; i < P::items; ++i) {
    const std::size_t idx = base + static_cast<std::size_t>(i) * P::threads + threadIdx.x;
    if (idx < n) atomicAdd(&mine[radix_digit(keys[idx], shift, mask)], 1u);
  }
  __syncthreads();
  if (threadIdx.x < bins) {
    unsigned c = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) c += h[w][threadIdx.x];
    counts[threadIdx.x * tiles + blockIdx.x] = c;
  }
}

struct digit_offsets {
  const unsigned* scanned;  // [bins][tiles] exclusive sums
  std::size_t tiles;
  unsigned tile;
  __device__ __forceinline__ void publish(unsigned, unsigned) const {}
  __device__ __forceinline__ unsigned offset(unsigned d, unsigned) const {
    return scanned[d * tiles + tile];
  }
};

template <class K, class V, bool HasValues, class P>
__global__ void __launch_bounds__(P::threads, P::min_blocks)
    digit_scatter_kernel(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, std::size_t n,
                         int shift, unsigned mask, const unsigned* scanned, std::size_t tiles) {
  extern __shared__ __align__(16) unsigned char digit_smem[];
  digit_offsets off{scanned, tiles, blockIdx.x};
  radix_tile<K, V, HasValues, P::threads, P::items, P::radix_bits>::run(
      keys_in, keys_out, vals_in, vals_out, n, shift, mask, off, digit_smem);
}

struct digit_add {
  __host__ __device__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
};

template <class K, class V, bool HasValues>
cudaError_t digit_sort(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                       const V* vals_in, V* vals_out, std::size_t n, int begin_bit, int end_bit,
                       cudaStream_t stream) {
  using P = digit_sort_policy<K>;
  using tile_t = radix_tile<K, V, HasValues, P::threads, P::items, P::radix_bits>;
  constexpr int bins = 1 << P::radix_bits;
  const int passes = (end_bit - begin_bit + P::radix_bits - 1) / P::radix_bits;
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t ncounts = tiles * bins;
  std::size_t scan_bytes = 0;
  GUTF8_PRIM_TRY(lookback_scan(nullptr, scan_bytes, ptr_source<unsigned>{nullptr}, static_cast<unsigned*>(nullptr),
                               ncounts, digit_add{}, true, 0u, stream));
  const std::size_t scratch_bytes[2] = {ncounts * sizeof(unsigned), scan_bytes};
  return run_multi_pass_sort<K, V, HasValues>(
      d_temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n, passes, scratch_bytes, stream,
      [&](auto& b, void* const* scratch) {
        auto* counts = static_cast<unsigned*>(scratch[0]);
        GUTF8_PRIM_TRY(b.prepare(n, stream));
        auto scatter = digit_scatter_kernel<K, V, HasValues, P>;
        GUTF8_PRIM_TRY(allow_dynamic_smem(scatter, tile_t::smem_bytes));
        for (int p = 0; p < passes; ++p) {
          const int shift = begin_bit + p * P::radix_bits;
          const int bits = std::min(P::radix_bits, end_bit - shift);
          const unsigned mask = (1u << bits) - 1u;
          digit_histogram_kernel<K, P><<<static_cast<unsigned>(tiles), P::threads, 0, stream>>>(
              b.keys.src(p), n, counts, tiles, shift, mask);
          GUTF8_PRIM_LAUNCHED();
          std::size_t sb = scan_bytes;
          GUTF8_PRIM_TRY(lookback_scan(scratch[1], sb, ptr_source<unsigned>{counts}, counts, ncounts, digit_add{},
                                       true, 0u, stream));
          scatter<<<static_cast<unsigned>(tiles), P::threads, tile_t::smem_bytes, stream>>>(
              b.keys.src(p), b.keys.dst(p), b.vals_src(p), b.vals_dst(p), n, shift, mask, counts, tiles);
          GUTF8_PRIM_LAUNCHED();
        }
        return cudaSuccess;
      });
}

}  // namespace gutf8::prim::detail
