// Fused UTF-8 -> UTF-32 decoder: one pass, each input byte read once. 8 KiB tiles (tile_*.cuh):
//   1. classify the tile with bit planes; which bytes start output units under the policy
//      (replace: every unit start, U+FFFD for error units; drop: well-formed starts; strict: the
//      well-formed starts before the first error, stop flag in the scan value);
//   2. rank: block scan of 32-bit flagged counts, then the tile's offset by decoupled look-back
//      with one packed 64-bit word per tile (the primitives: flagged_count_state; strict reads 128
//      tiles a round trip, lookback_exclusive_span). What bounded CJK and emoji text was a tile's
//      wait for aggregates its predecessors had not yet published, so each warp adds its count to
//      the tile's word as soon as it has one (counted publication), before the block scan:
//      replace and drop their output units; strict its well-formed starts, all of them (drop's
//      count). That is the tile's unit count if the text is valid; where it is not, the first
//      tile with an error still gets the exact prefix (every tile before it is valid) and stops
//      at its error, and every later tile writes past that end: the speculative
//      prefix of a later tile is at least the output length (accum::cut), and at most n (the
//      output's size);
//   3. each warp prepares its output at warp-local slots (then warp 0 looks back, while the
//      others finish theirs), in one of two ways chosen per warp by how many units a lane must
//      decode one by one:
//      * few (ASCII-heavy text): lanes stage their code points (whole words of ASCII units four
//        at a time, other units one by one through a branch-free decoder), then the warp stores
//        its contiguous output range with aligned 16-byte stores;
//      * many (CJK, emoji): lanes only list the 4 bytes that start at each of their units; after
//        the look-back lane j decodes slots j, j + 32, ...: every lane does the same work
//        whatever its bytes hold, the shared-memory reads of neighbouring slots hit distinct
//        banks, the stores coalesce. A warp whose every lane has 8 units 4 bytes apart (text of
//        4-byte sequences) lists them without testing each byte position and, where all are
//        4-byte sequences, decodes them with the 4-byte rule alone.
//      An all-ASCII warp stages as the first way does, each lane widening its 32 bytes.
// UTF-16 output (device::decode_utf16) is the same pass counting output code units instead of
// code points: a well-formed 4-byte sequence counts two (its surrogate pair), so the scan, the
// look-back and the staging slots are in UTF-16 units. A warp with no 4-byte sequence (CJK, most
// text) has as many units as code points: it stages and lists as UTF-32 does and only stores 2
// bytes a unit. Where a warp has pairs, the staging path writes a pair into two slots, the listed
// path lists units at UTF-32 slots and its write-out places each decoded code point at its unit by
// a warp ballot of the pairs; warps of 4-byte sequences alone write a pair a 32-bit store. Byte
// order is a byte permute at the store.
// One tile a block: two tiles with one look-back paid only while aggregates were published late
// (bench/results/codec_tuning.md).
#pragma once

#include <type_traits>

#include "utf8/tile_rank.cuh"

namespace gutf8::kern {

inline constexpr u32 decode_tile = tile_bytes;  // one look-back state each

// The output's code units: UTF-32, or UTF-16 (two for a well-formed 4-byte sequence).
enum class out_form : u32 { utf32, utf16 };
template <out_form F>
using out_unit = std::conditional_t<F == out_form::utf32, u32, u16>;

// Output code units of the unit starts `outb`, of which those in `quads` are 4-byte sequences.
template <out_form F>
__device__ __forceinline__ u32 out_units(u32 outb, u32 quads) {
  return static_cast<u32>(popc(outb)) + (F == out_form::utf16 ? static_cast<u32>(popc(outb & quads)) : 0u);
}

template <error_policy P>
__device__ __forceinline__ u32 output_starts(u32 start, u32 wf) {
  if constexpr (P == error_policy::replace) return start;
  else if constexpr (P == error_policy::drop) return wf;
  else return wf & below_lowest(start & ~wf);
}

// Zero-extends the 4 bytes of x to 4 code points.
__device__ __forceinline__ uint4 widen4(u32 x) {
  return make_uint4(byte_perm(x, 0, 0x4440u), byte_perm(x, 0, 0x4441u), byte_perm(x, 0, 0x4442u),
                    byte_perm(x, 0, 0x4443u));
}

// The UTF-8 form of U+FFFD (EF BF BD): what the balanced path lists for an error unit, so that
// it decodes to U+FFFD like any other unit.
inline constexpr u32 replacement_utf8 = 0x00BDBFEFu;

// A 32-bit store to a shared-memory address held in a register (list_unit_bytes says why).
__device__ __forceinline__ void store_shared(u32 at, u32 v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(at), "r"(v) : "memory");
}

