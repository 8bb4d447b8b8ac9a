// UTF-32LE -> UTF-8 encoders. An element is one 32-bit value; it is an error unit when it is a
// surrogate or above U+10FFFF, and 1..3 trailing bytes at the end of the last chunk form one more
// error unit (index `full`). Offsets in the summary are byte offsets of the UTF-32 input.
// Fused: tiles of 256 threads x 24 elements (96 input bytes per thread); compact: 8 per thread.
//   * encode_fused_kernel: per-thread encoded lengths ranked by block scan + decoupled look-back
//     (tile_rank.cuh, the primitives); each warp stages its bytes in shared memory a word at a time
//     (word_appender, the UTF-8 forms from a shared table) while warp 0 looks back, then writes
//     them with aligned 16-byte stores.
//   * encode_expand_kernel + the primitives' select_bytes: every element writes 4 bytes padded with
//     0xFF (a byte UTF-8 never contains), then a byte compaction removes the padding.
#pragma once

#include "utf8/lane_encode.cuh"
#include "utf8/kernel_summary.cuh"
#include "utf8/tile_rank.cuh"

namespace gutf8::kern {

// Tile shapes (encode_elems, encode_tile, expand_elems, expand_tile): tuning.cuh.
inline constexpr u32 encode_stage_bytes = 4 * 32 * encode_elems + 32;

// One thread's E consecutive elements: values, error / LF bits (bit j = element e0 + j).
template <int E>
struct encode_view {
  static_assert(E % 8 == 0);
  static constexpr u32 all = E == 32 ? ~0u : (1u << E) - 1;  // a bit per element
  u32 v[E];
  u32 err, lf, inr;
  bool ascii;  // every element in range is below 0x80 and no error

  // full: complete elements in the chunk; elems: full + 1 when a ragged tail is an error unit.
  __device__ __forceinline__ void load(const u8* in, u64 n, u64 e0, u64 full, u64 elems, bool fast) {
#pragma unroll
    for (int h = 0; h < E / 8; ++h) {
      u32 x[8];
      load_lane(in, n, 4 * (e0 + 8 * h), fast, x);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[8 * h + j] = x[j];
    }
    // Range masks once (32-bit), then per element only 32-bit compares.
    const u64 r_in = elems > e0 ? elems - e0 : 0, r_full = full > e0 ? full - e0 : 0;
    inr = r_in >= static_cast<u64>(E) ? all : (1u << r_in) - 1;
    const u32 fullm = r_full >= static_cast<u64>(E) ? all : (1u << r_full) - 1;
    u32 scalar = 0, lfv = 0, any = 0;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      scalar |= u32{v[j] < 0xD800u || v[j] - 0xE000u < 0x102000u} << j;
      lfv |= u32{v[j] == 0x0Au} << j;
      any |= v[j];
    }
    err = inr & ~(fullm & scalar);
    lf = fullm & lfv;
    // Out-of-range elements read as 0 (the loads are guarded), so they never set `any`.
    ascii = any < 0x80u && err == 0;
  }
};

template <int E>
__device__ __forceinline__ void encode_stats(const encode_view<E>& ev, u32 off0_bytes, tile_summary& ts) {
  const u32 e = static_cast<u32>(popc(ev.err));
  const u32 f = ev.err ? off0_bytes + 4 * static_cast<u32>(lowest_bit(ev.err)) : ~0u;
  const u32 l = static_cast<u32>(popc(ev.lf));
  const u32 ll = ev.lf ? off0_bytes + 4 * static_cast<u32>(highest_bit(ev.lf)) + 1 : 0u;
  ts.add(e, f, l, ll);
}

// Output bytes of element value c under the policy (error: 3 for replace, 0 otherwise).
template <error_policy P>
__device__ __forceinline__ u32 out_length(u32 c, bool is_err) {
  const u32 len = utf8_length(c);  // selects, not branches: see word_appender
  return is_err ? (P == error_policy::replace ? 3u : 0u) : len;
}

// The encoders' table of UTF-8 forms by highest set bit (lane_encode.cuh), in shared memory.
struct utf8_form_table {
  utf8_form form[32];

  // Threads 0..31; a __syncthreads must follow before the first lookup.
  __device__ __forceinline__ void fill() {
    if (threadIdx.x < 32) form[threadIdx.x] = utf8_form_of_top_bit(threadIdx.x);
  }
  __device__ __forceinline__ utf8_form of(u32 c) const { return form[top_bit(c)]; }
};
// The same forms computed in registers: for a kernel that has no barrier to spare before it needs
// them (the compact encoder's expand pass).
struct utf8_form_compute {
  __device__ __forceinline__ utf8_form of(u32 c) const { return utf8_form_of_top_bit(top_bit(c)); }
};

