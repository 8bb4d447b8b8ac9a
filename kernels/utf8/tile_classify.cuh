// A tile's classification, which the UTF-8 kernels share. A tile is 8 KiB: 256 threads, each
// owning 32 consecutive bytes (two 16-byte loads), so a warp owns 1 KiB (tuning.cuh).
//
//   classify_tile    loads a lane's bytes, classifies them with bit planes (lane_planes.cuh) and
//                    passes the links between lanes (shuffles) and warps (shared memory, one
//                    __syncthreads); a warp whose bytes are all ASCII skips the planes.
// The tile's ranking is tile_rank.cuh, its write-out tile_write.cuh.
#pragma once

#include "utf8/common.cuh"
#include "utf8/lane_planes.cuh"
#include "utf8/tuning.cuh"

namespace gutf8::kern {

inline constexpr unsigned full_mask = 0xFFFFFFFFu;

// Bits strictly below the lowest set bit of m (all bits when m == 0).
__device__ __forceinline__ u32 below_lowest(u32 m) { return m == 0 ? ~0u : (m & (0u - m)) - 1; }

__device__ __forceinline__ bool aligned4(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 3u) == 0;
}

// Input that is not 16-byte aligned: whether a tile at `base` is one whose lanes load their bytes
// from the aligned 16-byte groups around them (load_lane_spanning, load_word_spanning): every group
// read lies inside the input, which is so for every tile but the first (its first group starts
// before the input) and the last (its last group may end after it; so may the one before it
// where the last holds fewer than 16 bytes). Block-uniform.
__device__ __forceinline__ bool tile_spans_groups(u64 n, u64 base) {
  return base != 0 && base + tile_bytes + 16 <= n;
}

// The 4 bytes at p, any alignment, from the two aligned words around them (both inside the input).
__device__ __forceinline__ u32 load_word_spanning(const u8* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  const auto* w = reinterpret_cast<const unsigned*>(a & ~std::uintptr_t{3});
  return funnel_r(__ldg(w), __ldg(w + 1), 8u * static_cast<u32>(a & 3u));
}

// x[k] = the 4 bytes at byte 4 (k + Q) + r / 8 of the 48 bytes in w.
template <int Q>
__device__ __forceinline__ void words_from(const u32 (&w)[12], u32 r, u32 (&x)[8]) {
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = funnel_r(w[k + Q], w[k + Q + 1], r);
}

// The 32 bytes at p, not 16-byte aligned, from the three aligned 16-byte groups that hold them
// (all three inside the input): the same loads as aligned input, and 8 funnel shifts.
__device__ __forceinline__ void load_lane_spanning(const u8* p, u32 (&x)[8]) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  const u32 head = static_cast<u32>(a & 15u);
  const auto* g = reinterpret_cast<const uint4*>(a - head);
  const uint4 g0 = __ldg(g), g1 = __ldg(g + 1), g2 = __ldg(g + 2);
  const u32 w[12] = {g0.x, g0.y, g0.z, g0.w, g1.x, g1.y, g1.z, g1.w, g2.x, g2.y, g2.z, g2.w};
  const u32 r = 8u * (head & 3u);
  switch (head >> 2) {  // uniform: the input's alignment
    case 0: words_from<0>(w, r, x); break;
    case 1: words_from<1>(w, r, x); break;
    case 2: words_from<2>(w, r, x); break;
    default: words_from<3>(w, r, x); break;
  }
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
  u32 quad;     // starts a well-formed 4-byte sequence (below limit): a surrogate pair in UTF-16
  u32 lf;       // LF bytes (below limit)
  slab_cover cov;  // Detail only (below limit)
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
  if (!Vec && tile_spans_groups(n, base))
    load_lane_spanning(in + pos, L.x);
  else
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
  slab_class c{};
  u32 up = 0;
  if (!L.warp_ascii) {
    u32 P[8];
    to_planes(L.x, P);
    L.hi = P[7];
    L.lf = lf_mask(P);
    const u32 own_ahead = ahead_link(P);
    u32 ahead = __shfl_down_sync(full_mask, own_ahead, 1);
    if (lane == 31) ahead = ahead_link_word(nx_mem);
    c = classify_slab(P, ahead);
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
    L.quad = L.wf & c.T3;
    if constexpr (Detail) {
      L.cov = coverage(c, up);
      L.cov.cover &= L.inr;
      L.cov.end2 &= L.inr;
      L.cov.end3 &= L.inr;
      L.cov.end4 &= L.inr;
    }
  } else {
    L.start = L.wf = L.inr;
    L.quad = 0;
    if constexpr (Detail) L.cov = slab_cover{L.inr, 0u, 0u, 0u};
  }
  L.lf &= L.inr;
}

}  // namespace gutf8::kern
