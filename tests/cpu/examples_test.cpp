// Hand-checked cases: Unicode 3.9 Tables 3-8 to 3-12, the SPEC example, each error kind,
// positions, policies and the API's error paths.
#include <gtest/gtest.h>

#include "codec/auto_model.hpp"

#include <string>

#include "generators.hpp"
#include "gutf8/gutf8.hpp"

namespace {

using gutf8::error_kind;
using gutf8::error_policy;
using gutf8::test::bytes;
using gutf8::test::str;

std::u32string replaced(const std::string& in) { return gutf8::decode(in, error_policy::replace); }

constexpr char32_t R = U'\uFFFD';

TEST(UnicodeExamples, Table3_8_MaximalSubparts) {
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  EXPECT_EQ(replaced(in), (std::u32string{U'a', R, R, R, U'b', R, U'c', R, R, U'd'}));
}

TEST(UnicodeExamples, Table3_9_NonShortestForms) {
  const std::string in = "\xC0\xAF\xE0\x80\xBF\xF0\x81\x82\x41";
  EXPECT_EQ(replaced(in), (std::u32string{R, R, R, R, R, R, R, R, U'A'}));
}

TEST(UnicodeExamples, Table3_10_Surrogates) {
  const std::string in = "\xED\xA0\x80\xED\xBF\xBF\xED\xAF\x41";
  EXPECT_EQ(replaced(in), (std::u32string{R, R, R, R, R, R, R, R, U'A'}));
}

TEST(UnicodeExamples, Table3_11_OtherIllFormed) {
  const std::string in = "\xF4\x91\x92\x93\xFF\x41\x80\xBF\x42";
  EXPECT_EQ(replaced(in), (std::u32string{R, R, R, R, R, U'A', R, R, U'B'}));
}

TEST(UnicodeExamples, Table3_12_TruncatedSequences_SpecExample) {
  const std::string in = "\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41";
  EXPECT_EQ(replaced(in), (std::u32string{R, R, R, R, U'A'}));
  const gutf8::summary s = gutf8::validate(bytes(in));
  EXPECT_EQ(s.errors, 4u);
  EXPECT_EQ(s.bytes, in.size());
  ASSERT_TRUE(s.first_error);
  EXPECT_EQ(s.first_error->offset, 0u);
  EXPECT_EQ(s.first_error->kind, error_kind::truncated);
}

TEST(Kinds, EachErrorKind) {
  const auto kind = [](const std::string& in) { return gutf8::validate(bytes(in)).first_error->kind; };
  EXPECT_EQ(kind("a\x80"), error_kind::stray_continuation);
  EXPECT_EQ(kind("\xC0\x80"), error_kind::invalid_byte);
  EXPECT_EQ(kind("\xC1\xBF"), error_kind::invalid_byte);
  EXPECT_EQ(kind("\xFF"), error_kind::invalid_byte);
  EXPECT_EQ(kind("\xF5\x80\x80\x80"), error_kind::invalid_byte);
  EXPECT_EQ(kind("\xE0\x9F\xBF"), error_kind::overlong);
  EXPECT_EQ(kind("\xF0\x8F\xBF\xBF"), error_kind::overlong);
  EXPECT_EQ(kind("\xED\xA0\x80"), error_kind::surrogate);
  EXPECT_EQ(kind("\xF4\x90\x80\x80"), error_kind::too_large);
  EXPECT_EQ(kind("\xE2\x82"
                 "A"),
            error_kind::truncated);
  EXPECT_EQ(kind("\xE2\x82"), error_kind::truncated_at_end);
  EXPECT_EQ(kind("\xF0\x9F\x98"), error_kind::truncated_at_end);
  for (auto k : {error_kind::none, error_kind::stray_continuation, error_kind::invalid_byte,
                 error_kind::overlong, error_kind::surrogate, error_kind::too_large, error_kind::truncated,
                 error_kind::truncated_at_end, error_kind::ragged_tail})
    EXPECT_FALSE(gutf8::describe(k).empty());
}

TEST(Boundaries, ValidExtremes) {
  const std::string in =
      "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF"
      "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF";
  EXPECT_EQ(replaced(in),
            (std::u32string{0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF}));
  EXPECT_TRUE(gutf8::validate(bytes(in)).valid());
}

TEST(Policies, StrictReplaceDrop) {
  const std::string in =
      "ab\xE2\x82"
      "cd\xFF";
  gutf8::summary info;
  EXPECT_EQ(gutf8::decode(in, error_policy::strict, &info), U"ab");
  EXPECT_EQ(info.errors, 1u);
  EXPECT_EQ(info.bytes, 2u);
  EXPECT_EQ(info.first_error->offset, 2u);
  EXPECT_EQ(gutf8::decode(in, error_policy::drop, &info), U"abcd");
  EXPECT_EQ(info.errors, 2u);
  EXPECT_EQ(info.bytes, in.size());
  EXPECT_EQ(str(gutf8::repair(in, error_policy::replace)), str(u8"ab\uFFFDcd\uFFFD"));
  EXPECT_EQ(str(gutf8::repair(in, error_policy::drop)), str(u8"abcd"));
  EXPECT_EQ(str(gutf8::repair(in, error_policy::strict, &info)), str(u8"ab"));
  EXPECT_EQ(info.bytes, 2u);
}

TEST(Positions, LineAndByteColumn) {
  const std::string in = "first\nsecond line\n\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xFF tail\n";
  const gutf8::summary s = gutf8::validate(bytes(in));
  ASSERT_TRUE(s.first_error);
  EXPECT_EQ(s.first_error->offset, in.find('\xFF'));
  EXPECT_EQ(s.first_error->line, 3u);
  EXPECT_EQ(s.first_error->column, 11u);  // bytes: é(2) t é(2) space €(3) space, then FF
  const gutf8::summary first = gutf8::validate(bytes(std::string("\x80")));
  EXPECT_EQ(first.first_error->line, 1u);
  EXPECT_EQ(first.first_error->column, 1u);
}

TEST(Encode, ValuesAndErrors) {
  EXPECT_EQ(str(gutf8::encode(U"a\u00E9\u20AC\U0001F600", error_policy::strict)),
            str(u8"a\u00E9\u20AC\U0001F600"));
  const std::u32string bad{U'a', char32_t(0xD800), U'\n', char32_t(0x110000), U'b'};
  gutf8::summary info;
  EXPECT_EQ(str(gutf8::encode(bad, error_policy::replace, &info)), str(u8"a\uFFFD\n\uFFFDb"));
  EXPECT_EQ(info.errors, 2u);
  EXPECT_EQ(info.first_error->offset, 4u);
  EXPECT_EQ(info.first_error->kind, error_kind::surrogate);
  EXPECT_EQ(info.first_error->column, 2u);  // code points
  EXPECT_EQ(str(gutf8::encode(bad, error_policy::drop)), str(u8"a\nb"));
  EXPECT_EQ(str(gutf8::encode(bad, error_policy::strict, &info)), str(u8"a"));
  EXPECT_EQ(info.bytes, 4u);

  const std::u32string large{U'x', U'\n', U'y', char32_t(0x7FFFFFFF)};
  EXPECT_EQ(str(gutf8::encode(large, error_policy::drop, &info)), str(u8"x\ny"));
  EXPECT_EQ(info.first_error->kind, error_kind::too_large);
  EXPECT_EQ(info.first_error->line, 2u);
  EXPECT_EQ(info.first_error->column, 2u);
}

TEST(Encode, RaggedTail) {
  const std::string in = std::string("A\0\0\0B\0", 6);
  std::u8string out(gutf8::max_encoded_size(in.size()), u8'\0');
  const auto r = gutf8::encode(bytes(in), std::span(out), error_policy::replace);
  EXPECT_EQ(str(out.substr(0, r.written)), str(u8"A\uFFFD"));
  EXPECT_EQ(r.input.errors, 1u);
  EXPECT_EQ(r.input.bytes, 6u);
  EXPECT_EQ(r.input.first_error->offset, 4u);
  EXPECT_EQ(r.input.first_error->kind, error_kind::ragged_tail);
}

TEST(Stats, Counts) {
  const std::string in = "a\xC3\xA9\n\xE2\x82\xAC\xF0\x9F\x98\x80\xFF\n";
  const gutf8::text_stats s = gutf8::stats(bytes(in));
  EXPECT_EQ(s.code_points, 6u);
  EXPECT_EQ(s.lines, 2u);
  EXPECT_EQ(s.by_length, (std::array<std::uint64_t, 4>{3, 1, 1, 1}));
  EXPECT_EQ(s.input.errors, 1u);
  EXPECT_EQ(s.input.bytes, in.size());
}

TEST(Api, Errors) {
  std::u32string small(2, U'\0');
  try {
    gutf8::decode(bytes("abc"), std::span(small), error_policy::replace);
    FAIL() << "no exception";
  } catch (const gutf8::error& e) {
    EXPECT_EQ(e.code(), gutf8::errc::output_too_small);
  }
  gutf8::options cuda;
  cuda.backend = gutf8::backend::cuda;
  if (!gutf8::cuda_available()) {
    try {
      gutf8::validate(bytes("abc"), cuda);
      FAIL() << "no exception";
    } catch (const gutf8::error& e) {
      EXPECT_EQ(e.code(), gutf8::errc::no_device);
    }
    EXPECT_THROW(
        gutf8::stream(gutf8::stream_config{gutf8::operation::decode, error_policy::strict, false, cuda}),
        gutf8::error);
  }
  gutf8::stream plain({gutf8::operation::validate});
  EXPECT_THROW((void)plain.top(3), gutf8::error);
}

TEST(Api, EmptyInput) {
  EXPECT_TRUE(gutf8::validate({}).valid());
  EXPECT_EQ(gutf8::decode("", error_policy::strict), U"");
  EXPECT_EQ(str(gutf8::encode(U"", error_policy::strict)), str(u8""));
  EXPECT_EQ(gutf8::stats({}).code_points, 0u);
}

TEST(Api, ByteOrderMarkIsKept) {
  EXPECT_EQ(gutf8::decode("\xEF\xBB\xBFx", error_policy::strict), U"\uFEFFx");
}

}  // namespace

