// Flagged sums: counts that can say "stop here". A value is a count with one stop bit; combining
// a then b gives a when a has stopped, else a + b (the stop bit of b carries over). Scanned, every
// position gets the sum of the counts before it up to and including the first stop, and the stop
// flag once one lies before it: how a strict codec ends its output at the first error.
//
//   using f = flagged_sum<unsigned>;              // stop = bit 31, counts < 2^31
//   unsigned v = f::flag(count, has_error);
//   unsigned inc = warp_inclusive_flagged_sum(v); // = warp_inclusive_scan(v, f{})
//   f::count(x), f::stopped(x)
// The operator is associative, not commutative.
#pragma once

#include <cstdint>

#include "warp_scan.cuh"

namespace gutf8::prim::detail {

template <class U, int StopBit = 8 * static_cast<int>(sizeof(U)) - 1>
struct flagged_sum {
  using value_type = U;
  static constexpr U stop = U{1} << StopBit;
  static constexpr U count_mask = stop - 1;

  __host__ __device__ __forceinline__ U operator()(U a, U b) const { return (a & stop) ? a : a + b; }
  __host__ __device__ static constexpr U flag(U count, bool stopped) { return count | (stopped ? stop : U{0}); }
  __host__ __device__ static constexpr U count(U v) { return v & count_mask; }
  __host__ __device__ static constexpr bool stopped(U v) { return (v & stop) != 0; }
};

// The same value in another layout (e.g. a 32-bit tile-local value in a 64-bit look-back word):
//   u64 w = widen_flagged<flagged_sum<u64, 61>, flagged_sum<u32>>(v);
template <class To, class From>
__host__ __device__ __forceinline__ typename To::value_type widen_flagged(typename From::value_type v) {
  return To::flag(static_cast<typename To::value_type>(From::count(v)), From::stopped(v));
}

// Inclusive flagged scan over the first Lanes lanes: plain sums while no lane of the warp has
// stopped (a flagged combine costs three ALU instructions to the sum's one, and the codec kernels
// are ALU-bound on multibyte text). The two scans are separate branches: one loop choosing the
// combine at each step spilled 8 bytes in the decoder.
template <unsigned Lanes = 32, class U>
__device__ __forceinline__ U warp_inclusive_flagged_sum(U v) {
  using f = flagged_sum<U>;
  if (__any_sync(full_warp_mask, f::stopped(v))) return warp_inclusive_scan<Lanes>(v, f{});
  return warp_inclusive_scan<Lanes>(v, [](U a, U b) { return a + b; });
}

// warp_inclusive_flagged_sum as block_scan::exclusive_parts's WarpScan.
struct flagged_warp_scan {
  template <unsigned Lanes, class U>
  __device__ __forceinline__ static U scan(U v) {
    return warp_inclusive_flagged_sum<Lanes>(v);
  }
};

}  // namespace gutf8::prim::detail
