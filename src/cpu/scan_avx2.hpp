// The AVX2 scanners (kernels in simd_avx2.hpp). UTF-8 in 32-byte vectors that start at a unit
// boundary: each vector is checked as a whole and its well-formed units handled; a vector with an
// error goes to the exact path. Validate, which needs no units where there is no error, first
// checks pairs of vectors at fixed steps. UTF-32 8 values at a time. The portable scanner takes
// the rest.
#pragma once

#include "cpu/isa.hpp"

#if GUTF8_X86
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/scan_portable.hpp"
#include "cpu/scan_state.hpp"
#include "cpu/simd_avx2.hpp"

namespace gutf8::cpu::avx2 {

// The well-formed units that start in the 32 bytes at i; 0 when the vector has an error.
template <mode M, error_policy P, bool H>
GUTF8_AVX2 inline unsigned vector32(utf8_state<M, P, H>& s, std::size_t i) noexcept {
  const u8* w = s.in + i;
  const vector_masks m = analyse(w);
  if (m.non_ascii == 0) {
    if constexpr (M == mode::decode) {
      widen32(w, s.out);
      s.out += 128;
    } else {
      s.ascii_run(w, 32);
    }
    return 32;
  }
  if (m.errors != 0) return 0;
  const unsigned used = uncut(m);
  const std::uint32_t starts = m.starts & static_cast<std::uint32_t>((std::uint64_t{1} << used) - 1);
  if constexpr (M == mode::decode || H) {
    [[maybe_unused]] alignas(32) std::array<u8, 4 * 32 + 32> local;
    u8* o = M == mode::decode ? s.out : local.data();
    for (unsigned q = 0; q < 32; q += 8) {
      const unsigned m8 = starts >> q & 0xFFu;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), decode8(w + q, m8));
      o += 4 * std::popcount(m8);
    }
    s.finish_vector(o, local.data());
  }
  if constexpr (M == mode::repair) {
    std::memcpy(s.out, w, 32);  // room: 3 output bytes per remaining input byte
    s.out += used;
  }
  if constexpr (M == mode::stats) s.count_starts(starts, ~m.non_ascii, m.ge_e0, m.ge_f0);
  return used;
}

// Validate's path: pairs of vectors at fixed steps, each vector checked against the one
// before it, keeping only whether a byte broke a rule: no step waits for the sequence
// lengths of the last, and nothing is counted. Where a pair breaks a rule the vector path
// finds its units.
GUTF8_AVX2 inline vector_stop checked_pairs(const u8* in, std::size_t i, std::size_t stop) noexcept {
  constexpr std::size_t n = 64;
  __m256i before = _mm256_setzero_si256();
  std::size_t at = i;
  for (; stop - at >= n; at += n) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + at));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + at + 32));
    // ASCII pairs only check that the vector before ends its last sequence.
    const __m256i bad = mask_of(_mm256_or_si256(a, b)) == 0
                            ? cut_at_end(before)
                            : _mm256_or_si256(check_after(a, before), check_after(b, a));
    if (!_mm256_testz_si256(bad, bad)) return {unit_start_before(in, i, at), at + n};
    before = b;
  }
  return {unit_start_before(in, i, at), 0};
}

template <mode M, error_policy P, bool H>
GUTF8_AVX2 inline segment_result run_utf8(utf8_state<M, P, H>& s) noexcept {
  std::size_t i = 0;
  for (;;) {
    std::size_t stop = s.end;  // of the vector path
    if constexpr (M == mode::validate) {
      const vector_stop c = checked_pairs(s.in, i, std::min(s.end, s.limit));
      i = c.at;
      if (c.failed == 0) break;
      stop = c.failed;
    }
    // Past a vector with an error, validate stays here until `calm` vectors in a row were
    // well-formed: errors come in bursts, and each pair that fails is checked twice.
    constexpr unsigned calm = 8;
    unsigned clean = 0;
    // decode8 reads 16 bytes at +24
    while ((i < stop || clean < calm) && s.end - i >= 32 && s.limit - i >= 48 && s.room(32)) {
      if (const unsigned n = vector32(s, i)) {
        i += n;
        ++clean;
        continue;
      }
      clean = 0;
      if (!s.exact_units(i, i + 32)) return s.finish(i);
    }
    if (M != mode::validate || i < stop || clean < calm) break;
  }
  return portable::run_utf8(s, i);
}

template <error_policy P>
GUTF8_AVX2 inline segment_result run_utf32(utf32_state<P>& s) noexcept {
  std::size_t i = 0;
  while (i < s.end && s.end - i >= 32) {
    if (const int n = encode8(s.in + i, s.out); n >= 0) {  // room: 4 bytes per value
      s.out += n;
      i += 32;
      continue;
    }
    if (!s.values(i, i + 32)) return s.finish(i);  // a bad value among these 8
  }
  return portable::run_utf32(s, i);
}

}  // namespace gutf8::cpu::avx2
#endif
