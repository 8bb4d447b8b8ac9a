// The AVX-512 UTF-8 scanner (kernels in simd_avx512.hpp). It steps through 64-byte vectors at
// fixed offsets, each checked against the end of the one before, so no step waits for the
// sequence lengths of the last. Validate, repair and stats (without a histogram), which need no
// units where there is no error, walk pairs of vectors and keep only whether a byte broke a
// rule, and of a clean pair its bytes (repair) or counts (stats); decode takes each vector's
// units. Vectors with errors go to unit windows, which split 64 bytes at a time into the
// maximal-subpart units (avx512::units); the portable scanner takes the rest.
// (UTF-32 has no AVX-512 path: the AVX2 one runs.)
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
#include "cpu/simd_avx512.hpp"

namespace gutf8::cpu::avx512 {

// The hardware prefetchers stop at 4 KiB pages; a mapped file's next page would then
// start with a miss. A prefetch never faults, beyond the input included.
inline void prefetch(const u8* p) noexcept { _mm_prefetch(reinterpret_cast<const char*>(p + 512), _MM_HINT_T0); }

inline unsigned error_length(const unit_masks& m, unsigned at) noexcept {
  return 1u + unsigned(m.prefix2 >> at & 1u) + unsigned(m.prefix3 >> at & 1u) + unsigned(m.prefix4 >> at & 1u);
}

template <mode M, error_policy P, bool H>
inline void note_first_error(utf8_state<M, P, H>& s, std::size_t i, const unit_masks& m) noexcept {
  if (m.errors == 0) return;
  const auto at = static_cast<unsigned>(std::countr_zero(m.errors));
  const u8* e = s.in + i + at;
  const unsigned length = error_length(m, at);  // the byte after it is within the overread
  s.r.first_error = i + at;
  s.r.first_kind = detail::reason_for(e[0], length, e[length]);  // a non-lead's ignores the rest
}

// The code points of the sequences starting at `starts` in the 64 bytes at w, counted.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline void add_to_histogram(utf8_state<M, P, H>& s, const u8* w,
                                                              std::uint64_t starts) noexcept {
  alignas(64) std::array<u8, 4 * 64 + 64> local;
  s.count_decoded(local.data(), decode_starts(w, starts, local.data()));
}

// Every unit of a unit window at i.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline void emit_units(utf8_state<M, P, H>& s, std::size_t i,
                                                        const unit_masks& m) noexcept {
  const u8* w = s.in + i;
  if constexpr (M == mode::stats) {
    if constexpr (H) add_to_histogram(s, w, m.complete);
    s.count_starts(m.complete, ~m.non_ascii, m.ge_e0, m.ge_f0);
  } else if constexpr (M == mode::decode) {
    // Replace decodes every start, those of error units as U+FFFD: their ranks among
    // the starts select the elements (no loop over the errors, whose count is random).
    if constexpr (P == error_policy::replace)
      s.out = decode_starts(w, m.starts, s.out, _pext_u64(m.errors, m.starts));
    else
      s.out = decode_starts(w, m.complete, s.out);
  } else if constexpr (M == mode::repair) {
    unsigned from = m.skip;
    for (std::uint64_t e = m.errors; e != 0; e &= e - 1) {
      const auto at = static_cast<unsigned>(std::countr_zero(e));
      s.out = copy_short(s.out, w + from, at - from);
      if constexpr (P == error_policy::replace) {
        s.out[0] = 0xEF, s.out[1] = 0xBF, s.out[2] = 0xBD;
        s.out += 3;
      }
      from = at + error_length(m, at);
    }
    s.out = copy_short(s.out, w + from, 64 + static_cast<unsigned>(std::countr_one(m.beyond)) - from);
  }
}