// The balanced path's first half, one lane: the 4 bytes that start at each of its units at
// st[s], st[s + 1], ... Unrolled over the 32 byte positions, so that the bytes come out of the
// registers by funnel shifts of static amounts and the cost does not depend on the lane's units:
// listing them one by one ran as long as the warp's busiest lane (lanes with ASCII runs hold up
// to ~24 units; CJK ones ~11).
__device__ __forceinline__ void list_unit_bytes(u32* st, u32 s, u32 units, const u32 (&x)[8], u32 nx) {
  // A shared address advanced by one word a unit: through st[s++] the compiler recomputed the
  // buffer's address at every position under the 40-register bound (6 instructions a position).
  u32 at = static_cast<u32>(__cvta_generic_to_shared(st + s));
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const u32 lo = x[i / 4], hi = i < 28 ? x[i / 4 + 1] : nx;
    if ((units >> i) & 1u) {
      store_shared(at, funnel_r(lo, hi, 8 * (i % 4)));
      at += 4;
    }
  }
}

// list_unit_bytes for a lane whose units start 4 bytes apart from its byte r on (text of 4-byte
// sequences only, such as emoji): eight funnel shifts, no test of the 32 positions.
__device__ __forceinline__ void list_quad_units(u32* st, u32 s, u32 r, const u32 (&x)[8], u32 nx) {
#pragma unroll
  for (int j = 0; j < 8; ++j) st[s + j] = funnel_r(x[j], j < 7 ? x[j + 1] : nx, 8 * r);
}

// Whether the 8 units list_quad_units lists all start with a 4-byte lead (F0..F7).
__device__ __forceinline__ bool quad_leads(u32 r, const u32 (&x)[8]) {
  u32 all = ~0u, any = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    all &= x[j];
    any |= x[j];
  }
  const u32 lead = 0xFFu << (8 * r);  // the lead's byte of each word
  return (all & 0xF0F0F0F0u & lead) == (0xF0F0F0F0u & lead) && (any & 0x08080808u & lead) == 0;
}

// How a warp stages its output (stage_output) and writes it (write_output). UTF-16: listed_pairs
// where some listed units are surrogate pairs (listed: none, so a slot is a unit).
enum class warp_path : u32 { staged, listed, listed_fours, listed_pairs };

// Replace: the listed error units of a lane become replacement_utf8, one store each (a select at
// every listed position cost each lane of a warp with an error 32 instructions).
__device__ __forceinline__ void flag_error_units(u32* st, u32 s, u32 units, u32 errors) {
  for (; errors != 0; errors &= errors - 1)
    st[s + static_cast<u32>(popc(units & below_bit(static_cast<u32>(lowest_bit(errors)))))] = replacement_utf8;
}

// How decode_listed_units decodes a lane's last (up to three) slots: one by one in a loop, or
// as three independent chains whose stores are predicated (it reads up to 96 slots past count,
// within the warp's buffer: the listed path holds fewer than balance_below units).
enum class listed_tail : u32 { loop, chains };
static_assert(balance_below + 96 <= stage_u32_words);

// Its second half, one warp: put(j, decode(slot j)) for j < count, lane j taking slots j, j + 32,
// ...: every lane does the same work whatever its bytes hold, the shared-memory reads of
// neighbouring slots hit distinct banks, the stores coalesce.
template <listed_tail Tail, class DecodeUnit, class Put>
__device__ __forceinline__ void decode_listed_units(const u32* slots, u32 count, DecodeUnit decode, Put put) {
  u32 j = threadIdx.x & 31u;
  // Four slots per iteration while all four are in range: independent chains, no predicates,
  // one address for the loads and one for the stores (immediate offsets).
  for (; j + 96 < count; j += 128) {
    u32 c[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) c[q] = decode(slots[j + 32 * q]);
#pragma unroll
    for (int q = 0; q < 4; ++q) put(j + 32 * q, c[q]);
  }
  if constexpr (Tail == listed_tail::chains) {
    const u32 c0 = decode(slots[j]), c1 = decode(slots[j + 32]), c2 = decode(slots[j + 64]);
    if (j < count) put(j, c0);
    if (j + 32 < count) put(j + 32, c1);
    if (j + 64 < count) put(j + 64, c2);
  } else {
    for (; j < count; j += 32) put(j, decode(slots[j]));
  }
}

