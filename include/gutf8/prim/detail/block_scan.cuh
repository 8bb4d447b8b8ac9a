// Block-wide scan of one value per thread: warp shuffle scans + one shared-memory exchange of
// the warp totals (a single __syncthreads per call).
//
// Usage (every thread of the 1-D block calls, BlockThreads == blockDim.x, a multiple of 32):
//   using bscan = gutf8::prim::detail::block_scan<T, 256>;
//   __shared__ typename bscan::storage smem;
//   T agg;
//   T inc = bscan(smem).inclusive(v, op, agg);        // agg = v_0 op ... op v_{B-1}, all threads
//   T exc = bscan(smem).exclusive(v, init, op, agg);  // thread 0 gets init; agg excludes init
//   T ex2 = bscan(smem).exclusive(v, op, agg);        // no init: thread 0's result unspecified
//   auto p = bscan(smem).exclusive_parts<warp_scan_by<Op>>(v, identity, op);
//       // p.exclusive, and its warp's part: p.warp_exclusive, p.warp_total; p.aggregate
// Reusing the same storage for a second scan needs a __syncthreads() in between (as CUB).
// Operators are combined strictly in thread order: non-commutative operators are fine.
#pragma once

#include "warp_scan.cuh"

namespace gutf8::prim::detail {

// The sum, as an operator type (warp_scan_by<plus_op>, the look-back of counts).
struct plus_op {
  template <class X>
  __device__ __forceinline__ X operator()(const X& a, const X& b) const {
    return a + b;
  }
};

// A warp scan for block_scan::exclusive_parts: inclusive over the first Lanes lanes with Op.
template <class Op>
struct warp_scan_by {
  template <unsigned Lanes, class T>
  __device__ __forceinline__ static T scan(T v) {
    return warp_inclusive_scan<Lanes>(v, Op{});
  }
};

// A thread's exclusive prefix in the block with its warp's part: what a kernel needs that places
// its output per warp (each warp writes one contiguous range).
template <class T>
struct block_scan_parts {
  T exclusive;       // the thread's (thread 0: the identity)
  T warp_exclusive;  // its warp's (= the warp's lane 0's)
  T warp_total;      // its warp's values combined
  T aggregate;       // the block's
};

template <class T, int BlockThreads>
struct block_scan {
  static_assert(BlockThreads % warp_threads == 0 && BlockThreads <= 1024,
                "block_scan needs a whole number of warps");
  static constexpr int warps = BlockThreads / warp_threads;

  struct storage {
    T warp_totals[warps];
  };

  __device__ explicit block_scan(storage& s) : s_(s) {}

  template <class Op>
  __device__ __forceinline__ T inclusive(T v, Op op, T& block_aggregate) {
    T inc = warp_inclusive_scan(v, op);
    T prefix;
    const bool has_prefix = combine_warps(inc, op, prefix, block_aggregate);
    return has_prefix ? op(prefix, inc) : inc;
  }

  template <class Op>
  __device__ __forceinline__ T exclusive(T v, T init, Op op, T& block_aggregate) {
    const T inc = warp_inclusive_scan(v, op);
    const T up = warp_shfl_up(inc, 1);
    T prefix;
    const bool has_prefix = combine_warps(inc, op, prefix, block_aggregate);
    const T base = has_prefix ? op(init, prefix) : init;
    return lane_id() == 0 ? base : op(base, up);
  }

  // Exclusive scan with no initial value; thread 0's result is unspecified.
  template <class Op>
  __device__ __forceinline__ T exclusive(T v, Op op, T& block_aggregate) {
    const T inc = warp_inclusive_scan(v, op);
    const T up = warp_shfl_up(inc, 1);
    T prefix;
    const bool has_prefix = combine_warps(inc, op, prefix, block_aggregate);
    if (lane_id() == 0) return has_prefix ? prefix : v;
    return has_prefix ? op(prefix, up) : up;
  }

  // Exclusive scan with the warp's part. WarpScan::scan<Lanes>(v) is the inclusive warp scan
  // (warp_scan_by<Op>, or a faster one for the same Op); the warp totals are combined by one such
  // scan over the first `warps` lanes in every warp (log2(warps) shuffle steps), not by a walk.
  template <class WarpScan, class Op>
  __device__ __forceinline__ block_scan_parts<T> exclusive_parts(T v, T identity, Op op) {
    const unsigned lane = lane_id(), warp = warp_id();
    const T inc = WarpScan::template scan<warp_threads>(v);
    if (lane == warp_threads - 1) s_.warp_totals[warp] = inc;
    __syncthreads();
    const T totals = WarpScan::template scan<warps>(lane < warps ? s_.warp_totals[lane] : identity);
    const T before = warp_shfl_idx(totals, (warp + warp_threads - 1) & (warp_threads - 1));
    const T up = warp_shfl_up(inc, 1);
    block_scan_parts<T> r;
    r.warp_exclusive = warp == 0 ? identity : before;
    r.exclusive = lane == 0 ? r.warp_exclusive : op(r.warp_exclusive, up);
    r.warp_total = warp_shfl_idx(inc, warp_threads - 1);
    r.aggregate = warp_shfl_idx(totals, warps - 1);
    return r;
  }

 private:
  // Publishes each warp's total (lane 31's inclusive value), then every thread combines the
  // warp totals in order: prefix = totals of the warps before its own (absent for warp 0).
  template <class Op>
  __device__ __forceinline__ bool combine_warps(const T& inc, Op op, T& prefix, T& aggregate) {
    const unsigned warp = warp_id();
    if (lane_id() == 31) s_.warp_totals[warp] = inc;
    __syncthreads();
    aggregate = s_.warp_totals[0];
    prefix = aggregate;
#pragma unroll
    for (int w = 1; w < warps; ++w) {
      if (static_cast<unsigned>(w) == warp) prefix = aggregate;
      aggregate = op(aggregate, s_.warp_totals[w]);
    }
    return warp != 0;
  }

  storage& s_;
};

}  // namespace gutf8::prim::detail
