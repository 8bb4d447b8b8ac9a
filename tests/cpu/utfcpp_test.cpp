// utfcpp as a second oracle, for well-formed input only (its error handling differs from
// maximal subparts, so it says nothing about invalid input).
#include <gtest/gtest.h>
#include <utf8.h>

#include <iterator>

#include "check.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;

TEST(Utfcpp, DecodeAgreesOnValidText) {
  auto g = rng(30);
  for (const std::size_t size : boundary_sizes(16, 6)) {
    const std::string text = random_text(g, size + pick(g, 0, 5000), 0.0);
    ASSERT_TRUE(utf8::is_valid(text.begin(), text.end()));
    std::u32string expected;
    utf8::utf8to32(text.begin(), text.end(), std::back_inserter(expected));
    summary info;
    EXPECT_EQ(gutf8::decode(text, error_policy::strict, &info), expected);
    EXPECT_TRUE(info.valid());
    EXPECT_EQ(info.bytes, text.size());
    EXPECT_EQ(gutf8::stats(bytes(text)).code_points, expected.size());
  }
}

TEST(Utfcpp, EncodeAgreesOnScalarValues) {
  auto g = rng(31);
  for (const std::size_t count : boundary_sizes(16, 6)) {
    std::u32string wide;
    for (std::size_t i = 0; i < count; ++i) wide += random_scalar(g);
    std::string expected;
    utf8::utf32to8(wide.begin(), wide.end(), std::back_inserter(expected));
    summary info;
    EXPECT_EQ(str(gutf8::encode(wide, error_policy::strict, &info)), expected);
    EXPECT_TRUE(info.valid());
  }
}

TEST(Utfcpp, EveryScalarValueEncodesAndDecodes) {
  std::u32string all;
  for (char32_t c = 0; c <= 0x10FFFF; ++c)
    if (c < 0xD800 || c > 0xDFFF) all += c;
  std::string expected;
  utf8::utf32to8(all.begin(), all.end(), std::back_inserter(expected));
  summary info;
  const std::string narrow = str(gutf8::encode(all, error_policy::strict, &info));
  EXPECT_TRUE(info.valid());
  EXPECT_TRUE(same_bytes(narrow, expected));
  EXPECT_EQ(gutf8::decode(narrow, error_policy::strict, &info), all);
  EXPECT_TRUE(info.valid());
}

}  // namespace
