// The row-segment logic of the GPU column kernels (kernels/utf8/row_units.hpp), run on the host:
// a row cut into segments of any size, each walking the units that start in it, must give the
// one-shot API's error count, first error and repaired text for that row alone.
#include <gtest/gtest.h>

#include <string>

#include "cpu/generators.hpp"
#include "support/arrow_columns.hpp"
#include "utf8/row_units.hpp"

namespace gutf8::test {
namespace {

using namespace gutf8::kern::columns;

struct walked {
  std::uint64_t errors = 0, code_points = 0, first_error = ~std::uint64_t{0};
  error_kind kind = error_kind::none;
  std::string replaced, dropped;
};

walked walk_segments(const std::string& text, std::uint64_t segment) {
  const auto* row = reinterpret_cast<const u8*>(text.data());
  const u64 n = text.size();
  walked w;
  for (u64 k = 0; k * segment < n; ++k) {
    const segment_span span = span_of(row, n, k, segment);
    for (u64 p = span.from; p < span.to;) {
      const unit u = next_unit(row, n, p);
      if (u.kind == error_kind::none) {
        ++w.code_points;
        w.replaced.append(text, p, u.length);
        w.dropped.append(text, p, u.length);
      } else {
        if (w.errors++ == 0) {
          w.first_error = p;
          w.kind = u.kind;
        }
        w.replaced += "\xEF\xBF\xBD";
      }
      p += u.length;
    }
  }
  return w;
}

void expect_row(const std::string& text, std::uint64_t segment) {
  SCOPED_TRACE(testing::Message() << "segment " << segment << " row of " << text.size() << " bytes");
  const walked w = walk_segments(text, segment);
  const summary s = row_summary(text);
  EXPECT_EQ(w.errors, s.errors);
  if (s.first_error) {
    EXPECT_EQ(w.first_error, s.first_error->offset);
    EXPECT_EQ(w.kind, s.first_error->kind);
  }
  EXPECT_EQ(static_cast<std::int64_t>(w.code_points), row_chars(text, error_policy::drop));
  EXPECT_EQ(w.replaced, row_repaired(text, error_policy::replace));
  EXPECT_EQ(w.dropped, row_repaired(text, error_policy::drop));
}

TEST(ColumnSegments, EdgeCasesAtEverySegmentSize) {
  const char* rows[] = {"", "\xE2\x82", "\xAC rest", "\xF0\x9F\x98", "\x80", "\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41",
                        "ok \xF0\x9F\x98\x80", "\xED\xA0\x80", "\xC0\xAF", "\xF4\x90\x80\x80", "x\xFF", "\xE0\x9F\xBF",
                        "\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80", "\xC3\xA9\xC3", "\xBF\xBF\xBF\xBF\xBF"};
  for (const u64 segment : {1u, 2u, 3u, 4u, 5u, 7u, 256u})
    for (const char* r : rows) expect_row(r, segment);
}

TEST(ColumnSegments, RandomRows) {
  auto g = rng(3);
  std::uniform_int_distribution<std::size_t> size(0, 1200);
  for (int i = 0; i < 600; ++i) {
    const std::string text = random_text(g, size(g), i % 3 == 0 ? 0.0 : 0.08);
    for (const u64 segment : {1u, 3u, 4u, 13u, 256u}) expect_row(text, segment);
  }
}

}  // namespace
}  // namespace gutf8::test
