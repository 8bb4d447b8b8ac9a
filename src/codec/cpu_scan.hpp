// The CPU scanning loops. One template walks UTF-8 for validate, stats, decode and
// sanitize; one walks UTF-32LE for encode. Both process the units that start in [0, end)
// of a buffer readable up to `limit`, so a block can be split at unit boundaries and
// the segments scanned independently (threads) with results identical to one pass.
//
// UTF-8 has a fast path per ISA level and one exact path. The portable and AVX2 paths take
// a chunk that starts at a unit boundary (16 or 32 bytes), check it as a whole and handle
// its well-formed units; the AVX-512 path steps through 64-byte blocks at fixed offsets,
// each checked against the end of the one before, so no step waits for the sequence
// lengths of the last. Any doubt (an error, a sequence longer than the chunk) sends those
// bytes to the exact path, a byte-at-a-time walk of Unicode Table 3-7 (detail::continues)
// that defines the maximal-subpart error units; on AVX-512, blocks with errors go to repair
// windows instead, which split 64 bytes at a time into the same units (avx512::units).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codec/isa.hpp"
#if GUTF8_SSE2
#include <emmintrin.h>
#endif

#include "codec/block.hpp"
#include "codec/simd_avx2.hpp"
#include "codec/simd_avx512.hpp"
#include "gutf8/detail/utf8_rules.hpp"