// Which bytes start units of the output, their block scan and the tile's error / LF statistics.
// Each warp adds its output units to the tile's counted word before the block scan (strict: its
// well-formed starts, the tile's units if it is valid; counting the lead bytes right after the
// transposition, with the look-back before the staging, ran slower: bench/results/codec_tuning.md).
struct decode_front {
  tile_scan s;
  u64 agg;
  u32 outb;
};
template <error_policy P, out_form F>
__device__ __forceinline__ decode_front front_of(const lane_class<false>& L, utf8_tile_shared& sh, rank_state states,
                                                 u32 tile) {
  const u32 err = L.start & ~L.wf;
  decode_front f;
  f.outb = output_starts<P>(L.start, L.wf);
  const u32 units = out_units<F>(f.outb, L.quad);
  add_warp_count(states, tile, P == error_policy::strict ? out_units<F>(L.wf, L.quad) : units);
  f.s = block_scan_flag(stop_flagged<P>(units, err), sh.rank.wt);
  add_lane_stats(sh.rank.ts, err, L.lf);
  f.agg = widen(f.s.aggregate);
  return f;
}

// UTF-16 on the balanced path: the lane's first UTF-32 slot (k: its first UTF-16 unit) and the
// warp's UTF-32 units.
struct listed_slots {
  u32 first, total;
};
template <out_form F>
__device__ __forceinline__ listed_slots listed_slots_of(bool live, u32 k, u32 outb, u32 quads, const tile_scan& s) {
  if constexpr (F == out_form::utf32) {
    return {k, s.warp_total & ~stop32};
  } else {
    const u32 pairs = live ? static_cast<u32>(popc(outb & quads)) : 0u;
    const u32 before = prim::detail::warp_inclusive_scan(pairs, [](u32 a, u32 b) { return a + b; }) - pairs;
    return {k - before, __reduce_add_sync(full_mask, live ? static_cast<u32>(popc(outb)) : 0u)};
  }
}

