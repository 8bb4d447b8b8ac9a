// AVX-512 (F/BW/VL + VBMI, VBMI2) kernels for the UTF-8 scanner: 64-byte vectors, checked by
// the rules in simd_tables.hpp (vector operations, masks where a caller needs them; the
// unit windows with mask registers). Decoding compresses the positions of
// the sequence starts, gathers the 4 bytes from each (byte permutes) and computes 16 code
// points at once.
#pragma once

#include "cpu/isa.hpp"

#if GUTF8_X86
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "cpu/simd_tables.hpp"

namespace gutf8::cpu::avx512 {

using u8 = std::uint8_t;

// Byte k of a two-register permute takes byte k-d of the vector, or for k < d byte 64+k-d
// of the vector before it (index bit 6 selects the second register).
struct index_tables {
  alignas(64) simd::vec<64> back1{}, back2{}, back3{};  // byte k takes byte k-1, k-2, k-3
  alignas(64) simd::vec<64> iota{};          // byte k = k
  alignas(64) simd::vec<64> spread{};        // 32-bit element j takes byte j (4 copies)
  alignas(64) simd::vec<64> byte_in_element{};  // byte b of each 32-bit element = b
  alignas(64) simd::vec<64> cut_above{};  // bytes 61..63: above it, a lead the end cuts
  alignas(64) simd::vec<64> ahead1{};     // byte k takes byte k+1 (63: the next vector's first)
  // check(): subtracted with saturation, a byte above 0xBF, 0xDF, 0xEF keeps bit 7.
  alignas(64) simd::vec<64> bit7_above_bf = simd::splat8<64>(0x40);
  alignas(64) simd::vec<64> bit7_above_df = simd::splat8<64>(0x60);
  alignas(64) simd::vec<64> bit7_above_ef = simd::splat8<64>(0x70);
  alignas(64) simd::vec<64> high_bit = simd::splat8<64>(0x80);
  // Byte permutes read 6 index bits: classes by a byte's top 6 bits (its high nibble within).
  alignas(64) simd::vec<64> lead_high_by_top6{};  // the lead's high-nibble pair classes
  alignas(64) simd::vec<64> next_by_top6{};       // the next byte's, and bit 7 for 80..BF
};
inline constexpr index_tables make_index_tables() {
  index_tables t{};
  for (unsigned k = 0; k < 64; ++k) {
    t.back1[k] = u8(k >= 1 ? k - 1 : 64 + 63 + k);
    t.back2[k] = u8(k >= 2 ? k - 2 : 64 + 62 + k);
    t.back3[k] = u8(k >= 3 ? k - 3 : 64 + 61 + k);
  }
  for (unsigned k = 0; k < 64; ++k) t.iota[k] = u8(k), t.spread[k] = u8(k / 4), t.byte_in_element[k] = u8(k % 4);
  for (unsigned k = 0; k < 61; ++k) t.cut_above[k] = 0xFF;
  t.cut_above[61] = 0xEF, t.cut_above[62] = 0xDF, t.cut_above[63] = 0xBF;
  for (unsigned k = 0; k < 64; ++k) t.ahead1[k] = u8(k + 1);
  for (unsigned k = 0; k < 64; ++k) {
    t.lead_high_by_top6[k] = simd::lead_high_classes()[k >> 2];
    t.next_by_top6[k] = u8(simd::next_high_classes()[k >> 2] | (k >> 4 == 2 ? 0x80 : 0));
  }
  return t;
}
inline constexpr index_tables ix = make_index_tables();
inline constexpr simd::constants<64> kc{};

// See avx2::ld: an opaque load keeps constants out of the shuffle port.
GUTF8_AVX512 inline __m512i ld(const simd::vec<64>& v) noexcept {
  __m512i r = _mm512_load_si512(v.data());
  __asm__("" : "+v"(r));
  return r;
}

GUTF8_AVX512 inline __m512i high_nibbles(__m512i v) noexcept {
  return _mm512_and_si512(_mm512_srli_epi16(v, 4), ld(kc.low_nibble));
}

struct vector_masks {
  std::uint64_t non_ascii, starts, errors;
  std::uint64_t cut;           // the lead of a sequence that the vector's end cuts, if any
  std::uint64_t ge_e0, ge_f0;  // lead classes of 3- and 4-byte sequences (when asked for)
};

inline constexpr vector_masks ascii_vector{0, ~std::uint64_t{0}, 0, 0, 0, 0};

// The bytes of v that break rule 1 (bit 7) or rule 2 (bits 0..5: pair classes), given the
// vector before it (zeros when v starts a unit: they read as ASCII). A sequence cut by v's
// end is not an error here; a lead in `before` whose continuation bytes v lacks is. Only
// vector operations: a compare into a mask register would take the shuffle port.
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline __m512i check(__m512i v, __m512i before) noexcept {
  const __m512i p1 = _mm512_permutex2var_epi8(v, ld(ix.back1), before);
  const __m512i p2 = _mm512_permutex2var_epi8(v, ld(ix.back2), before);
  const __m512i p3 = _mm512_permutex2var_epi8(v, ld(ix.back3), before);
  // Bit 7: a lead 1..3 bytes back needs a continuation byte here.
  const __m512i need = _mm512_ternarylogic_epi32(_mm512_subs_epu8(p1, ld(ix.bit7_above_bf)),
                                                 _mm512_subs_epu8(p2, ld(ix.bit7_above_df)),
                                                 _mm512_subs_epu8(p3, ld(ix.bit7_above_ef)), 0xFE);  // a | b | c
  // The 16-bit shifts leave each byte's top 6 bits in its low 6, which is all a permute reads.
  const __m512i next = _mm512_permutexvar_epi8(_mm512_srli_epi16(v, 2), ld(ix.next_by_top6));
  const __m512i pairs =
      _mm512_ternarylogic_epi32(_mm512_permutexvar_epi8(_mm512_srli_epi16(p1, 2), ld(ix.lead_high_by_top6)),
                                _mm512_permutexvar_epi8(p1, ld(kc.lead_low)), next, 0x80);  // a & b & c
  // Bit 7 of need ^ next; pair classes are below 0x80.
  return _mm512_or_si512(_mm512_ternarylogic_epi32(need, next, ld(ix.high_bit), 0x28), pairs);  // (a ^ b) & c
}

// Nonzero bytes where v's end cuts a sequence (a lead in its last 3 bytes that needs more).
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline __m512i cut_at_end(__m512i v) noexcept {
  return _mm512_subs_epu8(v, ld(ix.cut_above));
}

// The masks of the vector v checked against the vector before it (see check). No branch:
// in mixed scripts, whether a vector is all ASCII is a coin toss for the branch predictor.
template <bool LeadClasses>
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline vector_masks analyse(__m512i v, __m512i before) noexcept {
  const __m512i bad = check(v, before);
  vector_masks m{_mm512_movepi8_mask(v), ~_mm512_cmplt_epi8_mask(v, ld(kc.continuation_top)),
                 _mm512_test_epi8_mask(bad, bad), _mm512_cmpgt_epu8_mask(v, ld(ix.cut_above)), 0, 0};
  if constexpr (LeadClasses) {
    m.ge_e0 = _mm512_cmpgt_epu8_mask(v, ld(kc.over_df));
    m.ge_f0 = _mm512_cmpgt_epu8_mask(v, ld(kc.over_ef));
  }
  return m;
}

// The units (Table 3-8: well-formed sequences and maximal-subpart error units) that start
// in the vector v, from v, the 3 bytes after it (the start of `ahead`) and `carry`: its
// first bytes that a unit of the vector before covers. Each position knows how far a
// well-formed prefix reaches from it (prefix2..4: at least 2, 3, 4 bytes); a position
// inside the prefix of a lead 1..3 bytes before it is not a start, and a start is an
// error unit unless its prefix is as long as its lead announces. Prefix bytes after a lead
// are continuation bytes, which never begin a prefix of their own, so no prefix is ever
// inside another: the starts are exact.
struct unit_masks {
  std::uint64_t non_ascii, ge_e0, ge_f0;
  std::uint64_t prefix2, prefix3, prefix4;
  std::uint64_t starts;    // every unit, well-formed or not
  std::uint64_t complete;  // starts of well-formed sequences
  std::uint64_t errors;    // starts of error units
  std::uint64_t beyond;    // the carry of the next vector (bits 0..2)
  unsigned skip;           // bytes at the vector's start that the carry covers
};

GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline unit_masks units(__m512i v, __m512i ahead, std::uint64_t carry) noexcept {
  const __m512i next = _mm512_permutex2var_epi8(v, ld(ix.ahead1), ahead);
  const std::uint64_t cont = _mm512_cmplt_epi8_mask(v, ld(kc.continuation_top));
  const std::uint64_t cont_ahead = _mm512_cmplt_epi8_mask(ahead, ld(kc.continuation_top));
  const std::uint64_t cont1 = cont >> 1 | cont_ahead << 63, cont2 = cont >> 2 | cont_ahead << 62,
                      cont3 = cont >> 3 | cont_ahead << 61;
  // The pair classes flag C0, C1, F5..FF and the second-byte rules, given a continuation byte.
  const __m512i pairs = _mm512_and_si512(
      _mm512_and_si512(_mm512_shuffle_epi8(ld(kc.lead_high), high_nibbles(v)),
                       _mm512_shuffle_epi8(ld(kc.lead_low), _mm512_and_si512(v, ld(kc.low_nibble)))),
      _mm512_shuffle_epi8(ld(kc.next_high), high_nibbles(next)));
  unit_masks m{};
  m.non_ascii = _mm512_movepi8_mask(v);
  m.ge_e0 = _mm512_cmpgt_epu8_mask(v, ld(kc.over_df));
  m.ge_f0 = _mm512_cmpgt_epu8_mask(v, ld(kc.over_ef));
  const std::uint64_t lead = _mm512_cmpgt_epu8_mask(v, ld(kc.over_bf));
  m.prefix2 = lead & cont1 & ~_mm512_test_epi8_mask(pairs, pairs);
  m.prefix3 = m.prefix2 & m.ge_e0 & cont2;
  m.prefix4 = m.prefix3 & m.ge_f0 & cont3;
  m.starts = ~(m.prefix2 << 1 | m.prefix3 << 2 | m.prefix4 << 3 | carry);
  m.complete = m.starts & (~m.non_ascii | (m.prefix2 & ~m.ge_e0) | (m.prefix3 & ~m.ge_f0) | m.prefix4);
  m.errors = m.starts & ~m.complete;
  // What the shifts above push past bit 63: positions 64..66 inside a unit of this vector.
  m.beyond = m.prefix2 >> 63 | m.prefix3 >> 62 | m.prefix4 >> 61;
  m.skip = static_cast<unsigned>(std::countr_one(carry));
  return m;
}

// Bytes of a well-formed vector before the sequence its end cuts, if any (61..64).
inline unsigned uncut(const vector_masks& m) noexcept { return static_cast<unsigned>(std::countr_zero(m.cut)); }

// Whether the `count` vectors at p are all ASCII.
template <unsigned count>
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline bool all_ascii(const u8* p) noexcept {
  __m512i any = _mm512_loadu_si512(p);
  for (unsigned k = 1; k < count; ++k) any = _mm512_or_si512(any, _mm512_loadu_si512(p + 64 * k));
  return _mm512_movepi8_mask(any) == 0;
}

// The code points of 16 elements, each holding the 4 bytes from a sequence's lead on.
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline __m512i decode_elements(__m512i x) noexcept {
  // (x >> 4 & 0x0F) | 0x80808000: the lead nibble, and lookups of 0 for bytes 1..3.
  const __m512i nibble =
      _mm512_ternarylogic_epi32(_mm512_srli_epi32(x, 4), ld(kc.lead_nibble), ld(kc.zero_rest), 0xEA);
  const __m512i lead = _mm512_sllv_epi32(_mm512_and_si512(x, _mm512_shuffle_epi8(ld(kc.payload), nibble)),
                                         _mm512_shuffle_epi8(ld(kc.up), nibble));
  const __m512i pairs = _mm512_maddubs_epi16(_mm512_and_si512(x, ld(kc.trail_bits)), ld(kc.pair_weights));
  const __m512i trail = _mm512_madd_epi16(pairs, ld(kc.quad_weights));
  return _mm512_or_si512(lead, _mm512_srlv_epi32(trail, _mm512_shuffle_epi8(ld(kc.down), nibble)));
}

// Bytes past a 64-byte vector that units() and decode_starts() read: the end of a sequence
// that starts in the vector.
inline constexpr unsigned overread = 3;

// The code points of the sequences starting at the set bits of `starts` in the 64 bytes
// at src (reading up to src + 64 + overread), stored from out; returns the end of what it stored.
// The start positions are compressed first, so the work follows the number of sequences
// (2 rounds of 16 for CJK text, not 4): element j of a round gathers the 4 bytes from the
// round's j-th start, the 3 after the vector included. Bit j of `replaced` makes the j-th
// start's code point U+FFFD instead. Writes whole registers: up to out + 256 may change.
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline u8* decode_starts(const u8* src, std::uint64_t starts, u8* out,
                                                          std::uint64_t replaced = 0) noexcept {
  const __m512i v = _mm512_loadu_si512(src);
  const __m512i after = _mm512_maskz_loadu_epi8(0x7, src + 64);  // the overread
  const __m512i at = _mm512_maskz_compress_epi8(starts, ld(ix.iota));  // start positions, in order
  const auto count = static_cast<unsigned>(std::popcount(starts));
  for (unsigned g = 0; g < count; g += 16) {
    const __m512i lead_at = _mm512_permutexvar_epi8(_mm512_add_epi8(ld(ix.spread), _mm512_set1_epi8(char(g))), at);
    const __m512i x = _mm512_permutex2var_epi8(v, _mm512_add_epi8(lead_at, ld(ix.byte_in_element)), after);
    const auto replace = static_cast<__mmask16>(replaced >> g);
    _mm512_storeu_si512(out, _mm512_mask_mov_epi32(decode_elements(x), replace, _mm512_set1_epi32(0xFFFD)));
    out += 4 * std::min(16u, count - g);
  }
  return out;
}

// Copies n (0..67) bytes; reads and writes nothing beyond them.
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline u8* copy_short(u8* out, const u8* in, unsigned n) noexcept {
  const __mmask64 head = _bzhi_u64(~std::uint64_t{0}, n);  // all 64 when n >= 64
  _mm512_mask_storeu_epi8(out, head, _mm512_maskz_loadu_epi8(head, in));
  for (unsigned k = 64; k < n; ++k) out[k] = in[k];
  return out + n;
}

GUTF8_AVX512 inline void widen64(const u8* in, u8* out) noexcept {
  for (int k = 0; k < 4; ++k)
    _mm512_storeu_si512(out + 64 * k,
                        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * k))));
}

}  // namespace gutf8::cpu::avx512
#endif
