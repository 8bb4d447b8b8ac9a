// String columns against CPython itself: bytes.decode('utf-8', 'replace' | 'ignore') per row
// and len() of the result, computed by the system's python3 on the same rows. Skips, with the
// reason printed, where python3 cannot be run.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "cpu/generators.hpp"
#include "support/arrow_columns.hpp"

namespace gutf8::test {
namespace {

// Rows are written as a 4-byte little-endian length and the bytes; python3 answers in the same
// framing: for each row its 'replace' text, its 'ignore' text (both as UTF-8) and two lengths.
constexpr const char* oracle = R"(
import struct, sys
data = open(sys.argv[1], 'rb').read()
out, i = [], 0
while i < len(data):
    (n,) = struct.unpack_from('<I', data, i); row = data[i + 4:i + 4 + n]; i += 4 + n
    for policy in ('replace', 'ignore'):
        text = row.decode('utf-8', policy)
        b = text.encode('utf-8')
        out.append(struct.pack('<II', len(b), len(text)) + b)
open(sys.argv[2], 'wb').write(b''.join(out))
)";

std::uint32_t read_u32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}

TEST(ColumnsCPython, ReplaceAndIgnoreRowByRow) {
  const auto dir = std::filesystem::temp_directory_path() / ("gutf8_cpython_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto g = rng(2024);
  std::vector<row> rows;
  std::uniform_int_distribution<std::size_t> size(0, 90);
  for (int i = 0; i < 3001; ++i) rows.push_back(random_text(g, size(g), i % 2 == 0 ? 0.1 : 0.0));
  for (const char* edge : {"\xE2\x82", "\xAC", "\xF0\x9F\x98", "\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xC0\xAF"})
    rows.push_back(std::string(edge));
  {
    std::ofstream in(dir / "rows.bin", std::ios::binary);
    for (const row& r : rows) {
      const auto n = static_cast<std::uint32_t>(r->size());
      in.write(reinterpret_cast<const char*>(&n), 4).write(r->data(), n);
    }
    std::ofstream(dir / "oracle.py") << oracle;
  }
  const std::string command = "python3 " + (dir / "oracle.py").string() + " " + (dir / "rows.bin").string() + " " +
                              (dir / "expected.bin").string() + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "python3 could not be run: " << command;
  }
  std::ifstream answer(dir / "expected.bin", std::ios::binary);
  const std::string expected{std::istreambuf_iterator<char>(answer), std::istreambuf_iterator<char>()};
  std::filesystem::remove_all(dir);

  std::vector<row> replaced, ignored;
  std::vector<std::optional<std::int64_t>> replaced_len, ignored_len;
  for (std::size_t at = 0; at < expected.size();) {
    const std::uint32_t n = read_u32(expected, at), chars = read_u32(expected, at + 4);
    (replaced.size() == ignored.size() ? replaced : ignored).push_back(expected.substr(at + 8, n));
    (replaced_len.size() == ignored_len.size() ? replaced_len : ignored_len).push_back(chars);
    at += 8 + n;
  }
  ASSERT_EQ(replaced.size(), rows.size());
  ASSERT_EQ(ignored.size(), rows.size());

  for (const bool large : {false, true}) {
    arrow_strings in(rows, arrow_layout{large, true, 2, 1, "\xF0"});
    const column r = make_valid(in.array(), in.schema(), error_policy::replace);
    EXPECT_EQ(strings_of(r.array(), r.schema()), replaced);
    const column d = cast_to_utf8(in.array(), in.schema(), on_invalid::drop);
    EXPECT_EQ(strings_of(d.array(), d.schema()), ignored);
    const column rc = count_code_points(in.array(), in.schema(), on_invalid::replace);
    EXPECT_EQ(ints_of(rc.array(), rc.schema()), replaced_len);
    const column dc = count_code_points(in.array(), in.schema(), on_invalid::drop);
    EXPECT_EQ(ints_of(dc.array(), dc.schema()), ignored_len);
  }
}

}  // namespace
}  // namespace gutf8::test