// Stages one warp's output at warp-local slots of st: the code units (the staging path), or on
// the balanced path the units' bytes; before the look-back, whose latency overlaps this work (the
// global offset is only needed by the stores). Returns the warp's path and, listed, its units.
template <error_policy P, bool Vec, out_form F>
__device__ __forceinline__ warp_path stage_output(const u8* in, u64 n, u64 base, const lane_class<false>& L,
                                                  const tile_scan& s, u32 outb, u32* st, u32& listed) {
  const bool live = !(s.exclusive & stop32);
  // UTF-16 without surrogate pairs in the warp (CJK, most text): a slot is a unit, as in UTF-32.
  if constexpr (F == out_form::utf16)
    if (!__any_sync(full_mask, live && (outb & L.quad) != 0))
      return stage_output<P, Vec, out_form::utf32>(in, n, base, L, s, outb, st, listed);
  const u32 k = s.exclusive - s.warp_exclusive;  // the lane's first slot
  const u32 asc = outb & ~L.hi;
  u32 bulk = asc & (asc >> 1) & (asc >> 2) & (asc >> 3) & 0x11111111u;  // words of 4 ASCII units
  u32 rest = outb & ~(bulk * 0xFu);
  const bool balanced = !L.warp_ascii && (s.warp_total & ~stop32) < balance_below &&
                        __reduce_max_sync(full_mask, live ? static_cast<u32>(popc(rest)) : 0u) > balance_above;
  constexpr warp_path listed_path = F == out_form::utf16 ? warp_path::listed_pairs : warp_path::listed;
  warp_path path = balanced ? listed_path : warp_path::staged;
  if (balanced) {
    const listed_slots ls = listed_slots_of<F>(live, k, outb, L.quad, s);
    listed = ls.total;
    // Units 4 bytes apart in every lane (8 each, 256 in the warp: the total tests that first, so
    // that other text pays one comparison); r = where the lane's first starts.
    const u32 r = static_cast<u32>(lowest_bit(outb)) & 3u;
    if (ls.total == 8 * 32 && __all_sync(full_mask, live && outb == 0x11111111u << r)) {
      list_quad_units(st, ls.first, r, L.x, L.nx);
      const bool no_error_units = P != error_policy::replace || (outb & ~L.wf) == 0;
      if (__all_sync(full_mask, no_error_units && quad_leads(r, L.x))) path = warp_path::listed_fours;
    } else if (live) {
      list_unit_bytes(st, ls.first, outb, L.x, L.nx);
    }
    if constexpr (P == error_policy::replace)
      if (live) flag_error_units(st, ls.first, outb, outb & ~L.wf);
    return path;
  }
  // A staging warp (balanced ones returned above): every lane widens 32 ASCII units, or all go word
  // by word, as a warp ran both (bench/results/codec_tuning.md).
  const bool all_ascii_lanes = __all_sync(full_mask, !(live && outb) || bulk == 0x11111111u);
  if (live && outb) {
    // The 4 bytes at the lane's byte p, read again from the input (L1) for single units.
    const u64 pos = base + u64{threadIdx.x} * lane_bytes;
    const bool direct = Vec && base + tile_bytes + 4 <= n;  // block-uniform
    const bool spanning = !Vec && tile_spans_groups(n, base);
    const auto word = [&](u32 w) {
      return spanning ? load_word_spanning(in + pos + 4 * w) : load_word_at(in, n, pos, w, direct, aligned4(in));
    };
    const auto bytes_at = [&](u32 p) { return funnel_r(word(p >> 2), word((p >> 2) + 1), 8 * p); };
    if (all_ascii_lanes) {  // 32 ASCII units: slots k .. k+31 cross at most one pad
      const u32 c = 32 - (k & 31);  // slots before the pad
      u32* s0p = st + stage_slot(k);
      u32* s1p = s0p + 1;
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const uint4 v = widen4(L.x[q]);
        (4 * q < static_cast<int>(c) ? s0p : s1p)[4 * q] = v.x;
        (4 * q + 1 < static_cast<int>(c) ? s0p : s1p)[4 * q + 1] = v.y;
        (4 * q + 2 < static_cast<int>(c) ? s0p : s1p)[4 * q + 2] = v.z;
        (4 * q + 3 < static_cast<int>(c) ? s0p : s1p)[4 * q + 3] = v.w;
      }
      bulk = 0;
      rest = 0;
    }
    const u32 kt = k + out_units<F>(outb, L.quad);  // one past the lane's last slot
    const u32 pairs = F == out_form::utf16 ? outb & L.quad : 0u;
    // The slot of the unit starting at byte p: kt less the slots of the units at and after p.
    const auto slot_at = [&](u32 p) {
      return kt - static_cast<u32>(popc(outb >> p)) - (F == out_form::utf16 ? static_cast<u32>(popc(pairs >> p)) : 0u);
    };
#pragma unroll
    for (int q = 0; q < 8; ++q) {  // static word indices: the words come from registers
      if ((bulk >> (4 * q)) & 1u) {
        const u32 r = slot_at(4 * q);
        const uint4 v = widen4(L.x[q]);
        st[stage_slot(r)] = v.x;
        st[stage_slot(r + 1)] = v.y;
        st[stage_slot(r + 2)] = v.z;
        st[stage_slot(r + 3)] = v.w;
      }
    }
    // Other well-formed units, two per iteration (independent chains).
    u32 m = rest & L.wf;
    while (m) {
      const u32 p1 = static_cast<u32>(lowest_bit(m));
      m &= m - 1;
      const bool two = m != 0;
      const u32 p2 = two ? static_cast<u32>(lowest_bit(m)) : p1;
      m &= m - 1;
      const u32 c1 = decode_unit(bytes_at(p1));
      const u32 c2 = decode_unit(bytes_at(p2));
      if constexpr (F == out_form::utf16) {
        const u32 s1 = slot_at(p1), u1 = utf16_of(c1);
        st[stage_slot(s1)] = u1 & 0xFFFFu;
        if (c1 > 0xFFFFu) st[stage_slot(s1 + 1)] = u1 >> 16;
        const u32 s2 = slot_at(p2), u2 = utf16_of(c2);
        if (two) st[stage_slot(s2)] = u2 & 0xFFFFu;
        if (two && c2 > 0xFFFFu) st[stage_slot(s2 + 1)] = u2 >> 16;
      } else {
        st[stage_slot(slot_at(p1))] = c1;
        if (two) st[stage_slot(slot_at(p2))] = c2;
      }
    }
    if constexpr (P == error_policy::replace) {
      u32 e = rest & ~L.wf;
      while (e) {
        const u32 p = static_cast<u32>(lowest_bit(e));
        e &= e - 1;
        st[stage_slot(slot_at(p))] = 0xFFFDu;
      }
    }
  }
  return path;
}

