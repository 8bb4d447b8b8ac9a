// gutf8 validate: the stderr report, -q, --json, and the repaired output.
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "gutf8/types.hpp"

namespace gutf8::cli_test {
namespace {

// Line 2, column 8, byte 13: E2 82 cut short by a space; FF at the end is the second unit.
constexpr std::string_view two_errors = "hello\nw\xC3\xB6rld \xE2\x82 x\n\xFF";

std::string expected_report(const std::string& file) {
  return file + ": invalid UTF-8 at byte 13 (line 2, column 8): " +
         std::string(describe(error_kind::truncated)) + "; 2 invalid sequences\n";
}

using validate = cli;

TEST_F(validate, ValidInputPrintsNothing) {
  write("ok.txt", "plain ASCII, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80\n");
  const result r = run({"validate", "ok.txt"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST_F(validate, ReportNamesOffsetLineColumnReasonAndCount) {
  write("bad.txt", two_errors);
  const result r = run({"validate", "bad.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, expected_report("bad.txt"));
}

TEST_F(validate, SpecExampleCountsFourUnits) {
  write("spec.bin", spec_example);
  const result r = run({"validate", "spec.bin"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.err.starts_with("spec.bin: invalid UTF-8 at byte 0 (line 1, column 1): ")) << r.err;
  EXPECT_TRUE(r.err.ends_with("; 4 invalid sequences\n")) << r.err;
}

TEST_F(validate, CountWordingIsSingularForOneError) {
  write("one.txt", "ab\n\x80");
  const result r = run({"validate", "one.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "one.txt: invalid UTF-8 at byte 3 (line 2, column 1): " +
                       std::string(describe(error_kind::stray_continuation)) +
                       "; 1 invalid sequence\n");
}

TEST_F(validate, QuietPrintsNothingButStillFails) {
  write("bad.txt", two_errors);
  const result r = run({"validate", "-q", "bad.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"validate", "--quiet", "bad.txt"}).status, 1);
}

TEST_F(validate, StandardInputIsShownAsStdin) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate"}, std::vector<std::string>{"validate", "-"}}) {
    const result r = run_stdin(args, two_errors);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, expected_report("<stdin>"));
  }
}

TEST_F(validate, OneReportPerInvalidFileInOrder) {
  write("a", two_errors);
  write("ok", "fine\n");
  write("b", two_errors);
  const result r = run({"validate", "a", "ok", "b"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, expected_report("a") + expected_report("b"));
}

TEST_F(validate, JsonOneObjectPerFile) {
  write("bad.txt", two_errors);
  write("ok.txt", "fine\n");
  const result r = run({"validate", "--json", "bad.txt", "ok.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "");  // the JSON replaces the stderr report
  EXPECT_EQ(r.out,
            "{\"file\":\"bad.txt\",\"bytes\":19,\"valid\":false,\"errors\":2,"
            "\"first_error\":{\"offset\":13,\"line\":2,\"column\":8,\"reason\":\"" +
                std::string(describe(error_kind::truncated)) + "\"}}\n"
            "{\"file\":\"ok.txt\",\"bytes\":5,\"valid\":true,\"errors\":0,\"first_error\":null}\n");
}

TEST_F(validate, JsonEscapesFileNames) {
  write("a\"b\\c\td", "x");
  const result r = run({"validate", "--json", "a\"b\\c\td"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.out.starts_with("{\"file\":\"a\\\"b\\\\c\\td\",")) << r.out;
  const result in = run_stdin({"validate", "--json"}, "");
  EXPECT_EQ(in.out,
            "{\"file\":\"<stdin>\",\"bytes\":0,\"valid\":true,\"errors\":0,"
            "\"first_error\":null}\n");
}

TEST_F(validate, ReplaceAndDropWriteRepairedTextOfSpecExample) {
  write("spec.bin", spec_example);
  const result replaced = run({"validate", "--replace", "spec.bin"});
  EXPECT_EQ(replaced.status, 1);  // still says the input was invalid
  EXPECT_EQ(replaced.out, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "A");
  EXPECT_NE(replaced.err, "");
  const result dropped = run({"validate", "--drop", "-q", "spec.bin"});
  EXPECT_EQ(dropped.status, 1);
  EXPECT_EQ(dropped.out, "A");
  EXPECT_EQ(dropped.err, "");
}

TEST_F(validate, RepairOfValidInputIsTheInput) {
  const std::string text = "caf\xC3\xA9 \xF0\x9F\x98\x80\n";
  write("ok", text);
  const result r = run({"validate", "--replace", "ok"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, text);
}

TEST_F(validate, JsonWithRepairWritesTextToOutputFile) {
  write("spec.bin", spec_example);
  const result r = run({"validate", "--json", "--drop", "-o", "fixed", "spec.bin"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.starts_with("{\"file\":\"spec.bin\",\"bytes\":9,\"valid\":false,\"errors\":4,"))
      << r.out;
  EXPECT_EQ(read("fixed"), "A");  // invalid input: the repair is still the result
}

TEST_F(validate, RepairInPlaceThroughOutputFile) {
  write("f", spec_example);
  EXPECT_EQ(run({"validate", "--replace", "-q", "f", "-o", "f"}).status, 1);
  EXPECT_EQ(read("f"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "A");
}

}  // namespace
}  // namespace gutf8::cli_test
