// The walk both column kernels share (kernel_column_scan.cuh, kernel_column_write.cuh): a string column's data
// bytes [offsets[0], offsets[length]) are one flat text cut into 1 KiB warp tiles, a warp per run of
// consecutive warp tiles, 32 bytes a lane, classified with bit planes as the flat validate kernel
// does, with every row start breaking the links between bytes (lane_row_links.cuh).
//
// Row starts come from the offsets themselves: a warp finds its first row once (a 32-ary search,
// one load per lane a step) and then keeps a cursor; each warp tile loads the offsets of the rows
// that start in it 32 at a time (coalesced) and sets their bits in a per-warp shared bitmap. The
// bytes of null rows are loaded with the rest (they lie inside the data buffer, as the Arrow
// layout guarantees) but are never counted or written. Per-row sums over a warp tile come from
// per-lane masks and their prefix counts in shared memory: one lane per row computes its piece
// from two prefix lookups, so short rows cost a lane each and long rows a piece per warp tile.
#pragma once

#include <cuda_runtime.h>

#include "gutf8/prim/detail/warp_scan.cuh"
#include "utf8/common.cuh"
#include "utf8/lane_row_links.cuh"

namespace gutf8::kern::columns {

inline constexpr u32 warp_tile_bytes = warp_bytes;  // 1 KiB: 32 lanes of 32 bytes
inline constexpr unsigned column_block_threads = 256;
inline constexpr unsigned column_block_warps = column_block_threads / 32;
inline constexpr unsigned warp_all = 0xFFFFFFFFu;

using ull = unsigned long long;

template <class Off>
struct column_rows {
  const u8* data;
  const Off* offsets;  // offsets[i]: where row i starts (the array offset applied), i = 0..length
  const u8* validity;  // bit (bit0 + i); null: no nulls
  u64 bit0;
  u64 length;          // rows
  u64 base;            // data position of warp tile 0: offsets[0] rounded down to 16
  u64 begin;           // offsets[0]
  u64 end;             // offsets[length]
  bool vec;            // data is 16-byte aligned: whole warp tiles take 16-byte loads