// UTF-16, the listed_pairs path's second half, one warp: the `listed` units listed at slots[0 ..)
// (UTF-32 slots) decoded and written as UTF-16 from dst[0] on, 32 slots a round: a ballot of the
// round's surrogate pairs places each lane's unit. perm: the byte order (utf16_perm).
__device__ __forceinline__ void write_listed_pairs(const u32* slots, u32 listed, u16* dst, u32 perm) {
  const u32 lane = threadIdx.x & 31u, below = below_bit(lane);
  u32 at = lane;  // the lane's unit in this round, less the round's pairs before it
  // Two rounds an iteration (independent decodes); slots past `listed` are readable (balance_below).
#pragma unroll 1
  for (u32 j = lane; j < listed + lane; j += 64) {  // j - lane: 0, 64, ... below listed (warp-uniform)
    u32 cp[2], u[2], pairs[2];
#pragma unroll
    for (u32 r = 0; r < 2; ++r) {
      cp[r] = decode_unit(slots[j + 32 * r]);
      pairs[r] = __ballot_sync(full_mask, j + 32 * r < listed && cp[r] > 0xFFFFu);
      u[r] = byte_perm(utf16_of(cp[r]), 0, perm);
    }
#pragma unroll
    for (u32 r = 0; r < 2; ++r) {
      u16* d = dst + (at + static_cast<u32>(popc(pairs[r] & below)));
      if (j + 32 * r < listed) d[0] = static_cast<u16>(u[r]);
      if ((pairs[r] >> lane) & 1u) d[1] = static_cast<u16>(u[r] >> 16);
      at += 32 + static_cast<u32>(popc(pairs[r]));
    }
  }
}

// UTF-16, the listed_fours path's second half, one warp: slot j (a 4-byte sequence) becomes units
// 2j and 2j + 1, one 32-bit store where dst is 4-byte aligned. The stores index with int: with an
// unsigned index the compiler formed each store's 64-bit address apart (4 instructions a store).
__device__ __forceinline__ void write_listed_fours_utf16(const u32* slots, u32 listed, u16* dst, u32 perm) {
  const auto pair_of = [](u32 x) { return decode_four_surrogates(x); };
  if ((reinterpret_cast<std::uintptr_t>(dst) & 3u) == 0) {
    u32* d = reinterpret_cast<u32*>(dst);
    decode_listed_units<listed_tail::loop>(slots, listed, pair_of,
                                           [=](u32 j, u32 w) { d[static_cast<int>(j)] = byte_perm(w, 0, perm); });
  } else {
    decode_listed_units<listed_tail::loop>(slots, listed, pair_of, [=](u32 j, u32 w) {
      const u32 u = byte_perm(w, 0, perm);
      u16* p = dst + 2 * static_cast<int>(j);
      p[0] = static_cast<u16>(u);
      p[1] = static_cast<u16>(u >> 16);
    });
  }
}

// The byte permute of a word of two UTF-16 units (low halves of two words for write_staged_u16)
// into the output's byte order.
__device__ __forceinline__ u32 utf16_perm(bool big_endian) { return big_endian ? 0x2301u : 0x3210u; }

// UTF-16, the staged path's write-out: units [0, cnt) staged one a u32 slot; dst = the output at
// the warp's first unit less s0, 16-byte aligned.
__device__ __forceinline__ void write_staged_u16(const u32* st, u32 s0, u32 cnt, u16* dst, u32 perm) {
  const u32 pair_perm = perm == 0x3210u ? 0x5410u : 0x4501u;  // two slots' low halves into one word
  prim::detail::store_range<32>(
      dst, s0, cnt, threadIdx.x & 31u,
      [&](u32 j) {
        u32 w[4];
#pragma unroll
        for (u32 q = 0; q < 4; ++q) w[q] = byte_perm(st[stage_slot(j + 2 * q)], st[stage_slot(j + 2 * q + 1)], pair_perm);
        return make_uint4(w[0], w[1], w[2], w[3]);
      },
      [&](u32 j) { return static_cast<u16>(byte_perm(st[stage_slot(j)], 0, perm)); });
}

