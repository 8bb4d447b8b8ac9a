// The portable scanners: SSE2 on x86-64, plain C++ elsewhere (or with GUTF8_NO_SIMD). They end
// every other ISA's scan too, past its last full vector.
//
// UTF-8 in 16-byte vectors that start at a unit boundary: each vector is checked as a whole and
// its well-formed units handled, except the last start (its sequence may end beyond the vector).
// Any doubt (an error, a sequence longer than the vector) sends those bytes to the exact path.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/isa.hpp"
#include "cpu/scan_state.hpp"
#if GUTF8_SSE2
#include <emmintrin.h>
#endif

namespace gutf8::cpu::portable {

struct vector_masks {
  unsigned non_ascii;  // bit k: byte k >= 0x80
  unsigned starts;     // bit k: byte k is not a continuation byte
};

inline vector_masks masks16(const u8* p) noexcept {
#if GUTF8_SSE2
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // Signed compare: 80..BF are -128..-65, the only bytes not greater than -65.
  return {static_cast<unsigned>(_mm_movemask_epi8(v)),
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi8(v, _mm_set1_epi8(-65))))};
#else
  unsigned a = 0, s = 0;
  for (unsigned k = 0; k < 16; ++k) {
    a |= unsigned(p[k] >> 7) << k;
    s |= unsigned(!detail::is_continuation(p[k])) << k;
  }
  return {a, s};
#endif
}

// Lead bytes of 3 and 4-byte sequences (E0..FF, F0..FF), for the stats length counts.
inline std::array<unsigned, 2> long_lead_masks16(const u8* p) noexcept {
#if GUTF8_SSE2
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return {static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi8(v, _mm_set1_epi8(-33)))),
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi8(v, _mm_set1_epi8(-17))))};
#else
  unsigned e = 0, f = 0;
  for (unsigned k = 0; k < 16; ++k) {
    e |= unsigned(p[k] >= 0xE0) << k;
    f |= unsigned(p[k] >= 0xF0) << k;
  }
  return {e, f};
#endif
}

inline void widen16(const u8* in, u8* out) noexcept {
#if GUTF8_SSE2
  const __m128i z = _mm_setzero_si128();
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(lo, z));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_unpackhi_epi16(lo, z));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32), _mm_unpacklo_epi16(hi, z));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48), _mm_unpackhi_epi16(hi, z));
#else
  for (unsigned k = 0; k < 16; ++k) store32(out + 4 * k, in[k]);
#endif
}

inline std::uint32_t byteswap32(std::uint32_t v) noexcept {  // compiles to bswap
  return v >> 24 | (v >> 8 & 0xFF00u) | (v << 8 & 0xFF0000u) | v << 24;
}

// Tables indexed by the distance d (1..15) between two sequence starts in a vector.
struct distance_tables {
  std::array<std::uint32_t, 16> payload_mask{};  // code point bits of a d-byte sequence
  std::array<std::uint32_t, 16> minimum{};       // smallest non-overlong value
  std::array<std::uint8_t, 256> length_of{};     // detail::sequence_length per lead
};
inline constexpr distance_tables make_distance_tables() {
  distance_tables t{};
  for (auto& m : t.minimum) m = 0xFFFFFFFFu;  // d > 4 never passes
  t.payload_mask[1] = 0x7F, t.payload_mask[2] = 0x7FF, t.payload_mask[3] = 0xFFFF;
  t.payload_mask[4] = 0x1FFFFF;
  t.minimum[1] = 0, t.minimum[2] = 0x80, t.minimum[3] = 0x800, t.minimum[4] = 0x10000;
  for (unsigned b = 0; b < 256; ++b) t.length_of[b] = std::uint8_t(detail::sequence_length(std::uint8_t(b)));
  return t;
}
inline constexpr distance_tables tables = make_distance_tables();

// Decodes the d-byte sequence at q whose bytes 1..d-1 are known to be continuation bytes
// and reports whether it is well-formed. Byte 1's lead-dependent range (Table 3-7) is
// checked on the value: E0/F0 ranges exclude overlongs, ED excludes surrogates, F4
// excludes values above U+10FFFF.
GUTF8_ALWAYS_INLINE inline std::uint32_t decode_at_distance(const u8* q, unsigned d, unsigned& bad) noexcept {
  const std::uint32_t x = byteswap32(load32(q)) >> ((32u - 8u * d) & 31u);  // d bytes, lead on top
  // Bit 6 of a continuation byte is 0, so 0x7F takes 6 bits of a trailing byte and 7 of ASCII.
  const std::uint32_t c =
      ((x & 0x7Fu) | (x >> 2 & 0xFC0u) | (x >> 4 & 0x3F000u) | (x >> 6 & 0x1C0000u)) & tables.payload_mask[d];
  bad |= unsigned(tables.length_of[q[0]] != d) | unsigned(c < tables.minimum[d]) |
         unsigned(c - 0xD800u < 0x800u) | unsigned(c > 0x10FFFFu);
  return c;
}

