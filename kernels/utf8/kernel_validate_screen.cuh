// Validate by screening: the walk of kernel_validate.cuh (a warp per contiguous run of 1 KiB
// segments, three segments' loads in flight, segments laid from the 16-byte aligned address at or
// below the input), but a segment is first screened (lane_screen.cuh: about half the instructions
// of the exact classification) and counted exactly only where the screen flags a byte. A valid
// segment thus costs the bit planes, the screen and the LF count; an all-ASCII one the LF count.
//
// Which segments are counted exactly: those the screen flags, the run's first and last ones (their
// neighbours are another warp's), the guarded ones at the input's ends, and the one after a
// segment flagged in its last two bytes (the stray continuations after an out-of-range second
// byte are flagged up to two bytes before them). An error unit in the last 4 bytes of a segment
// the screen passed flags only the next segment's first 3 bytes; that segment then counts it from
// the raw 4 bytes (tail_error_starts). The first error's offset and the last LF's are found
// outside the loop (the last LF by reloading the one segment of the lane that holds it).
#pragma once

#include "utf8/kernel_validate.cuh"
#include "utf8/lane_screen.cuh"

namespace gutf8::kern {

struct screen_counts {
  u32 errors = 0, first = ~0u, lf = 0;  // offsets relative to the run's start
  u32 last_lf_seg = 0;                  // 1 + the last segment of the run with an LF in the lane
  u32 carry = 0;                        // exact behind link of the previous segment (prev_exact)
  u32 last_word = 0;                    // the previous segment's last 4 bytes (lane 31's)
  lead_link link;                       // the previous segment's lane 31's lead flags
  bool prev_exact = true;               // the previous segment was counted exactly, or was ASCII
  bool force = true;                    // the next segment is counted exactly

  __device__ __forceinline__ void count(u32 err, u32 at) {
    errors += static_cast<u32>(popc(err));
    if (err) first = min(first, at + static_cast<u32>(lowest_bit(err)));
  }

  // An all-ASCII segment (and the 4 bytes before it): its LFs.
  __device__ __forceinline__ void ascii(const u32 (&x)[8], u32 i) {
    u32 not_lf = 0;  // 128 per byte that is not an LF
#pragma unroll
    for (int k = 0; k < 8; ++k) not_lf = byte_dot(((x[k] ^ 0x0A0A0A0Au) + 0x7F7F7F7Fu) & lane_hi, 0x01010101u) + not_lf;
    const u32 lfs = lane_bytes - (not_lf >> 7);
    lf += lfs;
    if (lfs) last_lf_seg = i + 1;
    last_word = 0;
    link = {};
    carry = 0;
    prev_exact = true;
    force = false;
  }

  // The exact count of a segment whose planes are P (what the old walk did to every segment).
  __device__ __forceinline__ void exact(const u32 (&P)[8], u32 nx, u32 y, u32 rel, u32 inr, u32 flags) {
    const u32 lane = threadIdx.x & 31u;
    const u32 own_ahead = ahead_link(P);
    u32 ahead = __shfl_down_sync(full_mask, own_ahead, 1);
    if (lane == 31) ahead = ahead_link_word(nx);
    const block_class c = classify_block(P, ahead);
    const u32 bl = behind_link(c);
    u32 up = __shfl_up_sync(full_mask, bl, 1);
    if (lane == 0) up = prev_exact ? carry : behind_link_word(y, own_ahead);
    carry = __shfl_sync(full_mask, bl, 31);
    count(starts(c, up) & ~c.wf & inr, rel);
    if (lane == 0 && !prev_exact && (flags & 7u) != 0) {  // an error unit ending the screened segment
      const u32 t = tail_error_starts(y, own_ahead);
      errors += static_cast<u32>(popc(t));
      if (t) first = min(first, rel - 4 + static_cast<u32>(lowest_bit(t)) - 28);
    }
    prev_exact = true;
    force = __shfl_sync(full_mask, flags >> 30, 31) != 0;
  }

