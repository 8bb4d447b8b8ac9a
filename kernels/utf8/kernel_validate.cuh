// Validate: a pure read-and-reduce kernel. Every warp owns a contiguous run of 1 KiB segments
// (lane = 32 consecutive bytes) and walks it with the next two segments' loads in flight while it
// classifies the current one (a ring of three register buffers, unrolled so nothing is copied).
// An all-ASCII segment only counts LFs; the others are classified with bit planes (lane_planes.cuh).
// Links between lanes travel by shuffle; the link into lane 0 is the previous segment's lane 31
// (carried in a register), so only the start of a run classifies the 4 bytes before it. Segments
// that are fully in range take unguarded 16-byte loads; the last one or two of the input go
// through the guarded path. Counters are 32-bit and run-relative until the warp ends: one set of
// atomics per warp. Order-sensitive results come from kernel_summary.cuh. Launched as a dependent of
// prepare_kernel, it reads its input while that kernel runs: it derives the limit itself and only
// waits for the cleared accumulator before its atomics.
#pragma once

#include "utf8/kernel_summary.cuh"
#include "utf8/tile_classify.cuh"

namespace gutf8::kern {

inline constexpr u64 validate_segment = warp_bytes;  // 1 KiB

struct validate_counts {
  u32 errors = 0, first = ~0u, lf = 0, last_p1 = 0;  // offsets relative to the run's start
  u32 carry = 0;                                     // behind link of the previous segment

  // One segment: x = the lane's 32 bytes at run offset `rel`, nx = the 4 bytes after them (only
  // lane 31's is used), inr = bytes below the limit.
  __device__ __forceinline__ void segment(const u32 (&x)[8], u32 nx, u32 rel, u32 inr) {
    const u32 lane = threadIdx.x & 31u;
    u32 any = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) any |= x[k];
    u32 lfm;
    if (__any_sync(full_mask, (any & lane_hi) != 0)) {
      u32 P[8];
      to_planes(x, P);
      u32 ahead = __shfl_down_sync(full_mask, ahead_link(P), 1);
      if (lane == 31) ahead = ahead_link_word(nx);
      const block_class c = classify_block(P, ahead);
      const u32 bl = behind_link(c);
      u32 up = __shfl_up_sync(full_mask, bl, 1);
      if (lane == 0) up = carry;
      carry = __shfl_sync(full_mask, bl, 31);
      const u32 err = starts(c, up) & ~c.wf & inr;
      errors += static_cast<u32>(popc(err));
      if (err && first == ~0u) first = rel + static_cast<u32>(lowest_bit(err));
      lfm = lf_mask(P) & inr;
    } else {
      carry = 0;
      lfm = lf_mask_words(x) & inr;
    }
    lf += static_cast<u32>(popc(lfm));
    if (lfm) last_p1 = rel + static_cast<u32>(highest_bit(lfm)) + 1;
  }
};

template <bool Vec>
__global__ void __launch_bounds__(block_threads, validate_min_blocks)
    validate_kernel(const u8* in, u64 n, bool is_last, accum* acc, u64 segs_per_warp, u64 total_segs) {
  const u32 lane = threadIdx.x & 31u;
  const u64 gw = (u64{blockIdx.x} * block_threads + threadIdx.x) >> 5;
  const u64 seg0 = gw * segs_per_warp;
  const u64 seg_end = seg0 + segs_per_warp < total_segs ? seg0 + segs_per_warp : total_segs;
  if (seg0 >= seg_end) return;  // warp-uniform
  const u64 limit = chunk_limit(input_kind::utf8, in, n, is_last);  // acc->limit, before prepare sets it
  const bool a4 = aligned4(in);
  const u64 run = seg0 * validate_segment;  // the run's first byte
  const u8* rin = in + run;
  const u32 lo = lane * lane_bytes;         // the lane's offset in a segment

  // Segments [0, fast) of the run are in range with their 4-byte halo and below the limit.
  const u64 segs = seg_end - seg0;
  u64 fast = 0;
  if (Vec) {
    const u64 ok = (limit >= run + 4 ? (limit - run - 4) : 0) / validate_segment;  // limit <= n
    fast = ok < segs ? ok : segs;
  }

  validate_counts cnt;
  {
    const u32 first_word = load_word(in, n, static_cast<std::int64_t>(run + lo), a4);
    const u32 prev = (lane == 0 && run != 0) ? load_word(in, n, static_cast<std::int64_t>(run) - 4, a4) : 0u;
    cnt.carry = behind_link_word(prev, ahead_link_word(first_word));  // lane 0's link into segment 0
  }

  auto load_fast = [&](u64 i, u32 (&x)[8], u32& nx) {
    const u8* p = rin + i * validate_segment + lo;
    const uint4 a = __ldg(reinterpret_cast<const uint4*>(p));
    const uint4 b = __ldg(reinterpret_cast<const uint4*>(p + 16));
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
    if (lane == 31) nx = __ldg(reinterpret_cast<const unsigned*>(p + lane_bytes));
  };

  if (fast > 0) {
    u32 x0[8], x1[8], x2[8], n0 = 0, n1 = 0, n2 = 0;
    load_fast(0, x0, n0);
    if (fast > 1) load_fast(1, x1, n1);
    u64 i = 0;
#pragma unroll 1
    for (;;) {
      if (i + 2 < fast) load_fast(i + 2, x2, n2);
      cnt.segment(x0, n0, static_cast<u32>(i * validate_segment) + lo, ~0u);
      if (++i >= fast) break;
      if (i + 2 < fast) load_fast(i + 2, x0, n0);
      cnt.segment(x1, n1, static_cast<u32>(i * validate_segment) + lo, ~0u);
      if (++i >= fast) break;
      if (i + 2 < fast) load_fast(i + 2, x1, n1);
      cnt.segment(x2, n2, static_cast<u32>(i * validate_segment) + lo, ~0u);
      if (++i >= fast) break;
    }
  }
  for (u64 i = fast; i < segs; ++i) {  // guarded: the end of the input (or any misaligned input)
    const u64 pos = run + i * validate_segment + lo;
    u32 x[8], nx = 0;
    load_lane(in, n, pos, false, x);
    if (lane == 31) nx = load_word(in, n, static_cast<std::int64_t>(pos + lane_bytes), a4);
    cnt.segment(x, nx, static_cast<u32>(i * validate_segment) + lo, range_mask(pos, limit));
  }

  allow_dependent_launch();
  const u64 errors = warp_sum64(cnt.errors);
  const u64 first = warp_min64(cnt.first == ~0u ? ~u64{0} : run + cnt.first);
  const u64 lf = warp_sum64(cnt.lf);
  const u64 last_p1 = warp_max64(cnt.last_p1 == 0 ? 0 : run + cnt.last_p1);
  wait_for_prior_kernel();
  if (lane == 0) {
    const unsigned slot = static_cast<unsigned>(gw) & (summary_slots - 1);
    if (errors) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->errors[slot]), errors);
    if (first != ~u64{0}) atomicMin(reinterpret_cast<unsigned long long*>(&acc->first_error[slot]), first);
    if (lf) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf[slot]), lf);
    if (last_p1) atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_p1[slot]), last_p1);
  }
}

}  // namespace gutf8::kern
