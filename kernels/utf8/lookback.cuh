// Decoupled look-back (Merrill & Garland 2016) specialised for the codec's flagged counts: ONE
// 64-bit word per tile holds status, stop flag and count, so a tile publishes and a successor
// reads with single relaxed atomics (no release/acquire pairs, no second array).
//
//   word = status (bits 62..63: 0 none, 1 aggregate, 2 inclusive) | stop (bit 61) | count (0..60)
//
// The combine is the strict-mode "flagged sum": once an operand on the left has stopped, nothing
// to its right is added. Tile-local values are 32-bit (bit 31 = stop, counts < 2^31).
// The states are cleared by prepare_kernel (summary.cuh) before every launch; tile = blockIdx.x
// (blocks start in index order, so the look-back always terminates).
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "utf8/classify.cuh"
#include "utf8/tile_shape.cuh"

namespace gutf8::kern {

inline constexpr u64 lb_aggregate = u64{1} << 62;
inline constexpr u64 lb_inclusive = u64{2} << 62;
inline constexpr u64 lb_status = u64{3} << 62;
inline constexpr u64 lb_stop = u64{1} << 61;
inline constexpr u64 lb_count = lb_stop - 1;
inline constexpr u32 stop32 = 1u << 31;

// a then b (a's stop wins). Values: stop | count.
__host__ __device__ __forceinline__ u64 lb_combine(u64 a, u64 b) { return (a & lb_stop) ? a : a + b; }
__host__ __device__ __forceinline__ u32 flag_combine(u32 a, u32 b) { return (a & stop32) ? a : a + b; }
__host__ __device__ __forceinline__ u64 widen_flagged(u32 v) {
  return u64{v & ~stop32} | ((v & stop32) ? lb_stop : 0);
}

__device__ __forceinline__ u64 lb_load(u64* p) {
  return ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
             *reinterpret_cast<unsigned long long*>(p))
      .load(::cuda::memory_order_relaxed);
}
__device__ __forceinline__ void lb_store(u64* p, u64 v) {
  ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(*reinterpret_cast<unsigned long long*>(p))
      .store(v, ::cuda::memory_order_relaxed);
}
__device__ __forceinline__ void lb_add(u64* p, u64 v) {
  ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(*reinterpret_cast<unsigned long long*>(p))
      .fetch_add(v, ::cuda::memory_order_relaxed);
}

// Two ways to publish a tile's word; the look-back reads both alike.
//  * stored_states: the owner stores aggregate | value, later inclusive | value (one thread each).
//  * counted_states: every warp of the tile adds an arrival of 2^59 and its count as soon as it
//    knows it; after the last of the tile_warps arrivals the bits above the count read
//    "aggregate" (8 x 2^59 = 2^62), before it they read "none" (bit 62 clear). The owner adds
//    aggregate + its exclusive prefix after the block's barrier that follows every warp's add, so
//    in the word's order of modifications it comes last (the barrier orders the adds before it):
//    the status carries to "inclusive", the count becomes prefix + count. Counts never stop.
struct stored_states {
  __device__ static void publish_inclusive(u64* word, u64 prefix, u64 agg) {
    lb_store(word, lb_inclusive | lb_combine(prefix, agg));
  }
};
struct counted_states {
  static constexpr u64 arrival = u64{1} << 59;
  static_assert(arrival * tile_warps == lb_aggregate);
  __device__ static void add_arrival(u64* word, u32 count) { lb_add(word, arrival + count); }
  // All lanes of a warp: the warp's share of the tile's word, the sum of the lanes' counts. The word's
  // address is formed after the reduction: formed before, it stayed live across it and cost the
  // replace decoder an 8-byte spill under 40 registers.
  __device__ static void add_warp(u64* states, u32 tile, u32 lane_count) {
    const u32 count = __reduce_add_sync(0xFFFFFFFFu, lane_count);
    if ((threadIdx.x & 31u) == 0) add_arrival(states + tile, count);
  }
  __device__ static void publish_inclusive(u64* word, u64 prefix, u64) { lb_add(word, lb_aggregate + prefix); }
};

// All 32 lanes of one warp, tile > 0: the combined value of tiles 0 .. tile-1 (in every lane).
// Each round trip reads the 32 tiles below the last (lane i: tile base + i); the windows are
// combined nearest first, each from its nearest inclusive entry, until one has an inclusive
// entry. One window per round trip, not four: the fused encoder +2-4 %, sanitize +5 % (H200,
// bench/results/codec_tuning.md, session 9); the extra windows were loads of hot lines that the
// look-back seldom needed. Aggregates are tile counts (< 2^32); only the inclusive entry can be
// large.
__device__ __forceinline__ u64 lookback_prefix(u64* states, u32 tile) {
  const u32 lane = threadIdx.x & 31u;
  long long base = static_cast<long long>(tile) - 32;
  u64 acc = 0;
  bool have = false;
  for (;;) {
    const long long pred = base + static_cast<long long>(lane);
    u64 w = pred >= 0 ? lb_load(states + pred) : lb_inclusive;
    while (__any_sync(0xFFFFFFFFu, (w & lb_status) == 0))
      if ((w & lb_status) == 0) w = lb_load(states + pred);  // pred >= 0 here
    const u32 incl = __ballot_sync(0xFFFFFFFFu, (w & lb_status) == lb_inclusive);
    const u32 first = incl ? 31u - static_cast<u32>(__clz(static_cast<int>(incl))) : 0u;
    const u32 stops = __ballot_sync(0xFFFFFFFFu, (w & lb_stop) != 0) & (0xFFFFFFFFu << first);
    const u32 last = stops ? static_cast<u32>(__ffs(static_cast<int>(stops))) - 1u : 31u;
    const u32 small = (lane > first && lane <= last) ? static_cast<u32>(w & lb_count) : 0u;
    const u32 sum = __reduce_add_sync(0xFFFFFFFFu, small);
    const u32 hi = __shfl_sync(0xFFFFFFFFu, static_cast<u32>((w & lb_count) >> 32), static_cast<int>(first));
    const u32 lo = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(w), static_cast<int>(first));
    u64 win = ((u64{hi} << 32) | lo) + sum;
    if (stops) win |= lb_stop;
    acc = have ? lb_combine(win, acc) : win;
    have = true;
    if (incl) return acc;
    base -= 32;
  }
}

}  // namespace gutf8::kern
