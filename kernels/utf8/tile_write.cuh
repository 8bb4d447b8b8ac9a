// A warp's output range, staged in shared memory, written with 16-byte stores aligned to the
// destination (scalar stores for the partial groups at the ends): gutf8/prim/detail/store_range.cuh
// with the codec's staging layouts.
#pragma once

#include "gutf8/prim/detail/store_range.cuh"
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

// EF BF BD (U+FFFD, what replaces an error unit) at st[at ..).
__device__ __forceinline__ void stage_replacement(u8* st, u32 at) {
  st[at] = 0xEF;
  st[at + 1] = 0xBF;
  st[at + 2] = 0xBD;
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
      stage_replacement(st, k);
      k += 3;
    }
  }
  return k;
}

// One lane's 32 bytes unchanged at st[k ..), any k: the bytes before the first 4-byte boundary and
// after the last one alone (neighbouring lanes share those words), the others as whole words.
__device__ __forceinline__ void stage_lane_bytes(const u32 (&x)[8], u8* st, u32 k) {
  const u32 h = (0u - k) & 3u;  // bytes before the boundary
#pragma unroll
  for (u32 j = 0; j < 3; ++j)
    if (j < h) st[k + j] = static_cast<u8>(x[0] >> (8 * j));
  u32* w = reinterpret_cast<u32*>(st + k + h);
#pragma unroll
  for (int m = 0; m < 8; ++m)
    if (m < 7 || h == 0) w[m] = funnel_r(x[m], m < 7 ? x[m + 1] : 0u, 8 * h);
#pragma unroll
  for (u32 j = 1; j < 4; ++j)
    if (h != 0 && j >= h) st[k + 28 + j] = static_cast<u8>(x[7] >> (8 * j));
}

// One warp, the lanes that are not stopped: each lane's repaired bytes (stage_repaired_bytes) at
// st[k ..). Where few lanes change their bytes, the others store theirs as they are
// (stage_lane_bytes) and the warp repairs the few one at a time, lane i taking byte i: the
// byte-by-byte form costs every lane of the warp its 32 positions as soon as one lane needs it.
// warp_in: the warp's bytes in memory, read again for the few (from L1; only bytes below the
// input's end are copied).
template <u32 FewLanes>
__device__ __forceinline__ void stage_warp_repaired(const u8* warp_in, const u32 (&x)[8], u32 copy, u32 repl,
                                                    bool stopped, u8* st, u32 k) {
  const bool unchanged = !stopped && repl == 0 && copy == ~0u;
  const u32 changed = __ballot_sync(0xFFFFFFFFu, !stopped && !unchanged);
  if (static_cast<u32>(popc(changed)) > FewLanes) {
    if (!stopped) stage_repaired_bytes(x, copy, repl, st, k);
    return;
  }
  if (unchanged) stage_lane_bytes(x, st, k);
  const u32 lane = threadIdx.x & 31u, below = below_bit(lane);
  for (u32 m = changed; m != 0; m &= m - 1) {
    const u32 src = static_cast<u32>(lowest_bit(m));
    const u32 c = __shfl_sync(0xFFFFFFFFu, copy, src), r = __shfl_sync(0xFFFFFFFFu, repl, src);
    const u32 at = __shfl_sync(0xFFFFFFFFu, k, src) + static_cast<u32>(popc(c & below) + 3 * popc(r & below));
    if ((c >> lane) & 1u) {
      st[at] = warp_in[src * lane_bytes + lane];
    } else if ((r >> lane) & 1u) {
      stage_replacement(st, at);
    }
  }
}

}  // namespace gutf8::kern