namespace gutf8::cpu {

using u8 = std::uint8_t;

struct segment_result {
  std::size_t consumed = 0;
  std::size_t written = 0;
  std::uint64_t errors = 0;
  std::size_t first_error = internal::no_error;
  error_kind first_kind = error_kind::none;
  bool stopped = false;
  std::array<std::uint64_t, 4> by_length{};
};

enum class mode : std::uint8_t { validate, stats, decode, sanitize };

// What a scanner works on: the units that start in [0, end) of in, readable up to limit.
struct job {
  const u8* in = nullptr;
  std::size_t end = 0, limit = 0;
  bool at_end = false;  // the input really ends at in + limit
  u8* out = nullptr;    // output; wide stores never pass out_limit (near it, exact writes)
  u8* out_limit = nullptr;
  std::uint64_t* histogram = nullptr;
  isa level = isa::portable;
};

inline std::uint32_t load32(const u8* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store32(u8* p, std::uint32_t v) noexcept { std::memcpy(p, &v, 4); }
inline std::uint32_t byteswap32(std::uint32_t v) noexcept {  // compiles to bswap
  return v >> 24 | (v >> 8 & 0xFF00u) | (v << 8 & 0xFF0000u) | v << 24;
}

struct window_masks {
  unsigned non_ascii;  // bit k: byte k >= 0x80
  unsigned starts;     // bit k: byte k is not a continuation byte
};

inline window_masks masks16(const u8* p) noexcept {
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

// Tables indexed by the distance d (1..15) between two sequence starts in a window.
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
inline std::uint32_t decode_at_distance(const u8* q, unsigned d, unsigned& bad) noexcept {
  const std::uint32_t x = byteswap32(load32(q)) >> ((32u - 8u * d) & 31u);  // d bytes, lead on top
  // Bit 6 of a continuation byte is 0, so 0x7F takes 6 bits of a trailing byte and 7 of ASCII.
  const std::uint32_t c =
      ((x & 0x7Fu) | (x >> 2 & 0xFC0u) | (x >> 4 & 0x3F000u) | (x >> 6 & 0x1C0000u)) & tables.payload_mask[d];
  bad |= unsigned(tables.length_of[q[0]] != d) | unsigned(c < tables.minimum[d]) |
         unsigned(c - 0xD800u < 0x800u) | unsigned(c > 0x10FFFFu);
  return c;
}

template <mode M, error_policy P, bool Histogram = false>
class utf8_scanner {
 public:
  explicit utf8_scanner(const job& j) noexcept
      : in_(j.in),
        end_(j.end),
        limit_(j.limit),
        at_end_(j.at_end),
        out_(j.out),
        out_begin_(j.out),
        out_limit_(j.out_limit),
        histogram_(j.histogram),
        level_(j.level) {}

  segment_result run() noexcept {
#if GUTF8_X86
    if (level_ == isa::avx512) return run_avx512();
    if (level_ == isa::avx2) return run_avx2();
#endif
    return run_portable(0);
  }

 private:
  static constexpr bool writes = M == mode::decode || M == mode::sanitize;
  static constexpr bool stops = writes && P == error_policy::strict;

  // Whether a fast path over `bytes` input bytes may write: it stores at most 4 bytes per
  // input byte past out_.
  bool room(std::size_t bytes) const noexcept {
    if constexpr (writes) return static_cast<std::size_t>(out_limit_ - out_) >= 4 * bytes;
    return true;
  }

  // From i to the end: 16-byte windows, and the exact path.
  segment_result run_portable(std::size_t i) noexcept {
    while (i < end_) {
      if (end_ - i >= 16 && limit_ - i >= 19 && room(16)) {  // + 3 bytes a last sequence may need
        if (const unsigned n = window(i)) {
          i += n;
          continue;
        }
        if (!exact_units(i, i + 16)) return finish(i);
        continue;
      }
      if (!exact_unit(i)) return finish(i);
    }
    return finish(i);
  }

  // The units that start before stop, by the exact path; false when the scan must end.
  bool exact_units(std::size_t& i, std::size_t stop) noexcept {
    while (i < stop)
      if (!exact_unit(i)) return false;
    return true;
  }

#if GUTF8_X86
  GUTF8_AVX2 segment_result run_avx2() noexcept {
    std::size_t i = 0;
    while (i < end_ && end_ - i >= 32 && limit_ - i >= 48 && room(32)) {  // decode8 reads 16 at +24
      if (const unsigned n = chunk32(i)) {
        i += n;
        continue;
      }
      if (!exact_units(i, i + 32)) return finish(i);
    }
    return run_portable(i);
  }

  // 64-byte blocks at fixed steps, each checked against the end of the one before, so no
  // block waits for the sequence lengths of the last. A block's units are handled once the
  // next block has passed too (its last sequence may end there). After an error, repair
  // windows take the units from the last good one past the failing block, and the blocks
  // start again at a unit boundary.
  GUTF8_AVX512 segment_result run_avx512() noexcept {
    std::size_t i = 0;
    while (i < end_) {
      const block_stop s = blocks_avx512(i);
      i = s.at;
      if (s.failed_block_end == 0) break;
      if (!repair(i, s.failed_block_end)) return finish(i);
    }
    return run_portable(i);
  }

  // Past a block that failed the check: 64-byte windows at fixed steps, each split into
  // its units with avx512::units (the carry says where the window before ended), until the
  // failing block is behind and `calm` windows in a row were free of errors (text with
  // errors tends to have more). A strict writer stops at the first error: the exact path
  // finds it. False when the scan must end.
  GUTF8_AVX512 bool repair(std::size_t& i, std::size_t stop) noexcept {
    if constexpr (stops) return exact_units(i, stop);
    constexpr unsigned calm = 64;  // measured: 4 and 64 equal on 1%-invalid text, 64 better on decode
    std::uint64_t carry = 0, errors = r_.errors;  // a register, not the result's memory
    for (unsigned clean = 0;
         (i < stop || clean < calm) && i + 64 <= end_ && i + 64 + avx512::overread <= limit_ && room(64); i += 64) {
      prefetch(i + 64);
      const __m512i ahead = _mm512_maskz_loadu_epi8(0x7, in_ + i + 64);  // the overread
      const avx512::unit_masks m = avx512::units(_mm512_loadu_si512(in_ + i), ahead, carry);
      // No branch on m.errors: at 1% bad bytes it is a coin toss. (GCC turns the plain
      // conditional forms of these two lines into such branches.)
      if (errors == 0) [[unlikely]]
        note_first_error(i, m);
      errors += static_cast<std::uint64_t>(std::popcount(m.errors));
      clean = (clean + 1) & (0u - unsigned(m.errors == 0));
      emit_units(i, m);
      carry = m.beyond;
    }
    r_.errors = errors;
    i += static_cast<std::size_t>(std::countr_one(carry));  // a unit boundary
    return exact_units(i, stop);
  }

  // The hardware prefetchers stop at 4 KiB pages; a mapped file's next page would then
  // start with a miss. A prefetch never faults, beyond the input included.
  void prefetch(std::size_t i) const noexcept { _mm_prefetch(reinterpret_cast<const char*>(in_ + i + 512), _MM_HINT_T0); }

  static unsigned error_length(const avx512::unit_masks& m, unsigned at) noexcept {
    return 1u + unsigned(m.prefix2 >> at & 1u) + unsigned(m.prefix3 >> at & 1u) + unsigned(m.prefix4 >> at & 1u);
  }

  void note_first_error(std::size_t i, const avx512::unit_masks& m) noexcept {
    if (m.errors == 0) return;
    const auto at = static_cast<unsigned>(std::countr_zero(m.errors));
    const u8* s = in_ + i + at;
    const unsigned length = error_length(m, at);  // the byte after it is within the overread
    r_.first_error = i + at;
    r_.first_kind = detail::reason_for(s[0], length, s[length]);  // a non-lead's ignores the rest
  }

  // Every unit of a repair window at i.
  GUTF8_AVX512 GUTF8_ALWAYS_INLINE void emit_units(std::size_t i, const avx512::unit_masks& m) noexcept {
    const u8* w = in_ + i;
    if constexpr (M == mode::stats) {
      if constexpr (Histogram) add_to_histogram(w, m.complete);
      count_starts(m.complete, ~m.non_ascii, m.ge_e0, m.ge_f0);
    } else if constexpr (M == mode::decode) {
      // Replace decodes every start, those of error units as U+FFFD: their ranks among
      // the starts select the lanes (no loop over the errors, whose count is random).
      if constexpr (P == error_policy::replace)
        out_ = avx512::decode_starts(w, m.starts, out_, _pext_u64(m.errors, m.starts));
      else
        out_ = avx512::decode_starts(w, m.complete, out_);
    } else if constexpr (M == mode::sanitize) {
      unsigned from = m.skip;
      for (std::uint64_t e = m.errors; e != 0; e &= e - 1) {
        const auto at = static_cast<unsigned>(std::countr_zero(e));
        out_ = avx512::copy_short(out_, w + from, at - from);
        if constexpr (P == error_policy::replace) {
          out_[0] = 0xEF, out_[1] = 0xBF, out_[2] = 0xBD;
          out_ += 3;
        }
        from = at + error_length(m, at);
      }
      out_ = avx512::copy_short(out_, w + from, 64 + static_cast<unsigned>(std::countr_one(m.beyond)) - from);
    }
  }

  struct block_stop {
    std::size_t at;                // a unit boundary: every unit before it is handled
    std::size_t failed_block_end;  // 0, or the end of the block that failed the check
  };

  GUTF8_AVX512 block_stop blocks_avx512(std::size_t i) noexcept {
    constexpr std::size_t n = 64, ascii_run = 4;
    constexpr bool classes = M == mode::stats;
    if (i + n > end_ || i + n > limit_ || !room(n)) return {i, 0};
    __m512i v = _mm512_loadu_si512(in_ + i);
    avx512::chunk_masks m = avx512::analyse<classes>(v, _mm512_setzero_si512());
    if (m.errors != 0) return {i, i + n};
    for (;;) {
      if (!room(n)) return leave_block(i, m);  // for the exact writes of the portable path
      const std::size_t next = i + n;
      prefetch(next);
      if (next + n > end_ || next + n > limit_) break;
      // Runs of ASCII blocks skip the checks (a branch that mixed scripts rarely take).
      if (m.cut == 0 && next + ascii_run * n <= std::min(end_, limit_) && room(ascii_run * n) &&
          avx512::all_ascii<ascii_run>(in_ + next)) {
        emit_block(i, m, n);
        for (std::size_t k = 0; k + 1 < ascii_run; ++k) emit_block(next + k * n, avx512::ascii_chunk, n);
        i = next + (ascii_run - 1) * n;
        v = _mm512_loadu_si512(in_ + i), m = avx512::ascii_chunk;
        continue;
      }
      const __m512i w = _mm512_loadu_si512(in_ + next);
      const avx512::chunk_masks after = avx512::analyse<classes>(w, v);
      if (after.errors != 0) {
        const unsigned used = avx512::uncut(m);
        emit_block(i, m, used);
        return {i + used, next + n};
      }
      emit_block(i, m, n);
      i = next, v = w, m = after;
    }
    if (i + n + avx512::overread > limit_) return leave_block(i, m);  // decoding reads past the block
    const unsigned used = avx512::uncut(m);
    emit_block(i, m, used);
    return {i + used, 0};
  }

  // Stops before the checked block at i, at its first unit start.
  GUTF8_AVX512 block_stop leave_block(std::size_t i, const avx512::chunk_masks& m) noexcept {
    const std::size_t first_start = i + static_cast<std::size_t>(std::countr_zero(m.starts));
    finish_crossing(i, first_start);
    return {first_start, 0};
  }

  // The units that start in the first `used` bytes of the checked block at i. Sanitize
  // copies whole blocks: its output has reached input position i, the others' the first
  // unit start at or after i.
  GUTF8_AVX512 GUTF8_ALWAYS_INLINE void emit_block(std::size_t i, const avx512::chunk_masks& m, unsigned used) noexcept {
    const u8* w = in_ + i;
    const std::uint64_t starts = used == 64 ? m.starts : m.starts & ((std::uint64_t{1} << used) - 1);
    if constexpr (M == mode::sanitize) {
      _mm512_storeu_si512(out_, _mm512_loadu_si512(w));  // room: 4 output bytes per input byte
      out_ += used;
    } else if constexpr (M == mode::stats) {
      if constexpr (Histogram) add_to_histogram(w, starts);
      count_starts(starts, ~m.non_ascii, m.ge_e0, m.ge_f0);
    } else if constexpr (M == mode::decode) {
      if (m.non_ascii == 0 && used == 64) {
        avx512::widen64(w, out_);
        out_ += 256;
      } else {
        out_ = avx512::decode_starts(w, starts, out_);
      }
    }
  }

  // The code points of the sequences starting at `starts` in the 64 bytes at w, counted.
  GUTF8_AVX512 GUTF8_ALWAYS_INLINE void add_to_histogram(const u8* w, std::uint64_t starts) noexcept {
    alignas(64) std::array<u8, 4 * 64 + 64> local;
    finish_chunk(avx512::decode_starts(w, starts, local.data()), local.data());
  }

  // Sanitize stopping at a unit start s after i: the bytes before s still to be copied
  // (the end of the sequence the block before i cut).
  void finish_crossing([[maybe_unused]] std::size_t i, [[maybe_unused]] std::size_t s) noexcept {
    if constexpr (M == mode::sanitize) {
      std::memcpy(out_, in_ + i, s - i);
      out_ += s - i;
    }
  }

  // The well-formed units that start in the 32 bytes at i; 0 when the chunk has an error.
  GUTF8_AVX2 unsigned chunk32(std::size_t i) noexcept {
    const u8* w = in_ + i;
    const avx2::chunk_masks m = avx2::analyse(w);
    if (m.non_ascii == 0) {
      if constexpr (M == mode::decode) {
        avx2::widen32(w, out_);
        out_ += 128;
      } else {
        ascii_run(w, 32);
      }
      return 32;
    }
    if (m.errors != 0) return 0;
    const unsigned used = avx2::uncut(m);
    const std::uint32_t starts = m.starts & static_cast<std::uint32_t>((std::uint64_t{1} << used) - 1);
    if constexpr (M == mode::decode || Histogram) {
      [[maybe_unused]] alignas(32) std::array<u8, 4 * 32 + 32> local;
      u8* o = M == mode::decode ? out_ : local.data();
      for (unsigned q = 0; q < 32; q += 8) {
        const unsigned m8 = starts >> q & 0xFFu;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), avx2::decode8(w + q, m8));
        o += 4 * std::popcount(m8);
      }
      finish_chunk(o, local.data());
    }
    if constexpr (M == mode::sanitize) {
      std::memcpy(out_, w, 32);  // room: 3 output bytes per remaining input byte
      out_ += used;
    }
    if constexpr (M == mode::stats) count_starts(starts, ~m.non_ascii, m.ge_e0, m.ge_f0);
    return used;
  }

  // Decode keeps what a chunk wrote; the histogram counts it from the scratch buffer.
  void finish_chunk([[maybe_unused]] u8* end, [[maybe_unused]] const u8* scratch) noexcept {
    if constexpr (M == mode::decode) out_ = end;
    if constexpr (Histogram)
      for (const u8* c = scratch; c < end; c += 4) ++histogram_[load32(c)];
  }
#endif

  // Sequence lengths from the lead classes of the (well-formed) starts.
  void count_starts(std::uint64_t starts, std::uint64_t ascii, std::uint64_t ge_e0,
                    std::uint64_t ge_f0) noexcept {
    const auto n1 = static_cast<unsigned>(std::popcount(starts & ascii));
    const auto n3 = static_cast<unsigned>(std::popcount(starts & ge_e0 & ~ge_f0));
    const auto n4 = static_cast<unsigned>(std::popcount(starts & ge_f0));
    r_.by_length[0] += n1;
    r_.by_length[1] += static_cast<unsigned>(std::popcount(starts)) - n1 - n3 - n4;
    r_.by_length[2] += n3;
    r_.by_length[3] += n4;
  }

  segment_result finish(std::size_t i) noexcept {
    r_.consumed = i;
    r_.written = static_cast<std::size_t>(out_ - out_begin_);
    return r_;
  }

  // The well-formed units that start in the 16 bytes at i, except the last start (its
  // sequence may end beyond the window). Returns the bytes consumed, 0 to fall back.
  unsigned window(std::size_t i) noexcept {
    const u8* w = in_ + i;
    const window_masks m = masks16(w);
    if (m.non_ascii == 0) {
      ascii16(w);
      return 16;
    }
    if ((m.starts & 1u) == 0 || m.starts == 1u) return 0;
    const auto last = static_cast<unsigned>(std::bit_width(m.starts) - 1);
    unsigned rest = m.starts & (m.starts - 1), s = 0, bad = 0;
    u8* o = out_;
    [[maybe_unused]] std::array<std::uint32_t, 16> values;
    [[maybe_unused]] unsigned count = 0;
    do {
      const auto next = static_cast<unsigned>(std::countr_zero(rest));
      rest &= rest - 1;
      const std::uint32_t c = decode_at_distance(w + s, next - s, bad);
      if constexpr (M == mode::decode) {
        store32(o, c);
        o += 4;
      }
      if constexpr (Histogram) values[count++] = c;
      s = next;
    } while (rest != 0);
    if (bad != 0) return 0;
    if constexpr (M == mode::decode) out_ = o;
    if constexpr (M == mode::sanitize) {
      std::memcpy(out_, w, 16);  // room: 3 output bytes per remaining input byte
      out_ += last;
    }
    if constexpr (M == mode::stats) count_window(w, m, last);
    if constexpr (Histogram)
      for (unsigned k = 0; k < count; ++k) ++histogram_[values[k]];
    return last;
  }

  void count_window(const u8* w, const window_masks& m, unsigned last) noexcept {
    const auto [ge_e0, ge_f0] = long_lead_masks16(w);  // signed compares: ASCII is set too
    count_starts(m.starts & ((1u << last) - 1u), ~m.non_ascii, ge_e0 & m.non_ascii, ge_f0 & m.non_ascii);
  }

  void ascii16(const u8* w) noexcept {
    if constexpr (M == mode::decode) {
      widen16(w, out_);
      out_ += 64;
    } else {
      ascii_run(w, 16);
    }
  }

  // n ASCII bytes, for every mode but decode.
  void ascii_run(const u8* w, unsigned n) noexcept {
    if constexpr (M == mode::sanitize) {
      std::memcpy(out_, w, n);
      out_ += n;
    } else if constexpr (M == mode::stats) {
      r_.by_length[0] += n;
      if constexpr (Histogram)
        for (unsigned k = 0; k < n; ++k) ++histogram_[w[k]];
    }
  }

  // One unit by Table 3-7. Advances i; false when the scan must end here (strict stop,
  // or a sequence cut by the end of a block that is not the end of the input).
  bool exact_unit(std::size_t& i) noexcept {
    const u8* s = in_ + i;
    const u8 lead = s[0];
    const unsigned need = detail::sequence_length(lead);
    if (need == 0) return error(i, 1, detail::reason_for(lead, 0, 0));
    for (unsigned k = 1; k < need; ++k) {
      if (i + k == limit_) {
        if (!at_end_) return false;
        return error(i, k, error_kind::truncated_at_end);
      }
      if (!detail::continues(lead, k, s[k])) return error(i, k, detail::reason_for(lead, k, s[k]));
    }
    emit(detail::decode_sequence(s, need), s, need);
    i += need;
    return true;
  }

  void emit(char32_t c, const u8* src, unsigned length) noexcept {
    if constexpr (M == mode::decode) {
      store32(out_, static_cast<std::uint32_t>(c));
      out_ += 4;
    } else if constexpr (M == mode::sanitize) {
      std::memcpy(out_, src, length);
      out_ += length;
    } else if constexpr (M == mode::stats) {
      ++r_.by_length[length - 1];
      if constexpr (Histogram) ++histogram_[c];
    }
  }

  bool error(std::size_t& i, unsigned length, error_kind kind) noexcept {
    if (r_.errors++ == 0) {
      r_.first_error = i;
      r_.first_kind = kind;
    }
    if constexpr (stops) {
      r_.stopped = true;
      return false;
    }
    if constexpr (writes && P == error_policy::replace) {
      if constexpr (M == mode::decode) {
        store32(out_, 0xFFFDu);
        out_ += 4;
      } else {
        out_[0] = 0xEF, out_[1] = 0xBF, out_[2] = 0xBD;
        out_ += 3;
      }
    }
    i += length;
    return true;
  }

  const u8* in_;
  std::size_t end_, limit_;
  bool at_end_;
  u8* out_;
  u8* out_begin_;
  u8* out_limit_;
  std::uint64_t* histogram_;
  isa level_;
  segment_result r_{};
};

// Encode: UTF-32LE values in, UTF-8 out. Units are 4-byte values; 1..3 trailing bytes at
// the end of the input are one error unit.
template <error_policy P>
class utf32_scanner {
 public:
  // Its stores stay within 4 output bytes per input value: out_limit is not needed.
  explicit utf32_scanner(const job& j) noexcept
      : in_(j.in),
        end_(j.end),
        limit_(j.limit),
        at_end_(j.at_end),
        out_(j.out),
        out_begin_(j.out),
        level_(j.level) {}

