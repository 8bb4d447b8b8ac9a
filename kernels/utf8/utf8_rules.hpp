// Unicode Table 3-7 (well-formed UTF-8) as constexpr functions usable on the host and in
// CUDA kernels. The CPU codec and the GPU kernels share this one definition of the rules;
// the test oracle (tests/support/reference.hpp) is written independently of it.
#pragma once

#include <cstdint>

#include "gutf8/types.hpp"

#if defined(__CUDACC__)
#define GUTF8_HD __host__ __device__ __forceinline__
#else
#define GUTF8_HD inline
#endif

namespace gutf8::detail {

GUTF8_HD constexpr bool is_continuation(std::uint8_t b) { return (b & 0xC0u) == 0x80u; }

// Length of the well-formed sequence a lead byte starts; 0 for a byte that cannot start
// one (80..C1, F5..FF).
GUTF8_HD constexpr unsigned sequence_length(std::uint8_t lead) {
  if (lead < 0x80u) return 1;
  if (lead < 0xC2u) return 0;
  if (lead < 0xE0u) return 2;
  if (lead < 0xF0u) return 3;
  if (lead < 0xF5u) return 4;
  return 0;
}

// The second byte's allowed range depends on the lead (it excludes overlongs, surrogates
// and values above U+10FFFF); later bytes are always 80..BF.
struct byte_range {
  std::uint8_t lo, hi;
};
GUTF8_HD constexpr byte_range second_byte_range(std::uint8_t lead) {
  switch (lead) {
    case 0xE0: return {0xA0, 0xBF};
    case 0xED: return {0x80, 0x9F};
    case 0xF0: return {0x90, 0xBF};
    case 0xF4: return {0x80, 0x8F};
    default: return {0x80, 0xBF};
  }
}

// Can byte b stand at position `index` (1..3) of a sequence started by `lead`?
GUTF8_HD constexpr bool continues(std::uint8_t lead, unsigned index, std::uint8_t b) {
  if (index == 1) {
    const byte_range r = second_byte_range(lead);
    return b >= r.lo && b <= r.hi;
  }
  return is_continuation(b);
}

// Length (1..3) of the error unit (maximal subpart, SPEC §1) that starts at s[0] of s[0, n):
// the lead and the continuation bytes that could still begin a well-formed sequence. For
// callers that report an error's extent (Python's UnicodeDecodeError.end).
GUTF8_HD constexpr unsigned error_unit_length(const std::uint8_t* s, std::uint64_t n) {
  const unsigned need = n ? sequence_length(s[0]) : 0;
  unsigned k = 1;
  while (k < need && k < n && continues(s[0], k, s[k])) ++k;
  return k;
}

// Bytes at the end of s[0, n) that a chunked caller must carry into the next chunk: the last
// unit when it is a lead followed by fewer continuation bytes than it needs, all acceptable so
// far (so the next chunk may still complete it). 0 when the last unit is complete or already
// an error. One definition for the GPU kernels and the host that queues the next sub-block early.
GUTF8_HD constexpr std::uint64_t incomplete_tail(const std::uint8_t* s, std::uint64_t n) {
  for (unsigned k = 1; k <= 3 && k <= n; ++k) {
    const std::uint8_t lead = s[n - k];
    if (is_continuation(lead)) continue;
    if (sequence_length(lead) <= k) return 0;
    for (unsigned m = 1; m < k; ++m)
      if (!continues(lead, m, s[n - k + m])) return 0;
    return k;
  }
  return 0;
}

// Why the byte at `index` does not continue the sequence of `lead` (or why a byte that is
// not a lead starts an error unit on its own).
GUTF8_HD constexpr error_kind reason_for(std::uint8_t lead, unsigned index, std::uint8_t b) {
  if (sequence_length(lead) == 0) return is_continuation(lead) ? error_kind::stray_continuation
                                                                : error_kind::invalid_byte;
  if (index == 1 && is_continuation(b)) {
    if (lead == 0xE0 || lead == 0xF0) return error_kind::overlong;
    if (lead == 0xED) return error_kind::surrogate;
    if (lead == 0xF4) return error_kind::too_large;
  }
  return error_kind::truncated;
}

// Decodes a well-formed sequence of `length` bytes (already checked).
GUTF8_HD constexpr char32_t decode_sequence(const std::uint8_t* s, unsigned length) {
  switch (length) {
    case 1: return s[0];
    case 2: return char32_t((s[0] & 0x1Fu) << 6 | (s[1] & 0x3Fu));
    case 3: return char32_t((s[0] & 0x0Fu) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu));
    default:
      return char32_t((s[0] & 0x07u) << 18 | (s[1] & 0x3Fu) << 12 | (s[2] & 0x3Fu) << 6 |
                      (s[3] & 0x3Fu));
  }
}

// A UTF-32 value is encodable unless it is a surrogate or above U+10FFFF.
GUTF8_HD constexpr bool is_scalar_value(std::uint32_t v) {
  return v < 0xD800u || (v > 0xDFFFu && v <= 0x10FFFFu);
}

GUTF8_HD constexpr unsigned encoded_length(char32_t c) {
  return c < 0x80 ? 1u : c < 0x800 ? 2u : c < 0x10000 ? 3u : 4u;
}

// Writes the UTF-8 form of a scalar value; returns its length.
GUTF8_HD constexpr unsigned encode_scalar(char32_t c, std::uint8_t* out) {
  const auto v = static_cast<std::uint32_t>(c);
  if (v < 0x80u) {
    out[0] = std::uint8_t(v);
    return 1;
  }
  if (v < 0x800u) {
    out[0] = std::uint8_t(0xC0u | v >> 6);
    out[1] = std::uint8_t(0x80u | (v & 0x3Fu));
    return 2;
  }
  if (v < 0x10000u) {
    out[0] = std::uint8_t(0xE0u | v >> 12);
    out[1] = std::uint8_t(0x80u | (v >> 6 & 0x3Fu));
    out[2] = std::uint8_t(0x80u | (v & 0x3Fu));
    return 3;
  }
  out[0] = std::uint8_t(0xF0u | v >> 18);
  out[1] = std::uint8_t(0x80u | (v >> 12 & 0x3Fu));
  out[2] = std::uint8_t(0x80u | (v >> 6 & 0x3Fu));
  out[3] = std::uint8_t(0x80u | (v & 0x3Fu));
  return 4;
}

}  // namespace gutf8::detail
