// decode --to and encode --from (UTF-32BE, UTF-16LE/BE), --bom: the bytes CPython's codecs give,
// through the CLI. Piped, so that the stream path reads them (RegularFile below reads a file).
#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

class forms : public cli {
 protected:
  void SetUp() override {
    cli::SetUp();
    if (shell("command -v python3 >/dev/null").status != 0) GTEST_SKIP() << "python3 is not installed";
  }
  // python3 -c CODE, its stdout as bytes.
  std::string python(const std::string& code) {
    write("oracle.py", "import sys\n" + code + "\n");
    const result r = shell("python3 oracle.py");
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  }
  result piped(const std::string& file, const std::string& args) {
    return shell("cat " + file + " | \"$GUTF8\" " + args + " --backend=" + test_backend() + " --chunk-size 16");
  }
};

constexpr const char* codecs[] = {"utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be"};

std::string form_option(std::string codec) {
  codec.erase(codec.rfind('-'), 1);  // "utf-16-le" -> "utf-16le"
  return codec;
}

TEST_F(forms, DecodeToEveryFormAsCPython) {
  write("in", text_with_errors(3000, 16));
  for (const char* codec : codecs) {
    for (const std::string errors : {"replace", "ignore"}) {
      SCOPED_TRACE(std::string(codec) + ' ' + errors);
      const std::string want = python("sys.stdout.buffer.write(open('in','rb').read().decode('utf-8','" + errors +
                                      "').encode('" + codec + "'))");
      const std::string policy = errors == "ignore" ? "drop" : "replace";
      const result r = piped("in", "decode --errors=" + policy + " --to " + form_option(codec));
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.out, want);
    }
  }
}

TEST_F(forms, EncodeFromEveryFormAsCPython) {
  // Every kind of UTF-16 defect: lone low, lone high before a letter, a reversed pair, a cut pair.
  write("u16le", std::string("a\0\n\0\x00\xDC" "b\0\x3D\xD8" "c\0\x00\xDC\x00\xD8\x3D\xD8\x00\xDE\x3D\xD8", 20));
  for (const char* codec : {"utf-16-le", "utf-16-be", "utf-32-be"}) {
    SCOPED_TRACE(codec);
    // The same text in `codec`: the UTF-16LE units re-serialized (for UTF-32BE, one unit a value).
    const std::string make =
        "d = open('u16le','rb').read()\n"
        "units = [int.from_bytes(d[i:i+2],'little') for i in range(0, len(d), 2)]\n"
        "big, width = '" + std::string(codec) + "'.endswith('be'), 4 if '32' in '" + codec + "' else 2\n"
        "open('in','wb').write(b''.join(u.to_bytes(width, 'big' if big else 'little') for u in units) + b'z')\n";
    python(make);
    for (const std::string errors : {"replace", "ignore"}) {
      const std::string want = python("sys.stdout.buffer.write(open('in','rb').read().decode('" + std::string(codec) +
                                      "','" + errors + "').encode('utf-8'))");
      const result r = piped("in", "encode --errors=" + std::string(errors == "ignore" ? "drop" : "replace") +
                                       " --from " + form_option(codec));
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.out, want) << errors;
    }
    const result strict = piped("in", "encode --from " + form_option(codec));
    EXPECT_EQ(strict.status, 1);
    const std::string start = python(
        "try: open('in','rb').read().decode('" + std::string(codec) + "')\n"
        "except UnicodeDecodeError as e: print(e.start, end='')");
    EXPECT_NE(strict.err.find(" at byte " + start + " (line 2, column 1): "), std::string::npos) << strict.err;
  }
}

TEST_F(forms, MessagesNameTheFormAndItsReason) {
  write("lone", std::string("a\0\n\0b\0\x00\xDC", 8));
  const result r = piped("lone", "encode --from UTF-16LE");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "gutf8: <stdin>: invalid UTF-16LE at byte 6 (line 2, column 2): unpaired UTF-16 surrogate\n");
  write("odd", std::string("a\0b", 3));
  EXPECT_EQ(piped("odd", "encode --from utf16le").err,
            "gutf8: <stdin>: invalid UTF-16LE at byte 2 (line 1, column 2): UTF-16 input length is odd\n");
}

TEST_F(forms, BomFirstAndUsageErrors) {
  write("e", "\xC3\xA9");
  EXPECT_EQ(piped("e", "decode --to utf-16le --bom").out, std::string("\xFF\xFE\xE9\x00", 4));
  EXPECT_EQ(piped("e", "decode --bom").out, std::string("\xFF\xFE\0\0\xE9\0\0\0", 8));
  EXPECT_EQ(piped("e", "decode --to utf-32be").out, std::string("\0\0\0\xE9", 4));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"decode", "--to", "utf-8", "e"},
           {"decode", "--to", "utf-16", "e"},
           {"decode", "--from", "utf-16le", "e"},
           {"encode", "--to", "utf-16le", "e"},
           {"encode", "--bom", "e"},
           {"validate", "--to", "utf-16le", "e"}}) {
    SCOPED_TRACE(testing::PrintToString(args));
    EXPECT_EQ(run(args).status, 2);
  }
}

// A regular file decoded to another form goes through a stream, not the engine's pieces (which
// carry counts, not bytes): the output is the same.
TEST_F(forms, RegularFile) {
  write("e", "\xC3\xA9");
  const result r = run({"decode", "--to", "utf-16be", "e"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::string("\0\xE9", 2));
}

}  // namespace
}  // namespace gutf8::cli_test
