// The CLI's reader/writer threads (src/cli/pipeline.cpp) and the parallel reads of large regular
// files (input.cpp): the same results whichever way the bytes arrive.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

using pipeline = cli;

TEST_F(pipeline, LargeFileEqualsPipe) {
  write("big", text_with_errors((20u << 20) + 7, 1));
  for (const char* chunk : {"16M", "9M", "1M"}) {
    SCOPED_TRACE(chunk);
    const std::string backend = "--backend=" + test_backend();
    const result file = run({"decode", "--errors=replace", "--chunk-size", chunk, "big"});
    const result pipe = shell("cat big | \"$GUTF8\" decode " + backend + " --errors=replace --chunk-size " +
                              chunk + " -");
    EXPECT_EQ(file.status, 0) << file.err;
    EXPECT_EQ(pipe.status, 0) << pipe.err;
    EXPECT_TRUE(file.out == pipe.out) << file.out.size() << " vs " << pipe.out.size();
    const result json = run({"validate", "--json", "--chunk-size", chunk, "big"});
    const result json_pipe = shell("cat big | \"$GUTF8\" validate " + backend + " --json --chunk-size " +
                                   chunk + " -");
    EXPECT_EQ(json.status, 1);
    EXPECT_EQ(json.out.substr(json.out.find(",\"bytes\"")), json_pipe.out.substr(json_pipe.out.find(",\"bytes\"")));
  }
}

// A regular file on the CPU backend runs by pieces on all workers (gutf8::run, src/engine/), a
// pipe through the staged pipeline: same output, messages and exit status for every command, any
// piece size (--chunk-size 16 bytes up) and worker count, with the only error deep in the file
// (its line and column count every piece before it) or none, and strict mode stopping there.
TEST_F(pipeline, PiecesOfAFileEqualThePipe) {
  if (test_backend() != "cpu") GTEST_SKIP() << "pieces run on the CPU backend";
  std::string late = text_with_errors(300000, 11);
  late.erase(std::remove_if(late.begin(), late.end(), [](char c) { return (c & 0x80) != 0; }), late.end());
  // Valid, then one error unit on a line that begins pieces before it.
  late += "z\xC3\xA9\n\xF0\x9F\x98\x80 " + std::string(10000, 'x') + "\xED\xA0\x80 tail\n";
  write("late", late);
  write("mixed", text_with_errors(200000 + 3, 12));
  write("utf32", utf32le(U"line\nsecond \U0001F600\n") + std::string(50000, 'A') + std::string("\x00\xD8\x00\x00z", 5));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"late", "validate"},         {"late", "validate --json"}, {"late", "decode"},
      {"late", "stats --json"},     {"mixed", "decode --errors=replace"},
      {"mixed", "decode --errors=drop"}, {"mixed", "validate --replace"}, {"mixed", "validate --drop"},
      {"utf32", "encode"},          {"utf32", "encode --errors=replace"}};
  for (const auto& [file, command] : cases)
    // The pieces read a mapped file, or pread copies with GUTF8_NO_MAP.
    for (const auto& [read, tuning] : {std::pair{"", "--chunk-size 16 --threads 3"},
                                       std::pair{"", "--chunk-size 4099"},
                                       std::pair{"GUTF8_NO_MAP=1 ", "--chunk-size 4099"},
                                       std::pair{"", "--chunk-size 1M --threads 1"}}) {
      SCOPED_TRACE(file + ": " + read + command + " " + tuning);
      const std::string args = command + " --backend=cpu " + tuning;
      // JSON and stats name the input: <stdin> for the pipe.
      const std::string digest = "; echo \"$?\"; LC_ALL=C sed 's/<stdin>/" + file + "/' <o | md5sum";
      const result pieces = shell(std::string(read) + "\"$GUTF8\" " + args + " " + file + " >o" + digest);
      const result pipe = shell("cat " + file + " | \"$GUTF8\" " + args + " - >o" + digest);
      EXPECT_EQ(pieces.out, pipe.out);
      std::string err = pipe.err;
      for (std::size_t at; (at = err.find("<stdin>")) != std::string::npos;) err.replace(at, 7, file);
      EXPECT_EQ(pieces.err, err);
    }
  const result strict = run({"decode", "--backend=cpu", "--chunk-size", "4099", "late"});
  EXPECT_EQ(strict.status, 1);
  EXPECT_EQ(strict.out.size(), 4 * (late.size() - 13)) << "the output stops at the error";
  EXPECT_NE(strict.err.find("at byte " + std::to_string(late.size() - 9)), std::string::npos) << strict.err;
}

