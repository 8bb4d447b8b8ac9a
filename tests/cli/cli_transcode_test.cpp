// decode, encode and stats end to end: strict messages, policies, round trips, and
// output that depends neither on the chunk size nor on the backend.
#include <gtest/gtest.h>

#include <random>

#include "cli_runner.hpp"
#include "gutf8/codec.hpp"
#include "gutf8/types.hpp"

namespace gutf8::cli_test {
namespace {

// Deterministic text with every sequence length and, when asked, every kind of error,
// including sequences that a small chunk size splits.
std::string mixed_text(std::size_t approx_bytes, bool with_errors, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  static constexpr std::string_view valid[] = {"a", "Z", " ", "\n", "\xC3\xA9", "\xD0\xAF",
                                               "\xE2\x82\xAC", "\xE4\xB8\xAD", "\xEF\xBB\xBF",
                                               "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF"};
  static constexpr std::string_view invalid[] = {"\x80", "\xBF", "\xC0\xAF", "\xC1", "\xF5", "\xFF",
                                                 "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                                 "\xE2\x82", "\xF0\x9F\x98", "\xC3"};
  std::string text;
  while (text.size() < approx_bytes) {
    if (with_errors && rng() % 16 == 0)
      text += invalid[rng() % std::size(invalid)];
    else
      text += valid[rng() % std::size(valid)];
  }
  return text;
}

using transcode = cli;

TEST_F(transcode, DecodeStrictStopsAtFirstErrorWithMessage) {
  write("bad.txt", "hello\nw\xC3\xB6rld \xE2\x82 x\n\xFF");
  const result r = run({"decode", "bad.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "gutf8: bad.txt: invalid UTF-8 at byte 13 (line 2, column 8): " +
                       std::string(describe(error_kind::truncated)) + "\n");
  // What was written before the error may remain (as iconv), and nothing after it.
  const std::string prefix = utf32le(U"hello\nw\u00F6rld ");
  EXPECT_TRUE(prefix.starts_with(r.out)) << r.out.size();
}

TEST_F(transcode, EncodeStrictMessages) {
  // Line and column count code points: U+D800 is the second on line 2.
  write("surrogate", utf32le(U"ab\nc") + utf32le(std::u32string(1, char32_t(0xD800))) + utf32le(U"c"));
  const result s = run({"encode", "surrogate"});
  EXPECT_EQ(s.status, 1);
  EXPECT_EQ(s.err, "gutf8: surrogate: invalid UTF-32LE at byte 16 (line 2, column 2): " +
                       std::string(describe(error_kind::surrogate)) + "\n");
  write("ragged", utf32le(U"a") + "b");
  const result t = run({"encode", "ragged"});
  EXPECT_EQ(t.status, 1);
  EXPECT_EQ(t.err, "gutf8: ragged: invalid UTF-32LE at byte 4 (line 1, column 2): " +
                       std::string(describe(error_kind::ragged_tail)) + "\n");
  EXPECT_TRUE(std::string("a").starts_with(t.out));
  write("large", utf32le(std::u32string(1, char32_t(0x110000))));
  EXPECT_EQ(run({"encode", "large"}).status, 1);
}

TEST_F(transcode, SpecExampleUnderEachPolicy) {
  write("spec.bin", spec_example);
  const result replaced = run({"decode", "--errors=replace", "spec.bin"});
  EXPECT_EQ(replaced.status, 0);
  EXPECT_EQ(replaced.out, utf32le(U"\uFFFD\uFFFD\uFFFD\uFFFDA"));
  const result dropped = run({"decode", "--errors", "drop", "spec.bin"});
  EXPECT_EQ(dropped.status, 0);
  EXPECT_EQ(dropped.out, utf32le(U"A"));
  EXPECT_EQ(run({"decode", "spec.bin"}).status, 1);

  write("bad32", utf32le(U"x") + utf32le(std::u32string(1, char32_t(0xDFFF))) + "yz");
  EXPECT_EQ(run({"encode", "--errors=replace", "bad32"}).out, "x\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(run({"encode", "--errors=drop", "bad32"}).out, "x");
}

TEST_F(transcode, RoundTripDecodeEncode) {
  const std::string text = mixed_text(300000, false, 1);
  write("text", text);
  const result r = shell("\"$GUTF8\" decode text | \"$GUTF8\" encode --chunk-size 4099 > back");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(read("back") == text);
  EXPECT_EQ(run({"validate", "text"}).status, 0);
}

TEST_F(transcode, OutputDoesNotDependOnChunkSize) {
  write("mixed", mixed_text(200000, true, 2));
  const std::string surrogate("\x00\xD8\x00\x00", 4);
  write("utf32", utf32le(U"ok\U0001F600") + surrogate + utf32le(U"\u00E9z") + "\x01");
  const std::vector<std::vector<std::string>> commands{
      {"decode", "--errors=replace", "mixed"}, {"decode", "--errors=drop", "mixed"},
      {"decode", "mixed"},                     {"validate", "--replace", "mixed"},
      {"validate", "--drop", "mixed"},         {"validate", "--json", "mixed", "mixed"},
      {"validate", "mixed"},                   {"stats", "--json", "--top", "7", "mixed"},
      {"encode", "--errors=replace", "utf32"}, {"encode", "--errors=drop", "utf32"},
  };
  for (const auto& command : commands) {
    SCOPED_TRACE(::testing::PrintToString(command));
    std::optional<result> reference;
    for (const char* chunk : {"1M", "16", "17", "31", "64"}) {
      SCOPED_TRACE(chunk);
      auto args = command;
      args.insert(args.begin() + 1, {"--chunk-size", chunk});
      result r = run(args);
      if (!reference) {
        reference = std::move(r);
        continue;
      }
      EXPECT_EQ(r.status, reference->status);
      EXPECT_TRUE(r.out == reference->out) << "output differs";
      EXPECT_EQ(r.err, reference->err);
    }
  }
}

TEST_F(transcode, CpuBackendEqualsDefault) {
  write("mixed", mixed_text(100000, true, 3));
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"decode", "--errors=replace", "mixed"},
        std::vector<std::string>{"validate", "--drop", "mixed"},
        std::vector<std::string>{"validate", "--json", "mixed"},
        std::vector<std::string>{"stats", "--json", "--top", "5", "mixed"}}) {
    SCOPED_TRACE(::testing::PrintToString(command));
    const result by_default = run(command);
    auto args = command;
    args.insert(args.begin() + 1, "--backend=cpu");
    const result cpu = run(args);
    EXPECT_EQ(cpu.status, by_default.status);
    EXPECT_TRUE(cpu.out == by_default.out);
    EXPECT_EQ(cpu.err, by_default.err);
  }
}

TEST_F(transcode, CudaBackendWithoutGpuIsDeviceFailure) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is usable here";
  write("x", "abc");
  const result r = run({"validate", "--backend=cuda", "x"});
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(r.err.starts_with("gutf8: ")) << r.err;
  std::string lower = r.err;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_TRUE(lower.find("cuda") != std::string::npos || lower.find("gpu") != std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line, no trace
  const result decode = run({"decode", "--backend", "cuda", "-o", "out", "x"});
  EXPECT_EQ(decode.status, 3);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
}

TEST_F(transcode, StatsText) {
  write("t", "h\xC3\xA9llo\n\xE2\x82\xAC\xF0\x9F\x98\x80 aa\n\xFF");
  const result r = run({"stats", "--top", "3", "t"});
  EXPECT_EQ(r.status, 0);  // errors are counted, not failed on
  EXPECT_EQ(r.out,
            "file:        t\n"
            "bytes:       19\n"
            "code points: 12\n"
            "lines:       2\n"
            "errors:      1\n"
            "1-byte:      9\n"
            "2-byte:      1\n"
            "3-byte:      1\n"
            "4-byte:      1\n"
            "top 3:\n"
            "  U+000A   2\n"
            "  U+0061   2  a\n"
            "  U+006C   2  l\n");
}

TEST_F(transcode, StatsJsonPerFile) {
  write("t", "h\xC3\xA9llo\n\xE2\x82\xAC\xF0\x9F\x98\x80 aa\n\xFF");
  const result r = run_stdin({"stats", "--json", "--top", "2", "t", "-"}, "\xF0\x9F\x98\x80");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "{\"file\":\"t\",\"bytes\":19,\"code_points\":12,\"lines\":2,\"errors\":1,"
            "\"sequences\":{\"1\":9,\"2\":1,\"3\":1,\"4\":1},"
            "\"top\":[{\"code_point\":\"U+000A\",\"value\":10,\"count\":2},"
            "{\"code_point\":\"U+0061\",\"value\":97,\"count\":2}]}\n"
            "{\"file\":\"<stdin>\",\"bytes\":4,\"code_points\":1,\"lines\":0,\"errors\":0,"
            "\"sequences\":{\"1\":0,\"2\":0,\"3\":0,\"4\":1},"
            "\"top\":[{\"code_point\":\"U+1F600\",\"value\":128512,\"count\":1}]}\n"
            "{\"total\":true,\"files\":2,\"bytes\":23,\"code_points\":13,\"lines\":2,\"errors\":1,"
            "\"sequences\":{\"1\":9,\"2\":1,\"3\":1,\"4\":2},"
            "\"top\":[{\"code_point\":\"U+000A\",\"value\":10,\"count\":2},"
            "{\"code_point\":\"U+0061\",\"value\":97,\"count\":2}]}\n");
  const result no_top = run({"stats", "--json", "t"});
  EXPECT_NE(no_top.out.find(",\"top\":[]}"), std::string::npos) << no_top.out;
}

TEST_F(transcode, StatsTotalOverSeveralFiles) {
  // Per file the most frequent are a and c; over both it is b: the total's top is exact.
  write("one", "aaabb");
  write("two", "cccbb\xFF");
  const result r = run({"stats", "--top", "1", "one", "missing", "two"});
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(r.out.ends_with("\n\n"
                              "total:       2 files\n"
                              "bytes:       11\n"
                              "code points: 10\n"
                              "lines:       0\n"
                              "errors:      1\n"
                              "1-byte:      10\n"
                              "2-byte:      0\n"
                              "3-byte:      0\n"
                              "4-byte:      0\n"
                              "top 1:\n"
                              "  U+0062   4  b\n")) << r.out;
  const result j = run({"stats", "--json", "one", "two"});
  EXPECT_TRUE(j.out.ends_with("\n{\"total\":true,\"files\":2,\"bytes\":11,\"code_points\":10,\"lines\":0,"
                              "\"errors\":1,\"sequences\":{\"1\":10,\"2\":0,\"3\":0,\"4\":0},\"top\":[]}\n"))
      << j.out;
  // One input: no total, as wc.
  EXPECT_EQ(run({"stats", "one"}).out.find("total"), std::string::npos);
  EXPECT_EQ(run({"stats", "--json", "one"}).out.find("total"), std::string::npos);
}

TEST_F(transcode, VerbosePrintsStageTimings) {
  write("x", "abc");
  const result r = run({"validate", "--verbose", "x"});
  EXPECT_EQ(r.status, 0);
  for (const char* stage : {"gutf8: ", "read", "process", "write"})
    EXPECT_NE(r.err.find(stage), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gutf8::cli_test
