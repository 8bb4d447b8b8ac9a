// Corrupt and truncated inputs: a byte flipped at many positions (headers, data, checksums,
// trailers, member boundaries) or the input cut at many positions. The decompressor agrees with the
// format's tool: where the tool decompresses the bytes, it gives the same text; where the tool
// refuses them, it throws io_failure naming the format and a compressed position inside the input
// (a cut input: exactly where it ends).
#include <gtest/gtest.h>

#include <regex>

#include "compress_support.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;

// Two members with a character split across them (their boundary is among the positions tried).
std::string two_members(format f, const std::string& in) {
  const auto at = inside_characters(in, 1);
  const auto pieces = cut(in, at);
  return tool_compress(f, pieces[0]) + tool_compress(f, pieces[1]);
}

// Positions worth damaging: every one of the first 40 bytes, the last 40, around the members'
// boundary, and others spread over the input.
std::vector<std::size_t> positions(std::size_t size, std::size_t boundary) {
  std::vector<std::size_t> at;
  for (std::size_t k = 0; k < std::min<std::size_t>(40, size); ++k) at.push_back(k);
  for (std::size_t k = size > 40 ? size - 40 : 0; k < size; ++k) at.push_back(k);
  for (std::size_t k = boundary > 20 ? boundary - 20 : 0; k < std::min(size, boundary + 24); ++k) at.push_back(k);
  for (std::size_t k = 1; k < 60; ++k) at.push_back(size * k / 60);
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  return at;
}

// The compressed position an error names.
std::uint64_t named_position(const std::string& what) {
  static const std::regex at("compressed byte ([0-9]+)");
  std::smatch m;
  return std::regex_search(what, m, at) ? std::stoull(m[1]) : ~std::uint64_t{0};
}

class CompressCorrupt : public testing::TestWithParam<format> {
 protected:
  // What the decompressor makes of bad, against the tool's verdict on it.
  static void expect_as_tool(const std::string& bad, std::size_t chunk, bool cut) {
    const format f = GetParam();
    const tool_verdict oracle = tool_decompress(f, bad);
    try {
      const std::string got = decompress(f, bad, chunk, 65537);
      EXPECT_TRUE(oracle.ok) << "accepted what " << tool(f) << " refuses";
      EXPECT_EQ(got, oracle.text);
    } catch (const gutf8::error& e) {
      const std::string what = e.what();
      EXPECT_FALSE(oracle.ok) << "refused what " << tool(f) << " accepts: " << what;
      EXPECT_EQ(e.code(), gutf8::errc::io_failure);
      EXPECT_TRUE(what.starts_with("corrupt " + tool(f) + " data at compressed byte ") ||
                  what.starts_with("truncated " + tool(f) + " stream: input ends at compressed byte "))
          << what;
      EXPECT_LE(named_position(what), bad.size()) << what;
      if (cut && what.starts_with("truncated")) {
        EXPECT_EQ(named_position(what), bad.size()) << what;
      }
    }
  }
};

TEST_P(CompressCorrupt, FlippedBytes) {
  const std::string in = text(40009, 21);
  const std::string c = two_members(GetParam(), in);
  const std::size_t boundary = tool_compress(GetParam(), cut(in, inside_characters(in, 1))[0]).size();
  auto g = gutf8::test::rng(22);
  for (std::size_t at : positions(c.size(), boundary)) {
    SCOPED_TRACE(testing::Message() << "byte " << at << " of " << c.size() << " flipped");
    std::string bad = c;
    bad[at] = static_cast<char>(bad[at] ^ (1 + g() % 255));
    expect_as_tool(bad, at % 2 ? 4093 : 7, false);
  }
}

TEST_P(CompressCorrupt, CutShort) {
  const std::string in = text(40009, 23);
  const std::string c = two_members(GetParam(), in);
  const std::size_t boundary = tool_compress(GetParam(), cut(in, inside_characters(in, 1))[0]).size();
  for (std::size_t at : positions(c.size(), boundary)) {
    if (at == 0) continue;  // an empty input: see AnEmptyInputOfAFormatIsTruncated
    SCOPED_TRACE(testing::Message() << "cut at byte " << at << " of " << c.size());
    expect_as_tool(c.substr(0, at), at % 2 ? 1 : 65537, true);
  }
}

TEST_P(CompressCorrupt, RandomBytesAfterAValidHeader) {
  // The first 16 bytes of a real stream, then noise: a corrupt input, never a crash or a hang.
  const std::string head = tool_compress(GetParam(), text(5000, 24)).substr(0, 16);
  for (std::uint64_t seed = 0; seed < 20; ++seed) expect_as_tool(head + random_bytes(3000, seed), 4093, false);
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressCorrupt, testing::ValuesIn(all_formats), param_name);

}  // namespace
