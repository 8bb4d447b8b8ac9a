// AVX2 kernels for the UTF-8 scanner: 32-byte vectors (rules in simd_tables.hpp). Decoding
// takes 8 bytes at a time: a table indexed by their start mask gives the shuffle that
// gathers bytes p..p+3 of each start p into its own 32-bit element.
#pragma once

#include "cpu/isa.hpp"

#if GUTF8_X86
#include <array>
#include <bit>
#include <cstdint>

#include "cpu/simd_tables.hpp"

namespace gutf8::cpu::avx2 {

using u8 = std::uint8_t;

struct gather_table {
  alignas(32) std::array<std::array<u8, 32>, 256> control{};
};
inline constexpr gather_table make_gather_table() {
  gather_table t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned element = 0;
    for (unsigned b = 0; b < 8; ++b)
      if (m >> b & 1u) {
        for (unsigned j = 0; j < 4; ++j) t.control[m][4 * element + j] = u8(b + j);
        ++element;
      }
  }
  return t;
}
inline constexpr gather_table gather = make_gather_table();
inline constexpr simd::constants<32> kc{};

// Loads a constant as a value the compiler cannot see through: otherwise, short of
// registers, GCC rebuilds it inside the loop with two shuffle-port µops.
GUTF8_AVX2 inline __m256i ld(const simd::vec<32>& v) noexcept {
  __m256i r = _mm256_load_si256(reinterpret_cast<const __m256i*>(v.data()));
  __asm__("" : "+x"(r));
  return r;
}

GUTF8_AVX2 inline std::uint32_t mask_of(__m256i v) noexcept {
  return static_cast<std::uint32_t>(_mm256_movemask_epi8(v));
}

GUTF8_AVX2 inline __m256i above(__m256i v, const simd::vec<32>& c) noexcept {  // unsigned v > c
  return _mm256_cmpgt_epi8(_mm256_subs_epu8(v, ld(c)), _mm256_setzero_si256());
}

GUTF8_AVX2 inline __m256i high_nibbles(__m256i v) noexcept {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), ld(kc.low_nibble));
}

struct vector_masks {
  std::uint32_t non_ascii, starts, errors;
  std::uint32_t ge_c0, ge_e0, ge_f0;  // lead classes: 2+, 3+ and 4-byte sequences
};

// The bytes of v that break rule 1 or 2, given the 3 bytes before it at the top of `carry`
// (nonzero bytes), and its continuation bytes (0xFF).
struct violations {
  __m256i bad, cont;
};
GUTF8_AVX2 GUTF8_ALWAYS_INLINE inline violations check(__m256i v, __m256i carry) noexcept {
  const __m256i p1 = _mm256_alignr_epi8(v, carry, 15), p2 = _mm256_alignr_epi8(v, carry, 14),
                p3 = _mm256_alignr_epi8(v, carry, 13);
  const __m256i cont = _mm256_cmpgt_epi8(ld(kc.continuation_top), v);
  // What is left of each byte above its bound (at most 0x40): one compare for the three.
  const __m256i over = _mm256_or_si256(
      _mm256_or_si256(_mm256_subs_epu8(p1, ld(kc.over_bf)), _mm256_subs_epu8(p2, ld(kc.over_df))),
      _mm256_subs_epu8(p3, ld(kc.over_ef)));
  const __m256i need = _mm256_cmpgt_epi8(over, _mm256_setzero_si256());
  // Pair classes are below 0x80: a nonzero byte is a broken pair.
  const __m256i pairs = _mm256_and_si256(
      _mm256_and_si256(_mm256_shuffle_epi8(ld(kc.lead_high), high_nibbles(p1)),
                       _mm256_shuffle_epi8(ld(kc.lead_low), _mm256_and_si256(p1, ld(kc.low_nibble)))),
      _mm256_shuffle_epi8(ld(kc.next_high), high_nibbles(v)));
  return {_mm256_or_si256(_mm256_xor_si256(need, cont), pairs), cont};
}

// v checked against the vector before it (its 3 last bytes matter).
GUTF8_AVX2 GUTF8_ALWAYS_INLINE inline __m256i check_after(__m256i v, __m256i before) noexcept {
  return check(v, _mm256_permute2x128_si256(before, v, 0x21)).bad;
}

