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
// Reusing the same storage for a second scan needs a __syncthreads() in between (as CUB).
// Operators are combined strictly in thread order: non-commutative operators are fine.
#pragma once

#include "warp_scan.cuh"

namespace gutf8::prim::detail {

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
