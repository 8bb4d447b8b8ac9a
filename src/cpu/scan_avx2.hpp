// The AVX2 scanners (kernels in simd_avx2.hpp). UTF-8 in 32-byte vectors that start at a unit
// boundary: each vector is checked as a whole and its well-formed units handled; a vector with an
// error goes to the exact path. Validate, repair and stats (without a histogram), which need no
// units where there is no error, first walk pairs of vectors at fixed steps. UTF-32 8 values at
// a time. The portable scanner takes the rest.
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

// The sequences starting at the set bits of `starts` in the 32 bytes at w, decoded to out (its
// stores reach out + 128); returns the end of the code points.
GUTF8_AVX2 GUTF8_ALWAYS_INLINE inline u8* decode_starts(const u8* w, std::uint32_t starts, u8* out) noexcept {
  for (unsigned q = 0; q < 32; q += 8) {
    const unsigned m8 = starts >> q & 0xFFu;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), decode8(w + q, m8));
    out += 4 * std::popcount(m8);
  }
  return out;
}

// The well-formed units that start in the 32 bytes at i; 0 when the vector has an error.
// (Decode has its own loop, decode_vectors.)
template <mode M, error_policy P, bool H>
GUTF8_AVX2 inline unsigned vector32(utf8_state<M, P, H>& s, std::size_t i) noexcept {
  static_assert(M != mode::decode);
  const u8* w = s.in + i;
  const vector_masks m = analyse(w);
  if (m.non_ascii == 0) {
    s.ascii_run(w, 32);
    return 32;
  }
  if (m.errors != 0) return 0;
  const unsigned used = uncut(m);
  const std::uint32_t starts = m.starts & static_cast<std::uint32_t>((std::uint64_t{1} << used) - 1);
  if constexpr (H) {
    alignas(32) std::array<u8, 4 * 32 + 32> local;
    s.count_decoded(local.data(), decode_starts(w, starts, local.data()));
  }
  if constexpr (M == mode::repair) {
    std::memcpy(s.out, w, 32);  // room: 3 output bytes per remaining input byte
    s.out += used;
  }
  if constexpr (M == mode::stats) s.count_starts(starts, ~m.non_ascii, m.ge_e0, m.ge_f0);
  return used;
}

// Stats' counts of the clean pairs' bytes (walk_counts): ASCII bytes from the sign masks,
// the others in byte lanes (a pair adds at most 2, so a leg of 127 pairs fits) that each leg
// sums into 64-bit lanes. Signed compares: a byte above -33 (-17) is ASCII or at or above
// 0xE0 (0xF0).
struct lead_tally {
  static constexpr std::size_t leg_pairs = 127;
  __m256i e0, f0, sum_e0, sum_f0;
  std::uint64_t ascii = 0, ascii_pairs = 0;  // ascii: of the pairs that add() counts

  GUTF8_AVX2 lead_tally() noexcept { e0 = f0 = sum_e0 = sum_f0 = _mm256_setzero_si256(); }

  GUTF8_AVX2 GUTF8_ALWAYS_INLINE void add(__m256i a, __m256i b) noexcept {
    const __m256i te = _mm256_set1_epi8(-33), tf = _mm256_set1_epi8(-17);
    ascii += static_cast<std::uint64_t>(std::popcount(~(std::uint64_t{mask_of(b)} << 32 | mask_of(a))));
    e0 = _mm256_sub_epi8(e0, _mm256_add_epi8(_mm256_cmpgt_epi8(a, te), _mm256_cmpgt_epi8(b, te)));
    f0 = _mm256_sub_epi8(f0, _mm256_add_epi8(_mm256_cmpgt_epi8(a, tf), _mm256_cmpgt_epi8(b, tf)));
  }
  GUTF8_AVX2 void end_leg() noexcept {
    sum_e0 = _mm256_add_epi64(sum_e0, _mm256_sad_epu8(e0, _mm256_setzero_si256()));
    sum_f0 = _mm256_add_epi64(sum_f0, _mm256_sad_epu8(f0, _mm256_setzero_si256()));
    e0 = f0 = _mm256_setzero_si256();
  }
  GUTF8_AVX2 static std::uint64_t total(__m256i v) noexcept {
    alignas(32) std::uint64_t q[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(q), v);
    return q[0] + q[1] + q[2] + q[3];
  }
  GUTF8_AVX2 walk_counts counts() const noexcept {  // add()'s compares counted ASCII too
    return {ascii + 64 * ascii_pairs, total(sum_e0) - ascii, total(sum_f0) - ascii};
  }
};

