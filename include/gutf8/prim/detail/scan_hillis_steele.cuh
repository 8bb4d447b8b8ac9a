// Naive device-wide Hillis-Steele scan (1986): ceil(log2 n) passes over the whole array,
// pass d: y[i] = x[i - 2^d] op x[i] (i >= 2^d), ping-ponging between `out` and one temporary
// array so that the last pass lands in `out`. O(n log n) work, one launch per pass.
// Each thread handles `items` elements strided by the block size (coalesced, and fewer, fatter
// threads keep the many passes bandwidth-bound rather than launch/index bound). The exclusive variant is fused into the last
// pass (each element also computes its left neighbour's inclusive value).
#pragma once

#include <cuda_runtime.h>

#include "common.cuh"
#include "tuning.cuh"

namespace gutf8::prim::detail {

inline constexpr int hs_items = 4;

template <class T, class Op>
__global__ void __launch_bounds__(elementwise_policy::threads)
    hillis_steele_pass(const T* src, T* dst, std::size_t n, std::size_t d, Op op, bool last,
                       bool exclusive, T init) {
  const std::size_t first =
      static_cast<std::size_t>(blockIdx.x) * elementwise_policy::threads * hs_items + threadIdx.x;
#pragma unroll
  for (int j = 0; j < hs_items; ++j) {
    const std::size_t i = first + static_cast<std::size_t>(j) * elementwise_policy::threads;
    if (i >= n) return;
    if (last && exclusive) {
      if (i == 0) {
        dst[0] = init;
      } else {
        const std::size_t m = i - 1;
        const T v = m >= d ? op(src[m - d], src[m]) : src[m];
        dst[i] = op(init, v);
      }
    } else {
      dst[i] = i >= d ? op(src[i - d], src[i]) : src[i];
    }
  }
}

template <class T, class Op>
cudaError_t hillis_steele_scan(void* d_temp, std::size_t& temp_bytes, const T* in, T* out,
                               std::size_t n, Op op, bool exclusive, T init, cudaStream_t stream) {
  const std::size_t sizes[1] = {n * sizeof(T)};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr || n == 0) return cudaSuccess;
  T* tmp = static_cast<T*>(ptrs[0]);
  int passes = 0;
  while ((std::size_t{1} << passes) < n) ++passes;
  if (passes == 0) passes = 1;  // n == 1: one copy / shift pass
  const T* src = in;
  // pass p writes to out when (passes - 1 - p) is even, so the last pass writes to out
  if (in == out && (passes - 1) % 2 == 0) {
    GUTF8_PRIM_TRY(cudaMemcpyAsync(tmp, in, n * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    src = tmp;
  }
  const std::size_t per_block = static_cast<std::size_t>(elementwise_policy::threads) * hs_items;
  const auto blocks = static_cast<unsigned>(ceil_div(n, per_block));
  for (int p = 0; p < passes; ++p) {
    T* dst = (passes - 1 - p) % 2 == 0 ? out : tmp;
    const bool last = p + 1 == passes;
    hillis_steele_pass<<<blocks, elementwise_policy::threads, 0, stream>>>(
        src, dst, n, std::size_t{1} << p, op, last, exclusive, init);
    GUTF8_PRIM_LAUNCHED();
    src = dst;
  }
  return cudaSuccess;
}

}  // namespace gutf8::prim::detail