// backend::auto_select's size threshold for streams (src/codec/auto_model.hpp): the GPU must repay its start-up against
// the CPU backend's threads, so the threshold grows with them and is what the measured model
// says for the thread counts it was fitted to.
TEST(AutoBackend, GpuThresholdFollowsTheMeasuredModel) {
  EXPECT_LT(gutf8::internal::auto_gpu_threshold(1), gutf8::internal::auto_gpu_threshold(2));
  EXPECT_LT(gutf8::internal::auto_gpu_threshold(2), gutf8::internal::auto_gpu_threshold(4));
  EXPECT_EQ(gutf8::internal::auto_gpu_threshold(0), gutf8::internal::auto_gpu_threshold(1));
  EXPECT_NEAR(static_cast<double>(gutf8::internal::auto_gpu_threshold(1)), 1.22e9, 0.05e9);
  EXPECT_NEAR(static_cast<double>(gutf8::internal::auto_gpu_threshold(2)), 3.4e9, 0.1e9);
  EXPECT_NEAR(static_cast<double>(gutf8::internal::auto_gpu_threshold(4)), 27.6e9, 1e9);
  // From 5 threads on the CPU backend decodes faster than the GPU path on that host.
  EXPECT_LT(gutf8::internal::auto_gpu_threshold(3), gutf8::internal::auto_gpu_threshold(4));
  for (const unsigned threads : {5u, 8u, 16u, 1000u}) EXPECT_EQ(gutf8::internal::auto_gpu_threshold(threads), UINT64_MAX);
  // Below the threshold nothing is page-locked: CUDA is not even started for small inputs.
  gutf8::options small;
  small.threads = 1;
  small.size_hint = gutf8::internal::auto_gpu_threshold(1) - 1;
  EXPECT_FALSE(gutf8::host_buffer(64, small).pinned());
}
