// The decompressor (src/compress/decompressor.hpp) against the standard tools: what gzip, zstd, xz,
// bzip2 and lz4 compress, in one or several members with characters split across them, empty or
// not, text or random bytes, decompresses to the input with any chunking of input and output, and
// bytes after the last member are judged as each tool judges them.
#include <gtest/gtest.h>

#include "compress_support.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;

class CompressDecode : public testing::TestWithParam<format> {
 protected:
  // Every chunking decodes compressed to want, in order and also as one part held in memory.
  static void expect_decodes(const std::string& compressed, const std::string& want) {
    const format f = GetParam();
    for (const auto& [in, out] : chunkings) {
      SCOPED_TRACE(testing::Message() << "input chunks " << in << ", output chunks " << out);
      EXPECT_EQ(decompress(f, compressed, in, out), want);
    }
    cz::decompressor d;
    d.open(f, whole(compressed.size()), ubytes(compressed));
    EXPECT_EQ(drain(d, 65536), want) << "in memory";
    EXPECT_EQ(d.compressed_position(), compressed.size());
    EXPECT_EQ(d.text_position(), want.size());
    EXPECT_FALSE(d.ignored_from());
  }
};

TEST_P(CompressDecode, OneMember) {
  for (const std::string& in :
       {std::string(), std::string("\xE8\xAA\x9E"), text(1, 1), text(300001, 2), random_bytes(100003, 3)}) {
    SCOPED_TRACE(testing::Message() << in.size() << " bytes");
    expect_decodes(tool_compress(GetParam(), in), in);
  }
}

TEST_P(CompressDecode, MembersSplitInsideCharacters) {
  const std::string in = text(200003, 5);
  for (std::size_t members : {2, 5}) {
    std::string c;
    for (const std::string& piece : cut(in, inside_characters(in, members - 1))) c += tool_compress(GetParam(), piece);
    ASSERT_EQ(tool_decompress(GetParam(), c).text, in) << "the tool reads its members as one text";
    expect_decodes(c, in);
  }
}

TEST_P(CompressDecode, EmptyMembersBetweenOthers) {
  const std::string a = text(4093, 6), b = text(7, 7), empty = tool_compress(GetParam(), "");
  expect_decodes(empty + tool_compress(GetParam(), a) + empty + empty + tool_compress(GetParam(), b) + empty, a + b);
}

TEST_P(CompressDecode, LevelsAndBlockSizes) {
  const format f = GetParam();
  const std::string in = text(150001, 8);
  const char* options[] = {"-1", "-9"};
  for (const char* o : options) expect_decodes(tool_compress(f, in, o), in);
  if (f == format::xz) expect_decodes(tool_compress(f, in, "--block-size=40000"), in);
  if (f == format::lz4) {
    expect_decodes(tool_compress(f, in, "-B4 --no-frame-crc"), in);
    expect_decodes(tool_compress(f, in, "-BD -B5 -BX --content-size"), in);
  }
  if (f == format::zstd) expect_decodes(tool_compress(f, in, "--no-check -B30000"), in);
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressDecode, testing::ValuesIn(all_formats), param_name);

// Bytes after the last member: as the format's tool treats them.
class CompressTrailing : public testing::TestWithParam<format> {};

TEST_P(CompressTrailing, AsTheToolDoes) {
  const format f = GetParam();
  const std::string in = text(30011, 9), c = tool_compress(f, in);
  const std::string tails[] = {std::string(4, '\0'),
                               std::string(5, '\0'),
                               "garbage!",
                               std::string("\0\0\0\0\0abc", 8),
                               std::string("\x1f", 1),
                               "B",
                               "BZ",
                               "BZh9x",
                               std::string("\x28\xb5", 2)};
  for (const std::string& tail : tails) {
    SCOPED_TRACE(testing::Message() << "tail of " << tail.size() << " bytes: " << testing::PrintToString(tail));
    const tool_verdict oracle = tool_decompress(f, c + tail);
    for (const auto& [chunk_in, chunk_out] : chunkings) {
      try {
        const std::string got = decompress(f, c + tail, chunk_in, chunk_out);
        EXPECT_TRUE(oracle.ok) << "accepted what " << tool(f) << " refuses";
        EXPECT_EQ(got, in);
      } catch (const gutf8::error& e) {
        EXPECT_FALSE(oracle.ok) << "refused what " << tool(f) << " accepts: " << e.what();
        EXPECT_EQ(e.code(), gutf8::errc::io_failure);
        EXPECT_NE(std::string(e.what()).find(tool(f)), std::string::npos) << e.what();
      }
    }
  }
}

