// The steps the tile kernels (decode_fused, decode_staged, sanitize, encode_fused) take around
// their own work to place each warp's output in the grid and to merge the chunk summary, in this
// order:
//
//   begin_utf8_tile         thread 0 clears the summary and asks L2 for the input 2 MiB ahead
//                           (common.cuh: prefetch_ahead); all threads classify the tile (tile.cuh)
//   share_tile_bytes        (decode_fused, sanitize) the bytes, for warps that copy them through
//   block_scan_flag         (tile.cuh) of the thread's output count, stop_flagged
//   add_lane_stats          the thread's errors and LFs into the tile summary
//   publish_tile_aggregate  the tile's total, before the kernel stages its output, so that the
//                           successors' look-backs need not wait for that work
//   place_warp_output       after the staging (the look-back's latency overlaps it): warp 0 looks
//                           back, one barrier, thread 0 flushes the summary; the warp's range
//                           (rank_block is that without the range, also for a block of two tiles;
//                           look_back_block and settle_block its two halves)
#pragma once

#include <type_traits>

#include "utf8/tile.cuh"

namespace gutf8::kern {

struct tile_rank_shared {
  u32 wt[tile_warps];  // block_scan_flag's warp totals
  u64 prefix;          // the tile's exclusive prefix, from warp 0
  tile_summary ts;
};

struct utf8_tile_shared {
  u32 link[tile_warps];  // classify_tile's links between warps
  tile_rank_shared rank;
};

// All threads. classify_tile's barrier makes the cleared summary visible to every later add.
template <bool Vec, bool Detail, class LeadCount = no_lead_count>
__device__ __forceinline__ void begin_utf8_tile(const u8* in, u64 n, u64 base, const accum* acc,
                                                utf8_tile_shared& sh, lane_class<Detail>& L,
                                                LeadCount lead_count = {}) {
  if (threadIdx.x == 0) {
    sh.rank.ts.init();
    if (Vec) prefetch_ahead(in, n, base, tile_bytes);
  }
  wait_for_prior_kernel();  // prepare_kernel's accumulator and cleared look-back states
  classify_tile<Vec, Detail>(in, n, base, acc->limit, sh.link, L, lead_count);
}

// The tile's bytes and the 4 after them, in 16-byte aligned shared memory.
inline constexpr u32 shared_tile_words = tile_bytes / 4 + 4;
template <bool Detail>
__device__ __forceinline__ void share_tile_bytes(u32* in_sh, const lane_class<Detail>& L) {
  *reinterpret_cast<uint4*>(in_sh + 8 * threadIdx.x) = make_uint4(L.x[0], L.x[1], L.x[2], L.x[3]);
  *reinterpret_cast<uint4*>(in_sh + 8 * threadIdx.x + 4) = make_uint4(L.x[4], L.x[5], L.x[6], L.x[7]);
  if (threadIdx.x == tile_threads - 1) in_sh[tile_bytes / 4] = L.nx;
}

// Strict output ends at the first error unit: the scan stops at a thread that has one.
template <error_policy P>
__device__ __forceinline__ u32 stop_flagged(u32 count, bool has_error) {
  return count | (P == error_policy::strict && has_error ? stop32 : 0u);
}

// All threads; err and lf are own-byte masks; off: the tile's byte offset in the summary.
__device__ __forceinline__ void add_lane_stats(tile_summary& ts, u32 err, u32 lf, u32 off = 0) {
  u32 e, f, l, ll;
  thread_stats(err, lf, off + threadIdx.x * lane_bytes, e, f, l, ll);
  ts.add(e, f, l, ll);
}

// Returns the tile's total (stop | count). Tile 0's is already inclusive: the look-back of its
// successors ends there.
__device__ __forceinline__ u64 publish_tile_aggregate(u64* states, u32 tile, const tile_scan& s) {
  const u64 agg = widen_flagged(s.agg);
  if (threadIdx.x == 0) lb_store(states + tile, (tile == 0 ? lb_inclusive : lb_aggregate) | agg);
  return agg;
}

// The warp's output units in the grid: [first, first + count); nothing when stopped (strict: an
// error before the warp).
struct warp_output {
  u64 first;
  u32 count;
  bool stopped;
};

// Warp 0 of the block (the caller's test), after the tile's aggregate is published: looks back
// for the exclusive prefix of the block's first tile, publishes its inclusive prefix and, when the
// block holds the next tile too (has_next; the decoder's two-tile schedule, stored states only),
// that one's from next_agg; the prefix goes to sh.prefix for settle_block. agg: the tile's scanned
// total (stop | count). lane = threadIdx.x & 31.
template <class States = stored_states>
__device__ __forceinline__ void look_back_block(u32 lane, u64 agg, bool has_next, u64 next_agg, tile_rank_shared& sh,
                                                u64* states, u32 tile) {
  constexpr bool counted = std::is_same_v<States, counted_states>;
  u64 pre = 0;
  if (tile != 0) pre = lookback_prefix(states, tile);
  if (lane == 0 && (tile != 0 || counted)) States::publish_inclusive(states + tile, pre, agg);
  if (lane == 0) {
    if (has_next) lb_store(states + tile + 1, lb_inclusive | lb_combine(lb_combine(pre, agg), next_agg));
    sh.prefix = pre;
  }
}

// All threads, after look_back_block and every add to the summary: one barrier; thread 0 flushes
// the summary (summary_base: the first tile's first input byte, the summary's offsets being
// relative to it) and, where the block holds the last tile, records the output length in written
// units of CountsPerUnit scanned counts. Counted states (the decoder's one-tile schedule) never
// stop: the strict decoder's counts are speculative, so a tile that stops also offers its end as
// the output length (accum::cut). Returns the prefix.
template <u32 CountsPerUnit = 1, class States = stored_states>
__device__ __forceinline__ u64 settle_block(u64 agg, bool has_next, u64 next_agg, tile_rank_shared& sh, u32 tile,
                                            u32 last_tile, accum* acc, u64 summary_base) {
  constexpr bool counted = std::is_same_v<States, counted_states>;
  __syncthreads();
  const u64 prefix = sh.prefix;
  if (threadIdx.x == 0) {
    sh.ts.flush(acc, summary_base, tile);
    const u64 after = lb_combine(prefix, agg);
    if (tile == last_tile) acc->written = (after & lb_count) / CountsPerUnit;
    if (has_next && tile + 1 == last_tile)
      acc->written = (lb_combine(after, next_agg) & lb_count) / CountsPerUnit;
    if (counted && (agg & lb_stop))
      atomicMin(reinterpret_cast<unsigned long long*>(&acc->cut), (after & lb_count) / CountsPerUnit);
  }
  return prefix;
}

// All threads, after every add to the summary: look_back_block in warp 0, then settle_block
// (stored states).
template <u32 CountsPerUnit = 1>
__device__ __forceinline__ u64 rank_block(u32 lane, u64 agg, bool has_next, u64 next_agg, tile_rank_shared& sh,
                                          u64* states, u32 tile, u32 last_tile, accum* acc, u64 summary_base) {
  if (threadIdx.x >> 5 == 0) look_back_block(lane, agg, has_next, next_agg, sh, states, tile);
  return settle_block<CountsPerUnit>(agg, has_next, next_agg, sh, tile, last_tile, acc, summary_base);
}

// All threads, after every add to the summary: rank_block for a block of one tile, and the
// warp's range from it. lane is the caller's threadIdx.x & 31: computed in here, it cost
// encode_fused_kernel<*, false> a register (ptxas: 40, not 39).
template <u32 CountsPerUnit = 1>
__device__ __forceinline__ warp_output place_warp_output(u32 lane, const tile_scan& s, u64 agg,
                                                         tile_rank_shared& sh, u64* states, u32 tile,
                                                         u32 last_tile, accum* acc, u64 summary_base) {
  const u64 prefix =
      rank_block<CountsPerUnit>(lane, agg, false, 0, sh, states, tile, last_tile, acc, summary_base);
  warp_output w;
  w.stopped = (prefix & lb_stop) || (s.wexcl & stop32);
  w.count = s.wtotal & ~stop32;
  w.first = (prefix & lb_count) + s.wexcl;
  return w;
}

}  // namespace gutf8::kern