// Past a vector that failed the check: 64-byte windows at fixed steps, each split into
// its units with units() (the carry says where the window before ended), until the
// failing vector is behind and `calm` windows in a row were free of errors (text with
// errors tends to have more). A strict writer stops at the first error: the exact path
// finds it. False when the scan must end.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 inline bool unit_windows(utf8_state<M, P, H>& s, std::size_t& i, std::size_t stop) noexcept {
  if constexpr (utf8_state<M, P, H>::stops) return s.exact_units(i, stop);
  constexpr unsigned calm = 64;  // ties 4 on validate, decodes faster (bench/results/e2e.md, "Prefetch")
  std::uint64_t carry = 0, errors = s.r.errors;  // a register, not the result's memory
  for (unsigned clean = 0;
       (i < stop || clean < calm) && i + 64 <= s.end && i + 64 + overread <= s.limit && s.room(64); i += 64) {
    prefetch(s.in + i + 64);
    const __m512i ahead = _mm512_maskz_loadu_epi8(0x7, s.in + i + 64);  // the overread
    const unit_masks m = units(_mm512_loadu_si512(s.in + i), ahead, carry);
    // No branch on m.errors: at 1% bad bytes it is a coin toss. (GCC turns the plain
    // conditional forms of these two lines into such branches.)
    if (errors == 0) [[unlikely]]
      note_first_error(s, i, m);
    errors += static_cast<std::uint64_t>(std::popcount(m.errors));
    clean = (clean + 1) & (0u - unsigned(m.errors == 0));
    emit_units(s, i, m);
    carry = m.beyond;
  }
  s.r.errors = errors;
  i += static_cast<std::size_t>(std::countr_one(carry));  // a unit boundary
  return s.exact_units(i, stop);
}

// The units that start in the first `used` bytes of the checked vector at i, written from
// `out` (vectors' held output). Repair copies whole vectors: its output has reached input
// position i, the others' the first unit start at or after i.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline void emit_vector(utf8_state<M, P, H>& s, u8*& out, std::size_t i,
                                                         const vector_masks& m, unsigned used) noexcept {
  const u8* w = s.in + i;
  const std::uint64_t starts = used == 64 ? m.starts : m.starts & ((std::uint64_t{1} << used) - 1);
  if constexpr (M == mode::repair) {
    _mm512_storeu_si512(out, _mm512_loadu_si512(w));  // room: 4 output bytes per input byte
    out += used;
  } else if constexpr (M == mode::stats) {
    if constexpr (H) add_to_histogram(s, w, starts);
    s.count_starts(starts, ~m.non_ascii, m.ge_e0, m.ge_f0);
  } else if constexpr (M == mode::decode) {
    if (m.non_ascii == 0 && used == 64) {
      widen64(w, out);
      out += 256;
    } else {
      out = decode_starts(w, starts, out);
    }
  }
}

// Stops before the checked vector at i, at its first unit start. Repair still copies the
// bytes before it (the end of the sequence the vector before i cut).
template <mode M, error_policy P, bool H>
GUTF8_AVX512 GUTF8_ALWAYS_INLINE inline vector_stop leave_vector(utf8_state<M, P, H>& s, u8*& out, std::size_t i,
                                                                 const vector_masks& m) noexcept {
  const std::size_t first_start = i + static_cast<std::size_t>(std::countr_zero(m.starts));
  if constexpr (M == mode::repair) {
    std::memcpy(out, s.in + i, first_start - i);
    out += first_start - i;
  }
  return {first_start, 0};
}

// 64-byte vectors at fixed steps, each checked against the end of the one before, so no
// vector waits for the sequence lengths of the last. A vector's units are handled once the
// next vector has passed too (its last sequence may end there).
template <mode M, error_policy P, bool H>
GUTF8_AVX512 inline vector_stop vectors(utf8_state<M, P, H>& s, std::size_t i) noexcept {
  constexpr std::size_t n = 64, ascii_run = 4;
  constexpr bool classes = M == mode::stats;
  if (i + n > s.end || i + n > s.limit || !s.room(n)) return {i, 0};
  __m512i v = _mm512_loadu_si512(s.in + i);
  vector_masks m = analyse<classes>(v, _mm512_setzero_si512());
  if (m.errors != 0) return {i, i + n};
  held_output out(s);
  for (;;) {
    if (!s.room(n, out.at)) return leave_vector(s, out.at, i, m);  // for the exact writes of the portable path
    const std::size_t next = i + n;
    prefetch(s.in + next);
    if (next + n > s.end || next + n > s.limit) break;
    // Runs of ASCII vectors skip the checks (a branch that mixed scripts rarely take).
    if (m.cut == 0 && next + ascii_run * n <= std::min(s.end, s.limit) && s.room(ascii_run * n, out.at) &&
        all_ascii<ascii_run>(s.in + next)) {
      emit_vector(s, out.at, i, m, n);
      for (std::size_t k = 0; k + 1 < ascii_run; ++k) emit_vector(s, out.at, next + k * n, ascii_vector, n);
      i = next + (ascii_run - 1) * n;
      v = _mm512_loadu_si512(s.in + i), m = ascii_vector;
      continue;
    }
    const __m512i w = _mm512_loadu_si512(s.in + next);
    const vector_masks after = analyse<classes>(w, v);
    if (after.errors != 0) {
      const unsigned used = uncut(m);
      emit_vector(s, out.at, i, m, used);
      return {i + used, next + n};
    }
    emit_vector(s, out.at, i, m, n);
    i = next, v = w, m = after;
  }
  if (i + n + overread > s.limit) return leave_vector(s, out.at, i, m);  // decoding reads past the vector
  const unsigned used = uncut(m);
  emit_vector(s, out.at, i, m, used);
  return {i + used, 0};
}