// The element's output under the policy: its bytes packed little-endian, zero above them (the
// replacement EF BF BD for an error unit under replace), and their count times 8.
struct out_unit {
  u32 bytes, bits;
};
template <error_policy P, class Forms>
__device__ __forceinline__ out_unit encode_element(u32 c, bool is_err, const Forms& forms) {
  const utf8_form f = forms.of(c);
  const u32 bytes = utf8_pack(c, f), bits = utf8_form_bits(f);  // selects, not branches
  if (P == error_policy::replace) return {is_err ? 0xBDBFEFu : bytes, is_err ? 24u : bits};
  return {is_err ? 0u : bytes, is_err ? 0u : bits};
}

// Appends one thread's byte strings to a warp's staging words from byte offset k on: a whole word
// per store instead of one store per byte, and no branches (a branch per element cost more than
// the stores it saves: the warp runs both sides). The words a thread fills completely it stores
// (the neighbours' bytes below its first byte are written as zeros); the partial word at its end
// it ORs in after a __syncwarp, so the protocol, for all lanes of the warp, is:
//   each live thread zeroes word (k + its byte count) / 4; __syncwarp;
//   append... ; __syncwarp; finish.
struct word_appender {
  u32* word;  // being filled
  u32 bits;   // of it, filled (the bytes of threads before count as filled, with zeros)
  u32 acc;

  __device__ __forceinline__ word_appender(u32* words, u32 k) : word(words + (k >> 2)), bits(8 * (k & 3u)), acc(0) {}

  // bytes: n / 8 (0..4) bytes, zero above them.
  __device__ __forceinline__ void append(u32 bytes, u32 n) {
    acc |= bytes << bits;
    const u32 spill = funnel_l(bytes, 0u, bits);  // what does not fit in this word (0 when bits = 0)
    bits += n;                                     // < 64
    const bool full = bits >= 32;
    if (full) *word = acc;
    word += full;
    acc = full ? spill : acc;
    bits &= 31u;
  }
  __device__ __forceinline__ void finish() {
    if (bits) atomicOr(word, acc);
  }
};

// One thread's elements, encoded under the policy, appended to out. Clean: every element is kept
// and valid (the error and keep selects fold away).
template <error_policy P, bool Clean, int E>
__device__ __forceinline__ void append_encoded(const encode_view<E>& ev, u32 keep, const utf8_form_table& forms,
                                               word_appender& out) {
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const out_unit u = encode_element<P>(ev.v[j], !Clean && ((ev.err >> j) & 1u), forms);
    const bool kept = Clean || ((keep >> j) & 1u);
    out.append(kept ? u.bytes : 0u, kept ? u.bits : 0u);
  }
}

// One thread's output bytes: its kept elements' UTF-8 lengths (strict: before its first error).
template <error_policy P, int E>
__device__ __forceinline__ u32 encoded_length(const encode_view<E>& ev, u32 keep, bool warp_ascii, bool warp_clean) {
  u32 total = 0;
  if (warp_ascii) {
    total = static_cast<u32>(popc(ev.inr));
  } else if (warp_clean) {
#pragma unroll
    for (int j = 0; j < E; ++j) total += utf8_length(ev.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < E; ++j)
      total += ((keep >> j) & 1u) ? out_length<P>(ev.v[j], (ev.err >> j) & 1u) : 0u;
  }
  return total;
}

// One thread's `total` bytes encoded into the warp's staging bytes st at its warp-local offset
// (none past a stop); the warp's lanes append whole words, which they clear first.
template <error_policy P, int E>
__device__ __forceinline__ void stage_encoded(const encode_view<E>& ev, u32 keep, const utf8_form_table& forms,
                                              bool warp_ascii, bool warp_clean, const tile_scan& s, u32 total, u8* st) {
  const bool live = !(s.exclusive & stop32);
  const u32 k = s.exclusive - s.warp_exclusive;
  if (warp_ascii) {
    if (live) {
#pragma unroll
      for (int j = 0; j < E; ++j) st[k + j] = static_cast<u8>(ev.v[j]);
    }
    return;
  }
  u32* words = reinterpret_cast<u32*>(st);
  if (live) words[(k + total) >> 2] = 0;  // the word word_appender ORs
  __syncwarp();
  word_appender out(words, k);
  if (live) {
    if (warp_clean) append_encoded<P, true>(ev, keep, forms, out);
    else append_encoded<P, false>(ev, keep, forms, out);
  }
  __syncwarp();
  if (live) out.finish();
}