// The walk: pairs of vectors at fixed steps, each vector checked against the one before it,
// keeping only whether a byte broke a rule: no step waits for the sequence lengths of the
// last. Of a clean pair, validate keeps nothing, repair its bytes (stored before the check:
// the next path overwrites them if it fails) and stats its lead classes. Where a pair breaks
// a rule the vector path finds its units.
template <mode M, error_policy P, bool H>
GUTF8_AVX2 inline vector_stop checked_pairs(utf8_state<M, P, H>& s, std::size_t i, std::size_t stop) noexcept {
  constexpr std::size_t n = 64;
  const u8* in = s.in;
  u8* const out = s.out;  // repair's, at input position i (a local: the stores may alias s)
  [[maybe_unused]] lead_tally tally;
  __m256i before = _mm256_setzero_si256();
  std::size_t at = i, failed = 0;
  while (failed == 0 && at + n <= stop) {
    const std::size_t leg = M == mode::stats ? std::min(stop, at + lead_tally::leg_pairs * n) : stop;
    for (; at + n <= leg; at += n) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + at));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + at + 32));
      if constexpr (M == mode::repair) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (at - i)), a);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (at - i) + 32), b);
      }
      // ASCII pairs only check that the vector before ends its last sequence.
      const bool ascii = mask_of(_mm256_or_si256(a, b)) == 0;
      const __m256i bad = ascii ? cut_at_end(before) : _mm256_or_si256(check_after(a, before), check_after(b, a));
      if (!_mm256_testz_si256(bad, bad)) {
        failed = at + n;
        break;
      }
      if constexpr (M == mode::stats) {
        if (ascii)
          ++tally.ascii_pairs;
        else
          tally.add(a, b);
      }
      before = b;
    }
    if constexpr (M == mode::stats) tally.end_leg();
  }
  const std::size_t start = unit_start_before(in, i, at);
  if constexpr (M == mode::stats)
    s.hand_over(i, start, at, tally.counts());
  else
    s.hand_over(i, start, at);
  return {start, failed};
}

// Decode's vectors from the unit start i: an ASCII vector widened, a well-formed one decoded up
// to the sequence its end cuts, one with an error through the exact path. The output pointer
// is held in a register (held_output) and one bound is tested a vector. False when the scan
// must end.
template <error_policy P>
GUTF8_AVX2 inline bool decode_vectors(utf8_state<mode::decode, P, false>& s, std::size_t& i) noexcept {
  const u8* const in = s.in;  // a local too: the stores may alias s
  for (;;) {
    const std::size_t bound = s.decode_bound(i, 32, 16);  // decode8 reads 16 bytes at +24
    {
      held_output out(s);
      while (i < bound) {
        const u8* w = in + i;
        const vector_masks m = analyse(w);
        if (m.non_ascii == 0) {
          widen32(w, out.at);
          out.at += 128;
          i += 32;
          continue;
        }
        if (m.errors != 0) break;
        const unsigned used = uncut(m);
        out.at = decode_starts(w, m.starts & static_cast<std::uint32_t>((std::uint64_t{1} << used) - 1), out.at);
        i += used;
      }
    }
    if (i >= bound) return true;
    if (!s.exact_units(i, i + 32)) return false;
  }
}

// The walk (where the mode has one) and the vector path from the unit start i, until the
// portable scanner is to go on; false when the scan must end.
template <mode M, error_policy P, bool H>
GUTF8_AVX2 inline bool walk_and_vectors(utf8_state<M, P, H>& s, std::size_t& i) noexcept {
  for (;;) {
    std::size_t stop = s.end;  // of the vector path
    if constexpr (utf8_state<M, P, H>::walks) {
      const std::size_t walk_stop = s.walk_stop(i);
      const vector_stop c = checked_pairs(s, i, walk_stop);
      i = c.at;
      // Repair's walk ends early where its output nears out_limit: the vector path goes on.
      if (c.failed == 0 && walk_stop == s.walk_end()) return true;
      if (c.failed != 0) stop = c.failed;
    }
    // Past a vector with an error, the walk waits until `calm` vectors in a row were
    // well-formed: errors come in bursts, and each pair that fails is checked twice.
    constexpr unsigned calm = 8;
    unsigned clean = 0;
    // decode8 reads 16 bytes at +24; a unit of the exact path may end past s.end (no
    // differences that wrap)
    while ((i < stop || clean < calm) && i + 32 <= s.end && i + 48 <= s.limit && s.room(32)) {
      if (const unsigned n = vector32(s, i)) {
        i += n;
        ++clean;
        continue;
      }
      clean = 0;
      if (!s.exact_units(i, i + 32)) return false;
    }
    if (!utf8_state<M, P, H>::walks || i < stop || clean < calm) return true;
  }
}

template <mode M, error_policy P, bool H>
GUTF8_AVX2 inline segment_result run_utf8(utf8_state<M, P, H>& s) noexcept {
  std::size_t i = 0;
  bool go_on = false;
  if constexpr (M == mode::decode)
    go_on = decode_vectors(s, i);
  else
    go_on = walk_and_vectors(s, i);
  return go_on ? portable::run_utf8(s, i) : s.finish(i);
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
