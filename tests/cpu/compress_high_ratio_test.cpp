// High-ratio input in bounded memory: about 1 GiB of one repeated three-byte character, compressed
// by the format's tool from its standard input (never written out whole), streams through the
// decompressor's fixed buffers: the peak resident memory over the decompression stays below 64 MiB
// (the process's high-water mark is reset before it through /proc/self/clear_refs).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "compress_support.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;

constexpr char character[] = "\xE8\xAA\x9E";           // U+8A9E
constexpr std::uint64_t run_bytes = 3ull * 357913941;  // 1 GiB less one byte, whole characters
constexpr std::int64_t memory_bound_kib = 64 * 1024;

// kB of the status field (VmRSS, VmHWM) of this process.
std::int64_t status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(field + ":")) return std::stoll(line.substr(field.size() + 1));
  return -1;
}

// The run of `bytes` bytes of the character, through the tool (with options) into path.
void compress_run(const std::string& command, const std::string& path, std::uint64_t bytes) {
  std::string block;
  for (int k = 0; k < (1 << 18); ++k) block += character;
  FILE* p = popen((command + " > " + path).c_str(), "w");
  ASSERT_NE(p, nullptr);
  for (std::uint64_t left = bytes; left > 0;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
    ASSERT_EQ(std::fwrite(block.data(), 1, n, p), n);
    left -= n;
  }
  ASSERT_EQ(pclose(p), 0) << command;
}

class CompressHighRatio : public testing::TestWithParam<format> {};

TEST_P(CompressHighRatio, OneGiBOfOneCharacterInBoundedMemory) {
  const format f = GetParam();
  temp_dir d;
  const std::string path = d.file("run").string();
  // xz at -0 and bzip2 in 32 MiB streams, concatenated: their tools take minutes over 1 GiB otherwise.
  std::uint64_t copies = 1, bytes = run_bytes;
  if (f == format::bzip2) copies = 32, bytes = run_bytes / 3 / copies * 3;
  compress_run(compress_command(f) + (f == format::xz ? " -0" : ""), path, bytes);
  if (HasFatalFailure()) return;
  const std::string one = read_file(path);
  ASSERT_LT(one.size(), bytes / 200) << "a high ratio";

  {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.close();
    ASSERT_TRUE(clear) << "cannot reset the peak RSS through /proc/self/clear_refs";
  }
  const std::int64_t before = status_kib("VmRSS");
  std::uint64_t copy = 0, at = 0;
  cz::decompressor dec;
  dec.open(f, [&](std::span<std::uint8_t> b) -> std::size_t {  // the copies one after another
    if (at == one.size() && ++copy < copies) at = 0;
    const std::size_t n = std::min(b.size(), one.size() - at);
    std::copy_n(one.data() + at, n, b.data());
    at += n;
    return n;
  });
  std::vector<std::uint8_t> out(65537);
  std::uint64_t total = 0, wrong = 0;
  for (std::size_t n; (n = dec.read(out)) > 0; total += n)
    for (std::size_t k = 0; k < n; ++k) wrong += out[k] != static_cast<std::uint8_t>(character[(total + k) % 3]);
  const std::int64_t peak = status_kib("VmHWM");
  EXPECT_EQ(total, bytes * copies);
  EXPECT_EQ(wrong, 0u);
  EXPECT_LT(peak - before, memory_bound_kib) << "peak " << peak << " kB, " << before << " kB before";
  RecordProperty("peak_rss_growth_kib", std::to_string(peak - before));
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressHighRatio, testing::ValuesIn(all_formats), param_name);

}  // namespace
