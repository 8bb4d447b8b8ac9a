// UTF-32LE -> UTF-8 encoders. An element is one 32-bit value; it is an error unit when it is a
// surrogate or above U+10FFFF, and 1..3 trailing bytes at the end of the last chunk form one more
// error unit (index `full`). Offsets in the summary are byte offsets of the UTF-32 input.
//   * encode_fused_kernel: per-thread encoded lengths ranked by block scan + decoupled look-back,
//     bytes staged in shared memory, written with 32-bit stores.
//   * encode_expand_kernel + compact_bytes_kernel: every element writes 4 bytes padded with 0xFF
//     (a byte UTF-8 never contains), then a stream compaction removes the padding.
#pragma once

#include "utf8/common.cuh"
#include "utf8/summary.cuh"

namespace gutf8::kern {

inline constexpr int encode_elems = 8;  // per thread (32 input bytes)
inline constexpr u32 encode_tile = block_threads * encode_elems;  // elements per tile

// One thread's elements: values, error / LF bits (bit j = element e0 + j) and lengths.
struct encode_view {
  u32 v[encode_elems];
  u32 err, lf, inr;

  // full: complete elements in the chunk; elems: full + 1 when a ragged tail is an error unit.
  __device__ __forceinline__ void load(const u8* in, u64 n, u64 e0, u64 full, u64 elems, bool vec) {
    const uint4 a = load16(in, n, 4 * e0, vec);
    const uint4 b = load16(in, n, 4 * e0 + 16, vec);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
    err = lf = inr = 0;
#pragma unroll
    for (int j = 0; j < encode_elems; ++j) {
      const u64 idx = e0 + j;
      const bool in_range = idx < elems;
      const bool valid = idx < full && detail::is_scalar_value(v[j]);
      inr |= u32{in_range} << j;
      err |= u32{in_range && !valid} << j;
      lf |= u32{idx < full && v[j] == 0x0Au} << j;
    }
  }
};

__device__ __forceinline__ void encode_stats(const encode_view& ev, u32 off0_bytes, tile_summary& ts) {
  const u32 e = static_cast<u32>(popc(ev.err));
  const u32 f = ev.err ? off0_bytes + 4 * static_cast<u32>(lowest_bit(ev.err)) : ~0u;
  const u32 l = static_cast<u32>(popc(ev.lf));
  const u32 ll = ev.lf ? off0_bytes + 4 * static_cast<u32>(highest_bit(ev.lf)) + 1 : 0u;
  ts.add(e, f, l, ll);
}

// Output bytes of element value c under the policy (error: 3 for replace, 0 otherwise).
template <error_policy P>
__device__ __forceinline__ u32 out_length(u32 c, bool is_err) {
  if (is_err) return P == error_policy::replace ? 3u : 0u;
  return detail::encoded_length(static_cast<char32_t>(c));
}

// UTF-8 bytes of c packed little-endian (lane 0 = first byte); replacement for errors.
__device__ __forceinline__ u32 pack_utf8(u32 c, bool is_err) {
  if (is_err) return 0xBDBFEFu;
  u8 b[4] = {0, 0, 0, 0};
  detail::encode_scalar(static_cast<char32_t>(c), b);
  return u32{b[0]} | u32{b[1]} << 8 | u32{b[2]} << 16 | u32{b[3]} << 24;
}

template <error_policy P>
__global__ void __launch_bounds__(block_threads)
    encode_fused_kernel(const u8* in, u64 n, u64 full, u64 elems, u8* out, accum* acc,
                        prim::detail::tile_state<u64> state, u32 last_tile, bool vec) {
  constexpr u32 max_out = 4 * encode_tile;
  using bscan = prim::detail::block_scan<u64, block_threads>;
  using lookback = prim::detail::tile_prefix<u64, block_threads>;
  __shared__ u32 stage_w[stage_bytes_for(max_out) / 4 + 1];
  __shared__ typename bscan::storage scan_sh;
  __shared__ typename lookback::storage lb_sh;
  __shared__ tile_summary ts;
  u8* stage = reinterpret_cast<u8*>(stage_w);

  const u32 tile = blockIdx.x;
  const u64 e_base = u64{tile} * encode_tile;
  const u32 t_off = threadIdx.x * encode_elems;
  if (threadIdx.x == 0) ts.init();

  encode_view ev;
  ev.load(in, n, e_base + t_off, full, elems, vec);
  const u32 keep = ev.inr & (P == error_policy::strict ? below_lowest(ev.err) : ~0u);
  u32 total = 0;
#pragma unroll
  for (int j = 0; j < encode_elems; ++j)
    total += ((keep >> j) & 1u) ? out_length<P>(ev.v[j], (ev.err >> j) & 1u) : 0u;
  const u64 value = u64{total} | (P == error_policy::strict && ev.err ? stop_flag : 0);
  u64 agg;
  const u64 excl = bscan(scan_sh).exclusive(value, u64{0}, flagged_sum{}, agg);
  encode_stats(ev, 4 * t_off, ts);
  if (!(excl & stop_flag)) {
    u32 k = static_cast<u32>(excl);
#pragma unroll
    for (int j = 0; j < encode_elems; ++j) {
      if (!((keep >> j) & 1u)) continue;
      const bool is_err = (ev.err >> j) & 1u;
      const u32 len = out_length<P>(ev.v[j], is_err);
      if (len == 0) continue;
      const u32 bytes = pack_utf8(ev.v[j], is_err);
      for (u32 b = 0; b < len; ++b) stage[stage_byte(k + b)] = static_cast<u8>(bytes >> (8 * b));
      k += len;
    }
  }
  const u64 prefix_raw = lookback::exclusive_prefix(state, tile, agg, flagged_sum{}, lb_sh);
  const u64 prefix = tile == 0 ? 0 : prefix_raw;
  __syncthreads();
  if (threadIdx.x == 0) {
    ts.flush(acc, 4 * e_base, tile);
    if (tile == last_tile) acc->written = flagged_sum{}(prefix, agg) & ~stop_flag;
  }
  if (prefix & stop_flag) return;
  copy_out_bytes(stage, static_cast<u32>(agg & ~stop_flag), out + (prefix & ~stop_flag));
}

// Compact encoder, pass 1: padded[idx] = the element's bytes, 0xFF-padded to 4 (all 0xFF for
// dropped elements and, in strict mode, for errors: the compaction stops at the first error).
template <error_policy P>
__global__ void __launch_bounds__(block_threads)
    encode_expand_kernel(const u8* in, u64 n, u64 full, u64 elems, uint4* padded, accum* acc,
                         bool vec) {
  __shared__ tile_summary ts;
  const u32 tile = blockIdx.x;
  const u64 e_base = u64{tile} * encode_tile;
  const u32 t_off = threadIdx.x * encode_elems;
  if (threadIdx.x == 0) ts.init();
  encode_view ev;
  ev.load(in, n, e_base + t_off, full, elems, vec);
  u32 r[encode_elems];
#pragma unroll
  for (int j = 0; j < encode_elems; ++j) {
    const bool is_err = (ev.err >> j) & 1u;
    const u32 len = ((ev.inr >> j) & 1u) ? out_length<P>(ev.v[j], is_err) : 0u;
    const u32 pad = len >= 4 ? 0u : 0xFFFFFFFFu << (8 * len);
    r[j] = len == 0 ? 0xFFFFFFFFu : (pack_utf8(ev.v[j], is_err) | pad);
  }
  const u64 q = (e_base + t_off) / 4;
  padded[q] = make_uint4(r[0], r[1], r[2], r[3]);
  padded[q + 1] = make_uint4(r[4], r[5], r[6], r[7]);
  __syncthreads();
  encode_stats(ev, 4 * t_off, ts);
  __syncthreads();
  if (threadIdx.x == 0) ts.flush(acc, 4 * e_base, tile);
}

// Compact encoder, pass 2: copies the non-0xFF bytes of padded[0 .. 4*elems) in order (strict:
// only those before the first error's slot). Tiles of 256 threads x 32 bytes.
template <error_policy P>
__global__ void __launch_bounds__(block_threads)
    compact_bytes_kernel(const uint4* padded, u8* out, accum* acc,
                         prim::detail::tile_state<u64> state, u32 last_tile) {
  constexpr u32 tile_bytes = block_threads * 32;
  using bscan = prim::detail::block_scan<u64, block_threads>;
  using lookback = prim::detail::tile_prefix<u64, block_threads>;
  __shared__ u32 stage_w[stage_bytes_for(tile_bytes) / 4 + 1];
  __shared__ typename bscan::storage scan_sh;
  __shared__ typename lookback::storage lb_sh;
  __shared__ u64 stop_sh;
  u8* stage = reinterpret_cast<u8*>(stage_w);
  const u32 tile = blockIdx.x;
  const u64 base = u64{tile} * tile_bytes;
  const u32 off0 = threadIdx.x * 32;

  u64 stop = ~u64{0};  // padded byte offset where strict output ends (= element offset in bytes)
  if constexpr (P == error_policy::strict) {
    if (threadIdx.x < 32) {
      const u64 f = first_error_of(acc);
      if (threadIdx.x == 0) stop_sh = f;
    }
    __syncthreads();
    stop = stop_sh;
  }
  const u64 q = (base + off0) / 16;
  const uint4 a = padded[q], b = padded[q + 1];
  const u32 w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  u32 keep = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const u32 x = ~w[k];  // 0xFF bytes -> 0
    const u32 nz = (((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x) & lane_hi;
    keep |= lanes_to_bits(nz) << (4 * k);
  }
  if constexpr (P == error_policy::strict) {
    const u64 p0 = base + off0;
    keep &= stop <= p0 ? 0u : stop - p0 >= 32 ? ~0u : (1u << (stop - p0)) - 1;
  }
  u64 agg;
  const u64 excl = bscan(scan_sh).exclusive(u64(popc(keep)), u64{0}, flagged_sum{}, agg);
  {
    u32 k = static_cast<u32>(excl);
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      if ((keep >> i) & 1u) stage[stage_byte(k++)] = static_cast<u8>(w[i / 4] >> (8 * (i % 4)));
    }
  }
  const u64 prefix_raw = lookback::exclusive_prefix(state, tile, agg, flagged_sum{}, lb_sh);
  const u64 prefix = tile == 0 ? 0 : prefix_raw;
  __syncthreads();
  if (threadIdx.x == 0 && tile == last_tile) acc->written = prefix + agg;
  copy_out_bytes(stage, static_cast<u32>(agg), out + prefix);
}

}  // namespace gutf8::kern
