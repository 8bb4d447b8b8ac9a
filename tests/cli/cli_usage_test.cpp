// The command line itself: help, version, and every way of getting it wrong (exit 2).
#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

const std::vector<std::string> common_options{"--backend", "--device",      "--chunk-size",
                                              "--threads", "--progress",    "--no-progress",
                                              "--verbose", "--help",        "-h",
                                              "--version", "--gpu-memory"};

void expect_mentions(const std::string& text, const std::vector<std::string>& words) {
  for (const auto& w : words)
    EXPECT_NE(text.find(w), std::string::npos) << "missing " << w << " in\n" << text;
}

void expect_usage_error(const result& r) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(r.err.starts_with("gutf8: ")) << r.err;
  EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;  // the hint
  EXPECT_EQ(r.out, "");
}

using usage = cli;

TEST_F(usage, GlobalHelpMentionsEveryCommandAndCommonOption) {
  for (const char* flag : {"--help", "-h"}) {
    const result r = run({flag});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    expect_mentions(r.out, common_options);
    expect_mentions(r.out, {"decode", "encode", "validate", "stats", "--errors", "--replace",
                            "--drop", "--json", "-q", "--top", "-o OUT"});
  }
}

TEST_F(usage, EachCommandHelpMentionsEachOfItsOptions) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
      {"decode", {"-o", "--output", "--errors", "strict", "replace", "drop"}},
      {"encode", {"-o", "--output", "--errors", "strict", "replace", "drop"}},
      {"validate", {"--replace", "--drop", "-o", "--output", "--json", "-q", "--quiet"}},
      {"stats", {"--top", "--json"}},
  };
  for (const auto& [name, options] : commands) {
    SCOPED_TRACE(name);
    for (const char* flag : {"--help", "-h"}) {
      const result r = run({name, flag});
      EXPECT_EQ(r.status, 0);
      EXPECT_TRUE(r.out.starts_with("Usage: gutf8 " + name)) << r.out;
      expect_mentions(r.out, options);
      expect_mentions(r.out, common_options);
      expect_mentions(r.out, {"Exit status"});
    }
  }
}

TEST_F(usage, HelpWinsOverOtherArguments) {
  EXPECT_EQ(run({"validate", "no-such-file", "--help"}).status, 0);
  const result r = run({"--help", "stats"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.out.starts_with("Usage: gutf8 stats")) << r.out;
}

TEST_F(usage, Version) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, std::vector<std::string>{"decode", "--version"}}) {
    const result r = run(args);
    EXPECT_EQ(r.status, 0);
    EXPECT_TRUE(r.out.starts_with("gutf8 ")) << r.out;
  }
}

TEST_F(usage, MissingOrUnknownCommand) {
  expect_usage_error(run({}));
  expect_usage_error(run({"frobnicate"}));
  expect_usage_error(run({"--backend=cpu", "validate"}));  // the command comes first
  expect_usage_error(run({"--bogus"}));
}

TEST_F(usage, BadOptionsAndValues) {
  write("x", "abc");
  const std::vector<std::vector<std::string>> cases{
      {"validate", "--bogus", "x"},
      {"validate", "--ver", "x"},                   // no guessing of abbreviations
      {"decode", "--json", "x"},                    // not a decode option
      {"stats", "--replace", "x"},
      {"validate", "--backend=gpu", "x"},
      {"validate", "--backend"},                    // missing value
      {"decode", "--errors=lax", "x"},
      {"validate", "--device", "x", "x"},
      {"validate", "--device=-1", "x"},
      {"validate", "--threads=-1", "x"},
      {"validate", "--threads=1.5", "x"},
      {"stats", "--top=ten", "x"},
      {"validate", "--replace", "--drop", "x"},
      {"validate", "-o", "out", "x"},               // -o needs --replace or --drop
      {"validate", "--json", "--replace", "x"},     // JSON owns stdout: needs -o
      {"validate", "--json", "--replace", "-o", "-", "x"},  // ... an OUT that is not stdout
      {"validate", "--list-errors", "--drop", "-o", "-", "x"},
      {"validate", "-l", "--replace", "-o", "-", "x"},
      {"decode", "-o", "", "x"},                    // an empty OUT is no name
      {"validate", "--replace", "-o", "", "x"},
      {"validate", "--progress", "--no-progress", "x"},
  };
  for (const auto& args : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_usage_error(run(args));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
}

TEST_F(usage, ChunkSizeValues) {
  write("x", "h\xC3\xA9llo");
  for (const char* bad : {"", "15", "0", "1x", "K", "16KB", "-16", "16 ", "0x20", "1.5M",
                          "99999999999999999999", "99999999999G", "999999999G", "2G", "1025M",
                          "1073741825"}) {
    SCOPED_TRACE(bad);
    expect_usage_error(run({"validate", std::string("--chunk-size=") + bad, "x"}));
  }
  EXPECT_EQ(run({"decode", "--chunk-size=999999999G", "x"}).err,
            "gutf8: invalid value '999999999G' for --chunk-size: too large (expected from 16 B to "
            "1.0 GiB)\nTry 'gutf8 decode --help' for more information.\n");
  EXPECT_NE(run({"validate", "--chunk-size=15", "x"}).err.find("too small (expected from 16 B to 1.0 GiB)"),
            std::string::npos);
  // --help says where the size applies.
  std::string help;  // with line breaks and runs of spaces as one space: the wrapping undone
  for (char c : run({"decode", "--help"}).out) {
    if (c == '\n') c = ' ';
    if (c != ' ' || !help.ends_with(' ')) help += c;
  }
  EXPECT_NE(help.find("read standard input and pipes SIZE bytes at a time, and cut big files into pieces of the "
                      "smaller of SIZE and 2M"), std::string::npos)
      << help;
  for (const char* good : {"16", "17", "1k", "1K", "64K", "1m", "1M", "1G", "1024M", "1073741824"}) {
    SCOPED_TRACE(good);
    const result r = run({"validate", "--chunk-size", good, "x"});
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

}  // namespace
}  // namespace gutf8::cli_test
