// The steps the tile kernels (decode_fused, decode_staged, repair, encode_fused) take around
// their own work to place each warp's output in the grid and to merge the chunk summary, in this
// order:
//
//   prefetch_states_ahead   thread 32 asks L2 for the look-back words' line 64 tiles ahead
//   begin_utf8_tile         thread 0 clears the summary and asks L2 for the input 2 MiB ahead
//                           (common.cuh: prefetch_ahead); all threads classify the tile (tile_classify.cuh)
//   block_scan_flag         of the thread's output count (the primitives' block scan with its warp
//                           parts and flagged sums), stop_flagged
//   add_lane_stats          the thread's errors and LFs into the tile summary
//   publish_tile_aggregate  the tile's total, before the kernel stages its output, so that the
//                           successors' look-backs need not wait for that work (or, counted:
//                           each warp adds its count as soon as it knows it, add_warp_count)
//   place_warp_output       after the staging (the look-back's latency overlaps it): warp 0 looks
//                           back (the primitives' decoupled look-back over one 64-bit word per
//                           tile, prim::flagged_count_state; the strict decoder reads 4 tiles a lane),
//                           one barrier, thread 0 flushes the summary; the warp's range
//                           (rank_block is that without the range; look_back_block and
//                           settle_block its two halves)
#pragma once

#include "gutf8/prim/detail/block_scan.cuh"
#include "gutf8/prim/detail/flagged_sum.cuh"
#include "gutf8/prim/detail/tile_lookback.cuh"
#include "utf8/tile_classify.cuh"
#include "utf8/tile_write.cuh"

