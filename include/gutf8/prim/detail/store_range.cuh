// Writing a contiguous range of a staged output with aligned 16-byte stores, by a warp or a block.
//
//   store_range<Threads>(base, s0, count, rank, group, one);
//     writes base[s0 .. s0 + count) (base 16-byte aligned): the at most 15 bytes before and after
//     the whole 16-byte groups one element per thread (one(i) = range element i), then the groups
//     with one 16-byte store each (group(i) = the uint4 of range elements i, i + 1, ...);
//     Threads cooperating threads, rank = this thread's index among them (0 .. Threads-1).
//   store_staged<Threads>(dst, staged, count, rank);
//     dst[0 .. count) = staged[0 .. count), staged in 16-byte aligned shared memory with 4 readable
//     bytes after its last element.
// The edges stay out of the group loop: in it they made every thread run both branches in the
// iterations that hold them (the codec's encoder: 78 instructions per edge beside 27 per group).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace gutf8::prim::detail {

// A 16-byte store to 16-byte aligned global memory. Written out because a uint4 assignment through
// a cast pointer was split into four 32-bit stores where the loop also has a scalar branch (LLVM
// merges the two and loses the alignment; seen in the codec's decoder SASS: 4x the store
// instructions). No "memory" clobber: the kernels never read what they store here, so
// shared-memory loads may still be scheduled across it.
__device__ __forceinline__ void store16(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}

// 32 bytes (a lane's words x) at p, 16-byte aligned: two 16-byte stores.
__device__ __forceinline__ void store32(void* p, const unsigned (&x)[8]) {
  store16(p, make_uint4(x[0], x[1], x[2], x[3]));
  store16(static_cast<unsigned char*>(p) + 16, make_uint4(x[4], x[5], x[6], x[7]));
}

// 4 bytes at byte offset b of a word array (the word after b's word must be readable).
__device__ __forceinline__ unsigned read4(const unsigned* w, unsigned b) {
  return __funnelshift_r(w[b >> 2], w[(b >> 2) + 1], 8 * b);  // the shift is taken mod 32
}
// 16 bytes at byte offset b of a word array (4 readable bytes after them).
__device__ __forceinline__ uint4 read16(const unsigned* w, unsigned b) {
  return make_uint4(read4(w, b), read4(w, b + 4), read4(w, b + 8), read4(w, b + 12));
}

template <unsigned Threads, class T, class Group, class One>
__device__ __forceinline__ void store_range(T* base, unsigned s0, unsigned count, unsigned rank, Group group, One one) {
  static_assert(16 % sizeof(T) == 0, "16-byte groups of whole elements");
  constexpr unsigned per = 16 / sizeof(T);
  static_assert(per <= Threads, "one thread per edge element");
  const unsigned end = s0 + count;
  const unsigned g_lo = (s0 + per - 1) / per, g_hi = end / per;
  const unsigned head_end = min(per * g_lo, end), tail_start = max(per * g_hi, head_end);
  if (rank < per) {
    if (s0 + rank < head_end) base[s0 + rank] = one(rank);
    if (tail_start + rank < end) base[tail_start + rank] = one(tail_start + rank - s0);
  }
  // Not unrolled: unrolling kept several groups of loads in flight for little gain and cost the
  // codec's encoder 8 registers (40 -> 48, one block per SM fewer).
#pragma unroll 1
  for (unsigned g = g_lo + rank; g < g_hi; g += Threads) store16(base + per * g, group(per * g - s0));
}

template <unsigned Threads, class T>
__device__ __forceinline__ void store_staged(T* dst, const T* staged, unsigned count, unsigned rank) {
  if constexpr (16 % sizeof(T) != 0 || alignof(T) != sizeof(T)) {
    for (unsigned i = rank; i < count; i += Threads) dst[i] = staged[i];
  } else {
    const auto s0 = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(dst) & 15u) / sizeof(T));
    const auto* words = reinterpret_cast<const unsigned*>(staged);
    store_range<Threads>(
        dst - s0, s0, count, rank,
        [&](unsigned i) {
          if constexpr (sizeof(T) % 4 == 0) {
            const unsigned* w = words + i * (sizeof(T) / 4);
            return make_uint4(w[0], w[1], w[2], w[3]);
          } else {
            return read16(words, i * static_cast<unsigned>(sizeof(T)));
          }
        },
        [&](unsigned i) { return staged[i]; });
  }
}

}  // namespace gutf8::prim::detail