  __host__ __device__ u64 warp_tiles() const { return (end - base) / warp_tile_bytes + 1; }  // end lies in one
  __device__ u64 at(u64 i) const { return static_cast<u64>(offsets[i]); }
  __device__ bool is_null(u64 i) const {
    return validity != nullptr && !((validity[(bit0 + i) >> 3] >> ((bit0 + i) & 7)) & 1u);
  }
};

// Bits below n (all for n >= 32).
__device__ __forceinline__ u32 low_bits(u64 n) { return n >= 32 ? ~0u : (1u << n) - 1u; }

// A lane's bytes at pos that lie in [r.begin, r.end): the only bytes any row holds.
template <class Off>
__device__ __forceinline__ u32 column_bytes(const column_rows<Off>& r, u64 pos) {
  if (pos >= r.begin && pos + lane_bytes <= r.end) return ~0u;
  const u32 below_end = pos < r.end ? low_bits(r.end - pos) : 0u;
  return below_end & ~(r.begin > pos ? low_bits(r.begin - pos) : 0u);
}

__device__ __forceinline__ bool bit_of(const u32* bits, u64 i) { return (bits[i >> 5] >> (i & 31)) & 1u; }

// The global index of a thread of a one-dimensional grid (the per-row and per-word kernels).
__device__ __forceinline__ u64 thread_index() { return u64{blockIdx.x} * blockDim.x + threadIdx.x; }

// First i in [0, length] with offsets[i] >= key (length + 1 when none). All lanes, same key.
template <class Off>
__device__ u64 warp_lower_bound(const column_rows<Off>& r, u64 key) {
  const u32 lane = threadIdx.x & 31u;
  u64 lo = 0, hi = r.length + 1;  // the answer lies in [lo, hi]
  while (hi - lo > 32) {
    const u64 stride = (hi - lo + 31) / 32;
    const u64 idx = lo + lane * stride;
    const u32 ge = __ballot_sync(warp_all, idx >= hi || r.at(idx) >= key);
    if (ge == 0) {
      lo += 31 * stride + 1;
    } else {
      const u32 k = static_cast<u32>(__ffs(static_cast<int>(ge)) - 1);
      const u64 probe = lo + k * stride;
      hi = probe < hi ? probe : hi;
      lo = k == 0 ? lo : lo + (k - 1) * stride + 1;
    }
  }
  const u64 idx = lo + lane;
  const u32 ge = __ballot_sync(warp_all, idx >= hi || r.at(idx) >= key);
  return ge == 0 ? hi : lo + static_cast<u32>(__ffs(static_cast<int>(ge)) - 1);
}

// One warp's shared state. Bitmap words: 0 = the 32 bytes before the warp tile (bits 28..31 used),
// 1..32 = the lanes' bytes, 33 = the 32 after it (bits 0..2 used).
struct warp_tile_marks {
  u32 rs[34];    // starts of non-empty rows, and offsets[length]
  u32 drop[34];  // those of rows that are not kept (column_write only)
};

// Bits of the row starts (of non-empty rows and the end) in [S - 4, S + 1028). cursor: the
// first row whose start is >= S - 4; it moves on to the first row whose start is >= S + 1020.
// dropped(i): whether row i (i == length: the end) is not kept.
template <class Off, class Dropped>
__device__ void mark_row_starts(const column_rows<Off>& r, u64 S, u64& cursor, warp_tile_marks& m, Dropped dropped) {
  const u32 lane = threadIdx.x & 31u;
  m.rs[lane] = 0;
  m.drop[lane] = 0;
  if (lane < 2) m.rs[32 + lane] = m.drop[32 + lane] = 0;
  __syncwarp();
  u64 next = cursor;
  for (u64 b = cursor;; b += 32) {
    const u64 idx = b + lane;
    const bool has = idx <= r.length;
    const u64 p = has ? r.at(idx) : ~u64{0};
    u64 after = prim::detail::warp_shfl_down(p, 1);
    if (lane == 31) after = idx + 1 <= r.length ? r.at(idx + 1) : ~u64{0};
    const bool in = has && p < S + warp_tile_bytes + 4;
    if (in && (idx == r.length || after > p)) {
      const u64 rel = p + 32 - S;  // >= 28: p >= S - 4
      const u32 bit = 1u << (rel & 31);
      atomicOr(&m.rs[rel >> 5], bit);
      if (dropped(idx)) atomicOr(&m.drop[rel >> 5], bit);
    }
    next += static_cast<u32>(__popc(__ballot_sync(warp_all, has && p + 4 < S + warp_tile_bytes)));
    if (!__all_sync(warp_all, in)) break;
  }
  cursor = next;
  __syncwarp();
}

// A lane's 32 bytes of the warp tile at S (absolute data position) and, in lane 31, the 4 after.
template <class Off>
__device__ __forceinline__ void load_warp_tile(const column_rows<Off>& r, u64 S, u32 (&x)[8], u32& nx) {
  const u32 lane = threadIdx.x & 31u;
  const u64 pos = S + lane * lane_bytes;
  if (r.vec && S + warp_tile_bytes + 4 <= r.end) {
    const uint4 a = __ldg(reinterpret_cast<const uint4*>(r.data + pos));
    const uint4 b = __ldg(reinterpret_cast<const uint4*>(r.data + pos + 16));
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
    nx = lane == 31 ? __ldg(reinterpret_cast<const unsigned*>(r.data + pos + lane_bytes)) : 0u;
    return;
  }
  const bool a4 = (reinterpret_cast<std::uintptr_t>(r.data) & 3u) == 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = load_word(r.data, r.end, static_cast<std::int64_t>(pos + 4 * k), a4);
  nx = lane == 31 ? load_word(r.data, r.end, static_cast<std::int64_t>(pos + lane_bytes), a4) : 0u;
}

// A lane's classification (own bytes; bits of bytes past the column's end are meaningless).
struct lane_units {
  u32 start;  // starts a unit (a well-formed sequence or an error unit)
  u32 wf;     // starts a well-formed sequence
  u32 cover;  // Detail: belongs to a well-formed sequence
  [[nodiscard]] __device__ u32 errors() const { return start & ~wf; }
};

// All lanes. carry: the behind link into lane 0 (the previous warp tile's lane 31), updated to
// this warp tile's; first: the run's first warp tile, whose link is computed from the 4 bytes before.
template <bool Detail, class Off>
__device__ lane_units classify_warp_tile(const column_rows<Off>& r, u64 S, const u32 (&x)[8], u32 nx,
                                         const warp_tile_marks& m, bool first, u32& carry) {
  const u32 lane = threadIdx.x & 31u;
  const u32 rs = m.rs[lane + 1];
  if (first) {
    u32 link = 0;
    if (lane == 0) {
      const bool a4 = (reinterpret_cast<std::uintptr_t>(r.data) & 3u) == 0;
      const u32 before = load_word(r.data, r.end, static_cast<std::int64_t>(S) - 4, a4);
      link = behind_link_word_rows<Detail>(before, ahead_link_word(x[0]), m.rs[0], rs);
    }
    carry = __shfl_sync(warp_all, link, 0);
  }
  u32 any = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) any |= x[k];
  lane_units u;
  if (!__any_sync(warp_all, (any & lane_hi) != 0)) {  // ASCII: every byte a unit, nothing links
    carry = 0;
    u.start = u.wf = u.cover = ~0u;
    return u;
  }
  u32 P[8];
  to_planes(x, P);
  u32 ahead = __shfl_down_sync(warp_all, ahead_link(P), 1);
  u32 ahead_rs = __shfl_down_sync(warp_all, rs, 1);
  if (lane == 31) {
    ahead = ahead_link_word(nx);
    ahead_rs = m.rs[33];
  }
  const slab_class c = classify_rows(P, ahead, rs, ahead_rs & 7u);
  const u32 link = behind_link<Detail>(c);
  u32 up = __shfl_up_sync(warp_all, link, 1);
  if (lane == 0) up = carry;
  carry = __shfl_sync(warp_all, link, 31);
  u.start = starts(c, up);
  u.wf = c.wf;
  u.cover = Detail ? coverage(c, up).cover : 0u;
  return u;
}

