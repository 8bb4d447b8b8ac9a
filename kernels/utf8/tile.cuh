// The tile machinery the UTF-8 kernels share. A tile is 8 KiB: 256 threads, each owning 32
// consecutive bytes (two 16-byte loads), so a warp owns 1 KiB.
//
//   classify_tile    loads a lane's bytes, classifies them with bit planes (planes.cuh) and
//                    passes the links between lanes (shuffles) and warps (shared memory, one
//                    __syncthreads); a warp whose bytes are all ASCII skips the planes.
//   block_scan_flag  exclusive scan of 32-bit flagged counts (bit 31 = stop) over the tile, by
//                    kernels/prim's block scan with its warp parts and flagged sums.
//   write_staged_*   a warp's output range, staged in shared memory, written with 16-byte stores
//                    aligned to the destination (scalar stores for the partial groups at the ends;
//                    kernels/prim/store_range.cuh).
#pragma once

#include "prim/block_scan.cuh"
#include "prim/flagged_sum.cuh"
#include "prim/store_range.cuh"
#include "utf8/common.cuh"
#include "utf8/planes.cuh"
#include "utf8/tile_shape.cuh"

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

// classify_tile's hook for work that needs only the lane's bytes: called in every lane as soon as
// its bytes are loaded and transposed, with the number of its bytes below the limit that do not
// continue a sequence (its units, were the text valid). This one does nothing.
struct no_lead_count {
  __device__ void operator()(u32) const {}
};

// All threads of the block. Tile at byte `base`; thread t owns bytes base + 32 t .. + 31.
// link_sh: tile_warps words of shared memory. Contains one __syncthreads.
template <bool Vec, bool Detail, class LeadCount = no_lead_count>
__device__ __forceinline__ void classify_tile(const u8* in, u64 n, u64 base, u64 limit, u32* link_sh,
                                              lane_class<Detail>& L, LeadCount lead_count = {}) {
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
    lead_count(static_cast<u32>(popc(~(P[7] & ~P[6]) & L.inr)));
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
    lead_count(static_cast<u32>(popc(L.inr)));
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

// --------------------------------------------------------------------- scan ----
// A thread's output count in its tile; bit 31 = stop (strict: an error before or in it).
using tile_count = prim::detail::flagged_sum<u32>;
inline constexpr u32 stop32 = tile_count::stop;
using tile_block_scan = prim::detail::block_scan<u32, tile_threads>;
using tile_scan = prim::detail::block_scan_parts<u32>;

// All threads; one __syncthreads.
__device__ __forceinline__ tile_scan block_scan_flag(u32 v, tile_block_scan::storage& warp_totals) {
  return tile_block_scan(warp_totals).exclusive_parts<prim::detail::flagged_warp_scan>(v, 0u, tile_count{});
}

// ------------------------------------------------------------------ write-out ----
// A warp's output range, staged in shared memory, written with kernels/prim's aligned 16-byte
// stores (store_range.cuh).

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

}  // namespace gutf8::kern
