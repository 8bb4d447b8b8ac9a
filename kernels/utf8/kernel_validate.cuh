// Validate: a pure read-and-reduce kernel. Every warp owns a contiguous run of 1 KiB warp tiles
// (lane = 32 consecutive bytes) and walks it with the next two warp tiles' loads in flight while it
// classifies the current one (a ring of three register buffers, unrolled so nothing is copied).
// An all-ASCII warp tile only counts LFs; the others are classified with bit planes (lane_planes.cuh).
// Links between lanes travel by shuffle; the link into lane 0 is the previous warp tile's lane 31
// (carried in a register), so only the start of a run classifies the 4 bytes before it. The
// warp tiles are laid from the 16-byte aligned address at or below the input (its `head` bytes
// before the input read as 0, which is how the input's start reads anyway), so that any input
// takes 16-byte loads: warp tiles fully in range take them unguarded; the first, where the input
// is not aligned, and the last one or two go through the guarded path, which reads only the
// input's own bytes. Counters are 32-bit and run-relative until the warp ends: one set of
// atomics per warp. Order-sensitive results come from kernel_summary.cuh. Launched as a dependent of
// prepare_kernel, it reads its input while that kernel runs: it derives the limit itself and only
// waits for the cleared accumulator before its atomics.
//
// With Copy it is also repair's first pass (kernel_repair.cuh): valid text is its own repair,
// so each warp tile is stored at its own offset of the output, without the look-back that places
// repaired output. A warp that finds an error unit flags it, and it and the other warps of its
// block stop; the repair kernel after it then does the whole job, or without the flag takes this
// pass's LF counts.
#pragma once

#include "gutf8/prim/detail/store_range.cuh"
#include "utf8/kernel_summary.cuh"
#include "utf8/tile_classify.cuh"

namespace gutf8::kern {

inline constexpr u64 validate_warp_tile = warp_bytes;  // 1 KiB

// What the copying pass leaves for the repair kernel: whether a warp found an error unit (a flag
// in 32 replicas on 32 lines: one line read by every block serialised them), and the LF counts
// (accum's slots) that hold when none did. Zeroed by prepare_kernel.
struct verbatim_summary {
  static constexpr unsigned replicas = 32;  // one a lane
  struct alignas(128) line {
    unsigned int error_found;
  };
  line flag[replicas];  // replica i set by lane i
  u64 lf[summary_slots];
  u64 last_lf_p1[summary_slots];
};

// Replica `replica` of the flag (any value: taken mod replicas).
__device__ __forceinline__ unsigned int load_error_found(const verbatim_summary* v, unsigned replica) {
  unsigned int f;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
               : "=r"(f)
               : "l"(__cvta_generic_to_global(&v->flag[replica % verbatim_summary::replicas].error_found)));
  return f;
}

// The copying pass's output and flag; out == nullptr: validate only.
struct verbatim_copy {
  u8* out = nullptr;
  verbatim_summary* summary = nullptr;
};

struct validate_counts {
  u32 errors = 0, first = ~0u, lf = 0, last_p1 = 0;  // offsets relative to the run's start
  u32 carry = 0;                                     // behind link of the previous warp tile

  // One warp tile: x = the lane's 32 bytes at run offset `rel`, nx = the 4 bytes after them (only
  // lane 31's is used), inr = bytes below the limit.
  __device__ __forceinline__ void warp_tile(const u32 (&x)[8], u32 nx, u32 rel, u32 inr) {
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
      const slab_class c = classify_slab(P, ahead);
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

// Copy: whether the warp walks on after its latest warp tile: not after an error unit in its warp tiles
// (the block's first such warp sets every replica of the flag) or in another warp of its block;
// other blocks are not polled (that cost more than it saved: bench/results/codec_tuning.md).
__device__ __forceinline__ bool copy_pass_continues(const validate_counts& cnt, verbatim_summary* summary,
                                                    unsigned int& block_flagged) {
  const u32 lane = threadIdx.x & 31u;
  if (__any_sync(full_mask, cnt.errors != 0)) {
    unsigned int already = 0;
    if (lane == 0) already = atomicExch(&block_flagged, 1u);
    if (__shfl_sync(full_mask, already, 0) == 0) {  // lane i sets replica i
      unsigned int* at = &summary->flag[lane].error_found;
      asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(at)), "r"(1u) : "memory");
    }
    return false;
  }
  return !__any_sync(full_mask, *static_cast<volatile unsigned int*>(&block_flagged) != 0);
}