// Per-lane masks with their counts summed over the warp tile up to any byte: a weighted pair
// (count = popc(a) + w * popc(b)), prefix counts per lane in pre[0..32].
struct warp_tile_sums {
  u32 a[32], b[32];
  u32 pre[33];

  // All lanes: publishes the lane's masks; returns the warp tile's total.
  __device__ u32 publish(u32 ma, u32 mb, u32 w) {
    const u32 lane = threadIdx.x & 31u;
    a[lane] = ma;
    b[lane] = mb;
    const u32 own = static_cast<u32>(__popc(ma)) + w * static_cast<u32>(__popc(mb));
    const u32 incl = prim::detail::warp_inclusive_scan(own, [](u32 p, u32 q) { return p + q; });
    pre[lane] = incl - own;
    if (lane == 31) pre[32] = incl;
    __syncwarp();
    return __shfl_sync(warp_all, incl, 31);
  }
  // The count over the warp tile's bytes [0, x), x = 0..1024.
  __device__ u32 below(u32 x, u32 w) const {
    const u32 k = x >> 5;
    if (k == 32) return pre[32];
    const u32 mask = below_bit(x & 31u);
    return pre[k] + static_cast<u32>(__popc(a[k] & mask)) + w * static_cast<u32>(__popc(b[k] & mask));
  }
  // The lowest set bit of a in the warp tile's bytes [from, to), which holds one.
  __device__ u32 first_a(u32 from, u32 to) const {
    u32 k = from >> 5;
    u32 m = a[k] & ~below_bit(from & 31u);
    while (m == 0 && ++k < 32 && 32 * k < to) m = a[k];
    return 32 * k + static_cast<u32>(__ffs(static_cast<int>(m)) - 1);
  }
};