  segment_result run() noexcept {
#if GUTF8_X86
    if (level_ >= isa::avx2) return run_avx2();
#endif
    return run_portable(0);
  }

 private:
  segment_result run_portable(std::size_t i) noexcept {
    while (i < end_) {
      if (limit_ - i < 4) {
        if (at_end_ && error(i, error_kind::ragged_tail)) i = limit_;
        break;
      }
      if (end_ - i >= 64) {
        if (ascii16(in_ + i)) {
          i += 64;
          continue;
        }
        if (!values(i, i + 64)) return finish(i);
        continue;
      }
      if (!value(i)) break;
      i += 4;
    }
    return finish(i);
  }

#if GUTF8_X86
  GUTF8_AVX2 segment_result run_avx2() noexcept {
    std::size_t i = 0;
    while (i < end_ && end_ - i >= 32) {
      if (const int n = avx2::encode8(in_ + i, out_); n >= 0) {  // room: 4 bytes per value
        out_ += n;
        i += 32;
        continue;
      }
      if (!values(i, i + 32)) return finish(i);  // a bad value among these 8
    }
    return run_portable(i);
  }
#endif

  // The values that start before stop, one at a time; false at a strict stop.
  bool values(std::size_t& i, std::size_t stop) noexcept {
    for (; i < stop; i += 4)
      if (!value(i)) return false;
    return true;
  }

