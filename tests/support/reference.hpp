// The test oracle: a deliberately plain UTF-8 reader written straight from Unicode 3.9,
// Table 3-7 (well-formed byte sequences) and the maximal-subpart practice of Table 3-8.
// It shares no code with the library (not even kernels/utf8/utf8_rules.hpp): a mistake
// would have to be made twice, independently, to go unnoticed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gutf8/types.hpp"  // error_kind: the vocabulary of messages, no codec logic

namespace gutf8::ref {

// One row of Table 3-7: the allowed range of each byte of a well-formed sequence.
struct table_row {
  std::size_t length;
  std::uint8_t lo[4];
  std::uint8_t hi[4];
};

// Table 3-7, row by row, exactly as printed in the standard.
inline constexpr table_row table_3_7[] = {
    {1, {0x00}, {0x7F}},                                      // U+0000..U+007F
    {2, {0xC2, 0x80}, {0xDF, 0xBF}},                          // U+0080..U+07FF
    {3, {0xE0, 0xA0, 0x80}, {0xE0, 0xBF, 0xBF}},              // U+0800..U+0FFF
    {3, {0xE1, 0x80, 0x80}, {0xEC, 0xBF, 0xBF}},              // U+1000..U+CFFF
    {3, {0xED, 0x80, 0x80}, {0xED, 0x9F, 0xBF}},              // U+D000..U+D7FF
    {3, {0xEE, 0x80, 0x80}, {0xEF, 0xBF, 0xBF}},              // U+E000..U+FFFF
    {4, {0xF0, 0x90, 0x80, 0x80}, {0xF0, 0xBF, 0xBF, 0xBF}},  // U+10000..U+3FFFF
    {4, {0xF1, 0x80, 0x80, 0x80}, {0xF3, 0xBF, 0xBF, 0xBF}},  // U+40000..U+FFFFF
    {4, {0xF4, 0x80, 0x80, 0x80}, {0xF4, 0x8F, 0xBF, 0xBF}},  // U+100000..U+10FFFF
};

struct unit {
  std::size_t offset = 0;
  std::size_t length = 0;
  bool valid = false;
  char32_t code_point = 0;  // valid units only
  bool cut_by_end = false;  // invalid only because the input ended
};

// Code point of a well-formed sequence, by the bit layout of Table 3-6.
inline char32_t scalar_of(const std::uint8_t* s, std::size_t length) {
  switch (length) {
    case 1:
      return s[0];
    case 2:
      return char32_t((s[0] - 0xC0) * 64 + (s[1] - 0x80));
    case 3:
      return char32_t((s[0] - 0xE0) * 4096 + (s[1] - 0x80) * 64 + (s[2] - 0x80));
    default:
      return char32_t((s[0] - 0xF0) * 262144 + (s[1] - 0x80) * 4096 + (s[2] - 0x80) * 64 + (s[3] - 0x80));
  }
}

// Splits the input into units. At each position: if some row matches completely, that is a
// well-formed sequence; otherwise the maximal subpart is the longest prefix that matches the
// start of any row (at least one byte).
inline std::vector<unit> units(std::span<const std::uint8_t> in) {
  std::vector<unit> out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    std::size_t best = 0;
    bool best_cut = false;
    bool done = false;
    for (const table_row& row : table_3_7) {
      std::size_t m = 0;
      while (m < row.length && i + m < in.size() && in[i + m] >= row.lo[m] && in[i + m] <= row.hi[m]) ++m;
      if (m == row.length) {
        out.push_back({i, m, true, scalar_of(&in[i], m), false});
        i += m;
        done = true;
        break;
      }
      if (m > best) {
        best = m;
        best_cut = i + m == in.size();
      }
    }
    if (done) continue;
    const std::size_t length = std::max<std::size_t>(best, 1);
    out.push_back({i, length, false, 0, best > 0 && best_cut});
    i += length;
  }
  return out;
}

