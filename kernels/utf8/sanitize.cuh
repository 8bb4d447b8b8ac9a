// Sanitize UTF-8 -> UTF-8: every byte of a well-formed sequence is copied, an error unit becomes
// EF BF BD (replace) or nothing (drop); strict copies the valid prefix. Same shape as the fused
// decoder: per-thread output byte counts ranked by block scan + decoupled look-back, output
// staged in padded shared memory and written with 32-bit stores.
#pragma once

#include "utf8/common.cuh"

namespace gutf8::kern {

inline constexpr int sanitize_words = 8;
inline constexpr u32 sanitize_tile = block_threads * 4 * sanitize_words;

template <error_policy P, int NW = sanitize_words>
__global__ void __launch_bounds__(block_threads)
    sanitize_kernel(const u8* in, u64 n, u8* out, accum* acc, prim::detail::tile_state<u64> state,
                    u32 last_tile, bool vec) {
  constexpr u32 tile_bytes = block_threads * 4 * NW;
  constexpr u32 max_out = (P == error_policy::replace ? 3 : 1) * tile_bytes;
  using bscan = prim::detail::block_scan<u64, block_threads>;
  using lookback = prim::detail::tile_prefix<u64, block_threads>;
  __shared__ u32 stage_w[stage_bytes_for(max_out) / 4 + 1];
  __shared__ typename bscan::storage scan_sh;
  __shared__ typename lookback::storage lb_sh;
  __shared__ tile_summary ts;
  u8* stage = reinterpret_cast<u8*>(stage_w);

  const u32 tile = blockIdx.x;
  const u64 base = u64{tile} * tile_bytes;
  const u32 off0 = threadIdx.x * 4 * NW;
  if (threadIdx.x == 0) ts.init();

  thread_view<NW, true> v;
  v.load(in, n, base + off0, acc->limit, vec);
  const u32 err = v.err();
  const u32 cover = P == error_policy::strict ? v.cover & below_lowest(err) : v.cover;
  const u32 repl = P == error_policy::replace ? err : 0u;
  const u64 value = u64(popc(cover) + 3 * popc(repl)) |
                    (P == error_policy::strict && err ? stop_flag : 0);
  u64 agg;
  const u64 excl = bscan(scan_sh).exclusive(value, u64{0}, flagged_sum{}, agg);
  {
    u32 e, f, l, ll;
    thread_stats(err, v.lf, off0, e, f, l, ll);
    ts.add(e, f, l, ll);
  }
  if (!(excl & stop_flag)) {
    u32 k = static_cast<u32>(excl);
#pragma unroll
    for (int i = 0; i < 4 * NW; ++i) {
      if ((cover >> i) & 1u) {
        stage[stage_byte(k++)] = static_cast<u8>(v.byte(i));
      } else if ((repl >> i) & 1u) {
        stage[stage_byte(k)] = 0xEF;
        stage[stage_byte(k + 1)] = 0xBF;
        stage[stage_byte(k + 2)] = 0xBD;
        k += 3;
      }
    }
  }
  const u64 prefix_raw = lookback::exclusive_prefix(state, tile, agg, flagged_sum{}, lb_sh);
  const u64 prefix = tile == 0 ? 0 : prefix_raw;
  __syncthreads();
  if (threadIdx.x == 0) {
    ts.flush(acc, base, tile);
    if (tile == last_tile) acc->written = flagged_sum{}(prefix, agg) & ~stop_flag;
  }
  if (prefix & stop_flag) return;
  copy_out_bytes(stage, static_cast<u32>(agg & ~stop_flag), out + (prefix & ~stop_flag));
}

}  // namespace gutf8::kern
