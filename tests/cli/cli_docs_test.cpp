// The man page and the shell completions (generated at build time by scripts/cli_docs.py) agree
// with `gutf8 --help`: every option of every command is in each of them, the completions offer no
// option that --help lacks, a fresh generation gives the same files, and bash completes.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

const fs::path doc_dir = fs::path(GUTF8_BINARY_DIR) / "doc";
const std::vector<std::string> commands{"decode", "encode", "validate", "stats"};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class docs : public cli {
 protected:
  void SetUp() override {
    cli::SetUp();
    if (!fs::exists(doc_dir / "gutf8.1"))
      GTEST_SKIP() << "no generated man page in " << doc_dir << " (help2man or python3 missing at configure time)";
  }

  // "--json", "-o", ... as `gutf8 COMMAND --help` lists them.
  std::set<std::string> help_options(const std::string& command) {
    static const std::regex option(R"(^  (?:(-\w) \[ )?(--[a-z][a-z0-9-]*))");
    std::set<std::string> names;
    std::istringstream lines(run({command, "--help"}).out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, option)) continue;
      if (m[1].matched) names.insert(m[1]);
      names.insert(m[2]);
    }
    return names;
  }

  // The words of `COMMAND) opts="..."` in the bash completion.
  static std::set<std::string> bash_options(const std::string& command) {
    const std::string bash = slurp(doc_dir / "gutf8.bash");
    const std::string key = "    " + command + ") opts=\"";
    const auto at = bash.find(key);
    if (at == std::string::npos) return {};
    std::istringstream words(bash.substr(at + key.size(), bash.find('"', at + key.size()) - at - key.size()));
    return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  }
};

TEST_F(docs, EveryOptionIsInTheManPageAndBothCompletions) {
  std::string man = slurp(doc_dir / "gutf8.1");
  man = std::regex_replace(man, std::regex(R"(\\-)"), "-");
  const std::string zsh = slurp(doc_dir / "_gutf8");
  for (const auto& command : commands) {
    SCOPED_TRACE(command);
    const auto options = help_options(command);
    ASSERT_GT(options.size(), 10u);
    EXPECT_NE(man.find("gutf8 " + command), std::string::npos);
    const auto zsh_section = zsh.substr(zsh.find("    " + command + ") _arguments"));
    const auto zsh_own = zsh_section.substr(0, zsh_section.find(";;"));
    for (const auto& option : options) {
      EXPECT_NE(man.find(option), std::string::npos) << option << " is not in gutf8.1";
      EXPECT_NE(zsh_own.find(option), std::string::npos) << option << " is not in _gutf8";
    }
    EXPECT_EQ(bash_options(command), options) << "gutf8.bash and --help differ";
  }
  EXPECT_NE(man.find(".SH SYNOPSIS"), std::string::npos);
}

TEST_F(docs, AFreshGenerationGivesTheSameFiles) {
  if (shell("command -v help2man >/dev/null && command -v python3 >/dev/null").status != 0)
    GTEST_SKIP() << "help2man or python3 is not installed";
  const result r = shell("python3 '" GUTF8_SOURCE_DIR "/scripts/cli_docs.py' \"$GUTF8\" fresh");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read("fresh/gutf8.bash"), slurp(doc_dir / "gutf8.bash"));
  EXPECT_EQ(read("fresh/_gutf8"), slurp(doc_dir / "_gutf8"));
  // The man page's .TH line carries the month of generation.
  const auto without_date = [](const std::string& man) { return man.substr(man.find("\n.SH")); };
  EXPECT_EQ(without_date(read("fresh/gutf8.1")), without_date(slurp(doc_dir / "gutf8.1")));
}

TEST_F(docs, BashCompletes) {
  const auto complete = [&](const std::string& words) {
    // The last word is the one being completed.
    const std::string script = "source '" + (doc_dir / "gutf8.bash").string() + "'\nCOMP_WORDS=(" + words +
                               ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_gutf8\necho \"${COMPREPLY[*]}\"\n";
    write("complete.sh", script);
    return shell("bash complete.sh").out;
  };
  EXPECT_EQ(complete("gutf8 val"), "validate\n");
  EXPECT_EQ(complete("gutf8 validate --list"), "--list-errors\n");
  EXPECT_EQ(complete("gutf8 decode --errors ''"), "strict replace drop\n");
  EXPECT_EQ(complete("gutf8 decode --errors = r"), "replace\n");  // --errors=r, split at '='
  EXPECT_EQ(complete("gutf8 stats --backend c"), "cuda cpu\n");
  EXPECT_EQ(complete("gutf8 stats --js"), "--json\n");
  EXPECT_EQ(complete("gutf8 decode --js"), "\n");  // decode has no --json
}

TEST_F(docs, ZshCompletionParses) {
  if (shell("command -v zsh >/dev/null").status != 0) GTEST_SKIP() << "zsh is not installed";
  const result r = shell("zsh -n '" + (doc_dir / "_gutf8").string() + "'");
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace gutf8::cli_test
