// AVX-512 (F/BW/VL + VBMI) kernels for the UTF-8 scanner: 64-byte chunks, checked by the
// rules in simd_tables.hpp with mask registers. Decoding reads 4 bytes at *every* position
// of 16 (one constant byte permute), computes 16 code points at once and keeps those at
// sequence starts with a compress: the work per byte no longer depends on the script.
#pragma once

#include "codec/isa.hpp"

#if GUTF8_X86
#include <array>
#include <bit>
#include <cstdint>

#include "codec/simd_tables.hpp"

namespace gutf8::cpu::avx512 {

using u8 = std::uint8_t;

struct index_tables {
  alignas(64) simd::vec<64> back1{}, back2{}, back3{};  // byte k takes byte k-1, k-2, k-3
  alignas(64) simd::vec<64> gather{};                   // 32-bit lane j takes bytes j..j+3
};
inline constexpr index_tables make_index_tables() {
  index_tables t{};
  for (unsigned k = 0; k < 64; ++k) {
    t.back1[k] = u8(k >= 1 ? k - 1 : 0);
    t.back2[k] = u8(k >= 2 ? k - 2 : 0);
    t.back3[k] = u8(k >= 3 ? k - 3 : 0);
  }
  for (unsigned j = 0; j < 16; ++j)
    for (unsigned b = 0; b < 4; ++b) t.gather[4 * j + b] = u8(j + b);
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

struct chunk_masks {
  std::uint64_t non_ascii, starts, errors;
  std::uint64_t ge_c0, ge_e0, ge_f0;  // lead classes: 2+, 3+ and 4-byte sequences
};

GUTF8_AVX512 inline chunk_masks analyse(const u8* p) noexcept {
  const __m512i v = _mm512_loadu_si512(p);
  const std::uint64_t non_ascii = _mm512_movepi8_mask(v);
  if (non_ascii == 0) return {0, ~std::uint64_t{0}, 0, 0, 0, 0};
  // v moved up 1..3 bytes; zeros (ASCII) enter, since the chunk starts a unit.
  const __m512i p1 = _mm512_maskz_permutexvar_epi8(~std::uint64_t{1}, ld(ix.back1), v);
  const __m512i p2 = _mm512_maskz_permutexvar_epi8(~std::uint64_t{3}, ld(ix.back2), v);
  const __m512i p3 = _mm512_maskz_permutexvar_epi8(~std::uint64_t{7}, ld(ix.back3), v);
  const std::uint64_t cont = _mm512_cmplt_epi8_mask(v, ld(kc.continuation_top));
  const std::uint64_t need = _mm512_cmpgt_epu8_mask(p1, ld(kc.over_bf)) |
                             _mm512_cmpgt_epu8_mask(p2, ld(kc.over_df)) |
                             _mm512_cmpgt_epu8_mask(p3, ld(kc.over_ef));
  const __m512i pairs = _mm512_and_si512(
      _mm512_and_si512(_mm512_shuffle_epi8(ld(kc.lead_high), high_nibbles(p1)),
                       _mm512_shuffle_epi8(ld(kc.lead_low), _mm512_and_si512(p1, ld(kc.low_nibble)))),
      _mm512_shuffle_epi8(ld(kc.next_high), high_nibbles(v)));
  return {non_ascii,
          ~cont,
          (need ^ cont) | _mm512_test_epi8_mask(pairs, pairs),
          _mm512_cmpgt_epu8_mask(v, ld(kc.over_bf)),
          _mm512_cmpgt_epu8_mask(v, ld(kc.over_df)),
          _mm512_cmpgt_epu8_mask(v, ld(kc.over_ef))};
}

// Bytes of a well-formed chunk before the sequence its end cuts, if any (61..64).
inline unsigned uncut(const chunk_masks& m) noexcept {
  constexpr std::uint64_t top1 = std::uint64_t{1} << 63, top2 = std::uint64_t{3} << 62,
                          top3 = std::uint64_t{7} << 61;
  return static_cast<unsigned>(std::countr_zero((m.ge_c0 & top1) | (m.ge_e0 & top2) | (m.ge_f0 & top3)));
}

// Code points of 16 lanes, each read as if a sequence started at src + lane.
GUTF8_AVX512 inline __m512i decode16(const u8* src) noexcept {
  const __m512i x = _mm512_permutexvar_epi8(
      ld(ix.gather), _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src))));
  // (x >> 4 & 0x0F) | 0x80808000: the lead nibble, and lookups of 0 for bytes 1..3.
  const __m512i nibble =
      _mm512_ternarylogic_epi32(_mm512_srli_epi32(x, 4), ld(kc.lead_nibble), ld(kc.zero_rest), 0xEA);
  const __m512i lead = _mm512_sllv_epi32(_mm512_and_si512(x, _mm512_shuffle_epi8(ld(kc.payload), nibble)),
                                         _mm512_shuffle_epi8(ld(kc.up), nibble));
  const __m512i pairs = _mm512_maddubs_epi16(_mm512_and_si512(x, ld(kc.trail_bits)), ld(kc.pair_weights));
  const __m512i trail = _mm512_madd_epi16(pairs, ld(kc.quad_weights));
  return _mm512_or_si512(lead, _mm512_srlv_epi32(trail, _mm512_shuffle_epi8(ld(kc.down), nibble)));
}

GUTF8_AVX512 inline void widen64(const u8* in, u8* out) noexcept {
  for (int k = 0; k < 4; ++k)
    _mm512_storeu_si512(out + 64 * k,
                        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * k))));
}

}  // namespace gutf8::cpu::avx512
#endif
