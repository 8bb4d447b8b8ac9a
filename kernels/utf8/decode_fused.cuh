// Fused UTF-8 -> UTF-32 decoder: one pass, each input byte read once (+ a 4-byte halo from the
// neighbouring lanes). 256 threads x 32 bytes = 8 KiB tiles, one tile per block:
//   1. classify the thread's window (which bytes start an output unit);
//   2. rank the output units: block exclusive scan of per-thread counts, then the tile's global
//      offset by decoupled look-back (prim/tile_lookback.cuh);
//   3. decode each unit and stage the code points in padded shared memory, then the block writes
//      its contiguous output range with coalesced stores.
// Policies: replace outputs every unit start (U+FFFD for error units), drop only well-formed
// starts, strict the well-formed starts before the first error (stop flag in the scan value).
#pragma once

#include "utf8/common.cuh"

namespace gutf8::kern {

inline constexpr int decode_words = 8;
inline constexpr u32 decode_tile = block_threads * 4 * decode_words;

// Picks word q (0..3) of a..d (no local-memory indexing).
__device__ __forceinline__ u32 pick4(u32 q, u32 a, u32 b, u32 c, u32 d) {
  return q == 0 ? a : q == 1 ? b : q == 2 ? c : d;
}

// Output units of a thread under a policy (bits over its own bytes) and its scan value.
template <error_policy P, int NW, bool Detail>
__device__ __forceinline__ u32 output_starts(const thread_view<NW, Detail>& v) {
  if constexpr (P == error_policy::replace) return v.start;
  else if constexpr (P == error_policy::drop) return v.wf;
  else return v.wf & below_lowest(v.err());
}

template <error_policy P, int NW = decode_words>
__global__ void __launch_bounds__(block_threads)
    decode_fused_kernel(const u8* in, u64 n, u32* out, accum* acc,
                        prim::detail::tile_state<u64> state, u32 last_tile, bool vec) {
  constexpr u32 tile_bytes = block_threads * 4 * NW;
  using bscan = prim::detail::block_scan<u64, block_threads>;
  using lookback = prim::detail::tile_prefix<u64, block_threads>;
  __shared__ u32 stage[stage_words_for(tile_bytes)];
  __shared__ typename bscan::storage scan_sh;
  __shared__ typename lookback::storage lb_sh;
  __shared__ tile_summary ts;

  const u32 tile = blockIdx.x;
  const u64 base = u64{tile} * tile_bytes;
  const u32 off0 = threadIdx.x * 4 * NW;
  if (threadIdx.x == 0) ts.init();

  thread_view<NW, false> v;
  v.load(in, n, base + off0, acc->limit, vec);
  const u32 err = v.err();
  const u32 outb = output_starts<P>(v);
  const u64 value = u64(popc(outb)) | (P == error_policy::strict && err ? stop_flag : 0);
  u64 agg;
  const u64 excl = bscan(scan_sh).exclusive(value, u64{0}, flagged_sum{}, agg);
  {
    u32 e, f, l, ll;
    thread_stats(err, v.lf, off0, e, f, l, ll);
    ts.add(e, f, l, ll);
  }

  // Stage the thread's code points at its tile-local rank.
  if (!(excl & stop_flag)) {
    const u32 o = static_cast<u32>(excl);
    if (v.ascii && outb == range_bits<NW>(0, ~u64{0})) {
#pragma unroll
      for (int i = 0; i < 4 * NW; ++i) stage[stage_word(o + i)] = v.byte(i);
    } else {
      u32 k = o;
#pragma unroll
      for (int g = 0; g < NW / 4; ++g) {
        const u32 a0 = v.w[1 + 4 * g], a1 = v.w[2 + 4 * g], a2 = v.w[3 + 4 * g];
        const u32 a3 = v.w[4 + 4 * g], a4 = v.w[5 + 4 * g];
        u32 bits = (outb >> (16 * g)) & 0xFFFFu;
        const u32 wfb = (v.wf >> (16 * g)) & 0xFFFFu;
        while (bits) {
          const u32 p = static_cast<u32>(lowest_bit(bits));
          bits &= bits - 1;
          const u32 q = p >> 2;
          const u32 x = lanes_ahead(pick4(q, a0, a1, a2, a3), pick4(q, a1, a2, a3, a4), static_cast<int>(p & 3));
          u32 cp = decode_lanes(x);
          if constexpr (P == error_policy::replace) cp = (wfb >> p) & 1u ? cp : 0xFFFDu;
          stage[stage_word(k++)] = cp;
        }
      }
    }
  }

  const u64 prefix_raw = lookback::exclusive_prefix(state, tile, agg, flagged_sum{}, lb_sh);
  const u64 prefix = tile == 0 ? 0 : prefix_raw;
  __syncthreads();  // staging complete (tile 0 has no barrier in exclusive_prefix)
  if (threadIdx.x == 0) {
    ts.flush(acc, base, tile);
    if (tile == last_tile) acc->written = flagged_sum{}(prefix, agg) & ~stop_flag;
  }
  if (prefix & stop_flag) return;  // strict: an earlier tile met the first error
  const u32 count = static_cast<u32>(agg & ~stop_flag);
  u32* dst = out + (prefix & ~stop_flag);
  for (u32 i = threadIdx.x; i < count; i += block_threads) dst[i] = stage[stage_word(i)];
}

}  // namespace gutf8::kern