// Nonzero bytes where v's end cuts a sequence (a lead in its last 3 bytes that needs more).
alignas(32) inline constexpr simd::vec<32> cut_above = [] {  // ld() loads aligned
  simd::vec<32> t = simd::splat8<32>(0xFF);
  t[29] = 0xEF, t[30] = 0xDF, t[31] = 0xBF;
  return t;
}();
GUTF8_AVX2 inline __m256i cut_at_end(__m256i v) noexcept { return _mm256_subs_epu8(v, ld(cut_above)); }

GUTF8_AVX2 GUTF8_ALWAYS_INLINE inline vector_masks analyse(const u8* p) noexcept {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const std::uint32_t non_ascii = mask_of(v);
  if (non_ascii == 0) return {0, ~0u, 0, 0, 0, 0};
  // v moved up 1..3 bytes; zeros (ASCII) enter, since the vector starts a unit.
  const violations c = check(v, _mm256_permute2x128_si256(v, v, 0x08));
  return {non_ascii,
          ~mask_of(c.cont),
          ~mask_of(_mm256_cmpeq_epi8(c.bad, _mm256_setzero_si256())),
          mask_of(above(v, kc.over_bf)),
          mask_of(above(v, kc.over_df)),
          mask_of(above(v, kc.over_ef))};
}

// Bytes of a well-formed vector before the sequence its end cuts, if any (29..32).
inline unsigned uncut(const vector_masks& m) noexcept {
  const std::uint64_t cut = (m.ge_c0 & 0x80000000u) | (m.ge_e0 & 0xC0000000u) | (m.ge_f0 & 0xE0000000u);
  return static_cast<unsigned>(std::countr_zero(cut | std::uint64_t{1} << 32));
}

// Code points of 32-bit elements holding the bytes p..p+3 of a sequence start p each.
GUTF8_AVX2 inline __m256i code_points(__m256i x) noexcept {
  const __m256i nibble =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(x, 4), ld(kc.lead_nibble)), ld(kc.zero_rest));
  const __m256i lead = _mm256_sllv_epi32(_mm256_and_si256(x, _mm256_shuffle_epi8(ld(kc.payload), nibble)),
                                         _mm256_shuffle_epi8(ld(kc.up), nibble));
  // b1 << 12 | b2 << 6 | b3 over 6-bit payloads, as if the sequence had 4 bytes.
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_and_si256(x, ld(kc.trail_bits)), ld(kc.pair_weights));
  const __m256i trail = _mm256_madd_epi16(pairs, ld(kc.quad_weights));
  return _mm256_or_si256(lead, _mm256_srlv_epi32(trail, _mm256_shuffle_epi8(ld(kc.down), nibble)));
}

// The sequences starting at the set bits of m8 in src[0..8), decoded into 8 elements.
GUTF8_AVX2 inline __m256i decode8(const u8* src, unsigned m8) noexcept {
  const __m256i control = _mm256_load_si256(reinterpret_cast<const __m256i*>(gather.control[m8].data()));
  return code_points(_mm256_shuffle_epi8(
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))), control));
}

GUTF8_AVX2 inline void widen32(const u8* in, u8* out) noexcept {
  for (int k = 0; k < 4; ++k)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * k),
                        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + 8 * k))));
}

// Encode: 8 UTF-32 values at a time. Each element gets its UTF-8 bytes last-first (the 6-bit
// groups of the value, continuation markers and the lead prefix), then one shuffle per
// 128-bit half puts the bytes of its 4 elements in order, one after the other. The shuffle
// comes from a table indexed by the 4 lengths.
struct encode_tables {
  alignas(16) std::array<std::array<u8, 16>, 256> control{};
  std::array<u8, 256> length{};
  std::array<u8, 16> spread{};  // bit k -> bit 2k
};
inline constexpr encode_tables make_encode_tables() {
  encode_tables t{};
  for (unsigned index = 0; index < 256; ++index) {
    unsigned out = 0;
    for (unsigned element = 0; element < 4; ++element)
      for (unsigned n = index >> (2 * element) & 3u, b = n + 1; b-- > 0;)
        t.control[index][out++] = u8(4 * element + b);
    t.length[index] = u8(out);
    for (; out < 16; ++out) t.control[index][out] = 0x80;
  }
  for (unsigned x = 0; x < 16; ++x)
    for (unsigned b = 0; b < 4; ++b) t.spread[x] = u8(t.spread[x] | (x >> b & 1u) << (2 * b));
  return t;
}
inline constexpr encode_tables enc = make_encode_tables();

