// The compressor and part compressor (src/compress/compressor.hpp) against the standard tools:
// what they write, in any chunking, at any level, whole or as parts cut inside characters and
// concatenated, the tools decompress to exactly the input; and so does the decompressor.
#include <gtest/gtest.h>

#include "compress/compressor.hpp"
#include "compress_support.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;

std::string compress_stream(format f, const std::string& in, std::size_t chunk, int level) {
  std::string out;
  cz::compressor c(
      f, [&](std::span<const std::uint8_t> b) { out.append(reinterpret_cast<const char*>(b.data()), b.size()); },
      level);
  for (std::size_t at = 0; at < in.size(); at += chunk)
    c.write(ubytes(in).subspan(at, std::min(chunk, in.size() - at)));
  c.finish();
  c.finish();  // a second finish writes nothing
  return out;
}

std::string compress_parts(format f, const std::vector<std::string>& pieces) {
  cz::part_compressor pc(f);
  std::vector<std::uint8_t> out;
  for (const std::string& p : pieces) pc.append(ubytes(p), out);
  return {out.begin(), out.end()};
}

class CompressEncode : public testing::TestWithParam<format> {
 protected:
  static void expect_round_trip(const std::string& c, const std::string& in) {
    const tool_verdict t = tool_decompress(GetParam(), c);
    EXPECT_TRUE(t.ok) << tool(GetParam()) << " refused our output";
    EXPECT_EQ(t.text, in) << tool(GetParam());
    EXPECT_EQ(decompress(GetParam(), c, 4093, 65537), in);
    EXPECT_EQ(cz::sniff(ubytes(c)), GetParam());
  }
};

TEST_P(CompressEncode, StreamInAnyChunking) {
  const format f = GetParam();
  for (const std::string& in : {std::string(), text(1, 1), text(300007, 2), random_bytes(70001, 3)})
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{4093}, std::size_t{65537}, in.size() + 1}) {
      if (chunk == 1 && in.size() > 100000) continue;  // byte by byte: the smaller inputs suffice
      SCOPED_TRACE(testing::Message() << in.size() << " bytes written " << chunk << " at a time");
      expect_round_trip(compress_stream(f, in, chunk, cz::default_level(f)), in);
    }
}

TEST_P(CompressEncode, LevelsAndTheDefault) {
  const format f = GetParam();
  const std::string in = text(120011, 4);
  const std::string by_default = compress_stream(f, in, 65537, cz::default_level(f));
  expect_round_trip(by_default, in);
  for (int level : {1, 9}) expect_round_trip(compress_stream(f, in, 65537, level), in);
  EXPECT_EQ(compress_stream(f, in, 65537, cz::default_level(f)), by_default) << "deterministic";
}

TEST_P(CompressEncode, PartsConcatenate) {
  const format f = GetParam();
  const std::string in = text(500009, 5);
  for (std::size_t parts : {1, 2, 7}) {
    SCOPED_TRACE(testing::Message() << parts << " parts");
    expect_round_trip(compress_parts(f, cut(in, inside_characters(in, parts - 1))), in);
  }
}

TEST_P(CompressEncode, EmptyAndTinyParts) {
  const std::string a = text(3, 6), b = random_bytes(1, 7);
  expect_round_trip(compress_parts(GetParam(), {"", a, "", "", b, ""}), a + b);
  expect_round_trip(compress_parts(GetParam(), {""}), "");
}

TEST_P(CompressEncode, PartsIntoACallersBuffer) {
  const format f = GetParam();
  cz::part_compressor pc(f);
  for (const std::string& in : {std::string(), random_bytes(65537, 8), text(4093, 9)}) {
    std::vector<std::uint8_t> out(pc.bound(in.size()));
    const std::size_t n = pc.compress(ubytes(in), out);
    ASSERT_LE(n, out.size());
    expect_round_trip(std::string(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)), in);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressEncode, testing::ValuesIn(all_formats), param_name);

TEST(CompressEncodeErrors, BadLevelsAndWritesAfterFinish) {
  const auto sink = [](std::span<const std::uint8_t>) {};
  EXPECT_THROW(cz::compressor(format::bzip2, sink, 10), gutf8::error);
  EXPECT_THROW(cz::part_compressor(format::bzip2, 0), gutf8::error);
  EXPECT_THROW(cz::part_compressor(format::gzip, 13), gutf8::error);
  EXPECT_THROW(cz::compressor(format::none, sink), gutf8::error);
  cz::compressor c(format::zstd, sink);
  c.finish();
  const std::string more = "x";
  EXPECT_THROW(c.write(ubytes(more)), gutf8::error);
}

TEST(CompressEncodeErrors, ASinkThatFailsFailsTheWrite) {
  cz::compressor c(format::gzip,
                   [](std::span<const std::uint8_t>) { throw gutf8::error(gutf8::errc::io_failure, "disk full"); });
  const std::string in = random_bytes(1 << 20, 10);
  EXPECT_THROW(
      {
        c.write(ubytes(in));
        c.finish();
      },
      gutf8::error);
}

}  // namespace
