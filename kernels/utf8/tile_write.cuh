// A warp's output range, staged in shared memory, written with 16-byte stores aligned to the
// destination (scalar stores for the partial groups at the ends): kernels/prim/store_range.cuh
// with the codec's staging layouts.
#pragma once

#include "prim/store_range.cuh"
#include "utf8/common.cuh"

namespace gutf8::kern {

// Staging of 32-bit units: slot s lives at s + s/32 (lanes writing 32 consecutive slots each hit
// distinct banks).
__device__ __forceinline__ u32 stage_slot(u32 s) { return s + (s >> 5); }
inline constexpr u32 stage_u32_words = 1024 + 32 + 8;

// One warp: global units [gb, gb + cnt) are staged at slots 0 .. cnt-1 (stage_slot layout);
// dst = out + gb - s0 is 16-byte aligned (s0 = dst word address of gb, mod 4).
__device__ __forceinline__ void write_staged_u32(const u32* st, u32 s0, u32 cnt, u32* dst) {
  prim::detail::store_range<32>(
      dst, s0, cnt, threadIdx.x & 31u,
      [&](u32 j) {
        return make_uint4(st[stage_slot(j)], st[stage_slot(j + 1)], st[stage_slot(j + 2)], st[stage_slot(j + 3)]);
      },
      [&](u32 j) { return st[stage_slot(j)]; });
}

// One warp: bytes [0, cnt) of the word array w (4 readable bytes after them) to dst[s0 ..).
__device__ __forceinline__ void write_bytes_from(const u32* w, u32 s0, u32 cnt, u8* dst) {
  prim::detail::store_range<32>(
      dst, s0, cnt, threadIdx.x & 31u, [&](u32 b) { return prim::detail::read16(w, b); },
      [&](u32 b) { return static_cast<u8>(prim::detail::read4(w, b)); });
}

// One warp: global bytes [gb, gb + cnt) are staged at st[0 .. cnt) (16-byte aligned, 4 readable
// bytes of slack after them); dst = out + gb - s0 is 16-byte aligned (s0 = address of gb mod 16).
__device__ __forceinline__ void write_staged_bytes(const u8* st, u32 s0, u32 cnt, u8* dst) {
  write_bytes_from(reinterpret_cast<const u32*>(st), s0, cnt, dst);
}

// One lane's repaired bytes at st[k ..): the bytes of its 32 (x) marked in copy, and EF BF BD
// (U+FFFD) for each byte marked in repl (an error unit's first byte). Returns the end.
__device__ __forceinline__ u32 stage_repaired_bytes(const u32 (&x)[8], u32 copy, u32 repl, u8* st, u32 k) {
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const u8 b = static_cast<u8>(x[i / 4] >> (8 * (i % 4)));
    if ((copy >> i) & 1u) {
      st[k++] = b;
    } else if ((repl >> i) & 1u) {
      st[k] = 0xEF;
      st[k + 1] = 0xBF;
      st[k + 2] = 0xBD;
      k += 3;
    }
  }
  return k;
}

}  // namespace gutf8::kern