struct encode_constants {
  alignas(32) simd::vec<32> markers = [] {  // by continuation bytes n: lead prefix + markers
    simd::vec<32> v{};
    constexpr std::uint32_t m[4] = {0, 0x0000C080u, 0x00E08080u, 0xF0808080u};
    for (unsigned i = 0; i < 16; ++i) v[i] = u8(m[i / 4] >> (8 * (i % 4)));
    return v;
  }();
  alignas(32) simd::vec<32> surrogate_mask = simd::splat32<32>(0xFFFFF800u);
  alignas(32) simd::vec<32> surrogate = simd::splat32<32>(0xD800u);
  alignas(32) simd::vec<32> plane_16 = simd::splat32<32>(0x10u);
  alignas(32) simd::vec<32> max1 = simd::splat32<32>(0x7Fu);
  alignas(32) simd::vec<32> max2 = simd::splat32<32>(0x7FFu);
  alignas(32) simd::vec<32> max3 = simd::splat32<32>(0xFFFFu);
  alignas(32) simd::vec<32> group0 = simd::splat32<32>(0x3Fu);
  alignas(32) simd::vec<32> group1 = simd::splat32<32>(0x3F00u);
  alignas(32) simd::vec<32> group2 = simd::splat32<32>(0x3F0000u);
  alignas(32) simd::vec<32> group3 = simd::splat32<32>(0x07000000u);
  alignas(32) simd::vec<32> first_bytes = [] {  // byte 0 of each element to the front of its half
    simd::vec<32> v = simd::splat8<32>(0x80);
    for (unsigned i = 0; i < 4; ++i) v[i] = v[16 + i] = u8(4 * i);
    return v;
  }();
};
inline constexpr encode_constants ec{};

// Writes the UTF-8 of the 8 values at in to out (room for 32 bytes); returns the bytes
// written, or -1 when a value is a surrogate or above U+10FFFF (nothing is written).
GUTF8_AVX2 inline int encode8(const u8* in, u8* out) noexcept {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  const __m256i bad = _mm256_or_si256(
      _mm256_cmpeq_epi32(_mm256_and_si256(v, ld(ec.surrogate_mask)), ld(ec.surrogate)),
      _mm256_cmpgt_epi32(_mm256_srli_epi32(v, 16), ld(ec.plane_16)));  // signed is fine: <= 0xFFFF
  if (!_mm256_testz_si256(bad, bad)) return -1;
  const __m256i c1 = _mm256_cmpgt_epi32(v, ld(ec.max1));
  const auto m1 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(c1)));
  if (m1 == 0) {  // ASCII
    const __m256i firsts = _mm256_shuffle_epi8(v, ld(ec.first_bytes));
    const __m256i packed = _mm256_permutevar8x32_epi32(firsts, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
    return 8;
  }
  const __m256i c2 = _mm256_cmpgt_epi32(v, ld(ec.max2)), c3 = _mm256_cmpgt_epi32(v, ld(ec.max3));
  const __m256i n = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_add_epi32(_mm256_add_epi32(c1, c2), c3));
  const __m256i groups =
      _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(v, ld(ec.group0)),
                                      _mm256_and_si256(_mm256_slli_epi32(v, 2), ld(ec.group1))),
                      _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi32(v, 4), ld(ec.group2)),
                                      _mm256_and_si256(_mm256_slli_epi32(v, 6), ld(ec.group3))));
  // ASCII elements keep the value itself (its 7 bits span two groups).
  const __m256i elements =
      _mm256_or_si256(_mm256_blendv_epi8(v, groups, c1), _mm256_permutevar8x32_epi32(ld(ec.markers), n));
  const auto m2 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(c2)));
  const auto m3 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(c3)));
  const unsigned bit0 = m1 ^ m2 ^ m3, bit1 = m2;  // of each element's n (c3 => c2 => c1)
  const unsigned lo = enc.spread[bit0 & 15u] | enc.spread[bit1 & 15u] << 1;
  const unsigned hi = enc.spread[bit0 >> 4] | enc.spread[bit1 >> 4] << 1;
  const __m256i bytes = _mm256_shuffle_epi8(
      elements, _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(enc.control[hi].data()),
                                 reinterpret_cast<const __m128i*>(enc.control[lo].data())));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(bytes));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + enc.length[lo]), _mm256_extracti128_si256(bytes, 1));
  return enc.length[lo] + enc.length[hi];
}

}  // namespace gutf8::cpu::avx2
#endif