// A warp's run of warp tiles [first, end) (empty for warps past the last) and its row cursor: the
// first row whose start is >= the run's start - 4 (mark_row_starts moves it on).
struct warp_tile_run {
  u64 first, end, cursor;
};
template <class Off>
__device__ warp_tile_run warp_run(const column_rows<Off>& r, u64 warp_tiles_per_warp) {
  const u64 total = r.warp_tiles();
  const u64 first = (u64{blockIdx.x} * column_block_warps + (threadIdx.x >> 5)) * warp_tiles_per_warp;
  if (first >= total) return {first, first, 0};  // warp-uniform
  const u64 S0 = r.base + first * warp_tile_bytes;
  return {first, first + warp_tiles_per_warp < total ? first + warp_tiles_per_warp : total,
          warp_lower_bound(r, S0 >= 4 ? S0 - 4 : 0)};
}

// All lanes: body(s, S, before, x, nx, first) for each warp tile s of the warp's run (S its first
// byte, before the row cursor ahead of it, x / nx its bytes as load_warp_tile gives them, first
// whether its link into lane 0 must be computed from the bytes before it), with the next
// warp tile's bytes in flight and its row starts in m. A warp tile that skip(s, S, cursor, x) takes
// (returning true, the cursor moved on past it) gets no row starts and no body.
template <class Off, class Dropped, class Skip, class Body>
__device__ __forceinline__ void walk_warp_tiles(const column_rows<Off>& r, u64 warp_tiles_per_warp,
                                                warp_tile_marks& m, Dropped dropped, Skip skip, Body body) {
  const warp_tile_run run = warp_run(r, warp_tiles_per_warp);
  if (run.first == run.end) return;
  u64 cursor = run.cursor;
  u32 x[8], nx = 0;
  load_warp_tile(r, r.base + run.first * warp_tile_bytes, x, nx);
  bool first = true;
  for (u64 s = run.first; s < run.end; ++s) {
    const u64 S = r.base + s * warp_tile_bytes;
    u32 y[8], ny = 0;
    if (s + 1 < run.end) load_warp_tile(r, S + warp_tile_bytes, y, ny);
    if (skip(s, S, cursor, x)) {
      first = true;  // the next warp tile's link is not carried over
    } else {
      const u64 before = cursor;
      mark_row_starts(r, S, cursor, m, dropped);
      body(s, S, before, x, nx, first);
      first = false;
    }
    __syncwarp();  // shared state is read before the next warp tile overwrites it
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = y[k];
    nx = ny;
  }
}

// All lanes: the rows from `cursor` that start in the warp tile at S, as f(row, start) for each
// (the end, row length, too); returns the cursor past the warp tile, as mark_row_starts moves it.
template <class Off, class F>
__device__ __forceinline__ u64 for_rows_starting_in(const column_rows<Off>& r, u64 S, u64 cursor, F f) {
  const u32 lane = threadIdx.x & 31u;
  u64 next = cursor;
  for (u64 b = cursor;; b += 32) {
    const u64 idx = b + lane;
    const bool has = idx <= r.length;
    const u64 p = has ? r.at(idx) : ~u64{0};
    if (has && p >= S && p < S + warp_tile_bytes) f(idx, p);
    next += static_cast<u32>(__popc(__ballot_sync(warp_all, has && p + 4 < S + warp_tile_bytes)));
    if (!__shfl_sync(warp_all, has && p < S + warp_tile_bytes, 31)) break;
  }
  return next;
}

// Launch shape: a warp per run of warp_tiles_per_warp warp tiles, over `blocks` blocks (or fewer).
struct column_grid {
  u64 warp_tiles_per_warp;
  unsigned blocks;
};
inline column_grid grid_for_warp_tiles(u64 warp_tiles, u64 blocks) {
  const u64 target_warps = (blocks == 0 ? 1u : blocks) * column_block_warps;
  const u64 per = (warp_tiles + target_warps - 1) / target_warps;
  const u64 spw = per == 0 ? 1 : per;
  const u64 warps = (warp_tiles + spw - 1) / spw;
  return {spw, static_cast<unsigned>((warps + column_block_warps - 1) / column_block_warps)};
}

}  // namespace gutf8::kern::columns
