// Staged UTF-8 -> UTF-32 decoder, the textbook formulation in two kernels:
//   1. expansion offsets: every byte gets the number of bytes it advances a 4-byte-per-code-point
//      expansion (a well-formed sequence of length L: 1 for each byte but the last, 5 - L for the
//      last, so ASCII 4; an error unit under replace: 4 for its first byte, 0 for the rest, and its
//      group is marked 0xFF, a byte UTF-8 never contains; dropped bytes 0). An exclusive scan of
//      those values (tile_rank.cuh: block scan + decoupled look-back) gives each byte's place; the
//      bytes are scattered into the expansion (staged per warp in shared memory, written with
//      aligned 16-byte stores), which is the output buffer itself: group k = output code point k,
//      lead byte first.
//   2. decode every group in place, branch-free (0xFF marker -> U+FFFD), 4 groups per thread.
#pragma once

#include "utf8/tile_rank.cuh"

namespace gutf8::kern {

inline constexpr u32 staged_tile = tile_bytes;
inline constexpr u32 staged_stage_bytes = 4 * warp_bytes + 32;

template <error_policy P, bool Vec>
__global__ void __launch_bounds__(tile_threads)
    staged_scatter_kernel(const u8* in, u64 n, u8* expansion, accum* acc, rank_state states, u32 last_tile) {
  __shared__ __align__(16) u8 st_sh[tile_warps][staged_stage_bytes];
  __shared__ utf8_tile_shared sh;

  const u32 warp = threadIdx.x >> 5, tile = blockIdx.x;
  const u64 base = u64{tile} * tile_bytes;
  prefetch_states_ahead(states, tile, last_tile);
  lane_class<true> L;
  begin_utf8_tile<Vec, true>(in, n, base, acc, sh, L);
  const u32 err = L.start & ~L.wf;
  const u32 keep = P == error_policy::strict ? below_lowest(err) : ~0u;
  const u32 cover = L.cov.cover & keep;
  const u32 marks = P == error_policy::replace ? err : 0u;
  // advance: ASCII 4; other covered bytes 1, +2 at the end of a 2-byte sequence, +1 at the end
  // of a 3-byte one; error start (replace) 4.
  const u32 asc = cover & ~L.hi;
  const u32 total = static_cast<u32>(4 * popc(asc) + popc(cover & L.hi) + 2 * popc(L.cov.end2 & keep) +
                                     popc(L.cov.end3 & keep) + 4 * popc(marks));
  const tile_scan s = block_scan_flag(stop_flagged<P>(total, err), sh.rank.wt);
  add_lane_stats(sh.rank.ts, err, L.lf);
  const u64 agg = publish_tile_aggregate(states, tile, s);

  u8* st = st_sh[warp];
  if (!(s.exclusive & stop32)) {  // scatter at warp-local offsets while warp 0 looks back
    u32 k = s.exclusive - s.warp_exclusive;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const u8 b = static_cast<u8>(L.x[i / 4] >> (8 * (i % 4)));
      if ((cover >> i) & 1u) {
        st[k] = b;
        k += b < 0x80u ? 4u : 1u + 2u * ((L.cov.end2 >> i) & 1u) + ((L.cov.end3 >> i) & 1u);
      } else if ((marks >> i) & 1u) {
        st[k] = 0xFF;
        k += 4;
      }
    }
  }
  // written counts code points: 4 expansion bytes each
  const warp_output w =
      place_warp_output<4>(threadIdx.x & 31u, s, agg, sh.rank, states, tile, last_tile, acc, base);
  if (w.stopped) return;

  const u32 s0 = static_cast<u32>(reinterpret_cast<std::uintptr_t>(expansion) + w.first) & 15u;
  write_staged_bytes(st, s0, w.count, expansion + (w.first - s0));
}

__device__ __forceinline__ u32 decode_group(u32 x) {
  return (x & 0xFFu) == 0xFFu ? 0xFFFDu : decode_lanes(x);
}

// Decodes groups [0, acc->written) in place; 4 per thread and step (the buffer is 16-byte aligned
// when `vec`).
static __global__ void __launch_bounds__(block_threads) staged_decode_kernel(u32* groups, const accum* acc,
                                                                             bool vec) {
  const u64 count = acc->written;
  const u64 stride = u64{gridDim.x} * block_threads;
  u64 k = u64{blockIdx.x} * block_threads + threadIdx.x;
  if (vec) {
    for (; 4 * k + 4 <= count; k += stride) {
      uint4 v = reinterpret_cast<uint4*>(groups)[k];
      v.x = decode_group(v.x);
      v.y = decode_group(v.y);
      v.z = decode_group(v.z);
      v.w = decode_group(v.w);
      reinterpret_cast<uint4*>(groups)[k] = v;
    }
    if (4 * k < count)
      for (u64 j = 4 * k; j < count; ++j) groups[j] = decode_group(groups[j]);
    return;
  }
  for (; k < count; k += stride) groups[k] = decode_group(groups[k]);
}

}  // namespace gutf8::kern
