// Helpers of the compression tests (src/compress): the standard tools as oracles (run through the
// shell on temporary files), multilingual text from corpus/sample and random bytes, and the
// decompressor driven with any chunking of its input and output.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "compress/decompressor.hpp"
#include "compress/format.hpp"
#include "support/random.hpp"

namespace gutf8::test::compress {

namespace cz = gutf8::internal::compress;
namespace fs = std::filesystem;

inline constexpr cz::format all_formats[] = {cz::format::gzip, cz::format::zstd, cz::format::xz, cz::format::bzip2,
                                             cz::format::lz4};

inline std::span<const std::uint8_t> ubytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A temporary directory, removed with its files.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "gutf8_compress_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] fs::path file(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
inline void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A shell command's standard output and exit status (stderr is dropped).
struct run_result {
  std::string out;
  int status = -1;
};
inline run_result shell(const std::string& command) {
  run_result r;
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return r;
  std::vector<char> buf(1 << 16);
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::string tool(cz::format f) { return std::string(cz::name(f)); }
inline std::string param_name(const testing::TestParamInfo<cz::format>& p) { return tool(p.param); }

// A whole file of `size` bytes as one part.
inline cz::part whole(std::size_t size) {
  cz::part p;
  p.size = size;
  return p;
}
// The tool's compress command at its default level, from stdin to stdout.
inline std::string compress_command(cz::format f) { return tool(f) + " -q -c"; }
inline std::string decompress_command(cz::format f) { return tool(f) + " -q -d -c"; }

// The text compressed by the format's tool (extra: more options, e.g. "--block-size=65536").
inline std::string tool_compress(cz::format f, const std::string& text, const std::string& extra = "") {
  temp_dir d;
  write_file(d.file("in"), text);
  const run_result r = shell(compress_command(f) + " " + extra + " < " + d.file("in").string());
  EXPECT_EQ(r.status, 0) << tool(f) << " failed to compress";
  return r.out;
}

// What the format's tool makes of the compressed bytes: its output and whether it accepted them
// (gzip's "trailing garbage ignored" warning, exit 2, counts as accepted, as for gzip -q).
struct tool_verdict {
  std::string text;
  bool ok = false;
};
inline tool_verdict tool_decompress(cz::format f, const std::string& compressed) {
  temp_dir d;
  write_file(d.file("in"), compressed);
  const run_result r = shell(decompress_command(f) + " < " + d.file("in").string());
  return {r.out, r.status == 0 || (f == cz::format::gzip && r.status == 2)};
}

// Multilingual text (corpus/sample, every script) from a seeded offset, `size` bytes.
inline const std::string& corpus() {
  static const std::string all = [] {
    std::string s;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(GUTF8_SOURCE_DIR) / "corpus" / "sample"))
      files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) s += read_file(p);
    return s;
  }();
  return all;
}
inline std::string text(std::size_t size, std::uint64_t seed) {
  const std::string& c = corpus();
  std::string s;
  for (std::size_t at = seed * 7919 % c.size(); s.size() < size; at = 0)
    s.append(c, at, std::min(size - s.size(), c.size() - at));
  return s;
}
inline std::string random_bytes(std::size_t size, std::uint64_t seed) {
  auto g = rng(seed);
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>(g() >> 56);
  return s;
}

// Split points of s that fall inside multi-byte characters (after a lead byte), `count` of them.
inline std::vector<std::size_t> inside_characters(const std::string& s, std::size_t count) {
  std::vector<std::size_t> cuts;
  for (std::size_t k = 1; k <= count; ++k) {
    std::size_t at = s.size() * k / (count + 1);
    while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) != 0x80) ++at;
    if (at < s.size() && at > (cuts.empty() ? 0 : cuts.back())) cuts.push_back(at);
  }
  return cuts;
}
inline std::vector<std::string> cut(const std::string& s, const std::vector<std::size_t>& at) {
  std::vector<std::string> pieces;
  std::size_t from = 0;
  for (std::size_t a : at) {
    pieces.push_back(s.substr(from, a - from));
    from = a;
  }
  pieces.push_back(s.substr(from));
  return pieces;
}

// A byte_source that hands out (a copy of) the bytes `chunk` at a time.
inline cz::byte_source chunked(std::string bytes, std::size_t chunk) {
  return [bytes = std::move(bytes), chunk, at = std::size_t{0}](std::span<std::uint8_t> b) mutable {
    const std::size_t n = std::min({chunk, b.size(), bytes.size() - at});
    std::copy_n(bytes.data() + at, n, b.data());
    at += n;
    return n;
  };
}

// Everything a decompressor gives, read out_chunk bytes at a time.
inline std::string drain(cz::decompressor& d, std::size_t out_chunk) {
  std::string text;
  std::vector<std::uint8_t> buf(out_chunk);
  for (std::size_t n; (n = d.read(buf)) > 0;) text.append(reinterpret_cast<const char*>(buf.data()), n);
  return text;
}

// The compressed bytes decompressed in order, fed in_chunk bytes at a time, read out_chunk at a time.
inline std::string decompress(cz::format f, const std::string& compressed, std::size_t in_chunk,
                              std::size_t out_chunk) {
  cz::decompressor d;
  d.open(f, chunked(compressed, in_chunk));
  return drain(d, out_chunk);
}

// The (input, output) chunk sizes every decoding runs with: tiny, odd, around a page, past 64 KiB.
inline constexpr std::pair<std::size_t, std::size_t> chunkings[] = {
    {1, 65537}, {7, 4093}, {4093, 7}, {65537, 1}, {65537, 65537}};

}  // namespace gutf8::test::compress
