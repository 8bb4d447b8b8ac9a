// Classic split-based LSD radix sort, one bit per pass (Blelloch's split primitive as in
// GPU Gems 3 ch. 39), built on the library's scan:
//   scan:    f[i] = number of keys before i whose bit is 0 (single-pass look-back exclusive
//            scan of the transformed keys: the 0/1 array is never materialised)
//   scatter: zeros = f[n-1] + (bit(key[n-1]) == 0);
//            dest(i) = bit(key[i]) ? zeros + i - f[i] : f[i]            (stable)
// Two kernels and ~7 words of traffic per key per bit (keys-only): the simplest correct GPU sort.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common.cuh"
#include "tuning.cuh"
#include "radix_tile.cuh"
#include "scan_lookback.cuh"
#include "scan_source.cuh"

namespace gutf8::prim::detail {

template <class K>
struct zero_bit {
  int bit;
  __host__ __device__ unsigned operator()(K k) const { return static_cast<unsigned>(((k >> bit) & 1u) ^ 1u); }
};

struct split_add {
  __host__ __device__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
};

template <class K, class V, bool HasValues>
__global__ void __launch_bounds__(split_sort_policy::threads)
    split_scatter_kernel(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, const unsigned* f,
                         std::size_t n, int bit) {
  constexpr int B = split_sort_policy::threads;
  __shared__ unsigned zeros_sh;
  if (threadIdx.x == 0) zeros_sh = f[n - 1] + static_cast<unsigned>(((keys_in[n - 1] >> bit) & 1u) ^ 1u);
  __syncthreads();
  const unsigned zeros = zeros_sh;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * B * split_sort_policy::items + threadIdx.x;
#pragma unroll
  for (int j = 0; j < split_sort_policy::items; ++j) {
    const std::size_t i = base + static_cast<std::size_t>(j) * B;
    if (i < n) {
      const K k = keys_in[i];
      const unsigned fi = f[i];
      const unsigned dest = ((k >> bit) & 1u) ? zeros + static_cast<unsigned>(i) - fi : fi;
      keys_out[dest] = k;
      if constexpr (HasValues) vals_out[dest] = vals_in[i];
    }
  }
}

template <class K, class V, bool HasValues>
cudaError_t split_sort(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                       const V* vals_in, V* vals_out, std::size_t n, int begin_bit, int end_bit,
                       cudaStream_t stream) {
  const int passes = end_bit - begin_bit;
  using Src = transform_source<unsigned, K, zero_bit<K>>;
  std::size_t scan_bytes = 0;
  GUTF8_PRIM_TRY(lookback_scan(nullptr, scan_bytes, Src{nullptr, zero_bit<K>{0}}, static_cast<unsigned*>(nullptr), n,
                               split_add{}, true, 0u, stream));
  const std::size_t scratch_bytes[2] = {n * sizeof(unsigned), scan_bytes};
  return run_multi_pass_sort<K, V, HasValues>(
      d_temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n, passes, scratch_bytes, stream,
      [&](auto& b, void* const* scratch) {
        auto* f = static_cast<unsigned*>(scratch[0]);
        GUTF8_PRIM_TRY(b.prepare(n, stream));
        constexpr unsigned B = split_sort_policy::threads;
        const auto grid = static_cast<unsigned>(ceil_div(n, std::size_t{B} * split_sort_policy::items));
        for (int p = 0; p < passes; ++p) {
          const int bit = begin_bit + p;
          std::size_t sb = scan_bytes;
          GUTF8_PRIM_TRY(lookback_scan(scratch[1], sb, Src{b.keys.src(p), zero_bit<K>{bit}}, f, n, split_add{}, true,
                                       0u, stream));
          split_scatter_kernel<K, V, HasValues><<<grid, B, 0, stream>>>(b.keys.src(p), b.keys.dst(p), b.vals_src(p),
                                                                        b.vals_dst(p), f, n, bit);
          GUTF8_PRIM_LAUNCHED();
        }
        return cudaSuccess;
      });
}

}  // namespace gutf8::prim::detail