// One warp writes its staged output: global units [first, first + count) (listed: the units on
// the balanced path, UTF-32 slots). perm: UTF-16's byte order.
template <out_form F>
__device__ __forceinline__ void write_output(warp_path path, const u32* st, u64 first, u32 count, u32 listed,
                                             out_unit<F>* out, u32 perm) {
  __syncwarp();
  if constexpr (F == out_form::utf16) {
    if (path == warp_path::staged) {
      const u32 s0 = static_cast<u32>((reinterpret_cast<std::uintptr_t>(out) >> 1) + first) & 7u;
      write_staged_u16(st, s0, count, out + (first - s0), perm);
    } else if (path == warp_path::listed_fours) {
      write_listed_fours_utf16(st, listed, out + first, perm);
    } else if (path == warp_path::listed_pairs) {
      write_listed_pairs(st, listed, out + first, perm);
    } else {  // no surrogate pair: slot j is unit j, as in UTF-32 (int index: write_listed_fours_utf16)
      u16* dst = out + first;
      decode_listed_units<listed_tail::chains>(st, listed, [](u32 x) { return decode_unit(x); }, [=](u32 j, u32 c) {
        dst[static_cast<int>(j)] = static_cast<u16>(byte_perm(c, 0, perm));
      });
    }
  } else if (path == warp_path::listed_fours) {
    // 256 units, a multiple of 128: no tail.
    u32* dst = out + first;
    decode_listed_units<listed_tail::loop>(st, count, [](u32 x) { return decode_four_bytes(x); },
                                           [=](u32 j, u32 c) { dst[j] = c; });
  } else if (path == warp_path::listed) {
    u32* dst = out + first;
    decode_listed_units<listed_tail::chains>(st, count, [](u32 x) { return decode_unit(x); },
                                             [=](u32 j, u32 c) { dst[j] = c; });
  } else {
    const u32 s0 = static_cast<u32>((reinterpret_cast<std::uintptr_t>(out) >> 2) + first) & 3u;
    write_staged_u32(st, s0, count, out + (first - s0));
  }
}


// One block, one tile (tile = blockIdx.x).
template <error_policy P, bool Vec, out_form F>
__device__ __forceinline__ void decode_one_tile(const u8* in, u64 n, out_unit<F>* out, u32 perm, accum* acc,
                                                rank_state states, u32 last_tile, u32 tile, utf8_tile_shared& sh,
                                                u32* st) {
  const u64 base = u64{tile} * tile_bytes;
  prefetch_states_ahead(states, tile, last_tile);
  lane_class<false> L;
  begin_utf8_tile<Vec, false>(in, n, base, acc, sh, L);
  const decode_front f = front_of<P, F>(L, sh, states, tile);
  u32 listed = 0;
  const warp_path path = stage_output<P, Vec, F>(in, n, base, L, f.s, f.outb, st, listed);
  constexpr u32 slots = P == error_policy::strict ? strict_lookback_slots : 1;
  const u64 prefix = rank_block<1, true, slots>(threadIdx.x & 31u, f.agg, sh.rank, states, tile, last_tile, acc, base);
  if (!(f.s.warp_exclusive & stop32))
    write_output<F>(path, st, prefix + f.s.warp_exclusive, f.s.warp_total & ~stop32, listed, out, perm);
}

// No copy of the tile's bytes in shared memory: the staging path reads a lane's bytes from its
// registers or, for single units, from the input again, which its loads have just brought into L1.
template <error_policy P, bool Vec, out_form F = out_form::utf32>
__global__ void __launch_bounds__(tile_threads, decode_fused_min_blocks)
    decode_fused_kernel(const u8* in, u64 n, out_unit<F>* out, accum* acc, rank_state states, u32 last_tile,
                        bool big_endian = false) {
  __shared__ __align__(16) u32 st_sh[tile_warps][stage_u32_words];  // code units or units' bytes
  __shared__ utf8_tile_shared sh;
  decode_one_tile<P, Vec, F>(in, n, out, utf16_perm(big_endian), acc, states, last_tile, blockIdx.x, sh,
                             st_sh[threadIdx.x >> 5]);
}

}  // namespace gutf8::kern