inline std::vector<unit> units(const std::string& s) {
  return units(std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

enum class policy { strict, replace, drop };

// UTF-8 of a scalar value, by Table 3-6.
inline std::string utf8_of(char32_t c) {
  const auto v = static_cast<std::uint32_t>(c);
  std::string s;
  if (v < 0x80) {
    s += char(v);
  } else if (v < 0x800) {
    s += char(0xC0 + v / 64);
    s += char(0x80 + v % 64);
  } else if (v < 0x10000) {
    s += char(0xE0 + v / 4096);
    s += char(0x80 + v / 64 % 64);
    s += char(0x80 + v % 64);
  } else {
    s += char(0xF0 + v / 262144);
    s += char(0x80 + v / 4096 % 64);
    s += char(0x80 + v / 64 % 64);
    s += char(0x80 + v % 64);
  }
  return s;
}

// What every operation should report for an input, derived from its units.
struct expected {
  std::u32string decoded;    // decode under the policy
  std::string repaired;      // repair under the policy
  std::uint64_t errors = 0;  // all error units (validate/stats); strict: min(1, errors)
  std::optional<std::size_t> first_error;
  bool first_cut_by_end = false;
  std::size_t strict_bytes = 0;  // where strict stops (input size when valid)
  std::uint64_t by_length[4] = {};
  std::uint64_t lines = 0;
};

inline expected expect(std::span<const std::uint8_t> in, const std::vector<unit>& split, policy p) {
  expected e;
  e.strict_bytes = in.size();
  for (const unit& u : split) {
    if (!u.valid) {
      if (!e.first_error) {
        e.first_error = u.offset;
        e.first_cut_by_end = u.cut_by_end;
        e.strict_bytes = u.offset;
      }
      ++e.errors;
    } else {
      ++e.by_length[u.length - 1];
    }
    if (p == policy::strict && e.first_error) continue;
    if (u.valid) {
      e.decoded += u.code_point;
      e.repaired.append(reinterpret_cast<const char*>(&in[u.offset]), u.length);
    } else if (p == policy::replace) {
      e.decoded += U'\uFFFD';
      e.repaired += "\xEF\xBF\xBD";
    }
  }
  e.lines = static_cast<std::uint64_t>(std::count(in.begin(), in.end(), std::uint8_t{'\n'}));
  return e;
}

inline expected expect(std::span<const std::uint8_t> in, policy p) { return expect(in, units(in), p); }

inline expected expect(const std::string& s, policy p) {
  return expect(std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()), p);
}

// Why an error unit is one, for messages: the bytes Table 3-7 rules out after its lead.
inline error_kind reason_of(std::span<const std::uint8_t> in, const unit& u) {
  if (u.cut_by_end) return error_kind::truncated_at_end;
  const std::uint8_t lead = in[u.offset];
  if (lead >= 0x80 && lead <= 0xBF) return error_kind::stray_continuation;
  if (lead == 0xC0 || lead == 0xC1 || lead >= 0xF5) return error_kind::invalid_byte;
  const bool next_is_continuation = u.offset + u.length < in.size() &&
                                    in[u.offset + u.length] >= 0x80 && in[u.offset + u.length] <= 0xBF;
  if (u.length == 1 && next_is_continuation) {  // only the second byte's range can fail it
    if (lead == 0xE0 || lead == 0xF0) return error_kind::overlong;
    if (lead == 0xED) return error_kind::surrogate;
    if (lead == 0xF4) return error_kind::too_large;
  }
  return error_kind::truncated;
}

// 1-based line and byte column of an offset.
inline std::pair<std::uint64_t, std::uint64_t> line_column(std::span<const std::uint8_t> in,
                                                           std::size_t offset) {
  std::uint64_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (in[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Encode oracle: UTF-32LE bytes in. Scalar values are 0..D7FF and E000..10FFFF.
struct expected_encode {
  std::string encoded;
  std::uint64_t errors = 0;
  std::optional<std::size_t> first_error;
  std::size_t strict_bytes = 0;
  std::uint64_t line = 1, column = 1;  // of the first error, counted in code points
};

inline expected_encode expect_encode(std::span<const std::uint8_t> in, policy p) {
  expected_encode e;
  e.strict_bytes = in.size();
  std::uint64_t line = 1, column = 1;
  for (std::size_t i = 0; i < in.size(); i += 4) {
    bool ok = false;
    std::uint32_t v = 0;
    if (in.size() - i >= 4) {
      v = std::uint32_t(in[i]) | std::uint32_t(in[i + 1]) << 8 | std::uint32_t(in[i + 2]) << 16 |
          std::uint32_t(in[i + 3]) << 24;
      ok = v <= 0xD7FF || (v >= 0xE000 && v <= 0x10FFFF);
    }
    if (!ok) {
      if (!e.first_error) {
        e.first_error = i;
        e.strict_bytes = i;
        e.line = line;
        e.column = column;
      }
      ++e.errors;
    }
    if (!(p == policy::strict && e.first_error)) {
      if (ok)
        e.encoded += utf8_of(v);
      else if (p == policy::replace)
        e.encoded += "\xEF\xBF\xBD";
    }
    if (ok && v == 0x0A)
      ++line, column = 1;
    else
      ++column;
  }
  return e;
}

}  // namespace gutf8::ref
