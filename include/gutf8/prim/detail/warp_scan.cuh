// Warp-level building blocks (shuffle based, full 32-lane warps, 1-D thread blocks).
//
// Usage (all 32 lanes of the warp must call, converged):
//   using namespace gutf8::prim::detail;
//   T inc   = warp_inclusive_scan(v, op);      // lane i: v_0 op v_1 op ... op v_i
//   T head  = warp_inclusive_scan<8>(v, op);   // the same over lanes 0..7 only (others: garbage)
//   T total = warp_reduce(v, op);              // v_0 op ... op v_31, in EVERY lane
//   T all   = warp_allreduce(v, op);           // the same for a COMMUTATIVE op, by butterfly
//   T part  = warp_inclusive_scan_from(v, op, first); // lane i >= first: v_first op ... op v_i
//   T x     = warp_shfl_idx(v, src_lane);      // broadcast / gather of any trivially copyable T
//
// `op` is any associative binary functor; it is never assumed commutative: operands are always
// combined as op(earlier, later). T is any trivially copyable type; values wider than 4 bytes
// (or of odd size) are moved through the shuffle unit as 32-bit words.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gutf8::prim::detail {

inline constexpr int warp_threads = 32;
inline constexpr unsigned full_warp_mask = 0xffffffffu;

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned warp_id() { return threadIdx.x >> 5; }

namespace shfl_impl {
template <class T>
inline constexpr int words = static_cast<int>((sizeof(T) + 3) / 4);

template <class T, class F>
__device__ __forceinline__ T by_words(const T& v, F&& f) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffled types must be trivially copyable");
  if constexpr (sizeof(T) == 4) {
    unsigned w;
    std::memcpy(&w, &v, 4);
    w = f(w);
    T r;
    std::memcpy(&r, &w, 4);
    return r;
  } else {
    unsigned w[words<T>] = {};
    std::memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int i = 0; i < words<T>; ++i) w[i] = f(w[i]);
    T r;
    std::memcpy(&r, w, sizeof(T));
    return r;
  }
}
}  // namespace shfl_impl

template <class T>
__device__ __forceinline__ T warp_shfl_up(const T& v, unsigned delta, unsigned mask = full_warp_mask) {
  return shfl_impl::by_words(v, [&](unsigned w) { return __shfl_up_sync(mask, w, delta); });
}
template <class T>
__device__ __forceinline__ T warp_shfl_down(const T& v, unsigned delta,
                                            unsigned mask = full_warp_mask) {
  return shfl_impl::by_words(v, [&](unsigned w) { return __shfl_down_sync(mask, w, delta); });
}
template <class T>
__device__ __forceinline__ T warp_shfl_xor(const T& v, unsigned mask_bits, unsigned mask = full_warp_mask) {
  return shfl_impl::by_words(v, [&](unsigned w) { return __shfl_xor_sync(mask, w, static_cast<int>(mask_bits)); });
}
template <class T>
__device__ __forceinline__ T warp_shfl_idx(const T& v, unsigned src, unsigned mask = full_warp_mask) {
  return shfl_impl::by_words(v, [&](unsigned w) { return __shfl_sync(mask, w, static_cast<int>(src)); });
}

// Inclusive scan across the first Lanes lanes (Kogge-Stone over shuffles, log2(Lanes) steps);
// lanes at or past Lanes compute garbage. All 32 lanes must call.
template <unsigned Lanes = 32, class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T v, Op op) {
  static_assert(Lanes >= 1 && Lanes <= 32, "a warp has 32 lanes");
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < Lanes; d <<= 1) {
    const T t = warp_shfl_up(v, d);
    if (lane >= d) v = op(t, v);
  }
  return v;
}

// Inclusive scan that ignores lanes below `first` (lanes < first return their input unchanged).
// Lane 31 ends up with v_first op ... op v_31. Used by the windowed look-back.
template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan_from(T v, Op op, unsigned first) {
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const T t = warp_shfl_up(v, d);
    if (lane >= first + d) v = op(t, v);
  }
  return v;
}

// Exclusive scan without an initial value: lane 0's result is unspecified (it gets its own input).
// `total` receives the warp-wide reduction in every lane.
template <class T, class Op>
__device__ __forceinline__ T warp_exclusive_scan(T v, Op op, T& total) {
  const T inc = warp_inclusive_scan(v, op);
  total = warp_shfl_idx(inc, 31);
  const T ex = warp_shfl_up(inc, 1);
  return lane_id() == 0 ? v : ex;
}

// Reduction of the 32 lanes in lane order; the result is valid in every lane.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  return warp_shfl_idx(warp_inclusive_scan(v, op), 31);
}

// Reduction of the 32 lanes for a commutative op (sum, min, max): a butterfly of 5 xor shuffles
// leaves the result in every lane without the final broadcast.
template <class T, class Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op) {
#pragma unroll
  for (unsigned d = 16; d > 0; d >>= 1) v = op(v, warp_shfl_xor(v, d));
  return v;
}

}  // namespace gutf8::prim::detail
