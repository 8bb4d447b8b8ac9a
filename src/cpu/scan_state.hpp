// What the CPU scanners of every ISA share (scan.hpp chooses one at run time): the scan request and its
// result, and the state of one scan with the exact path that every fast path falls back to, a
// byte-at-a-time walk of Unicode Table 3-7 (detail::continues) that defines the maximal-subpart
// error units, and how each mode writes or counts a unit.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codec/block.hpp"
#include "cpu/isa.hpp"
#include "utf8/utf8_rules.hpp"

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

enum class mode : std::uint8_t { validate, stats, decode, repair };

// What a scanner works on: the units that start in [0, end) of in, readable up to limit.
struct scan_request {
  const u8* in = nullptr;
  std::size_t end = 0, limit = 0;
  bool at_end = false;  // the input really ends at in + limit
  u8* out = nullptr;    // output; wide stores never pass out_limit (near it, exact writes)
  u8* out_limit = nullptr;
  std::uint64_t* histogram = nullptr;
  isa level = isa::portable;
};

// Where a vector path of an ISA stops: `at` is a unit start (the units before it are handled);
// `failed` is 0, or the end of the vectors whose check found a broken rule.
struct vector_stop {
  std::size_t at;
  std::size_t failed;
};

// The unit start at or before `at`, where the bytes from the unit start i up to at break no
// rule: at itself unless its last 3 bytes hold the lead of a sequence that at cuts.
inline std::size_t unit_start_before(const u8* in, std::size_t i, std::size_t at) noexcept {
  if (at - i < 3) return i;
  if (in[at - 1] >= 0xC0) return at - 1;
  if (in[at - 2] >= 0xE0) return at - 2;
  if (in[at - 3] >= 0xF0) return at - 3;
  return at;
}