  segment_result finish(std::size_t i) noexcept {
    r_.consumed = i;
    r_.written = static_cast<std::size_t>(out_ - out_begin_);
    return r_;
  }

  bool value(std::size_t i) noexcept {
    const std::uint32_t v = load32(in_ + i);
    if (detail::is_scalar_value(v)) {
      out_ += detail::encode_scalar(static_cast<char32_t>(v), out_);
      return true;
    }
    return error(i, v > 0x10FFFFu ? error_kind::too_large : error_kind::surrogate);
  }

  // 16 values at once when all are ASCII.
  bool ascii16(const u8* p) noexcept {
#if GUTF8_SSE2
    const auto ld = [p](int k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p) + k); };
    const __m128i a = ld(0), b = ld(1), c = ld(2), d = ld(3);
    const __m128i any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
    const __m128i high = _mm_and_si128(any, _mm_set1_epi32(~0x7F));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(high, _mm_setzero_si128())) != 0xFFFF) return false;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out_),
                     _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
    out_ += 16;
    return true;
#else
    std::uint32_t any = 0;
    for (unsigned k = 0; k < 16; ++k) any |= load32(p + 4 * k);
    if (any > 0x7Fu) return false;
    for (unsigned k = 0; k < 16; ++k) out_[k] = p[4 * k];
    out_ += 16;
    return true;
#endif
  }

  bool error(std::size_t i, error_kind kind) noexcept {
    if (r_.errors++ == 0) {
      r_.first_error = i;
      r_.first_kind = kind;
    }
    if constexpr (P == error_policy::strict) {
      r_.stopped = true;
      return false;
    }
    if constexpr (P == error_policy::replace) {
      out_[0] = 0xEF, out_[1] = 0xBF, out_[2] = 0xBD;
      out_ += 3;
    }
    return true;
  }

  const u8* in_;
  std::size_t end_, limit_;
  bool at_end_;
  u8* out_;
  u8* out_begin_;
  isa level_;
  segment_result r_{};
};

}  // namespace gutf8::cpu
