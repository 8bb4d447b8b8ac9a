// gutf8 primitives: LSD radix sort of unsigned keys (uint32_t / uint64_t) and key-value pairs,
// header-only CUDA, CUB conventions (temp-size query with d_temp == nullptr, async on `stream`,
// no allocation or synchronisation, errors returned).
//
//   gutf8::prim::radix_sort_keys(d_temp, temp_bytes, d_keys_in, d_keys_out, n);
//   gutf8::prim::radix_sort_pairs(d_temp, temp_bytes, d_keys_in, d_keys_out, d_vals_in, d_vals_out,
//                                 n, begin_bit, end_bit, stream, sort_algorithm::onesweep);
//
// * Ascending order of the bits [begin_bit, end_bit) of each key; the sort is stable, so keys that
//   agree on those bits (and their values) keep their input order. Bits outside the range are
//   carried along unchanged.
// * The inputs are not modified; the temporary storage holds the alternate buffers. d_keys_out may
//   equal d_keys_in (and d_vals_out d_vals_in).
// * n <= 2^32 - 1 (32-bit positions); the `cub` reference takes n <= 2^31 - 1.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cub/device/device_radix_sort.cuh>

#include "gutf8/prim/detail/radix_sort_digit.cuh"
#include "gutf8/prim/detail/radix_sort_onesweep.cuh"
#include "gutf8/prim/detail/radix_sort_split.cuh"

namespace gutf8::prim {

enum class sort_algorithm {
  split_bit,  // 1 bit per pass: scan + split scatter (GPU Gems 3 ch. 39)
  digit,      // 4-bit digits: histogram, scan of digit counts, block-ranked scatter
  onesweep,   // 8-bit digits: one histogram pass, then one look-back pass per digit (production)
  cub,        // cub::DeviceRadixSort (reference)
};

inline const char* to_string(sort_algorithm a) {
  switch (a) {
    case sort_algorithm::split_bit: return "split_bit";
    case sort_algorithm::digit: return "digit";
    case sort_algorithm::onesweep: return "onesweep";
    case sort_algorithm::cub: return "cub";
  }
  return "?";
}

namespace detail {
template <class K, class V, bool HasValues>
cudaError_t sort_dispatch(void* d_temp, std::size_t& temp_bytes, const K* ki, K* ko, const V* vi, V* vo,
                          std::size_t n, int begin_bit, int end_bit, cudaStream_t s, sort_algorithm alg) {
  static_assert(std::is_same_v<K, std::uint32_t> || std::is_same_v<K, std::uint64_t>,
                "radix sort keys are uint32_t or uint64_t");
  if (begin_bit < 0 || end_bit > static_cast<int>(8 * sizeof(K)) || begin_bit > end_bit) return cudaErrorInvalidValue;
  switch (alg) {
    case sort_algorithm::split_bit:
      return split_sort<K, V, HasValues>(d_temp, temp_bytes, ki, ko, vi, vo, n, begin_bit, end_bit, s);
    case sort_algorithm::digit:
      return digit_sort<K, V, HasValues>(d_temp, temp_bytes, ki, ko, vi, vo, n, begin_bit, end_bit, s);
    case sort_algorithm::onesweep:
      return onesweep_sort_default<K, V, HasValues>(d_temp, temp_bytes, ki, ko, vi, vo, n, begin_bit, end_bit, s);
    case sort_algorithm::cub: {
      if (n > 0x7fffffffu) return cudaErrorInvalidValue;
      if (d_temp != nullptr && n == 0) return cudaSuccess;
      const int m = static_cast<int>(n);
      cudaError_t e;
      if constexpr (HasValues)
        e = ::cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, ki, ko, vi, vo, m, begin_bit, end_bit, s);
      else
        e = ::cub::DeviceRadixSort::SortKeys(d_temp, temp_bytes, ki, ko, m, begin_bit, end_bit, s);
      if (d_temp == nullptr && temp_bytes == 0) temp_bytes = 1;
      return e;
    }
  }
  return cudaErrorInvalidValue;
}
}  // namespace detail

template <class K>
cudaError_t radix_sort_keys(void* d_temp, std::size_t& temp_bytes, const K* d_keys_in, K* d_keys_out,
                            std::size_t n, int begin_bit = 0, int end_bit = static_cast<int>(8 * sizeof(K)),
                            cudaStream_t stream = nullptr, sort_algorithm alg = sort_algorithm::onesweep) {
  return detail::sort_dispatch<K, detail::no_values, false>(d_temp, temp_bytes, d_keys_in, d_keys_out, nullptr,
                                                            nullptr, n, begin_bit, end_bit, stream, alg);
}

template <class K, class V>
cudaError_t radix_sort_pairs(void* d_temp, std::size_t& temp_bytes, const K* d_keys_in, K* d_keys_out,
                             const V* d_vals_in, V* d_vals_out, std::size_t n, int begin_bit = 0,
                             int end_bit = static_cast<int>(8 * sizeof(K)), cudaStream_t stream = nullptr,
                             sort_algorithm alg = sort_algorithm::onesweep) {
  return detail::sort_dispatch<K, V, true>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_vals_in, d_vals_out, n,
                                           begin_bit, end_bit, stream, alg);
}

}  // namespace gutf8::prim
