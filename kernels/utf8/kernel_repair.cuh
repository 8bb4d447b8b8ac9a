// Repair UTF-8 -> UTF-8: every byte of a well-formed sequence is copied, an error unit becomes
// EF BF BD (replace) or nothing (drop); strict copies the valid prefix. Same shape as the fused
// decoder (tile_rank.cuh): per-thread output byte counts ranked by block scan + decoupled
// look-back. A warp whose output is its input verbatim (no error in it: the common case) stores
// its bytes from registers where its output is 16-byte aligned (valid text in aligned buffers),
// else through its staging area; other warps stage their repaired bytes there before the
// look-back (those with few changed lanes repair them together: stage_warp_repaired). No shared
// copy of the tile: 8 blocks per SM.
//
// After the copying pass (kernel_validate.cuh, Copy: valid text stored verbatim with no look-back;
// device_repair.cu runs it where input and output are 16-byte aligned) the kernel only works
// where that pass flagged an error unit: then every tile runs as above, else block 0 takes the
// pass's LF counts and output length and every block returns.
#pragma once

#include "gutf8/prim/detail/store_range.cuh"
#include "utf8/kernel_validate.cuh"
#include "utf8/tile_rank.cuh"

namespace gutf8::kern {

inline constexpr u32 repair_tile = tile_bytes;
inline constexpr u32 repair_stage_bytes = 3 * warp_bytes + 32;

// Block 0 after a copying pass without error: the output is the input below the limit.
__device__ __forceinline__ void adopt_verbatim(const verbatim_summary* v, accum* acc) {
  if (threadIdx.x < summary_slots) {
    acc->lf[threadIdx.x] = v->lf[threadIdx.x];
    acc->last_lf_p1[threadIdx.x] = v->last_lf_p1[threadIdx.x];
  }
  if (threadIdx.x == 0) acc->written = acc->limit;
}

// copy_pass: the copying pass's summary, or nullptr where there was none.
template <error_policy P, bool Vec>
__global__ void __launch_bounds__(tile_threads, repair_min_blocks)
    repair_kernel(const u8* in, u64 n, u8* out, accum* acc, rank_state states, u32 last_tile,
                    const verbatim_summary* copy_pass) {
  __shared__ __align__(16) u8 st_sh[tile_warps][repair_stage_bytes];
  __shared__ utf8_tile_shared sh;

  if (copy_pass != nullptr) {
    wait_for_prior_kernel();
    if (load_error_found(copy_pass, blockIdx.x) == 0) {
      if (blockIdx.x == 0) adopt_verbatim(copy_pass, acc);
      return;
    }
  }
  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, tile = blockIdx.x;
  const u64 base = u64{tile} * tile_bytes;
  prefetch_states_ahead(states, tile, last_tile);
  lane_class<true> L;
  begin_utf8_tile<Vec, true>(in, n, base, acc, sh, L);

  const u32 err = L.start & ~L.wf;
  const u32 keep = P == error_policy::strict ? below_lowest(err) : ~0u;
  const u32 copy = L.cov.cover & keep;
  const u32 repl = P == error_policy::replace ? err : 0u;
  const u32 count = static_cast<u32>(popc(copy) + 3 * popc(repl));
  // Replace and drop publish each warp's count as soon as it is known (counted), so that the
  // successors' look-backs find it before this tile has scanned; strict counts can stop, so they
  // are stored after the scan.
  constexpr bool counted = P != error_policy::strict;
  if constexpr (counted) add_warp_count(states, tile, count);
  const tile_scan s = block_scan_flag(stop_flagged<P>(count, err), sh.rank.wt);
  add_lane_stats(sh.rank.ts, err, L.lf);
  const u64 agg = counted ? widen(s.aggregate) : publish_tile_aggregate(states, tile, s);

  const bool stopped = (s.exclusive & stop32) != 0;
  // Verbatim: the lane outputs all its bytes (strict: all before its first error, and nothing
  // after it; limit: all below it), so the warp's output is a prefix of its input.
  const bool verbatim = __all_sync(full_mask, stopped || (repl == 0 && copy == (L.inr & keep)));
  u8* st = st_sh[warp];
  if (!verbatim)  // stage at warp-local offsets while warp 0 looks back
    stage_warp_repaired<repair_few_lanes>(in + base + warp * warp_bytes, L.x, copy, repl, stopped, st,
                                           s.exclusive - s.warp_exclusive);
  const warp_output w =
      place_warp_output<1, counted>(lane, s, agg, sh.rank, states, tile, last_tile, acc, base);
  if (w.stopped) return;

  const u32 s0 = static_cast<u32>(reinterpret_cast<std::uintptr_t>(out) + w.first) & 15u;
  u8* dst = out + (w.first - s0);
  if (verbatim && s0 == 0 && w.count == warp_bytes) {  // a whole warp to an aligned place: from registers
    prim::detail::store32(dst + lane * lane_bytes, L.x);
    return;
  }
  if (verbatim) {  // the warp's bytes as they are, through its staging area
    auto* lane_st = reinterpret_cast<uint4*>(st + lane * lane_bytes);
    lane_st[0] = make_uint4(L.x[0], L.x[1], L.x[2], L.x[3]);
    lane_st[1] = make_uint4(L.x[4], L.x[5], L.x[6], L.x[7]);
    __syncwarp();
  }
  write_staged_bytes(st, s0, w.count, dst);
}

}  // namespace gutf8::kern