// Copy: the lane's 32 bytes x at out + pos (16-byte aligned and in range where aligned_in_range,
// else only the bytes below n).
__device__ __forceinline__ void store_lane(u8* out, u64 n, u64 pos, bool aligned_in_range, const u32 (&x)[8]) {
  if (aligned_in_range) {
    prim::detail::store32(out + pos, x);
    return;
  }
#pragma unroll
  for (u32 k = 0; k < lane_bytes; ++k)
    if (pos + k < n) out[pos + k] = static_cast<u8>(x[k / 4] >> (8 * (k % 4)));
}

// Bytes between the 16-byte aligned address at or below the input and the input: the warp tiles
// start there (host code sizes the grid with it too).
GUTF8_HD u32 validate_head(const void* in) { return static_cast<u32>(reinterpret_cast<std::uintptr_t>(in) & 15u); }

// Aligned: the input is 16-byte aligned (head 0 at compile time: the aligned walk without the
// arithmetic of a head; the copying pass's input always is).
template <bool Aligned, bool Copy = false>
__global__ void __launch_bounds__(block_threads, validate_min_blocks)
    validate_kernel(const u8* in, u64 n, bool is_last, accum* acc, u64 warp_tiles_per_warp, u64 total_warp_tiles,
                    verbatim_copy copy) {
  static_assert(!Copy || Aligned, "the copying pass stores 16-byte groups at the input's offsets");
  __shared__ unsigned int block_flagged;  // Copy: a warp of the block has set the flag
  if constexpr (Copy) {
    if (threadIdx.x == 0) block_flagged = 0;
    __syncthreads();
  }
  const u32 lane = threadIdx.x & 31u;
  const u64 gw = (u64{blockIdx.x} * block_threads + threadIdx.x) >> 5;
  const u64 warp_tile0 = gw * warp_tiles_per_warp;
  const u64 warp_tile_end =
      warp_tile0 + warp_tiles_per_warp < total_warp_tiles ? warp_tile0 + warp_tiles_per_warp : total_warp_tiles;
  if (warp_tile0 >= warp_tile_end) return;  // warp-uniform
  // Positions below count from the aligned start `in - head`.
  const u32 head = Aligned ? 0u : validate_head(in);
  const u64 limit = head + chunk_limit(input_kind::utf8, in, n, is_last);  // acc->limit, before prepare sets it
  const bool a4 = aligned4(in);
  const u64 run = warp_tile0 * validate_warp_tile;  // the run's first byte
  const u8* rin = in - head + run;
  const u32 lo = lane * lane_bytes;                 // the lane's offset in a warp tile
  // The input's own bytes at aligned-start position p (before the input and from n on: 0).
  const auto guarded_word = [&](u64 p) { return load_word(in, n, static_cast<std::int64_t>(p) - head, a4); };

  // Warp tiles [first_fast, fast) of the run are in range with their 4-byte halo and below the limit.
  const u64 warp_tiles = warp_tile_end - warp_tile0;
  const u64 first_fast = run == 0 && head != 0 ? 1 : 0;
  const u64 ok = (limit >= run + 4 ? (limit - run - 4) : 0) / validate_warp_tile;  // limit <= head + n
  const u64 fast = ok < warp_tiles ? ok : warp_tiles;

  validate_counts cnt;
  {
    const u32 first_word = guarded_word(run + lo);
    const u32 prev = (lane == 0 && run != 0) ? guarded_word(run - 4) : 0u;
    cnt.carry = behind_link_word(prev, ahead_link_word(first_word));  // lane 0's link into warp tile 0
  }
  if constexpr (Copy) wait_for_prior_kernel();  // prepare_kernel clears the flag this pass reads and sets

  // Warp tile i of the run: counted, and with Copy stored; false when the warp stops (Copy: an error).
  auto visit = [&](const u32(&x)[8], u32 nx, u64 i, u32 inr, bool aligned_in_range) {
    cnt.warp_tile(x, nx, static_cast<u32>(i * validate_warp_tile) + lo, inr);
    if constexpr (Copy) {
      if (!copy_pass_continues(cnt, copy.summary, block_flagged)) return false;
      store_lane(copy.out, n, run + i * validate_warp_tile + lo, aligned_in_range, x);
    }
    return true;
  };
  auto visit_guarded = [&](u64 i) {  // the input's start when not aligned, its end
    const u64 pos = run + i * validate_warp_tile + lo;
    u32 x[8], nx = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = guarded_word(pos + 4 * k);
    if (lane == 31) nx = guarded_word(pos + lane_bytes);
    return visit(x, nx, i, range_mask(pos, limit), false);
  };

  auto load_fast = [&](u64 i, u32 (&x)[8], u32& nx) {
    const u8* p = rin + i * validate_warp_tile + lo;
    const uint4 a = __ldg(reinterpret_cast<const uint4*>(p));
    const uint4 b = __ldg(reinterpret_cast<const uint4*>(p + 16));
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
    if (lane == 31) nx = __ldg(reinterpret_cast<const unsigned*>(p + lane_bytes));
  };

  bool going = true;
  u64 i = 0;
  if (first_fast) going = visit_guarded(i++);
  if (going && i < fast) {
    u32 x0[8], x1[8], x2[8], n0 = 0, n1 = 0, n2 = 0;
    load_fast(i, x0, n0);
    if (i + 1 < fast) load_fast(i + 1, x1, n1);
#pragma unroll 1
    for (;;) {
      if (i + 2 < fast) load_fast(i + 2, x2, n2);
      if (!(going = visit(x0, n0, i, ~0u, true))) break;
      if (++i >= fast) break;
      if (i + 2 < fast) load_fast(i + 2, x0, n0);
      if (!(going = visit(x1, n1, i, ~0u, true))) break;
      if (++i >= fast) break;
      if (i + 2 < fast) load_fast(i + 2, x1, n1);
      if (!(going = visit(x2, n2, i, ~0u, true))) break;
      if (++i >= fast) break;
    }
  }
  for (; going && i < warp_tiles; ++i) going = visit_guarded(i);  // the end of the input

  allow_dependent_launch();
  const u64 lf = warp_sum64(cnt.lf);
  const u64 last_p1 = warp_max64(cnt.last_p1 == 0 ? 0 : run + cnt.last_p1 - head);
  const unsigned slot = static_cast<unsigned>(gw) & (summary_slots - 1);
  if constexpr (Copy) {
    if (going && lane == 0) {  // a warp that stopped leaves the counting to the repair kernel
      if (lf) atomicAdd(reinterpret_cast<unsigned long long*>(&copy.summary->lf[slot]), lf);
      if (last_p1) atomicMax(reinterpret_cast<unsigned long long*>(&copy.summary->last_lf_p1[slot]), last_p1);
    }
    return;
  }
  const u64 errors = warp_sum64(cnt.errors);
  const u64 first = warp_min64(cnt.first == ~0u ? ~u64{0} : run + cnt.first - head);
  wait_for_prior_kernel();
  if (lane == 0) {
    if (errors) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->errors[slot]), errors);
    if (first != ~u64{0}) atomicMin(reinterpret_cast<unsigned long long*>(&acc->first_error[slot]), first);
    if (lf) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf[slot]), lf);
    if (last_p1) atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_p1[slot]), last_p1);
  }
}

}  // namespace gutf8::kern
