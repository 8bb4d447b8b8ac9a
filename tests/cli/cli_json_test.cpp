// --json is JSON Lines: each line one object that a JSON parser (CPython's json) accepts, a
// record for every input including unreadable ones, and file names that survive any bytes.
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "gutf8/types.hpp"

namespace gutf8::cli_test {
namespace {

using json = cli;

// Runs the gutf8 command line `command` and feeds its stdout to a python3 program.
constexpr std::string_view parse_lines =
    "import json, os, sys\n"
    "for line in sys.stdin.buffer.read().decode('utf-8').splitlines():\n"
    "    r = json.loads(line)\n"
    "    if r.get('total'):\n"
    "        print('total', r['files'])\n"
    "        continue\n"
    "    print(os.fsencode(r['file']).hex(), r.get('valid'), r.get('error'),"
    " (r.get('first_error') or {}).get('reason'))\n";

class json_lines : public cli {
 protected:
  bool have_python() { return shell("command -v python3 >/dev/null").status == 0; }
  result through_python(const std::string& command) {
    write("parse.py", parse_lines);
    return shell("\"$GUTF8\" " + command + " --backend=" + test_backend() + " | python3 parse.py");
  }
};

TEST_F(json, UnreadableInputsGetARecordInOrder) {
  write("a", "x");
  write("b", "\xFF");
  for (const char* command : {"validate", "stats"}) {
    SCOPED_TRACE(command);
    const result r = run({command, "--json", "a", "missing", "b", "."});
    EXPECT_EQ(r.status, 3);
    const auto lines = [&] {
      std::vector<std::string> out;
      for (std::size_t at = 0, end; (end = r.out.find('\n', at)) != std::string::npos; at = end + 1)
        out.push_back(r.out.substr(at, end - at));
      return out;
    }();
    // stats ends with its total over the readable inputs.
    ASSERT_EQ(lines.size(), std::string(command) == "stats" ? 5u : 4u) << r.out;
    if (lines.size() == 5) {
      EXPECT_TRUE(lines[4].starts_with("{\"total\":true,\"files\":2,\"bytes\":2,")) << lines[4];
    }
    EXPECT_TRUE(lines[0].starts_with("{\"file\":\"a\",\"bytes\":1,")) << lines[0];
    EXPECT_EQ(lines[1], "{\"file\":\"missing\",\"error\":\"No such file or directory\"}");
    EXPECT_TRUE(lines[2].starts_with("{\"file\":\"b\",\"bytes\":1,")) << lines[2];
    EXPECT_EQ(lines[3], "{\"file\":\".\",\"error\":\"Is a directory\"}");
    // stderr still says it, as for the text output.
    EXPECT_NE(r.err.find("gutf8: missing: No such file or directory\n"), std::string::npos) << r.err;
  }
}

TEST_F(json, FirstErrorNamesItsReason) {
  write("e0", "ok\n\xE0\x80\x80");  // overlong: E0 needs A0..BF next
  const result r = run({"validate", "--json", "e0"});
  EXPECT_EQ(r.out, "{\"file\":\"e0\",\"bytes\":6,\"valid\":false,\"errors\":3,\"first_error\":"
                   "{\"offset\":3,\"line\":2,\"column\":1,\"reason\":\"" +
                       std::string(describe(error_kind::overlong)) + "\"}}\n");
}

TEST_F(json_lines, EveryLineParsesAndNamesAreLossless) {
  if (!have_python()) GTEST_SKIP() << "python3 is not installed";
  // Not UTF-8 (Latin-1 e9, a lone FF, a cut E2 82), valid non-ASCII, and JSON's special characters.
  const std::vector<std::string> names = {"lat\xE9.txt", "\xFF", "cut\xE2\x82", "caf\xC3\xA9 \xF0\x9F\x98\x80",
                                          "q\"b\\s\tc\x01"};
  std::string expected;
  std::string list;
  for (const auto& name : names) {
    write(name, "text\n\x80");
    list += " '" + name + "'";
    std::string hex;
    for (const unsigned char c : name) {
      constexpr char digits[] = "0123456789abcdef";
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    expected += hex + " False None " + std::string(describe(error_kind::stray_continuation)) + '\n';
  }
  const result r = through_python("validate --json" + list);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, expected);
  const result raw = run({"validate", "--json", names[0]});
  EXPECT_TRUE(raw.out.starts_with("{\"file\":\"lat\\udce9.txt\",")) << raw.out;
  const result stats = through_python("stats --json" + list + " missing");
  EXPECT_EQ(stats.status, 0) << stats.err;  // python's status: it parsed every line
  EXPECT_TRUE(stats.out.ends_with("6d697373696e67 None No such file or directory None\ntotal 5\n")) << stats.out;
}

}  // namespace
}  // namespace gutf8::cli_test
