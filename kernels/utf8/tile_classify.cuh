// A tile's classification, which the UTF-8 kernels share. A tile is 8 KiB: 256 threads, each
// owning 32 consecutive bytes (two 16-byte loads), so a warp owns 1 KiB (policy.cuh).
//
//   classify_tile    loads a lane's bytes, classifies them with bit planes (lane_planes.cuh) and
//                    passes the links between lanes (shuffles) and warps (shared memory, one
//                    __syncthreads); a warp whose bytes are all ASCII skips the planes.
// The tile's ranking is tile_rank.cuh, its write-out tile_write.cuh.
#pragma once

#include "utf8/common.cuh"
#include "utf8/lane_planes.cuh"
#include "utf8/policy.cuh"

namespace gutf8::kern {

inline constexpr unsigned full_mask = 0xFFFFFFFFu;

// Bits strictly below the lowest set bit of m (all bits when m == 0).
__device__ __forceinline__ u32 below_lowest(u32 m) { return m == 0 ? ~0u : (m & (0u - m)) - 1; }

// Own-byte mask (bit i = byte pos + i) of the positions below `limit`.
__device__ __forceinline__ u32 range_mask(u64 pos, u64 limit) {
  if (pos >= limit) return 0;
  const u64 r = limit - pos;
  return r >= 32 ? ~0u : (1u << r) - 1;
}

__device__ __forceinline__ bool aligned4(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 3u) == 0;
}

// 32 bytes at pos into x (bytes at or beyond n read as 0). fast: 16-byte aligned and in range.
__device__ __forceinline__ void load_lane(const u8* in, u64 n, u64 pos, bool fast, u32 (&x)[8]) {
  if (fast) {
    const uint4 a = __ldg(reinterpret_cast<const uint4*>(in + pos));
    const uint4 b = __ldg(reinterpret_cast<const uint4*>(in + pos + 16));
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w;
    x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
  } else {
    const bool a4 = aligned4(in);
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = load_word(in, n, static_cast<std::int64_t>(pos + 4 * k), a4);
  }
}

// LF bytes of 8 words (SWAR).
__device__ __forceinline__ u32 lf_mask_words(const u32 (&x)[8]) {
  u32 l[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) l[k] = lf_lanes(x[k]);
  return lanes_to_mask8(l);
}

// ----------------------------------------------------------------- classify ----
template <bool Detail>
struct lane_class {
  u32 x[8];     // own bytes
  u32 nx;       // the 4 bytes after them
  u32 inr;      // own bytes below limit
  u32 hi;       // own non-ASCII bytes
  u32 start;    // starts an output unit (below limit)
  u32 wf;       // starts a well-formed unit (below limit)
  u32 lf;       // LF bytes (below limit)
  block_cover cov;  // Detail only (below limit)
  bool warp_ascii;  // every byte of the warp is ASCII
};

// All threads of the block. Tile at byte `base`; thread t owns bytes base + 32 t .. + 31.
// link_sh: tile_warps words of shared memory. Contains one __syncthreads.
template <bool Vec, bool Detail>
__device__ __forceinline__ void classify_tile(const u8* in, u64 n, u64 base, u64 limit, u32* link_sh,
                                              lane_class<Detail>& L) {
  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const u64 pos = base + u64{threadIdx.x} * lane_bytes;
  const bool full = base + tile_bytes + 4 <= n;  // block-uniform
  const bool a4 = aligned4(in);
  load_lane(in, n, pos, Vec && full, L.x);
  u32 nx_mem = 0, prev_mem = 0;
  if (lane == 31) {
    nx_mem = load_word_at(in, n, pos, lane_bytes / 4, Vec && full, a4);
  }
  if (threadIdx.x == 0 && base != 0) prev_mem = load_word(in, n, static_cast<std::int64_t>(base) - 4, a4);
  L.inr = base + tile_bytes <= limit ? ~0u : range_mask(pos, limit);
  u32 any = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) any |= L.x[k];
  L.warp_ascii = __all_sync(full_mask, (any & lane_hi) == 0);
  L.nx = __shfl_down_sync(full_mask, L.x[0], 1);
  if (lane == 31) L.nx = nx_mem;
  block_class c{};
  u32 up = 0;
  if (!L.warp_ascii) {
    u32 P[8];
    to_planes(L.x, P);
    L.hi = P[7];
    L.lf = lf_mask(P);
    const u32 own_ahead = ahead_link(P);
    u32 ahead = __shfl_down_sync(full_mask, own_ahead, 1);
    if (lane == 31) ahead = ahead_link_word(nx_mem);
    c = classify_block(P, ahead);
    const u32 bl = behind_link<Detail>(c);
    if (lane == 31) link_sh[warp] = bl;
    up = __shfl_up_sync(full_mask, bl, 1);
    if (threadIdx.x == 0) up = behind_link_word<Detail>(prev_mem, own_ahead);
  } else {
    L.hi = 0;
    L.lf = lf_mask_words(L.x);
    if (lane == 31) link_sh[warp] = 0;
  }
  __syncthreads();
  if (!L.warp_ascii) {
    if (lane == 0 && warp != 0) up = link_sh[warp - 1];
    L.start = starts(c, up) & L.inr;
    L.wf = c.wf & L.inr;
    if constexpr (Detail) {
      L.cov = coverage(c, up);
      L.cov.cover &= L.inr;
      L.cov.end2 &= L.inr;
      L.cov.end3 &= L.inr;
      L.cov.end4 &= L.inr;
    }
  } else {
    L.start = L.wf = L.inr;
    if constexpr (Detail) L.cov = block_cover{L.inr, 0u, 0u, 0u};
  }
  L.lf &= L.inr;
}

}  // namespace gutf8::kern