namespace gutf8::kern {

// A thread's output count in its tile; bit 31 = stop (strict: an error before or in it).
using tile_count = prim::detail::flagged_sum<u32>;
inline constexpr u32 stop32 = tile_count::stop;
using tile_block_scan = prim::detail::block_scan<u32, tile_threads>;
using tile_scan = prim::detail::block_scan_parts<u32>;

// All threads; one __syncthreads.
__device__ __forceinline__ tile_scan block_scan_flag(u32 v, tile_block_scan::storage& warp_totals) {
  return tile_block_scan(warp_totals).exclusive_parts<prim::detail::flagged_warp_scan>(v, 0u, tile_count{});
}

// The look-back's word per tile and its 64-bit flagged values (stop = bit 61).
using rank_state = prim::detail::flagged_count_state;
using grid_count = rank_state::sum;
__device__ __forceinline__ u64 widen(u32 tile_value) {
  return prim::detail::widen_flagged<grid_count, tile_count>(tile_value);
}

struct tile_rank_shared {
  tile_block_scan::storage wt;  // block_scan_flag's warp totals
  u64 prefix;          // the tile's exclusive prefix, from warp 0
  tile_summary ts;
};

struct utf8_tile_shared {
  u32 link[tile_warps];  // classify_tile's links between warps
  tile_rank_shared rank;
};

// All threads. classify_tile's barrier makes the cleared summary visible to every later add.
template <bool Vec, bool Detail>
__device__ __forceinline__ void begin_utf8_tile(const u8* in, u64 n, u64 base, const accum* acc,
                                                utf8_tile_shared& sh, lane_class<Detail>& L) {
  if (threadIdx.x == 0) {
    sh.rank.ts.init();
    prefetch_ahead(in, n, base, tile_bytes);
  }
  wait_for_prior_kernel();  // prepare_kernel's accumulator and cleared look-back states
  classify_tile<Vec, Detail>(in, n, base, acc->limit, sh.link, L);
}

// Thread 32 (thread 0 starts the tile, warp 0 looks back): the look-back words' line
// state_prefetch_tiles ahead into L2.
__device__ __forceinline__ void prefetch_states_ahead(rank_state states, u32 tile, u32 last_tile) {
  if (threadIdx.x == 32) states.prefetch_line(tile, last_tile, state_prefetch_tiles);
}

// Strict output ends at the first error unit: the scan stops at a thread that has one.
template <error_policy P>
__device__ __forceinline__ u32 stop_flagged(u32 count, bool has_error) {
  return count | (P == error_policy::strict && has_error ? stop32 : 0u);
}

// All threads; err and lf are own-byte masks (offsets in the summary relative to the tile).
__device__ __forceinline__ void add_lane_stats(tile_summary& ts, u32 err, u32 lf) {
  u32 e, f, l, ll;
  thread_stats(err, lf, threadIdx.x * lane_bytes, e, f, l, ll);
  ts.add(e, f, l, ll);
}

// Returns the tile's total (stop | count). Tile 0's is already inclusive: the look-back of its
// successors ends there.
__device__ __forceinline__ u64 publish_tile_aggregate(rank_state states, u32 tile, const tile_scan& s) {
  const u64 agg = widen(s.aggregate);
  if (threadIdx.x == 0) {
    if (tile == 0) states.publish_inclusive(tile, agg);
    else states.publish_aggregate(tile, agg);
  }
  return agg;
}

// Counted publication, all lanes of a warp: the warp's share of the tile's word, the sum of the
// lanes' counts. The word's address is formed after the reduction: formed before, it stayed live
// across it and cost the replace decoder an 8-byte spill under 40 registers.
__device__ __forceinline__ void add_warp_count(rank_state states, u32 tile, u32 lane_count) {
  const u32 count = __reduce_add_sync(full_mask, lane_count);
  if ((threadIdx.x & 31u) == 0) states.add_part<tile_warps>(tile, count);
}

// The warp's output units in the grid: [first, first + count); nothing when stopped (strict: an
// error before the warp).
struct warp_output {
  u64 first;
  u32 count;
  bool stopped;
};

// Warp 0 of the block (the caller's test), after the tile's aggregate is published (stored or
// counted): looks back for the tile's exclusive prefix, publishes its inclusive prefix and leaves
// the prefix in sh.prefix for settle_block. agg: the tile's scanned total (stop | count).
// lane = threadIdx.x & 31. Slots: consecutive tiles a lane reads (prim::lookback_exclusive_span).
template <bool Counted = false, u32 Slots = 1>
__device__ __forceinline__ void look_back_block(u32 lane, u64 agg, tile_rank_shared& sh, rank_state states,
                                                u32 tile) {
  u64 pre = 0;
  if (tile != 0) pre = prim::detail::lookback_exclusive_span<Slots>(states, tile);
  if (lane == 0) {
    if (Counted) states.add_counted_inclusive(tile, pre);
    else if (tile != 0) states.publish_inclusive(tile, grid_count{}(pre, agg));
    sh.prefix = pre;
  }
}

// All threads, after look_back_block and every add to the summary: one barrier; thread 0 flushes
// the summary (summary_base: the tile's first input byte, the summary's offsets being relative to
// it) and, where the block holds the last tile, records the output length in written units of
// CountsPerUnit scanned counts. Counted states (the decoder) never stop: the strict decoder's
// counts are speculative, so a tile that stops also offers its end as the output length
// (accum::cut). Returns the prefix.
template <u32 CountsPerUnit = 1, bool Counted = false>
__device__ __forceinline__ u64 settle_block(u64 agg, tile_rank_shared& sh, u32 tile, u32 last_tile, accum* acc,
                                            u64 summary_base) {
  __syncthreads();
  const u64 prefix = sh.prefix;
  if (threadIdx.x == 0) {
    sh.ts.flush(acc, summary_base, tile);
    const u64 after = grid_count{}(prefix, agg);
    if (tile == last_tile) acc->written = grid_count::count(after) / CountsPerUnit;
    if (Counted && grid_count::stopped(agg))
      atomicMin(reinterpret_cast<unsigned long long*>(&acc->cut), grid_count::count(after) / CountsPerUnit);
  }
  return prefix;
}

// All threads, after every add to the summary: look_back_block in warp 0, then settle_block.
template <u32 CountsPerUnit = 1, bool Counted = false, u32 Slots = 1>
__device__ __forceinline__ u64 rank_block(u32 lane, u64 agg, tile_rank_shared& sh, rank_state states, u32 tile,
                                          u32 last_tile, accum* acc, u64 summary_base) {
  if (threadIdx.x >> 5 == 0) look_back_block<Counted, Slots>(lane, agg, sh, states, tile);
  return settle_block<CountsPerUnit, Counted>(agg, sh, tile, last_tile, acc, summary_base);
}

// All threads, after every add to the summary: rank_block, and the warp's range from it. lane is
// the caller's threadIdx.x & 31: computed in here, it cost encode_fused_kernel<*, false> a
// register (ptxas: 40, not 39).
template <u32 CountsPerUnit = 1, bool Counted = false>
__device__ __forceinline__ warp_output place_warp_output(u32 lane, const tile_scan& s, u64 agg,
                                                         tile_rank_shared& sh, rank_state states, u32 tile,
                                                         u32 last_tile, accum* acc, u64 summary_base) {
  const u64 prefix =
      rank_block<CountsPerUnit, Counted>(lane, agg, sh, states, tile, last_tile, acc, summary_base);
  warp_output w;
  w.stopped = grid_count::stopped(prefix) || (s.warp_exclusive & stop32);
  w.count = s.warp_total & ~stop32;
  w.first = grid_count::count(prefix) + s.warp_exclusive;
  return w;
}

}  // namespace gutf8::kern