// Stats' counts of the clean pairs' bytes (walk_counts): popcounts of compare masks.
struct lead_tally {
  walk_counts c;

  GUTF8_AVX512 GUTF8_ALWAYS_INLINE void add(__m512i v) noexcept {
    c.ascii += 64 - static_cast<std::uint64_t>(std::popcount(_mm512_movepi8_mask(v)));
    c.ge_e0 += static_cast<std::uint64_t>(std::popcount(_mm512_cmpgt_epu8_mask(v, ld(kc.over_df))));
    c.ge_f0 += static_cast<std::uint64_t>(std::popcount(_mm512_cmpgt_epu8_mask(v, ld(kc.over_ef))));
  }
};

// The walk: pairs of vectors at fixed steps, each vector checked against the one before it,
// keeping only whether a byte broke a rule (one test a pair): no step waits for the last.
// Of a clean pair, validate keeps nothing, repair its bytes (stored before the check: the
// unit windows overwrite them if it fails) and stats its lead classes. Where a pair breaks
// a rule the unit windows find its units.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 inline vector_stop checked_pairs(utf8_state<M, P, H>& s, std::size_t i, std::size_t stop) noexcept {
  constexpr std::size_t n = 128;
  const u8* in = s.in;
  u8* const out = s.out;  // repair's, at input position i (a local: the stores may alias s)
  [[maybe_unused]] lead_tally tally;
  __m512i before = _mm512_setzero_si512();
  std::size_t at = i, failed = 0;
  for (; at + n <= stop; at += n) {
    prefetch(in + at), prefetch(in + at + 64);
    const __m512i a = _mm512_loadu_si512(in + at), b = _mm512_loadu_si512(in + at + 64);
    if constexpr (M == mode::repair) {
      _mm512_storeu_si512(out + (at - i), a);
      _mm512_storeu_si512(out + (at - i) + 64, b);
    }
    // ASCII pairs only check that the vector before ends its last sequence.
    const bool ascii = _mm512_movepi8_mask(_mm512_or_si512(a, b)) == 0;
    const __m512i bad = ascii ? cut_at_end(before) : _mm512_or_si512(check(a, before), check(b, a));
    if (_mm512_test_epi8_mask(bad, bad) != 0) {
      failed = at + n;
      break;
    }
    if constexpr (M == mode::stats) {
      if (ascii) {
        tally.c.ascii += n;
      } else {
        tally.add(a);
        tally.add(b);
      }
    }
    before = b;
  }
  const std::size_t start = unit_start_before(in, i, at);
  s.hand_over(i, start, at, tally.c);
  return {start, failed};
}

// The walk where the mode has one (repair's ends early where its output nears out_limit:
// the vector path goes on), else the vector path.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 inline vector_stop fast_path(utf8_state<M, P, H>& s, std::size_t i) noexcept {
  if constexpr (utf8_state<M, P, H>::walks) {
    const std::size_t stop = s.walk_stop(i);
    const vector_stop b = checked_pairs(s, i, stop);
    if constexpr (M == mode::repair)
      if (b.failed == 0 && stop != s.walk_end()) return vectors(s, b.at);
    return b;
  } else {
    return vectors(s, i);
  }
}

// The walk or the vectors until a check fails; unit windows from the last good unit past
// it; the walk or the vectors again from a unit boundary.
template <mode M, error_policy P, bool H>
GUTF8_AVX512 inline segment_result run_utf8(utf8_state<M, P, H>& s) noexcept {
  std::size_t i = 0;
  while (i < s.end) {
    const vector_stop b = fast_path(s, i);
    i = b.at;
    if (b.failed == 0) break;
    if (!unit_windows(s, i, b.failed)) return s.finish(i);
  }
  return portable::run_utf8(s, i);
}

}  // namespace gutf8::cpu::avx512
#endif
