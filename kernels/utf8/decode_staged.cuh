// Staged UTF-8 -> UTF-32 decoder, the textbook formulation in two kernels:
//   1. expansion offsets: every byte gets the number of bytes it advances a 4-byte-per-code-point
//      expansion (a well-formed sequence of length L: 1 for each byte but the last, 5 - L for the
//      last, so ASCII 4; an error unit under replace: 4 for its first byte, 0 for the rest, and its
//      group is marked 0xFF, a byte UTF-8 never contains; dropped bytes 0). An exclusive scan of
//      those values (block scan + decoupled look-back) gives each byte's place; the bytes are
//      scattered into the expansion (staged in shared memory, written as whole 32-bit groups),
//      which is the output buffer itself: group k = output code point k, lead byte first.
//   2. decode every group in place, branch-free (0xFF marker -> U+FFFD).
#pragma once

#include "utf8/common.cuh"

namespace gutf8::kern {

inline constexpr int staged_words = 8;
inline constexpr u32 staged_tile = block_threads * 4 * staged_words;

// Shared-memory expansion layout: byte b of the tile's (word-aligned) expansion window. One
// padding word per 32 words keeps lanes writing 32 consecutive groups on distinct banks.
__device__ __forceinline__ u32 expansion_byte(u32 b) { return b + ((b >> 7) << 2); }

template <error_policy P, int NW = staged_words>
__global__ void __launch_bounds__(block_threads)
    staged_scatter_kernel(const u8* in, u64 n, u8* expansion, accum* acc,
                          prim::detail::tile_state<u64> state, u32 last_tile, bool vec) {
  constexpr u32 tile_bytes = block_threads * 4 * NW;
  constexpr u32 max_exp = 4 * tile_bytes + 4;  // + misalignment of the tile's first byte
  using bscan = prim::detail::block_scan<u64, block_threads>;
  using lookback = prim::detail::tile_prefix<u64, block_threads>;
  __shared__ u32 stage_w[(max_exp + 4 * (max_exp / 128) + 8) / 4];
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
  const u32 keep = P == error_policy::strict ? below_lowest(err) : ~0u;
  const u32 cover = v.cover & keep;
  const u32 marks = P == error_policy::replace ? err : 0u;
  // Per-byte advance (see above); summed here, replayed byte by byte when scattering.
  u32 total = 0;
#pragma unroll
  for (int i = 0; i < 4 * NW; ++i) {
    const u32 adv = ((cover >> i) & 1u)
                        ? (v.byte(i) < 0x80u ? 4u : 1u + 2u * ((v.end2 >> i) & 1u) + ((v.end3 >> i) & 1u))
                        : 4u * ((marks >> i) & 1u);
    total += adv;
  }
  const u64 value = u64{total} | (P == error_policy::strict && err ? stop_flag : 0);
  u64 agg;
  const u64 excl = bscan(scan_sh).exclusive(value, u64{0}, flagged_sum{}, agg);
  {
    u32 e, f, l, ll;
    thread_stats(err, v.lf, off0, e, f, l, ll);
    ts.add(e, f, l, ll);
  }
  const u64 prefix_raw = lookback::exclusive_prefix(state, tile, agg, flagged_sum{}, lb_sh);
  const u64 prefix = tile == 0 ? 0 : prefix_raw;
  const u32 shift = static_cast<u32>(prefix & 3);  // the tile's expansion starts mid-group

  if (!(excl & stop_flag)) {
    u32 o = shift + static_cast<u32>(excl);
#pragma unroll
    for (int i = 0; i < 4 * NW; ++i) {
      if ((cover >> i) & 1u) {
        const u32 b = v.byte(i);
        stage[expansion_byte(o)] = static_cast<u8>(b);
        o += b < 0x80u ? 4u : 1u + 2u * ((v.end2 >> i) & 1u) + ((v.end3 >> i) & 1u);
      } else if ((marks >> i) & 1u) {
        stage[expansion_byte(o)] = 0xFF;
        o += 4;
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ts.flush(acc, base, tile);
    if (tile == last_tile) acc->written = (flagged_sum{}(prefix, agg) & ~stop_flag) / 4;
  }
  if (prefix & stop_flag) return;
  const u32 count = static_cast<u32>(agg & ~stop_flag);
  // Window bytes [shift, shift + count) <-> global expansion bytes [prefix, prefix + count).
  u8* gbase = expansion + ((prefix & ~stop_flag) & ~u64{3});
  const u32 s0 = shift, s1 = shift + count;
  const u32 j_lo = (s0 + 3) >> 2, j_hi = s1 >> 2;
  if (j_lo > j_hi) {  // inside one group
    for (u32 s = s0 + threadIdx.x; s < s1; s += block_threads) gbase[s] = stage[expansion_byte(s)];
    return;
  }
  for (u32 s = s0 + threadIdx.x; s < 4 * j_lo; s += block_threads) gbase[s] = stage[expansion_byte(s)];
  u32* gw = reinterpret_cast<u32*>(gbase);
  for (u32 j = j_lo + threadIdx.x; j < j_hi; j += block_threads) gw[j] = stage_w[j + (j >> 5)];
  for (u32 s = 4 * j_hi + threadIdx.x; s < s1; s += block_threads) gbase[s] = stage[expansion_byte(s)];
}

// Decodes groups [0, acc->written) in place. Grid-stride.
static __global__ void __launch_bounds__(block_threads) staged_decode_kernel(u32* groups, const accum* acc) {
  const u64 count = acc->written;
  for (u64 k = u64{blockIdx.x} * block_threads + threadIdx.x; k < count;
       k += u64{gridDim.x} * block_threads) {
    const u32 x = groups[k];
    groups[k] = (x & 0xFFu) == 0xFFu ? 0xFFFDu : decode_lanes(x);
  }
}

}  // namespace gutf8::kern
