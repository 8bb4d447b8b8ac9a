// Format recognition (src/compress/format.hpp): the tools' outputs are recognized by their first
// bytes, whatever they hold (empty, text, random bytes); text, and text that merely starts like a
// magic number, is not; output formats follow the file name's suffix.
#include <gtest/gtest.h>

#include "compress_support.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;

class CompressFormat : public testing::TestWithParam<format> {};

TEST_P(CompressFormat, SniffsTheToolsOutput) {
  const format f = GetParam();
  for (const std::string& in : {std::string(), std::string("\xC3\xA9"), text(5000, 3), random_bytes(3001, 4)}) {
    const std::string c = tool_compress(f, in);
    EXPECT_EQ(cz::sniff(ubytes(c)), f) << "input of " << in.size() << " bytes";
    EXPECT_EQ(cz::sniff(ubytes(c).first(std::min(c.size(), cz::sniff_bytes))), f);
  }
}

TEST_P(CompressFormat, SuffixNamesTheFormat) {
  const format f = GetParam();
  const std::string s(cz::suffix(f));
  EXPECT_EQ(cz::by_suffix("out" + s), f);
  EXPECT_EQ(cz::by_suffix("/data/x.jsonl" + s), f);
  EXPECT_EQ(cz::by_suffix(s), format::none) << "a bare suffix is no file name";
  EXPECT_EQ(cz::by_suffix("out" + s + ".txt"), format::none);
  EXPECT_EQ(cz::suffix(cz::by_suffix("a" + s)), s);
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressFormat, testing::ValuesIn(all_formats), param_name);

TEST(CompressFormat, TextIsNotCompressed) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) EXPECT_EQ(cz::sniff(ubytes(text(64, seed))), format::none);
  EXPECT_EQ(cz::sniff({}), format::none);
  EXPECT_EQ(cz::by_suffix("notes.txt"), format::none);
  EXPECT_EQ(cz::by_suffix("archive.tgz"), format::none);
}

TEST(CompressFormat, NearMissesAreNotCompressed) {
  const auto sniff = [](std::string s) { return cz::sniff(ubytes(s)); };
  EXPECT_EQ(sniff("BZh9 is how a bzip2 file starts"), format::none) << "no block magic after BZh9";
  EXPECT_EQ(sniff("BZh0\x31\x41\x59\x26\x53\x59"), format::none) << "block size digit 0";
  EXPECT_EQ(sniff(std::string("\x1f\x8b\x07", 3)), format::none) << "gzip defines only method 8";
  EXPECT_EQ(sniff(std::string("\x1f\x8b", 2)), format::none) << "too short to tell";
  EXPECT_EQ(sniff(std::string("\x04\x22\x4d\x18\x00", 5)), format::none) << "lz4 version bits 00";
  EXPECT_EQ(sniff(std::string("\xfd\x37\x7a\x58\x5a\x01", 6)), format::none);
  EXPECT_EQ(sniff(std::string("\x28\xb5\x2f", 3)), format::none);
}

TEST(CompressFormat, SkippableFramesSniffAsZstd) {
  // zstd's and lz4's skippable frames share their magic numbers 0x184D2A50..5F.
  for (int low = 0; low < 16; ++low) {
    const std::string head{static_cast<char>(0x50 + low), '\x2a', '\x4d', '\x18', '\x03', 0, 0, 0, 'a', 'b', 'c'};
    EXPECT_EQ(cz::sniff(ubytes(head)), format::zstd) << low;
  }
}

TEST(CompressFormat, BzipEmptyStreamAndEveryBlockSize) {
  for (char level = '1'; level <= '9'; ++level) {
    const std::string c = tool_compress(format::bzip2, text(100, level), std::string("-") + level);
    EXPECT_EQ(cz::sniff(ubytes(c)), format::bzip2) << level;
  }
}

}  // namespace
