// Every error unit listed (gutf8/errors.hpp and stream_config::max_listed_errors): the units,
// positions, reasons and bytes of the independent oracle (tests/support/reference.hpp), for any
// chunking, and bounded by the limit.
#include <gtest/gtest.h>

#include <random>

#include "check.hpp"
#include "support/reference.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;

// What the oracle says the error units are.
std::vector<error_unit> expected_units(const std::string& s, std::size_t max = SIZE_MAX) {
  const auto in = ubytes(s);
  std::vector<error_unit> out;
  for (const ref::unit& u : ref::units(in)) {
    if (u.valid) continue;
    if (out.size() == max) break;
    error_unit e;
    const auto [line, column] = ref::line_column(in, u.offset);
    e.at = {u.offset, line, column, ref::reason_of(in, u)};
    e.length = static_cast<std::uint8_t>(u.length);
    for (std::size_t i = 0; i < u.length; ++i) e.bytes[i] = in[u.offset + i];
    out.push_back(e);
  }
  return out;
}

std::vector<error_unit> streamed_units(const std::string& s, operation op, error_policy p, std::size_t max,
                                       const std::function<std::size_t()>& next_chunk) {
  stream_config c{op, p, false, {}};
  c.max_listed_errors = max;
  stream st(c);
  std::vector<std::byte> out;
  const auto all = bytes(s);
  for (std::size_t i = 0; i < all.size();) {
    const std::size_t n = std::min(next_chunk(), all.size() - i);
    st.feed(all.subspan(i, n), out);
    i += n;
  }
  st.finish(out);
  return {st.listed_errors().begin(), st.listed_errors().end()};
}

std::string show(const std::vector<error_unit>& units) {
  std::string text;
  for (const auto& u : units)
    text += std::to_string(u.at.offset) + ':' + std::to_string(u.at.line) + ':' + std::to_string(u.at.column) +
            ' ' + std::string(describe(u.at.kind)) + " len " + std::to_string(u.length) + '\n';
  return text;
}

TEST(ErrorList, SpecExampleIsFourUnitsWithTheirBytes) {
  const std::string spec = "\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41";
  const auto units = list_errors(bytes(spec));
  ASSERT_EQ(units.size(), 4u) << show(units);
  EXPECT_EQ(units, expected_units(spec)) << show(units);
  EXPECT_EQ(units[2].length, 3);
  EXPECT_EQ(units[2].bytes, (std::array<std::uint8_t, 3>{0xF0, 0x91, 0x92}));
  EXPECT_EQ(units[3].at.kind, error_kind::truncated);
}

TEST(ErrorList, EveryKindWithLinesAndColumns) {
  // stray 80, invalid C0, overlong E0 80, surrogate ED A0, too large F4 90, cut E2 82, cut at end F0 9F
  const std::string s = "a\x80\nb\xC0\xE0\x80\n\xED\xA0\xF4\x90 \xE2\x82z\n\n\xF0\x9F";
  const auto units = list_errors(bytes(s));
  EXPECT_EQ(units, expected_units(s)) << show(units) << "---\n" << show(expected_units(s));
  std::vector<error_kind> kinds;
  for (const auto& u : units) kinds.push_back(u.at.kind);
  EXPECT_EQ(kinds, (std::vector<error_kind>{error_kind::stray_continuation, error_kind::invalid_byte,
                                            error_kind::overlong, error_kind::stray_continuation,
                                            error_kind::surrogate, error_kind::stray_continuation,
                                            error_kind::too_large, error_kind::stray_continuation,
                                            error_kind::truncated, error_kind::truncated_at_end}));
}

TEST(ErrorList, EveryOneAndTwoByteInput) {
  for (int a = 0; a < 256; ++a) {
    for (int b = -1; b < 256; ++b) {
      std::string s(1, char(a));
      if (b >= 0) s += char(b);
      ASSERT_EQ(list_errors(bytes(s)), expected_units(s)) << a << ' ' << b;
      s += "\nx";  // the same followed by more text: no unit is cut by the end
      ASSERT_EQ(list_errors(bytes(s)), expected_units(s)) << a << ' ' << b;
    }
  }
}

TEST(ErrorList, RandomTextAnyChunkingMatchesTheOracle) {
  auto g = rng(26);
  for (const std::size_t size : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 65u, 1000u, 4099u, 70000u}) {
    for (const double defects : {0.0, 0.01, 0.2, 0.9}) {
      const std::string s = random_text(g, size, defects);
      const auto want = expected_units(s);
      SCOPED_TRACE(testing::Message() << "size " << s.size() << " defects " << defects);
      ASSERT_EQ(list_errors(bytes(s)), want);
      for (const std::size_t chunk : {1u, 2u, 3u, 5u, 8u, 17u, 80u}) {
        ASSERT_EQ(streamed_units(s, operation::validate, error_policy::strict, SIZE_MAX, [&] { return chunk; }), want)
            << "chunk " << chunk;
      }
      std::uniform_int_distribution<std::size_t> split(1, 300);
      ASSERT_EQ(streamed_units(s, operation::stats, error_policy::strict, SIZE_MAX, [&] { return split(g); }), want);
    }
  }
}

TEST(ErrorList, BoundedByTheLimit) {
  auto g = rng(261);
  const std::string s = random_text(g, 5000, 0.3);
  const auto all = expected_units(s);
  ASSERT_GT(all.size(), 20u);
  for (const std::size_t max : {0u, 1u, 2u, 13u}) {
    EXPECT_EQ(list_errors(bytes(s), max), expected_units(s, max));
    EXPECT_EQ(streamed_units(s, operation::validate, error_policy::strict, max, [] { return 7; }),
              expected_units(s, max));
  }
  // The stream's counts do not depend on the limit.
  stream_config c{operation::validate, error_policy::strict, false, {}};
  c.max_listed_errors = 3;
  stream st(c);
  std::vector<std::byte> out;
  st.feed(bytes(s), out);
  st.finish(out);
  EXPECT_EQ(st.stats().input.errors, all.size());
  EXPECT_EQ(st.listed_errors().size(), 3u);
}

TEST(ErrorList, PoliciesAndOperations) {
  const std::string s = "ok \xFF then \xC3 and \xED\xA0\x80 end";
  const auto all = expected_units(s);
  ASSERT_EQ(all.size(), 5u);  // FF, C3, and ED A0 80 is three
  const auto one_chunk = [] { return std::size_t{5}; };
  for (const auto op : {operation::decode, operation::repair}) {
    // A strict transcode stops at the first unit: that is the only one it can list.
    EXPECT_EQ(streamed_units(s, op, error_policy::strict, 10, one_chunk), expected_units(s, 1));
    EXPECT_EQ(streamed_units(s, op, error_policy::replace, 10, one_chunk), all);
    EXPECT_EQ(streamed_units(s, op, error_policy::drop, 10, one_chunk), all);
  }
  // encode reads UTF-32: nothing to list.
  EXPECT_TRUE(streamed_units(s.substr(0, 8), operation::encode, error_policy::replace, 10, one_chunk).empty());
}

}  // namespace
