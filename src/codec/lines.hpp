// Newline counting for line/column reporting and `stats`. A line ends at LF (0x0A) in
// UTF-8 and at the value U+000A in UTF-32LE (unit = 4 bytes, values 4-byte aligned).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codec/block.hpp"
#include "cpu/isa.hpp"
#if GUTF8_SSE2
#include <emmintrin.h>
#endif

namespace gutf8::internal {

inline constexpr std::size_t no_newline = SIZE_MAX;

inline std::uint64_t count_lf8(const std::uint8_t* p, std::size_t n) noexcept {
  std::uint64_t total = 0;
  std::size_t i = 0;
#if GUTF8_SSE2
  // Byte counters overflow after 255 steps: fold them into 64-bit sums before that.
  const __m128i lf = _mm_set1_epi8('\n');
  while (n - i >= 16) {
    __m128i acc = _mm_setzero_si128();
    const std::size_t steps = (n - i) / 16 < 255 ? (n - i) / 16 : 255;
    for (std::size_t s = 0; s < steps; ++s, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, lf));
    }
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    total += static_cast<std::uint64_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<std::uint64_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
  }
#endif
  for (; i < n; ++i) total += p[i] == '\n';
  return total;
}

inline std::uint64_t count_lf32(const std::uint8_t* p, std::size_t n) noexcept {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i + 4 <= n; i += 4) {
    std::uint32_t v;
    std::memcpy(&v, p + i, 4);
    total += v == 0x0Au;
  }
  return total;
}

inline std::uint64_t count_newlines(const std::uint8_t* p, std::size_t n, std::size_t unit) noexcept {
  return unit == 4 ? count_lf32(p, n) : count_lf8(p, n);
}

// Offset of the last newline in [0, n), or no_newline.
inline std::size_t last_newline(const std::uint8_t* p, std::size_t n, std::size_t unit) noexcept {
  if (unit == 1) {
#if defined(__GLIBC__)
    const void* hit = n ? memrchr(p, '\n', n) : nullptr;
    return hit ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - p) : no_newline;
#else
    for (std::size_t i = n; i-- > 0;)
      if (p[i] == '\n') return i;
    return no_newline;
#endif
  }
  for (std::size_t i = n / 4 * 4; i >= 4; i -= 4) {
    std::uint32_t v;
    std::memcpy(&v, p + i - 4, 4);
    if (v == 0x0Au) return i - 4;
  }
  return no_newline;
}

// Lines end at U+000A: a byte of UTF-8, a 4-byte value of encode's UTF-32LE input.
constexpr std::size_t line_unit(operation op) noexcept { return op == operation::encode ? 4 : 1; }

// The newlines of some bytes of the input that begin at `offset`, and the input offset just after
// the last of them (0 when none): what comes before a block whose error is to be placed.
struct lines_before {
  std::uint64_t newlines = 0;
  std::uint64_t line_start = 0;
};

inline lines_before count_lines_before(const std::uint8_t* p, std::size_t n, std::size_t unit,
                                       std::uint64_t offset = 0) noexcept {
  lines_before b;
  b.newlines = count_newlines(p, n, unit);
  const std::size_t last = last_newline(p, n, unit);
  if (last != no_newline) b.line_start = offset + last + unit;
  return b;
}

// What the line/column bookkeeping needs from a processed block, found while its bytes are at
// hand, so that a block processed on another thread can be accounted later without them.
struct line_facts {
  std::size_t last = no_newline;               // the last newline in [0, consumed)
  std::uint64_t before_error = 0;              // newlines in [0, first_error)
  std::size_t last_before_error = no_newline;  // the last newline in [0, first_error)
};

// locate_error: also the facts about the first error (worth it only when it will be reported).
inline line_facts find_line_facts(const std::uint8_t* data, const block_result& r, std::size_t unit,
                                  bool locate_error) noexcept {
  line_facts f;
  if (r.lines != 0) f.last = last_newline(data, r.consumed, unit);
  if (locate_error && r.errors != 0) {
    f.before_error = count_newlines(data, r.first_error, unit);
    f.last_before_error = last_newline(data, r.first_error, unit);
  }
  return f;
}

}  // namespace gutf8::internal