inline std::uint32_t load32(const u8* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store32(u8* p, std::uint32_t v) noexcept { std::memcpy(p, &v, 4); }

// What stats' walk counts of the clean pairs it passes: ASCII bytes, and bytes at or
// above 0xE0 and at or above 0xF0 (in well-formed text, leads of 3- and 4-byte sequences).
struct walk_counts {
  std::uint64_t ascii = 0, ge_e0 = 0, ge_f0 = 0;
};

// Where a scan reads and writes, and what it has found.
struct scan_cursor {
  explicit scan_cursor(const scan_request& j) noexcept
      : in(j.in), end(j.end), limit(j.limit), at_end(j.at_end), out(j.out), out_begin(j.out) {}

  segment_result finish(std::size_t i) noexcept {
    r.consumed = i;
    r.written = static_cast<std::size_t>(out - out_begin);
    return r;
  }

  const u8* in;
  std::size_t end, limit;
  bool at_end;
  u8* out;
  u8* out_begin;
  segment_result r{};
};

// One UTF-8 scan in mode M, and the exact path.
template <mode M, error_policy P, bool Histogram>
struct utf8_state : scan_cursor {
  static constexpr bool writes = M == mode::decode || M == mode::repair;
  // A strict scan that writes, or a strict validation, ends at the first error unit.
  static constexpr bool stops = (writes || M == mode::validate) && P == error_policy::strict;

  explicit utf8_state(const scan_request& j) noexcept
      : scan_cursor(j), out_limit(j.out_limit), histogram(j.histogram) {}

  // Validate, repair and stats without a histogram first walk checked pairs of vectors,
  // which keep of a clean pair only its bytes (repair) or its lead classes (stats).
  static constexpr bool walks = M != mode::decode && !Histogram;

  // Where a walk may end at the most: units start before end, bytes are read before limit.
  std::size_t walk_end() const noexcept { return end < limit ? end : limit; }

  // Where a walk from the unit start i ends: a clean pair's output is its input, stored
  // whole, so repair's walk ends where out_limit would be passed.
  std::size_t walk_stop(std::size_t i) const noexcept {
    const std::size_t stop = walk_end();
    if constexpr (M == mode::repair) {
      const auto room = static_cast<std::size_t>(out_limit - out);
      if (i < stop && room < stop - i) return i + room;
    }
    return stop;
  }

  // A walk from the unit start `from` hands over at the unit start `at`, its clean pairs
  // having ended at `walked`: repair's output has reached at; stats adds the sequence
  // lengths of [from, at) from the counts of [from, walked) (see walk_counts).
  void hand_over(std::size_t from, std::size_t at, std::size_t walked, walk_counts c = {}) noexcept {
    if constexpr (M == mode::repair) out += at - from;
    if constexpr (M == mode::stats) {
      // The lead of the sequence that `walked` cuts, counted by its class (the next pair may
      // find it broken): the next path counts it again.
      if (at < walked) c.ge_e0 -= in[at] >= 0xE0, c.ge_f0 -= in[at] >= 0xF0;
      // 2-byte sequences from the length of well-formed text: no count of their own.
      const std::uint64_t n3 = c.ge_e0 - c.ge_f0, rest = (at - from) - c.ascii - 3 * n3 - 4 * c.ge_f0;
      r.by_length[0] += c.ascii;
      r.by_length[1] += rest / 2;
      r.by_length[2] += n3;
      r.by_length[3] += c.ge_f0;
    }
  }

  // Decode's vector starts from the unit start i end before this bound: a vector of `width`
  // bytes and `overread` more stay readable, and out keeps room for the 4 bytes a byte that a
  // vector may store (out grows at most 4 bytes a byte consumed). One test a vector, not three.
  std::size_t decode_bound(std::size_t i, std::size_t width, std::size_t overread) const noexcept {
    static_assert(M == mode::decode);
    const auto room = static_cast<std::size_t>(out_limit - out);
    if (end < width || limit < width + overread || room < 4 * width) return i;
    const std::size_t by_input = std::min(end - width, limit - width - overread) + 1;
    return std::min(by_input, i + (room - 4 * width) / 4 + 1);
  }

  // Whether a fast path over `bytes` input bytes may write: it stores at most 4 bytes per
  // input byte past out (or past `at`, a held_output's pointer).
  bool room(std::size_t bytes) const noexcept { return room(bytes, out); }
  bool room(std::size_t bytes, const u8* at) const noexcept {
    if constexpr (writes) return static_cast<std::size_t>(out_limit - at) >= 4 * bytes;
    return true;
  }

  // The units that start before stop, by the exact path; false when the scan must end.
  bool exact_units(std::size_t& i, std::size_t stop) noexcept {
    while (i < stop)
      if (!exact_unit(i)) return false;
    return true;
  }

  // One unit by Table 3-7. Advances i; false when the scan must end here (strict stop,
  // or a sequence cut by the end of a block that is not the end of the input).
  bool exact_unit(std::size_t& i) noexcept {
    const u8* s = in + i;
    const u8 lead = s[0];
    const unsigned need = detail::sequence_length(lead);
    if (need == 0) return error(i, 1, detail::reason_for(lead, 0, 0));
    for (unsigned k = 1; k < need; ++k) {
      if (i + k == limit) {
        if (!at_end) return false;
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
      store32(out, static_cast<std::uint32_t>(c));
      out += 4;
    } else if constexpr (M == mode::repair) {
      std::memcpy(out, src, length);
      out += length;
    } else if constexpr (M == mode::stats) {
      ++r.by_length[length - 1];
      if constexpr (Histogram) ++histogram[c];
    }
  }

  bool error(std::size_t& i, unsigned length, error_kind kind) noexcept {
    if (r.errors++ == 0) {
      r.first_error = i;
      r.first_kind = kind;
    }
    if constexpr (stops) {
      r.stopped = true;
      return false;
    }
    if constexpr (writes && P == error_policy::replace) {
      if constexpr (M == mode::decode) {
        store32(out, 0xFFFDu);
        out += 4;
      } else {
        out[0] = 0xEF, out[1] = 0xBF, out[2] = 0xBD;
        out += 3;
      }
    }
    i += length;
    return true;
  }

  // Sequence lengths from the lead classes of the (well-formed) starts.
  GUTF8_ALWAYS_INLINE void count_starts(std::uint64_t starts, std::uint64_t ascii, std::uint64_t ge_e0,
                                        std::uint64_t ge_f0) noexcept {
    const auto n1 = static_cast<unsigned>(std::popcount(starts & ascii));
    const auto n3 = static_cast<unsigned>(std::popcount(starts & ge_e0 & ~ge_f0));
    const auto n4 = static_cast<unsigned>(std::popcount(starts & ge_f0));
    r.by_length[0] += n1;
    r.by_length[1] += static_cast<unsigned>(std::popcount(starts)) - n1 - n3 - n4;
    r.by_length[2] += n3;
    r.by_length[3] += n4;
  }

  // n ASCII bytes, for every mode but decode.
  void ascii_run(const u8* w, unsigned n) noexcept {
    if constexpr (M == mode::repair) {
      std::memcpy(out, w, n);
      out += n;
    } else if constexpr (M == mode::stats) {
      r.by_length[0] += n;
      if constexpr (Histogram)
        for (unsigned k = 0; k < n; ++k) ++histogram[w[k]];
    }
  }

  // The histogram of stats counts the code points that a vector path decoded into [from, to).
  void count_decoded(const u8* from, const u8* to) noexcept {
    static_assert(Histogram);
    for (const u8* c = from; c < to; c += 4) ++histogram[load32(c)];
  }

  u8* out_limit;
  std::uint64_t* histogram;
};

// A vector loop's output pointer, kept in a register: a store through a byte pointer may alias
// the state's out, which would otherwise be loaded and stored again at every vector. The state's
// out is `at` again when the holder goes (nothing in between may use the state's out).
template <class State>
struct held_output {
  explicit held_output(State& s) noexcept : state(s), at(s.out) {}
  held_output(const held_output&) = delete;
  held_output& operator=(const held_output&) = delete;
  ~held_output() { state.out = at; }

  State& state;
  u8* at;
};

// One encode scan: UTF-32LE values in, UTF-8 out. Units are 4-byte values; 1..3 trailing bytes
// at the end of the input are one error unit. Its stores stay within 4 output bytes per input
// value: out_limit is not needed.
template <error_policy P>
struct utf32_state : scan_cursor {
  explicit utf32_state(const scan_request& j) noexcept : scan_cursor(j) {}

  // The values that start before stop, one at a time; false at a strict stop.
  bool values(std::size_t& i, std::size_t stop) noexcept {
    for (; i < stop; i += 4)
      if (!value(i)) return false;
    return true;
  }

  bool value(std::size_t i) noexcept {
    const std::uint32_t v = load32(in + i);
    if (detail::is_scalar_value(v)) {
      out += detail::encode_scalar(static_cast<char32_t>(v), out);
      return true;
    }
    return error(i, v > 0x10FFFFu ? error_kind::too_large : error_kind::surrogate);
  }

  bool error(std::size_t i, error_kind kind) noexcept {
    if (r.errors++ == 0) {
      r.first_error = i;
      r.first_kind = kind;
    }
    if constexpr (P == error_policy::strict) {
      r.stopped = true;
      return false;
    }
    if constexpr (P == error_policy::replace) {
      out[0] = 0xEF, out[1] = 0xBF, out[2] = 0xBD;
      out += 3;
    }
    return true;
  }
};

}  // namespace gutf8::cpu
