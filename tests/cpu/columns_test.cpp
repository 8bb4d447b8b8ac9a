// String columns on the CPU backend against the one-shot host API applied row by row.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cpu/generators.hpp"
#include "gutf8/columns.hpp"
#include "support/arrow_columns.hpp"

namespace gutf8::test {
namespace {

using std::string;

// Rows that end inside a sequence, start with its tail, carry errors on their first or last
// byte, are empty, or are null with bytes under them that would complete a neighbour.
std::vector<row> edge_rows() {
  return {string("abc"), string("\xE2\x82"), std::nullopt, string("\xAC rest"), string(""),
          string("\xC3\xA9"), string("\xF0\x9F\x98"), string("\x80"), std::nullopt, string(""),
          string("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"), string("ok \xF0\x9F\x98\x80"), string("\xED\xA0\x80"),
          string("\xC0\xAF"), string("\xF4\x90\x80\x80"), std::nullopt, string("x\xFF"), string("\xE0\x9F\xBF"),
          string("plain ascii row"), string("\xEF\xBB\xBF"), string("\xE2"), std::nullopt};
}

struct column_case {
  arrow_layout layout;
  unsigned threads;
};

void check_all_operations(const std::vector<row>& rows, const column_case& c) {
  arrow_strings in(rows, c.layout);
  column_options opt;
  opt.threads = c.threads;
  opt.data_bytes = in.data_bytes();
  opt.first_errors = true;
  const expected_validity ev = expect_validity(rows);

  const row_validity v = is_valid(in.array(), in.schema(), opt);
  EXPECT_EQ(bools_of(v.valid.array(), v.valid.schema()), ev.valid);
  EXPECT_EQ(v.invalid_rows, ev.invalid_rows);
  EXPECT_EQ(v.first, ev.first);
  EXPECT_EQ(ints_of(v.error_offsets.array(), v.error_offsets.schema()), ev.error_offsets);
  EXPECT_EQ(ints_of(v.error_kinds.array(), v.error_kinds.schema()), ev.error_kinds);

  if (ev.first) {
    try {
      validate(in.array(), in.schema(), opt);
      ADD_FAILURE() << "validate accepted an invalid column";
    } catch (const invalid_row& e) {
      EXPECT_EQ((row_error{e.row(), e.offset(), e.kind()}), *ev.first);
    }
  } else {
    EXPECT_NO_THROW(validate(in.array(), in.schema(), opt));
  }

  for (const on_invalid p : {on_invalid::null, on_invalid::replace, on_invalid::drop}) {
    SCOPED_TRACE(static_cast<int>(p));
    const column cast = cast_to_utf8(in.array(), in.schema(), p, opt);
    EXPECT_STREQ(cast.schema().format, c.layout.view ? "vu" : c.layout.large ? "U" : "u");
    EXPECT_EQ(strings_of(cast.array(), cast.schema()), expect_cast(rows, p));
    const column counts = count_code_points(in.array(), in.schema(), p, opt);
    EXPECT_STREQ(counts.schema().format, c.layout.large ? "l" : "i");
    EXPECT_EQ(ints_of(counts.array(), counts.schema()), expect_counts(rows, p));
  }
  for (const on_invalid p : {on_invalid::null, on_invalid::replace, on_invalid::drop}) {
    SCOPED_TRACE(static_cast<int>(p));
    if (c.layout.large) {
      EXPECT_THROW((void)cast_sharing_input(in.array(), in.schema(), p, opt), error);
      continue;
    }
    const column shared = cast_sharing_input(in.array(), in.schema(), p, opt);
    EXPECT_STREQ(shared.schema().format, "vu");
    EXPECT_EQ(strings_of(shared.array(), shared.schema()), expect_cast(rows, p));
  }
  for (const error_policy p : {error_policy::replace, error_policy::drop}) {
    const column repaired = make_valid(in.array(), in.schema(), p, opt);
    EXPECT_EQ(strings_of(repaired.array(), repaired.schema()),
              expect_cast(rows, p == error_policy::replace ? on_invalid::replace : on_invalid::drop));
  }
  if (ev.first) {
    EXPECT_THROW((void)cast_to_utf8(in.array(), in.schema(), on_invalid::raise, opt), invalid_row);
    EXPECT_THROW((void)count_code_points(in.array(), in.schema(), on_invalid::raise, opt), invalid_row);
  } else {
    const column cast = cast_to_utf8(in.array(), in.schema(), on_invalid::raise, opt);
    EXPECT_EQ(strings_of(cast.array(), cast.schema()), rows);
  }
}

std::vector<column_case> layouts() {
  std::vector<column_case> cases;
  for (const bool large : {false, true})
    for (const bool binary : {false, true})
      for (const std::int64_t slice : {0, 5})
        for (const std::int64_t base : {0, 3})
          for (const unsigned threads : {1u, 3u})
            cases.push_back({arrow_layout{large, binary, slice, base, "\xE2\x82"}, threads});
  for (const bool binary : {false, true})
    for (const std::int64_t slice : {0, 5})
      for (const unsigned threads : {1u, 3u})
        cases.push_back({arrow_layout{false, binary, slice, 0, "", true}, threads});
  return cases;
}

class Columns : public ::testing::TestWithParam<column_case> {};

TEST_P(Columns, EdgeRows) { check_all_operations(edge_rows(), GetParam()); }

// Well-formed text cut into rows inside its sequences: the bytes together are valid UTF-8,
// the rows are not.
TEST_P(Columns, ValidBytesSplitInsideSequences) {
  check_all_operations({string("\xE2\x82"), string("\xAC"), string("\xF0\x9F"), string("\x98\x80"), string("ok"),
                        string(""), string("\xC3"), string(""), string("\xA9")},
                       GetParam());
  check_all_operations({string("ab"), string("\xE2\x82"), string("\xAC\xFF"), string("cd"), string("\xF0\x9F\x98"),
                        string(""), string("\x80x\xC3")},
                       GetParam());
}

// Mostly clean text cut into rows at random bytes: rows that end inside sequences next to rows
// with real errors, in every mix the run validation of the CPU backend can meet.
TEST_P(Columns, RandomCuts) {
  auto g = rng(99);
  for (const double defects : {0.0, 0.002, 0.02}) {
    const string text = random_text(g, 200'000, defects);
    std::vector<row> rows;
    std::uniform_int_distribution<std::size_t> cut(0, 40);
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t n = std::min(cut(g), text.size() - at);
      rows.push_back(n == 7 ? std::nullopt : row(text.substr(at, n)));
      at += n;
    }
    check_all_operations(rows, GetParam());
  }
}

TEST_P(Columns, EmptyAndAllNull) {
  check_all_operations({}, GetParam());
  check_all_operations({std::nullopt, std::nullopt, std::nullopt}, GetParam());
  check_all_operations({string(""), string("")}, GetParam());
}

TEST_P(Columns, RandomRows) {
  auto g = rng(21);
  std::vector<row> rows;
  add_random_rows(rows, g, 4999, 300, 0.07, 0.2, 0.05);
  check_all_operations(rows, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Layouts, Columns, ::testing::ValuesIn(layouts()));

// Rows around the 64 KiB run of the clean-data fast path and the thread split.
TEST(ColumnsSizes, RowsAroundRunBoundaries) {
  auto g = rng(7);
  std::vector<row> rows;
  for (const std::size_t n : {65535u, 65536u, 65537u, 1u, 131071u, 3u, 65536u})
    rows.push_back(random_text(g, n, 0.0));
  rows[3] = string("\xE2");  // a short bad row between long clean ones
  string cut = random_text(g, 65534, 0.0) + "\xF0\x9F";  // ends inside a sequence
  rows.push_back(cut);
  rows.push_back(string("\x98\x80tail"));
  for (const unsigned threads : {1u, 2u, 5u}) check_all_operations(rows, {arrow_layout{}, threads});
}

TEST(ColumnsSizes, MillionsOfTinyRows) {
  auto g = rng(11);
  std::vector<row> rows;
  add_random_rows(rows, g, 2'000'003, 4, 0.01, 0.01, 0.5);
  arrow_strings in(rows, arrow_layout{false, true, 1, 2, "\x80"});
  column_options opt;
  const expected_validity ev = expect_validity(rows);
  const row_validity v = is_valid(in.array(), in.schema(), opt);
  EXPECT_EQ(bools_of(v.valid.array(), v.valid.schema()), ev.valid);
  EXPECT_EQ(v.invalid_rows, ev.invalid_rows);
  const column repaired = make_valid(in.array(), in.schema(), error_policy::replace, opt);
  EXPECT_EQ(strings_of(repaired.array(), repaired.schema()), expect_cast(rows, on_invalid::replace));
  const column counts = count_code_points(in.array(), in.schema(), on_invalid::drop, opt);
  EXPECT_EQ(ints_of(counts.array(), counts.schema()), expect_counts(rows, on_invalid::drop));
}

TEST(ColumnsSizes, OneHugeRow) {
  auto g = rng(5);
  const string clean = random_text(g, (std::size_t{48} << 20) + 13, 0.0);
  string dirty = clean;
  dirty[dirty.size() - 1000] = '\xFF';
  for (const string* text : std::initializer_list<const string*>{&clean, &dirty}) {
    const std::vector<row> rows{string("a"), *text, string("b")};
    arrow_strings in(rows, arrow_layout{true, true, 0, 0, ""});
    const row_validity v = is_valid(in.array(), in.schema());
    EXPECT_EQ(v.invalid_rows, text == &clean ? 0 : 1);
    const column repaired = make_valid(in.array(), in.schema(), error_policy::replace);
    const std::vector<row> out = strings_of(repaired.array(), repaired.schema());
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(out[1] == row_repaired(*text, error_policy::replace));
    const column counts = count_code_points(in.array(), in.schema(), on_invalid::replace);
    EXPECT_EQ(ints_of(counts.array(), counts.schema())[1], row_chars(*text, error_policy::replace));
  }
}

// ---- bad calls: a clear error and nothing made ----
TEST(ColumnsBadInput, DecreasingNegativeAndPastTheData) {
  for (const bool large : {false, true}) {
    arrow_strings in({string("ab"), string("cd"), string("ef")}, arrow_layout{large, true, 0, 0, ""});
    column_options opt;
    opt.data_bytes = in.data_bytes();
    in.set_offset(2, 1);  // row 1 ends before it starts
    EXPECT_THROW((void)is_valid(in.array(), in.schema(), opt), error);
    in.set_offset(2, 4);
    in.set_offset(0, -1);
    EXPECT_THROW((void)make_valid(in.array(), in.schema(), error_policy::replace, opt), error);
    in.set_offset(0, 0);
    in.set_offset(3, in.data_bytes() + 1);
    try {
      (void)cast_to_utf8(in.array(), in.schema(), on_invalid::replace, opt);
      ADD_FAILURE() << "offsets past the data were accepted";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(string(e.what()).find("past the data"), string::npos) << e.what();
    }
  }
}

TEST(ColumnsBadInput, UnsupportedTypesAndCalls) {
  arrow_strings in({string("ab")});
  const ArrowSchema kept = in.schema();
  in.schema().format = "i";
  EXPECT_THROW((void)is_valid(in.array(), in.schema()), error);
  in.schema().format = "vu";  // a view array has validity, views, data buffers and their sizes
  in.array().n_buffers = 2;
  EXPECT_THROW((void)count_code_points(in.array(), in.schema(), on_invalid::null), error);
  in.array().n_buffers = 3;
  in.schema() = kept;
  EXPECT_THROW((void)make_valid(in.array(), in.schema(), error_policy::strict), error);
  in.array().n_buffers = 2;
  EXPECT_THROW((void)is_valid(in.array(), in.schema()), error);
  in.array().n_buffers = 3;
  ArrowDeviceArray on_gpu{};
  on_gpu.array = in.array();
  on_gpu.device_type = ARROW_DEVICE_CUDA;
  EXPECT_THROW((void)host_array(on_gpu), error);
  on_gpu.device_type = ARROW_DEVICE_CPU;
  EXPECT_EQ(is_valid(host_array(on_gpu), in.schema()).invalid_rows, 0);
}

// Results released exactly once, by the column or by the consumer they were exported to.
TEST(ColumnsOwnership, ExportHandsOverTheRelease) {
  arrow_strings in({string("a\xFF"), std::nullopt});
  column c = make_valid(in.array(), in.schema(), error_policy::replace);
  ArrowArray a{};
  ArrowSchema s{};
  std::move(c).export_to(&a, &s);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(strings_of(a, s), (std::vector<row>{string("a\xEF\xBF\xBD"), std::nullopt}));
  a.release(&a);
  s.release(&s);
  EXPECT_EQ(a.release, nullptr);
  column moved = cast_to_utf8(in.array(), in.schema(), on_invalid::null);
  column other = std::move(moved);
  EXPECT_TRUE(moved.empty());
  EXPECT_EQ(other.array().null_count, 2);
}

}  // namespace
}  // namespace gutf8::test
