// gutf8 primitives: device-wide inclusive / exclusive scan (header-only CUDA, CUB conventions).
//
//   size_t temp_bytes = 0;
//   gutf8::prim::inclusive_scan(nullptr, temp_bytes, d_in, d_out, n, gutf8::prim::plus{}, stream);
//   cudaMalloc(&d_temp, temp_bytes);
//   cudaError_t e = gutf8::prim::inclusive_scan(d_temp, temp_bytes, d_in, d_out, n,
//                                               gutf8::prim::plus{}, stream);
//
// * Device pointers, asynchronous on `stream`, no allocation, no synchronisation; the first
//   call with d_temp == nullptr only sets temp_bytes (always >= 1). Errors are returned
//   (launch errors via cudaGetLastError after each launch).
// * T: any trivially copyable type (tested: int32, uint32, int64, uint64, float, a struct of two
//   uint32). Op: any associative __device__ functor, never assumed commutative, no identity needed.
// * exclusive_scan: out[0] = init, out[i] = init op in[0] op ... op in[i-1].
// * d_out may equal d_in (in place) for every algorithm.
// * n up to 2^31 tiles of the chosen algorithm (far beyond 2^32 elements for the default).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include <cub/device/device_scan.cuh>

#include "gutf8/prim/detail/scan_blelloch.cuh"
#include "gutf8/prim/detail/scan_blocked.cuh"
#include "gutf8/prim/detail/scan_hillis_steele.cuh"
#include "gutf8/prim/detail/scan_lookback.cuh"
#include "gutf8/prim/detail/scan_source.cuh"

namespace gutf8::prim {

enum class scan_algorithm {
  hillis_steele,       // naive: log n passes over the array, O(n log n) work
  blelloch,            // work-efficient up-sweep / down-sweep over the whole array
  blocked,             // shared-memory tiles, recursive scan of tile sums, add back
  decoupled_lookback,  // single pass, one read + one write per element (production)
  cub,                 // cub::DeviceScan (reference)
};

inline const char* to_string(scan_algorithm a) {
  switch (a) {
    case scan_algorithm::hillis_steele: return "hillis_steele";
    case scan_algorithm::blelloch: return "blelloch";
    case scan_algorithm::blocked: return "blocked";
    case scan_algorithm::decoupled_lookback: return "decoupled_lookback";
    case scan_algorithm::cub: return "cub";
  }
  return "?";
}

struct plus {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
struct maximum {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};
struct minimum {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};

namespace detail {
template <class T, class Op>
cudaError_t scan_dispatch(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, std::size_t n,
                          Op op, bool exclusive, T init, cudaStream_t s, scan_algorithm alg) {
  switch (alg) {
    case scan_algorithm::hillis_steele:
      return hillis_steele_scan(d_temp, temp_bytes, in, out, n, op, exclusive, init, s);
    case scan_algorithm::blelloch:
      return blelloch_scan(d_temp, temp_bytes, in, out, n, op, exclusive, init, s);
    case scan_algorithm::blocked:
      return blocked_scan(d_temp, temp_bytes, in, out, n, op, exclusive, init, s);
    case scan_algorithm::decoupled_lookback:
      return lookback_scan(d_temp, temp_bytes, ptr_source<T>{in}, out, n, op, exclusive, init, s);
    case scan_algorithm::cub: {
      if (d_temp != nullptr && n == 0) return cudaSuccess;
      cudaError_t e;
      // 32-bit offsets when they suffice (CUB's fast path), 64-bit beyond.
      if (n <= 0x7fffffffu) {
        const int m = static_cast<int>(n);
        e = exclusive ? ::cub::DeviceScan::ExclusiveScan(d_temp, temp_bytes, in, out, op, init, m, s)
                      : ::cub::DeviceScan::InclusiveScan(d_temp, temp_bytes, in, out, op, m, s);
      } else {
        const auto m = static_cast<long long>(n);
        e = exclusive ? ::cub::DeviceScan::ExclusiveScan(d_temp, temp_bytes, in, out, op, init, m, s)
                      : ::cub::DeviceScan::InclusiveScan(d_temp, temp_bytes, in, out, op, m, s);
      }
      if (d_temp == nullptr && temp_bytes == 0) temp_bytes = 1;
      return e;
    }
  }
  return cudaErrorInvalidValue;
}
}  // namespace detail

template <class T, class Op>
cudaError_t inclusive_scan(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                           std::size_t n, Op op, cudaStream_t stream = nullptr,
                           scan_algorithm alg = scan_algorithm::decoupled_lookback) {
  return detail::scan_dispatch(d_temp, temp_bytes, d_in, d_out, n, op, false, T{}, stream, alg);
}

template <class T, class Op>
cudaError_t exclusive_scan(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                           std::size_t n, T init, Op op, cudaStream_t stream = nullptr,
                           scan_algorithm alg = scan_algorithm::decoupled_lookback) {
  return detail::scan_dispatch(d_temp, temp_bytes, d_in, d_out, n, op, true, init, stream, alg);
}

template <class T>
cudaError_t inclusive_sum(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                          std::size_t n, cudaStream_t stream = nullptr,
                          scan_algorithm alg = scan_algorithm::decoupled_lookback) {
  return inclusive_scan(d_temp, temp_bytes, d_in, d_out, n, plus{}, stream, alg);
}

template <class T>
cudaError_t exclusive_sum(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                          std::size_t n, cudaStream_t stream = nullptr,
                          scan_algorithm alg = scan_algorithm::decoupled_lookback) {
  return exclusive_scan(d_temp, temp_bytes, d_in, d_out, n, T{}, plus{}, stream, alg);
}

// Single-pass scan of a transformed input (f(in[i]) as T), e.g. flags -> 0/1 counts, without
// materialising the transformed array. Always the decoupled look-back algorithm.
template <class T, class U, class F, class Op>
cudaError_t transform_inclusive_scan(void* d_temp, std::size_t& temp_bytes, const U* d_in, T* d_out,
                                     std::size_t n, F f, Op op, cudaStream_t stream = nullptr) {
  return detail::lookback_scan(d_temp, temp_bytes, detail::transform_source<T, U, F>{d_in, f}, d_out,
                               n, op, false, T{}, stream);
}
template <class T, class U, class F, class Op>
cudaError_t transform_exclusive_scan(void* d_temp, std::size_t& temp_bytes, const U* d_in, T* d_out,
                                     std::size_t n, T init, F f, Op op, cudaStream_t stream = nullptr) {
  return detail::lookback_scan(d_temp, temp_bytes, detail::transform_source<T, U, F>{d_in, f}, d_out,
                               n, op, true, init, stream);
}

}  // namespace gutf8::prim