// Every chunk size gives the CPU backend's bytes (SPEC: output never depends on chunk size or
// backend): 16 bytes (the minimum) and odd sizes on a small file, then 16 MiB to 256 MiB on a
// file larger than the largest chunk when the suite runs on the GPU (300 MiB; 24 MiB on the CPU
// backend, where it only repeats the chunk-invariance tests and CI time matters). Outputs are
// compared by digest so that a GiB of UTF-32 need not sit in memory.
TEST_F(pipeline, ChunkSizesFrom16BytesTo256MiBEqualTheCpu) {
  const auto digests = [&](const std::string& file, const std::string& backend, const std::string& chunk) {
    const std::string common = " --backend=" + backend + (chunk.empty() ? "" : " --chunk-size " + chunk);
    return shell("for c in 'decode --errors=replace' 'validate --replace -q' 'stats --json --top 5'; do"
                 " \"$GUTF8\" $c" + common + " " + file + " | md5sum; done; \"$GUTF8\" validate --json" +
                 common + " " + file);
  };
  write("small", text_with_errors(200000 + 3, 5));
  const result small_cpu = digests("small", "cpu", "");
  ASSERT_EQ(std::count(small_cpu.out.begin(), small_cpu.out.end(), '\n'), 4) << small_cpu.out;  // 3 digests + JSON
  for (const char* chunk : {"16", "17", "4099", "1M"}) {
    SCOPED_TRACE(chunk);
    const result r = digests("small", test_backend(), chunk);
    EXPECT_EQ(r.status, 1) << r.err;  // the last command: validate of invalid input
    EXPECT_EQ(r.out, small_cpu.out);
  }
  const std::size_t big = test_backend() == "cuda" ? (std::size_t{300} << 20) + 5 : (std::size_t{24} << 20) + 5;
  write("big", text_with_errors(big, 6));
  const result big_cpu = digests("big", "cpu", "");
  for (const char* chunk : {"16M", "100M", "256M"}) {
    SCOPED_TRACE(chunk);
    const result r = digests("big", test_backend(), chunk);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, big_cpu.out);
  }
}

// A file far larger than the pipeline's buffers streams through in bounded memory: a 1 GiB
// sparse file (all U+0000, then text with errors) decoded (4 GiB of output), repaired to
// /dev/null and validated keeps the process under 512 MiB resident (the chunk rings hold ~200 MiB). The bound
// is one GPU's: each GPU in use adds its lanes' page-locked buffers and its context (docs/SPEC.md),
// so the GPU is named, also where the suite runs with --device all.
TEST_F(pipeline, LargeFileStreamsInBoundedMemory) {
  const std::uint64_t hole = std::uint64_t{1} << 30;
  const std::string tail = text_with_errors(std::size_t{1} << 20, 8);
  {
    std::ofstream f(dir_ / "huge", std::ios::binary);
    f.seekp(static_cast<std::streamoff>(hole));
    f.write(tail.data(), static_cast<std::streamsize>(tail.size()));
  }
  redirect to_null;
  to_null.stdout_path = "/dev/null";
  const result d = run({"decode", "--errors=replace", "--device", "0", "huge"}, to_null);
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_GT(d.max_rss_kib, 0);
  RecordProperty("decode_max_rss_kib", std::to_string(d.max_rss_kib));
  EXPECT_LT(d.max_rss_kib, 1L << 19) << "decode peak RSS " << d.max_rss_kib << " KiB";
  const result v = run({"validate", "--replace", "-q", "--device", "0", "huge"}, to_null);
  EXPECT_EQ(v.status, 1) << v.err;
  EXPECT_LT(v.max_rss_kib, 1L << 19) << "validate --replace peak RSS " << v.max_rss_kib << " KiB";
  // Plain validate keeps the file's pages of its pieces in flight: 16 workers' window, more than here.
  const result w = run({"validate", "-q", "--threads", "16", "--device", "0", "huge"}, to_null);
  EXPECT_EQ(w.status, 1) << w.err;
  EXPECT_LT(w.max_rss_kib, 1L << 19) << "validate peak RSS " << w.max_rss_kib << " KiB";
}

std::uint64_t json_bytes(const std::string& json) {
  const auto at = json.find("\"bytes\":");
  return at == std::string::npos ? 0 : std::stoull(json.substr(at + 8));
}

TEST_F(pipeline, StandardInputKeepsItsOffset) {
  const std::string text = std::string(5, 'x') + text_with_errors(12u << 20, 2);
  write("big", text);
  const std::string backend = "--backend=" + test_backend();
  // dd takes exactly 5 bytes; gutf8 must start where dd stopped, even with parallel reads.
  const result r = shell("(dd bs=5 count=1 status=none >/dev/null; \"$GUTF8\" validate " + backend +
                         " --json -) < big");
  EXPECT_EQ(json_bytes(r.out), text.size() - 5) << r.out << r.err;
}

TEST_F(pipeline, StrictStopEndsEarlyAndWritesThePrefix) {
  std::string text = std::string(3u << 20, 'a') + "\xFF" + std::string(20u << 20, 'b');
  write("bad", text);
  const result r = run({"decode", "--chunk-size", "1M", "bad"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.size(), std::size_t{4} * (3u << 20));
  EXPECT_NE(r.err.find("at byte " + std::to_string(3u << 20)), std::string::npos) << r.err;
}

TEST_F(pipeline, VerboseNamesTheGpuStages) {
  write("x", "abc");
  const result r = run({"decode", "--verbose", "x"});
  EXPECT_EQ(r.status, 0);
  for (const char* stage : {"read", "H2D", "kernels", "D2H", "write"})
    EXPECT_NE(r.err.find(stage), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gutf8::cli_test