  // Segment i: x = the lane's 32 bytes at run offset rel, next_word() = the 4 bytes after them
  // (lane 31's; loaded only when counted exactly), inr = bytes below the limit; exact_always:
  // counted exactly whatever the screen says.
  template <class NextWord>
  __device__ __forceinline__ void segment(const u32 (&x)[8], NextWord next_word, u32 i, u32 rel, u32 inr,
                                          bool exact_always) {
    const u32 lane = threadIdx.x & 31u;
    const u32 y = lane == 0 ? last_word : 0u;  // only lane 0 reads the bytes before its own
    u32 any = y;
#pragma unroll
    for (int k = 0; k < 8; ++k) any |= x[k];
    const bool must = force || exact_always;
    if (!must && !__any_sync(full_mask, (any & lane_hi) != 0)) {
      ascii(x, i);
      return;
    }
    last_word = __shfl_sync(full_mask, x[7], 31);
    u32 P[8];
    to_planes_mux(x, P);
    const lead_flags own = lead_flags_of(P);
    const lead_link mine = link_of(own);
    lead_link before{__shfl_up_sync(full_mask, mine.lefg, 1), __shfl_up_sync(full_mask, mine.g2, 1)};
    if (lane == 0) before = link;
    link = {__shfl_sync(full_mask, mine.lefg, 31), __shfl_sync(full_mask, mine.g2, 31)};
    const u32 flags = screen_block(P, own, flags_of(before)) & inr;
    const u32 lfm = lf_mask(P) & inr;
    lf += static_cast<u32>(popc(lfm));
    if (lfm) last_lf_seg = i + 1;
    if (!must && !__any_sync(full_mask, flags != 0)) {
      prev_exact = false;
      return;
    }
    exact(P, next_word(), y, rel, inr, flags);
  }
};

template <bool Aligned>
__global__ void __launch_bounds__(block_threads, validate_min_blocks)
    validate_screen_kernel(const u8* in, u64 n, bool is_last, accum* acc, u64 segs_per_warp, u64 total_segs) {
  const u32 lane = threadIdx.x & 31u;
  const u64 gw = (u64{blockIdx.x} * block_threads + threadIdx.x) >> 5;
  const u64 seg0 = gw * segs_per_warp;
  const u64 seg_end = seg0 + segs_per_warp < total_segs ? seg0 + segs_per_warp : total_segs;
  if (seg0 >= seg_end) return;  // warp-uniform
  // Positions below count from the aligned start `in - head`.
  const u32 head = Aligned ? 0u : validate_head(in);
  const u64 limit = head + chunk_limit(input_kind::utf8, in, n, is_last);  // acc->limit, before prepare sets it
  const bool a4 = aligned4(in);
  const u64 run = seg0 * validate_segment;
  const u8* rin = in - head + run;
  const u32 lo = lane * lane_bytes;
  const auto guarded_word = [&](u64 p) { return load_word(in, n, static_cast<std::int64_t>(p) - head, a4); };

  // Segments [first_fast, fast) of the run are in range with their 4-byte halo and below the limit.
  const u32 segs = static_cast<u32>(seg_end - seg0);
  const u32 first_fast = run == 0 && head != 0 ? 1 : 0;
  const u64 ok = (limit >= run + 4 ? (limit - run - 4) : 0) / validate_segment;  // limit <= head + n
  const u32 fast = static_cast<u32>(ok < segs ? ok : segs);

  screen_counts cnt;
  {
    const u32 first_word = guarded_word(run + lo);
    const u32 prev = (lane == 0 && run != 0) ? guarded_word(run - 4) : 0u;
    cnt.carry = behind_link_word(prev, ahead_link_word(first_word));  // lane 0's link into segment 0
    cnt.last_word = prev;
    cnt.link = link_of(lead_flags_of_word(prev));
  }
  // Segment i of the run; the last one is counted exactly (its tail's errors flag the next run).
  auto visit = [&](const u32(&x)[8], u32 i) {
    const u8* next = rin + u64{i} * validate_segment + lo + lane_bytes;
    const auto next_word = [&] { return lane == 31 ? __ldg(reinterpret_cast<const unsigned*>(next)) : 0u; };
    cnt.segment(x, next_word, i, i * static_cast<u32>(validate_segment) + lo, ~0u, i + 1 == segs);
  };
  auto visit_guarded = [&](u32 i) {  // the input's start when not aligned, its end
    const u64 pos = run + u64{i} * validate_segment + lo;
    u32 x[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = guarded_word(pos + 4 * k);
    const auto next_word = [&] { return lane == 31 ? guarded_word(pos + lane_bytes) : 0u; };
    cnt.segment(x, next_word, i, i * static_cast<u32>(validate_segment) + lo, range_mask(pos, limit), true);
  };
  auto load_fast = [&](u32 i, u32 (&x)[8]) {
    const u8* p = rin + u64{i} * validate_segment + lo;
    const uint4 a = __ldg(reinterpret_cast<const uint4*>(p));
    const uint4 b = __ldg(reinterpret_cast<const uint4*>(p + 16));
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
  };

  u32 i = 0;
  if (first_fast) visit_guarded(i++);
  if (i < fast) {
    u32 left = fast - i;  // counted down: the loop keeps no 64-bit bound
    u32 x0[8], x1[8], x2[8];
    load_fast(i, x0);
    if (left > 1) load_fast(i + 1, x1);
#pragma unroll 1
    for (;;) {
      if (left > 2) load_fast(i + 2, x2);
      visit(x0, i);
      ++i;
      if (--left == 0) break;
      if (left > 2) load_fast(i + 2, x0);
      visit(x1, i);
      ++i;
      if (--left == 0) break;
      if (left > 2) load_fast(i + 2, x1);
      visit(x2, i);
      ++i;
      if (--left == 0) break;
    }
  }
  for (; i < segs; ++i) visit_guarded(i);  // the end of the input

  allow_dependent_launch();
  // The lane's last LF: its segment reloaded.
  u32 last_p1 = 0;
  if (cnt.last_lf_seg) {
    const u32 rel = (cnt.last_lf_seg - 1) * static_cast<u32>(validate_segment) + lo;
    u32 lanes[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) lanes[k] = lf_lanes(guarded_word(run + rel + 4 * k));
    const u32 m = lanes_to_mask8(lanes) & range_mask(run + rel, limit);
    if (m) last_p1 = rel + static_cast<u32>(highest_bit(m)) + 1;
  }
  const u64 lf = warp_sum64(cnt.lf);
  const u64 last = warp_max64(last_p1 == 0 ? 0 : run + last_p1 - head);
  const u64 errors = warp_sum64(cnt.errors);
  const u64 first = warp_min64(cnt.first == ~0u ? ~u64{0} : run + cnt.first - head);
  const unsigned slot = static_cast<unsigned>(gw) & (summary_slots - 1);
  wait_for_prior_kernel();
  if (lane == 0) {
    if (errors) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->errors[slot]), errors);
    if (first != ~u64{0}) atomicMin(reinterpret_cast<unsigned long long*>(&acc->first_error[slot]), first);
    if (lf) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf[slot]), lf);
    if (last) atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_p1[slot]), last);
  }
}

}  // namespace gutf8::kern
