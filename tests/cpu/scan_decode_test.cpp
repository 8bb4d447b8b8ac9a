// Decode's vector paths against the reference decoder (tests/support/reference.hpp), each ISA
// path called directly: ASCII runs that end at every offset of a 16-, 32- and 64-byte vector
// (and of the AVX-512 path's runs of four vectors), followed by a sequence of every length, by
// an error or by the end; every policy, with output room to spare and exactly the room the
// output needs, and as a segment that ends before the input (against the portable path).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "check.hpp"
#include "scan_support.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
using cpu::mode;

// n printable ASCII bytes and newlines, no two neighbours alike.
std::string ascii_run(std::size_t n) {
  std::string s(n, ' ');
  for (std::size_t k = 0; k < n; ++k) s[k] = k % 61 == 60 ? '\n' : char(' ' + (k * 37 + 11) % 95);
  return s;
}

// English-like text: ASCII words with a non-ASCII character (NBSP, an accent, a dash, an
// emoji) every 20 to 200 bytes. Cut at `size`, its last sequence may be an error.
std::string english_like(std::mt19937_64& g, std::size_t size) {
  static constexpr std::string_view marks[] = {"\xC2\xA0", "\xC3\xA9", "\xE2\x80\x94", "\xF0\x9F\x98\x80"};
  std::string s;
  while (s.size() < size) {
    for (std::size_t n = pick(g, 20, 200); n-- > 0;) s += n % 7 == 0 ? ' ' : char(pick(g, 'a', 'z'));
    s += marks[pick(g, 0, std::size(marks) - 1)];
  }
  s.resize(size);
  return s;
}

template <error_policy P>
void expect_decoded_as_reference(const std::string& in) {
  const ref::expected e = ref::expect(in, ref_policy(P));
  const std::string want(reinterpret_cast<const char*>(e.decoded.data()), 4 * e.decoded.size());
  const std::uint64_t errors = P == error_policy::strict ? std::min<std::uint64_t>(e.errors, 1) : e.errors;
  const std::size_t cut = in.size() - std::min<std::size_t>(in.size(), 37);  // a segment that ends before
  const scanned cut_want = scan_on<mode::decode, P>(in, cut, cpu::isa::portable);
  for (const cpu::isa level : isa_levels()) {
    SCOPED_TRACE(testing::Message() << name(level) << ", " << name(P) << ", " << in.size() << " bytes");
    // Room to spare, and exactly the room the output needs (the vector paths must stop short).
    for (const std::size_t room : {std::size_t{0}, std::max<std::size_t>(want.size(), 1)}) {
      const scanned got = scan_on<mode::decode, P>(in, in.size(), level, room);
      EXPECT_TRUE(same_bytes(got.out, want)) << "room " << room;
      EXPECT_FALSE(got.past_room) << "room " << room;
      EXPECT_EQ(got.r.errors, errors) << "room " << room;
      if (e.first_error) {
        EXPECT_EQ(got.r.first_error, *e.first_error) << "room " << room;
      }
    }
    EXPECT_TRUE(same(scan_on<mode::decode, P>(in, cut, level), cut_want)) << "cut at " << cut;
  }
}

void expect_every_policy(const std::string& in) {
  expect_decoded_as_reference<error_policy::strict>(in);
  expect_decoded_as_reference<error_policy::replace>(in);
  expect_decoded_as_reference<error_policy::drop>(in);
}

// Up to 330 ASCII bytes: every end offset of a vector of each ISA, and of four AVX-512 vectors
// after a first one; what follows the run lands across every vector edge.
constexpr std::size_t longest_run = 330;

TEST(ScanDecode, AsciiRunThenASequenceOfEachLength) {
  auto g = rng(41);
  const std::string tail = english_like(g, 90) + "end";
  for (const std::string_view seq : {"\xC2\xA0", "\xDF\xBF", "\xE2\x80\x94", "\xEF\xBF\xBF", "\xF0\x9F\x98\x80",
                                     "\xF4\x8F\xBF\xBF"}) {
    for (std::size_t run = 0; run <= longest_run; ++run) {
      expect_every_policy(ascii_run(run) + std::string(seq) + tail);
      expect_every_policy(ascii_run(run) + std::string(seq));  // the sequence ends the input
      if (HasFailure()) return;
    }
  }
}

TEST(ScanDecode, ErrorRightAfterAnAsciiRun) {
  auto g = rng(42);
  const std::string tail = english_like(g, 90) + "end";
  for (const std::string_view defect : {"\x80", "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\xF5", "\xC0\xAF", "\xED\xA0\x80",
                                        "\xE0\x9F\xBF"}) {
    for (std::size_t run = 0; run <= longest_run; ++run) {
      expect_every_policy(ascii_run(run) + std::string(defect) + tail);
      expect_every_policy(ascii_run(run) + std::string(defect));  // cut by the end of the input
      if (HasFailure()) return;
    }
  }
}

// Sizes around the vector widths, four AVX-512 vectors, and a 512 KiB piece (decode's default).
TEST(ScanDecode, EnglishLikeTextAroundVectorAndPieceSizes) {
  auto g = rng(43);
  constexpr std::size_t piece = std::size_t{512} << 10;
  for (const std::size_t size : {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{31},
                                 std::size_t{33}, std::size_t{47}, std::size_t{63}, std::size_t{64}, std::size_t{65},
                                 std::size_t{95}, std::size_t{127}, std::size_t{129}, std::size_t{255},
                                 std::size_t{257}, std::size_t{319}, std::size_t{321}, std::size_t{4097},
                                 piece - 1, piece + 19}) {
    std::string in = english_like(g, size);
    expect_every_policy(in);
    in[pick(g, 0, static_cast<std::uint32_t>(size - 1))] = '\xFF';
    expect_every_policy(in);
    if (HasFailure()) return;
  }
}

}  // namespace