template <mode M, error_policy P, bool H>
inline void ascii16(utf8_state<M, P, H>& s, const u8* w) noexcept {
  if constexpr (M == mode::decode) {
    widen16(w, s.out);
    s.out += 64;
  } else {
    s.ascii_run(w, 16);
  }
}

template <mode M, error_policy P, bool H>
inline void count_vector(utf8_state<M, P, H>& s, const u8* w, const vector_masks& m, unsigned last) noexcept {
  const auto [ge_e0, ge_f0] = long_lead_masks16(w);  // signed compares: ASCII is set too
  s.count_starts(m.starts & ((1u << last) - 1u), ~m.non_ascii, ge_e0 & m.non_ascii, ge_f0 & m.non_ascii);
}

// The well-formed units that start in the 16 bytes at i, except the last start (its
// sequence may end beyond the vector). Returns the bytes consumed, 0 to fall back.
template <mode M, error_policy P, bool H>
inline unsigned vector16(utf8_state<M, P, H>& s, std::size_t i) noexcept {
  const u8* w = s.in + i;
  const vector_masks m = masks16(w);
  if (m.non_ascii == 0) {
    ascii16(s, w);
    return 16;
  }
  if ((m.starts & 1u) == 0 || m.starts == 1u) return 0;
  const auto last = static_cast<unsigned>(std::bit_width(m.starts) - 1);
  unsigned rest = m.starts & (m.starts - 1), at = 0, bad = 0;
  u8* o = s.out;
  [[maybe_unused]] std::array<std::uint32_t, 16> values;
  [[maybe_unused]] unsigned count = 0;
  do {
    const auto next = static_cast<unsigned>(std::countr_zero(rest));
    rest &= rest - 1;
    const std::uint32_t c = decode_at_distance(w + at, next - at, bad);
    if constexpr (M == mode::decode) {
      store32(o, c);
      o += 4;
    }
    if constexpr (H) values[count++] = c;
    at = next;
  } while (rest != 0);
  if (bad != 0) return 0;
  if constexpr (M == mode::decode) s.out = o;
  if constexpr (M == mode::repair) {
    std::memcpy(s.out, w, 16);  // room: 3 output bytes per remaining input byte
    s.out += last;
  }
  if constexpr (M == mode::stats) count_vector(s, w, m, last);
  if constexpr (H)
    for (unsigned k = 0; k < count; ++k) ++s.histogram[values[k]];
  return last;
}

// From i to the end: 16-byte vectors, and the exact path.
template <mode M, error_policy P, bool H>
inline segment_result run_utf8(utf8_state<M, P, H>& s, std::size_t i) noexcept {
  while (i < s.end) {
    if (s.end - i >= 16 && s.limit - i >= 19 && s.room(16)) {  // + 3 bytes a last sequence may need
      if (const unsigned n = vector16(s, i)) {
        i += n;
        continue;
      }
      if (!s.exact_units(i, i + 16)) return s.finish(i);
      continue;
    }
    if (!s.exact_unit(i)) return s.finish(i);
  }
  return s.finish(i);
}

// 16 UTF-32 values at once when all are ASCII.
template <error_policy P>
inline bool ascii16(utf32_state<P>& s, const u8* p) noexcept {
#if GUTF8_SSE2
  const auto ld = [p](int k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p) + k); };
  const __m128i a = ld(0), b = ld(1), c = ld(2), d = ld(3);
  const __m128i any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
  const __m128i high = _mm_and_si128(any, _mm_set1_epi32(~0x7F));
  if (_mm_movemask_epi8(_mm_cmpeq_epi32(high, _mm_setzero_si128())) != 0xFFFF) return false;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(s.out), _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
  s.out += 16;
  return true;
#else
  std::uint32_t any = 0;
  for (unsigned k = 0; k < 16; ++k) any |= load32(p + 4 * k);
  if (any > 0x7Fu) return false;
  for (unsigned k = 0; k < 16; ++k) s.out[k] = p[4 * k];
  s.out += 16;
  return true;
#endif
}

// From i to the end: 16 ASCII values at once, else one value at a time.
template <error_policy P>
inline segment_result run_utf32(utf32_state<P>& s, std::size_t i) noexcept {
  while (i < s.end) {
    if (s.limit - i < 4) {
      if (s.at_end && s.error(i, error_kind::ragged_tail)) i = s.limit;
      break;
    }
    if (s.end - i >= 64) {
      if (ascii16(s, s.in + i)) {
        i += 64;
        continue;
      }
      if (!s.values(i, i + 64)) return s.finish(i);
      continue;
    }
    if (!s.value(i)) break;
    i += 4;
  }
  return s.finish(i);
}

}  // namespace gutf8::cpu::portable
