// Runs the real `gutf8` executable for the end-to-end tests: posix_spawn with stdin,
// stdout and stderr redirected to files, in a scratch directory per test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>
#include <sys/types.h>

namespace gutf8::cli_test {

namespace fs = std::filesystem;

// GUTF8_BIN overrides the build's binary, for running the suite elsewhere.
std::string gutf8_binary();

// GUTF8_TEST_BACKEND (cpu when unset): the --backend that cli::run and cli::spawn add, right
// after the command, to every decode/encode/validate/stats command line that names no
// --backend and asks for no --help or --version. GUTF8_TEST_BACKEND=cuda runs the suite on the
// GPU. Scripts run by cli::shell call $GUTF8 as written.
std::string test_backend();
std::vector<std::string> with_test_backend(std::vector<std::string> args);

struct result {
  int status = -1;   // exit status, or 128 + signal number when killed by one
  std::string out;   // standard output
  std::string err;   // standard error
  long max_rss_kib = 0;  // the process's peak resident memory (KiB), for bounded-memory checks
};

struct redirect {
  std::string stdin_path = "/dev/null";
  std::string stdout_path;  // empty: captured into result::out
};

// A scratch directory, removed at the end of each test.
class cli : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // gutf8 ARGS... (run from the scratch directory).
  result run(const std::vector<std::string>& args, const redirect& io = {});
  // gutf8 ARGS... with `input` as standard input.
  result run_stdin(const std::vector<std::string>& args, std::string_view input);
  // /bin/sh -c SCRIPT, where $GUTF8 is the binary.
  result shell(const std::string& script);
  // Starts gutf8 without waiting; finish with wait_for().
  pid_t spawn(const std::vector<std::string>& args, const redirect& io);
  static int wait_for(pid_t pid, long* max_rss_kib = nullptr);

  // Writes a file in the scratch directory and returns its name (relative to it).
  std::string write(const std::string& name, std::string_view bytes);
  std::string read(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> listing() const;  // names in the scratch dir

  fs::path dir_;

 private:
  pid_t start(std::vector<std::string> argv, const redirect& io);
  result collect(pid_t pid);
  std::string captured_out_, captured_err_;
};

// The SPEC §1 example: E1 80 | E2 | F0 91 92 | F1 BF | 41 = 4 error units, then "A".
inline constexpr std::string_view spec_example = "\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41";

// UTF-32LE of a string of code points.
std::string utf32le(std::u32string_view text);

// About n bytes (at least n) of UTF-8 with every sequence length, line feeds and about 7% of
// invalid fragments (FF, a cut E2 82, a surrogate ED A0 80); the same for the same seed.
std::string text_with_errors(std::size_t n, std::uint64_t seed);

}  // namespace gutf8::cli_test