TEST(CompressTrailing, IgnoredGarbageIsReportedWhereTheToolWarns) {
  const std::string in = text(1001, 10);
  for (const format f : {format::gzip, format::bzip2}) {
    const std::string c = tool_compress(f, in);
    for (const auto& [tail, warned] :
         {std::pair{std::string(9, '\0'), f == format::bzip2}, {std::string("junk"), true}}) {
      cz::decompressor d;
      d.open(f, chunked(c + tail, 3));
      EXPECT_EQ(drain(d, 4093), in);
      EXPECT_EQ(d.ignored_from().has_value(), warned) << tool(f);
      if (warned) {
        EXPECT_EQ(*d.ignored_from(), c.size());
      }
      EXPECT_EQ(d.compressed_position(), c.size() + tail.size()) << "the ignored bytes are read";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressTrailing, testing::ValuesIn(all_formats), param_name);

// A zstd or lz4 skippable frame: magic, 32-bit size, payload.
std::string skippable(int variant, const std::string& payload) {
  std::string s{static_cast<char>(0x50 + variant), '\x2a', '\x4d', '\x18'};
  for (int k = 0; k < 4; ++k) s += static_cast<char>(payload.size() >> (8 * k));
  return s + payload;
}

TEST(CompressSkippable, ZstdAndLz4SkipThemAnywhere) {
  const std::string a = text(20011, 11), b = text(3001, 12);
  for (const format f : {format::zstd, format::lz4}) {
    const std::string c = skippable(0, "x") + tool_compress(f, a) + skippable(15, random_bytes(70001, 1)) +
                          skippable(7, "") + tool_compress(f, b) + skippable(3, "tail");
    ASSERT_EQ(tool_decompress(f, c).text, a + b) << tool(f);
    for (const auto& [in, out] : chunkings) EXPECT_EQ(decompress(f, c, in, out), a + b) << tool(f);
  }
}

TEST(CompressSkippable, AFileThatStartsWithThemIsTheFormatOfItsFirstFrame) {
  const std::string a = text(5003, 13);
  const std::string lz4 = skippable(2, "meta") + tool_compress(format::lz4, a);
  ASSERT_EQ(cz::sniff(ubytes(lz4)), format::zstd);
  EXPECT_EQ(decompress(format::zstd, lz4, 7, 4093), a) << "sniffed as zstd, decoded as lz4";
  EXPECT_EQ(decompress(format::zstd, skippable(1, "only"), 1, 7), "") << "zstd -d takes skippable frames alone";
  EXPECT_THROW(decompress(format::zstd, skippable(1, "only") + "x", 1, 7), gutf8::error);
  EXPECT_THROW(decompress(format::zstd, skippable(1, "only").substr(0, 9), 1, 7), gutf8::error) << "cut short";
}

TEST(CompressXz, StreamPaddingAndConcatenatedStreams) {
  const std::string a = text(10007, 14), b = text(333, 15);
  const std::string c =
      tool_compress(format::xz, a) + std::string(8, '\0') + tool_compress(format::xz, b) + std::string(4, '\0');
  ASSERT_TRUE(tool_decompress(format::xz, c).ok);
  for (const auto& [in, out] : chunkings) EXPECT_EQ(decompress(format::xz, c, in, out), a + b);
  EXPECT_THROW(decompress(format::xz, c + std::string(3, '\0'), 7, 7), gutf8::error) << "padding of 4k bytes only";
}

TEST(CompressDecodeErrors, AnEmptyInputOfAFormatIsTruncated) {
  for (const format f : all_formats) {
    try {
      decompress(f, "", 1, 1);
      ADD_FAILURE() << tool(f);
    } catch (const gutf8::error& e) {
      EXPECT_EQ(std::string(e.what()), "truncated " + tool(f) + " stream: input ends at compressed byte 0");
    }
  }
}

TEST(CompressDecodeErrors, TextGivenAsAFormatIsCorrupt) {
  for (const format f : all_formats) {
    try {
      decompress(f, text(1000, 16), 4093, 4093);
      ADD_FAILURE() << tool(f);
    } catch (const gutf8::error& e) {
      EXPECT_EQ(e.code(), gutf8::errc::io_failure);
      // liblzma reads the 12-byte stream header before it says it is no xz stream.
      const std::string at = f == format::xz ? "12" : "0";
      EXPECT_EQ(std::string(e.what()).rfind("corrupt " + tool(f) + " data at compressed byte " + at + ": ", 0), 0u)
          << e.what();
    }
  }
}

}  // namespace
