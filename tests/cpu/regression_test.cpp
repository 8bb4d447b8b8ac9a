// Fuzzing findings and the fuzz seed corpus, replayed by the ordinary test suite (any
// compiler, no libFuzzer): every file of tests/fuzz/corpus/<target>/ goes through the same
// checks as the libFuzzer target (tests/fuzz/checks.hpp). A finding is kept there as
// crash-<what> (the reproducer libFuzzer wrote), and, when it says something a reader should
// see, as a named case below too. docs/RELIABILITY.md lists them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "fuzz/checks.hpp"
#include "fuzz/compress_checks.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class Check>
void replay(const char* target, Check check) {
  const fs::path dir = fs::path(GUTF8_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / target;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 10u) << "seed corpus missing? run tests/fuzz/make_seeds.py";
  for (const fs::path& f : files) {
    const std::vector<std::uint8_t> data = read_file(f);
    EXPECT_EQ(check(std::span<const std::uint8_t>(data)), "") << f.filename();
  }
}

TEST(FuzzCorpus, Utf8SeedsAndFindings) { replay("utf8", gutf8::fuzz::check_utf8); }
TEST(FuzzCorpus, EncodeSeedsAndFindings) { replay("encode", gutf8::fuzz::check_encode); }
TEST(FuzzCorpus, StreamSeedsAndFindings) { replay("stream", gutf8::fuzz::check_stream); }
TEST(FuzzCorpus, DecompressSeedsAndFindings) { replay("decompress", gutf8::fuzz::check_decompress); }

std::span<const std::uint8_t> view(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The checks themselves must be able to fail: a wrong expectation has to be reported.
TEST(FuzzChecks, OraclesAgreeOnHandCheckedCases) {
  using gutf8::error_kind;
  const std::string spec = "\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41";
  EXPECT_EQ(gutf8::fuzz::check_utf8(view(spec)), "");
  const auto units = gutf8::ref::units(view(spec));
  ASSERT_EQ(units.size(), 5u);
  EXPECT_EQ(gutf8::fuzz::utf8_kind(view(spec), units[0]), error_kind::truncated);
  const std::string cut = "ok\xF0\x9F\x98";
  EXPECT_EQ(gutf8::fuzz::utf8_kind(view(cut), gutf8::ref::units(view(cut)).back()), error_kind::truncated_at_end);
  const std::string overlong = "\xE0\x9F\xBF";
  EXPECT_EQ(gutf8::fuzz::utf8_kind(view(overlong), gutf8::ref::units(view(overlong)).front()), error_kind::overlong);

  const std::string u32("\x41\x00\x00\x00\x00\xD8\x00\x00\x0A\x00\x00\x00\x00\x00\x11\x00\x42", 17);
  const auto e = gutf8::fuzz::expect_encode(view(u32), gutf8::error_policy::replace);
  EXPECT_EQ(e.out, "A\xEF\xBF\xBD\n\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(e.errors, 3u);
  ASSERT_TRUE(e.first);
  EXPECT_EQ(e.first->offset, 4u);
  EXPECT_EQ(e.first->kind, error_kind::surrogate);
  const auto strict = gutf8::fuzz::expect_encode(view(u32), gutf8::error_policy::strict);
  EXPECT_EQ(strict.out, "A");
  EXPECT_EQ(strict.bytes, 4u);
  EXPECT_EQ(gutf8::fuzz::check_encode(view(u32)), "");

  // A stream input whose header asks for 2-byte chunks of the SPEC example.
  const std::string s = std::string("\x01\x02", 2) + spec;
  EXPECT_EQ(gutf8::fuzz::check_stream(view(s)), "");
  const gutf8::fuzz::stream_input si = gutf8::fuzz::parse_stream_input(view(s));
  EXPECT_EQ(si.lengths, std::vector<std::size_t>{2});
  EXPECT_EQ(si.text.size(), spec.size());

  gutf8::fuzz::report r;
  r.context("self-test");
  r.eq("one", 1, 2);
  EXPECT_NE(r.str(), "");
}

}  // namespace
