// validate --list-errors (every error unit, text and JSON, bounded by --max-errors) and the file
// lists -l / -L. The expected units come from the independent oracle (tests/support/reference.hpp).
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "support/reference.hpp"

namespace gutf8::cli_test {
namespace {

using list = cli;

std::string hex(const std::string& bytes, bool spaced) {
  constexpr char upper[] = "0123456789ABCDEF", lower[] = "0123456789abcdef";
  std::string text;
  for (const unsigned char c : bytes) {
    if (spaced && !text.empty()) text += ' ';
    text += (spaced ? upper : lower)[c >> 4];
    text += (spaced ? upper : lower)[c & 15];
  }
  return text;
}

struct oracle_unit {
  std::size_t offset;
  std::uint64_t line, column;
  std::string reason, bytes;
};

std::vector<oracle_unit> oracle_units(const std::string& s, std::size_t max = SIZE_MAX) {
  const auto in = std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  std::vector<oracle_unit> out;
  for (const ref::unit& u : ref::units(in)) {
    if (u.valid || out.size() == max) continue;
    const auto [line, column] = ref::line_column(in, u.offset);
    out.push_back({u.offset, line, column, std::string(describe(ref::reason_of(in, u))), s.substr(u.offset, u.length)});
  }
  return out;
}

std::string text_listing(const std::string& name, const std::vector<oracle_unit>& units) {
  std::string text;
  for (const auto& u : units)
    text += name + ": invalid UTF-8 at byte " + std::to_string(u.offset) + " (line " + std::to_string(u.line) +
            ", column " + std::to_string(u.column) + "): " + u.reason + " [" + hex(u.bytes, true) + "]\n";
  return text;
}

std::string json_listing(const std::vector<oracle_unit>& units) {
  std::string text = "\"error_list\":[";
  for (std::size_t i = 0; i < units.size(); ++i) {
    const auto& u = units[i];
    if (i != 0) text += ',';
    text += "{\"offset\":" + std::to_string(u.offset) + ",\"line\":" + std::to_string(u.line) +
            ",\"column\":" + std::to_string(u.column) + ",\"reason\":\"" + u.reason + "\",\"bytes\":\"" +
            hex(u.bytes, false) + "\"}";
  }
  return text + "]}\n";
}

// Piped, so that the stream path reads it (RegularFile below reads a file).
std::string piped(const std::string& file, const std::string& options) {
  return "cat " + file + " | \"$GUTF8\" validate --backend=" + test_backend() + " --chunk-size 16 " + options;
}

TEST_F(list, EveryErrorUnitAsText) {
  const std::string s = text_with_errors(3000, 26);
  write("in", s);
  const auto units = oracle_units(s);
  ASSERT_GT(units.size(), 50u);
  const result r = shell(piped("in", "--list-errors --max-errors 100000"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, text_listing("<stdin>", units));
  EXPECT_TRUE(r.err.ends_with("; " + std::to_string(units.size()) + " invalid sequences\n")) << r.err;
  // -q keeps the listing (it was asked for) and drops the stderr line.
  const result quiet = shell(piped("in", "--list-errors --max-errors 100000 -q"));
  EXPECT_EQ(quiet.out, r.out);
  EXPECT_EQ(quiet.err, "");
}

TEST_F(list, EveryErrorUnitAsJson) {
  const std::string s = "ok\n\xE0\x80 \xF0\x9F\x98 \xED\xA0\x80\xC0\n\xF4";
  write("in", s);
  const result r = shell(piped("in", "--list-errors --json"));
  EXPECT_EQ(r.status, 1);
  const std::string::size_type at = r.out.find("\"error_list\":");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(at), json_listing(oracle_units(s)));
  write("ok", "fine\n");
  EXPECT_TRUE(shell(piped("ok", "--list-errors --json")).out.ends_with(",\"error_list\":[]}\n"));
}

TEST_F(list, MaxErrorsBoundsTheListNotTheCount) {
  const std::string s = text_with_errors(2000, 7);
  write("in", s);
  const auto units = oracle_units(s);
  for (const std::size_t max : {1u, 2u, 17u}) {
    SCOPED_TRACE(max);
    const result r = shell(piped("in", "--list-errors --max-errors " + std::to_string(max)));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, text_listing("<stdin>", oracle_units(s, max)));
    EXPECT_TRUE(r.err.ends_with("; " + std::to_string(units.size()) + " invalid sequences\n")) << r.err;
  }
  // The default is 1000.
  const std::string many(1500, '\xFF');
  write("many", many);
  const result r = shell(piped("many", "--list-errors"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1000);
}

TEST_F(list, UsageErrors) {
  write("x", "x");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"validate", "--max-errors", "5", "x"},                  // needs --list-errors
           {"validate", "--list-errors", "--max-errors", "0", "x"},
           {"validate", "--list-errors", "--max-errors", "-1", "x"},
           {"validate", "--list-errors", "--replace", "x"},       // stdout carries the list
           {"validate", "-l", "-L", "x"},
           {"validate", "-l", "--json", "x"},
           {"validate", "-L", "--list-errors", "x"},
           {"validate", "-l", "--drop", "x"},
           {"decode", "--list-errors", "x"},
           {"stats", "-l", "x"}}) {
    SCOPED_TRACE(testing::PrintToString(args));
    const result r = run(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(r.err.starts_with("gutf8: ")) << r.err;
  }
}

TEST_F(list, FileListsPrintNamesOnly) {
  write("bad1", "a\xFF");
  write("good1", "caf\xC3\xA9\n");
  write("bad2", "\xE2\x82");
  write("good2", "");
  const std::vector<std::string> files{"bad1", "good1", "missing", "bad2", "good2"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), files.begin(), files.end());
    return run(args);
  };
  for (const char* flag : {"-l", "--files-with-errors"}) {
    const result r = with({"validate", flag});
    EXPECT_EQ(r.status, 3);  // the unreadable input; 3 > 1
    EXPECT_EQ(r.out, "bad1\nbad2\n");
    EXPECT_EQ(r.err, "gutf8: missing: No such file or directory\n");
  }
  for (const char* flag : {"-L", "--files-without-errors"}) {
    const result r = with({"validate", flag});
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "good1\ngood2\n");
  }
  // The exit status still says whether any input was invalid.
  EXPECT_EQ(run({"validate", "-l", "good1", "good2"}).status, 0);
  EXPECT_EQ(run({"validate", "-l", "good1", "good2"}).out, "");
  EXPECT_EQ(run({"validate", "-L", "good1", "bad1"}).status, 1);
  EXPECT_EQ(run({"validate", "-L", "good1", "bad1"}).out, "good1\n");
  // With a repair, the names go to stdout and the text to -o.
  const result repaired = run({"validate", "-l", "--replace", "-o", "fixed", "bad1"});
  EXPECT_EQ(repaired.out, "bad1\n");
  EXPECT_EQ(read("fixed"), "a\xEF\xBF\xBD");
}

// A regular file whose errors are listed goes through a stream, not the engine's pieces (which
// carry counts, not bytes): the listing is the same.
TEST_F(list, RegularFile) {
  const std::string s = text_with_errors(100000, 3);
  write("in", s);
  const result r = run({"validate", "--list-errors", "--max-errors", "100000", "in"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, text_listing("in", oracle_units(s)));
}

}  // namespace
}  // namespace gutf8::cli_test
