// Inputs of the column benchmarks (bench/cpu/columns.cpp, bench/gpu/columns.cu): Arrow binary
// columns (int32 offsets) of mixed-script rows, clean or with 1% of rows carrying one bad byte.
// Read from $GUTF8_COLUMNS_DIR when set (written by bench/columns_cpu.py, so that gutf8 and
// pyarrow / CPython time the same bytes): manifest.txt lists "NAME" per line, with NAME.offsets
// (int32 LE) and NAME.data beside it. Otherwise generated here with the shapes, scaled
// by $GUTF8_COLUMNS_SCALE (default 1: 10 M rows of ~20 B and of ~200 B, 10 k rows of ~100 KiB).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gutf8/arrow_c_abi.h"
#include "utf8_append.hpp"

namespace gutf8::bench {

struct column_data {
  std::string name;
  std::vector<std::int32_t> offsets;
  std::string data;
  [[nodiscard]] std::int64_t rows() const { return static_cast<std::int64_t>(offsets.size()) - 1; }
};

// A borrowed ArrowArray / ArrowSchema over a column_data (binary, no nulls).
struct arrow_view {
  explicit arrow_view(const column_data& c) {
    buffers[1] = c.offsets.data();
    buffers[2] = c.data.data();
    array = {c.rows(), 0, 0, 3, 0, buffers, nullptr, nullptr, [](ArrowArray* a) { a->release = nullptr; }, nullptr};
    schema = {"z", "", nullptr, 0, 0, nullptr, nullptr, [](ArrowSchema* s) { s->release = nullptr; }, nullptr};
  }
  const void* buffers[3]{};
  ArrowArray array{};
  ArrowSchema schema{};
};

using gutf8::bench::append_utf8;

// Rows of mean_bytes (uniform in [mean/2, 3 mean/2]) of words from several scripts; `dirty` of
// the rows get one byte overwritten by a random byte 80..FF.
inline column_data make_column(std::string name, std::int64_t rows, std::size_t mean_bytes, double dirty,
                               std::uint64_t seed) {
  std::mt19937_64 g(seed);
  constexpr std::uint32_t scripts[][2] = {{'a', 'z'}, {0xE0, 0xFF}, {0x3B1, 0x3C9}, {0x430, 0x44F},
                                          {0x5D0, 0x5EA}, {0x4E00, 0x9FFF}, {0x1F600, 0x1F64F}};
  std::bernoulli_distribution bad(dirty);
  column_data c{std::move(name), {0}, {}};
  c.offsets.reserve(static_cast<std::size_t>(rows) + 1);
  c.data.reserve(static_cast<std::size_t>(rows) * (mean_bytes + 4));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::size_t begin = c.data.size();
    const std::size_t target = mean_bytes / 2 + g() % (mean_bytes + 1);
    while (c.data.size() - begin < target) {
      const auto* script = scripts[g() % std::size(scripts)];
      for (std::size_t n = 1 + g() % 8; n-- > 0;) append_utf8(c.data, script[0] + std::uint32_t(g() % (script[1] - script[0] + 1)));
      c.data += ' ';
    }
    // Back to the target at a sequence start, so 10 M rows of ~200 B stay within int32 offsets.
    std::size_t end = begin + target;
    while (end > begin && (static_cast<unsigned char>(c.data[end]) & 0xC0) == 0x80) --end;
    c.data.resize(end);  // target >= mean / 2 > 4: never empty
    if (bad(g)) c.data[begin + g() % (c.data.size() - begin)] = char(0x80 + g() % 0x80);
    c.offsets.push_back(static_cast<std::int32_t>(c.data.size()));
  }
  return c;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// only: a column's name, to make that one alone (empty: all).
inline std::vector<column_data> bench_columns(const std::string& only = {}) {
  std::vector<column_data> out;
  if (const char* dir = std::getenv("GUTF8_COLUMNS_DIR")) {
    std::ifstream manifest(std::string(dir) + "/manifest.txt");
    for (std::string name; manifest >> name;) {
      const std::string offsets = read_file(std::string(dir) + "/" + name + ".offsets");
      column_data c{name, std::vector<std::int32_t>(offsets.size() / 4), read_file(std::string(dir) + "/" + name + ".data")};
      std::memcpy(c.offsets.data(), offsets.data(), c.offsets.size() * 4);
      out.push_back(std::move(c));
    }
    return out;
  }
  const double scale = std::getenv("GUTF8_COLUMNS_SCALE") ? std::atof(std::getenv("GUTF8_COLUMNS_SCALE")) : 1.0;
  const auto rows = [&](double n) { return static_cast<std::int64_t>(n * scale); };
  const auto add = [&](const std::string& name, std::int64_t n, std::size_t mean, double dirty, unsigned seed) {
    if (only.empty() || only == name) out.push_back(make_column(name, n, mean, dirty, seed));
  };
  for (const double dirty : {0.0, 0.01}) {
    const std::string tag = dirty == 0 ? "_clean" : "_dirty1pct";
    add("short20" + tag, rows(10e6), 20, dirty, 1);
    add("medium200" + tag, rows(10e6), 200, dirty, 2);
    add("long100k" + tag, rows(10e3), 100 << 10, dirty, 3);
  }
  return out;
}

}  // namespace gutf8::bench