// encode_elems elements a thread (tuning.cuh).
template <error_policy P, bool Vec>
__global__ void __launch_bounds__(block_threads, encode_fused_min_blocks)
    encode_fused_kernel(const u8* in, u64 n, u64 full, u64 elems, u8* out, accum* acc, rank_state states,
                        u32 last_tile) {
  constexpr int E = encode_elems;
  __shared__ __align__(16) u8 st_sh[tile_warps][encode_stage_bytes];
  __shared__ tile_rank_shared sh;
  __shared__ utf8_form_table forms;  // filled before block_scan_flag's barrier, used after it

  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, tile = blockIdx.x;
  const u64 e_base = u64{tile} * encode_tile;
  const u32 t_off = threadIdx.x * E;
  if (threadIdx.x == 0) {
    sh.ts.init();
    prefetch_ahead(in, n, 4 * e_base, 4 * encode_tile);
  }
  prefetch_states_ahead(states, tile, last_tile);
  forms.fill();

  encode_view<E> ev;
  ev.load(in, n, e_base + t_off, full, elems, Vec && 4 * (e_base + encode_tile) <= n);
  const bool warp_ascii = __all_sync(full_mask, ev.ascii);
  const u32 keep = ev.inr & (P == error_policy::strict ? below_lowest(ev.err) : ~0u);
  // Clean: every element is in range and valid, so kept, and its length is all there is to know.
  const bool warp_clean = __all_sync(full_mask, ev.err == 0 && ev.inr == encode_view<E>::all);
  const u32 total = encoded_length<P>(ev, keep, warp_ascii, warp_clean);
  const tile_scan s = block_scan_flag(stop_flagged<P>(total, ev.err), sh.wt);
  encode_stats(ev, 4 * t_off, sh.ts);
  const u64 agg = publish_tile_aggregate(states, tile, s);

  // Stage the bytes at warp-local offsets (before the look-back: its latency overlaps this work).
  u8* st = st_sh[warp];
  stage_encoded<P>(ev, keep, forms, warp_ascii, warp_clean, s, total, st);
  const warp_output w = place_warp_output(lane, s, agg, sh, states, tile, last_tile, acc, 4 * e_base);
  if (w.stopped) return;

  const u32 s0 = static_cast<u32>(reinterpret_cast<std::uintptr_t>(out) + w.first) & 15u;
  write_staged_bytes(st, s0, w.count, out + (w.first - s0));
}

// Compact encoder, pass 1: padded[idx] = the element's bytes, 0xFF-padded to 4 (all 0xFF for
// dropped elements and, in strict mode, for errors: the compaction stops at the first error).
template <error_policy P, bool Vec>
__global__ void __launch_bounds__(block_threads)
    encode_expand_kernel(const u8* in, u64 n, u64 full, u64 elems, uint4* padded, accum* acc) {
  __shared__ tile_summary ts;
  const u32 tile = blockIdx.x;
  const u64 e_base = u64{tile} * expand_tile;
  const u32 t_off = threadIdx.x * expand_elems;
  if (threadIdx.x == 0) ts.init();
  encode_view<expand_elems> ev;
  ev.load(in, n, e_base + t_off, full, elems, Vec && 4 * (e_base + expand_tile) <= n);
  u32 r[expand_elems];
#pragma unroll
  for (int j = 0; j < expand_elems; ++j) {
    const out_unit u = encode_element<P>(ev.v[j], (ev.err >> j) & 1u, utf8_form_compute{});
    const u32 bits = ((ev.inr >> j) & 1u) ? u.bits : 0u;
    r[j] = bits == 0 ? 0xFFFFFFFFu : u.bytes | (bits >= 32 ? 0u : 0xFFFFFFFFu << bits);
  }
  const u64 q = (e_base + t_off) / 4;
  padded[q] = make_uint4(r[0], r[1], r[2], r[3]);
  padded[q + 1] = make_uint4(r[4], r[5], r[6], r[7]);
  __syncthreads();  // the cleared summary
  encode_stats(ev, 4 * t_off, ts);
  __syncthreads();
  if (threadIdx.x == 0) {
    ts.flush(acc, 4 * e_base, tile);
    if (P == error_policy::strict && ts.first != ~0u)
      atomicMin(reinterpret_cast<unsigned long long*>(&acc->select_end), 4 * e_base + ts.first);
  }
}

}  // namespace gutf8::kern
