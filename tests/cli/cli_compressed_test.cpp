// Compressed inputs and outputs through the CLI (SPEC §3c): every format, in several members that
// cut characters, as a file and on standard input, gives for every command what CPython's codecs
// give for the decompressed text (and what the same command gives for that text uncompressed);
// -o NAME.gz|.zst|.xz|.bz2|.lz4 writes what the standard tools decompress to the plain -o bytes;
// a corrupt or truncated input is exit 3 naming it and the compressed position, and -o is left out.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

struct format {
  const char* suffix;
  const char* tool;  // compresses standard input to standard output; with -d decompresses
};
constexpr format formats[] = {{"gz", "gzip"}, {"zst", "zstd"}, {"xz", "xz"}, {"bz2", "bzip2"}, {"lz4", "lz4"}};

class compressed : public cli {
 protected:
  void SetUp() override {
    cli::SetUp();
    if (shell("command -v python3 && command -v gzip && command -v zstd && command -v xz && command -v bzip2 && "
              "command -v lz4").status != 0)
      GTEST_SKIP() << "python3 or a compression tool is not installed";
  }
  std::string python(const std::string& code) {
    write("oracle.py", "import sys\n" + code + "\n");
    const result r = shell("python3 oracle.py");
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  }
  // `plain` compressed by the format's tool into NAME in `members` members, cut inside characters.
  std::string pack(const format& f, const std::string& plain, const std::string& name, int members) {
    python("d = open('" + plain + "','rb').read()\n"
           "cuts = [0]\n"
           "for k in range(1, " + std::to_string(members) + "):\n"
           "  at = len(d) * k // " + std::to_string(members) + "\n"
           "  while at < len(d) and d[at] & 0xC0 != 0x80: at += 1\n"
           "  cuts.append(at)\n"
           "cuts.append(len(d))\n"
           "for i in range(len(cuts) - 1): open('part%d' % i, 'wb').write(d[cuts[i]:cuts[i + 1]])\n");
    std::string script = ": > " + name;
    for (int i = 0; i < members; ++i)
      script += "; " + std::string(f.tool) + " -q -c < part" + std::to_string(i) + " >> " + name;
    EXPECT_EQ(shell(script).status, 0);
    return name;
  }
  std::string unpack(const format& f, const std::string& name) {
    const result r = shell(std::string(f.tool) + " -q -d -c < " + name);
    EXPECT_EQ(r.status, 0) << f.tool << " refused " << name;
    return r.out;
  }
  // CPython's UTF-8 decoding of a file with `errors`, re-encoded as `codec`.
  std::string cpython(const std::string& file, const std::string& errors, const std::string& codec) {
    return python("sys.stdout.buffer.write(open('" + file + "','rb').read().decode('utf-8','" + errors +
                  "').encode('" + codec + "'))");
  }
  result gutf8(const std::string& args) {
    return shell("\"$GUTF8\" " + args + " --backend=" + test_backend() + " --no-progress");
  }
};

// The same output with one file name put for another (reports name their input).
std::string renamed(const std::string& text, const std::string& from, const std::string& to) {
  return std::regex_replace(text, std::regex(from), to);
}

TEST_F(compressed, EveryCommandAsCPythonOnTheText) {
  const std::string text = text_with_errors(30011, 48);
  write("in", text);
  write("PLAIN", text);
  write("good", "pr\xC3\xBC" "fung\n");
  const std::string replaced = cpython("in", "replace", "utf-8"), dropped = cpython("in", "ignore", "utf-8");
  const std::string utf32 = cpython("in", "replace", "utf-32-le");
  for (const format& f : formats) {
    SCOPED_TRACE(f.tool);
    const std::string z = pack(f, "in", std::string("in.") + f.suffix, 3);
    const std::string g = pack(f, "good", std::string("good.") + f.suffix, 2);
    for (const std::string source : {z, "- < " + z}) {
      SCOPED_TRACE(source);
      const result d = gutf8("decode --errors=replace --chunk-size 4099 " + source);
      EXPECT_EQ(d.status, 0) << d.err;
      EXPECT_EQ(d.out, utf32);
      EXPECT_EQ(gutf8("validate -q " + source).status, 1);
      EXPECT_EQ(gutf8("validate --replace -o out " + source).status, 1);
      EXPECT_EQ(read("out"), replaced);
      EXPECT_EQ(gutf8("validate --drop -o out --chunk-size 61 " + source).status, 1);
      EXPECT_EQ(read("out"), dropped);
    }
    // Reports count in the text: the same as for the text uncompressed.
    for (const std::string cmd : {"validate --json", "validate --list-errors --max-errors 7", "stats --top 5"})
      EXPECT_EQ(gutf8(cmd + " " + z).out, renamed(gutf8(cmd + " PLAIN").out, "PLAIN", z)) << cmd;
    EXPECT_EQ(gutf8("validate -l " + z + " " + g).out, z + "\n");
    EXPECT_EQ(gutf8("validate -L " + z + " " + g).out, g + "\n");
  }
}

TEST_F(compressed, OutputFormatBySuffix) {
  write("in", text_with_errors(20021, 49));
  const std::string want = cpython("in", "replace", "utf-8");
  const std::string z = pack(formats[0], "in", "in.gz", 3);
  for (const format& f : formats) {
    SCOPED_TRACE(f.tool);
    const std::string out = std::string("out.") + f.suffix;
    EXPECT_EQ(gutf8("validate --replace -o " + out + " --chunk-size 4099 " + z + " in").status, 1);
    EXPECT_EQ(unpack(f, out), want + want);
    const result d = gutf8("decode --errors=replace -o " + out + " in");
    EXPECT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(unpack(f, out), cpython("in", "replace", "utf-32-le"));
  }
  // An empty text gives an empty file of the format, which the tool takes.
  write("empty", "");
  EXPECT_EQ(gutf8("validate --replace -o empty.zst empty").status, 0);
  EXPECT_EQ(unpack(formats[1], "empty.zst"), "");
}

TEST_F(compressed, DamagedInputIsExitThreeAndLeavesNoOutput) {
  write("in", text_with_errors(9001, 50));
  for (const format& f : formats) {
    SCOPED_TRACE(f.tool);
    const std::string z = pack(f, "in", std::string("in.") + f.suffix, 2);
    const std::string whole = read(z);
    const std::string bad = write(std::string("bad.") + f.suffix, whole.substr(0, whole.size() - 5));
    const result r = gutf8("validate --replace -o out.gz " + bad + " " + z);
    EXPECT_EQ(r.status, 3);
    EXPECT_NE(r.err.find(bad + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("compressed byte"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.gz"));
    const result piped = gutf8("validate - < " + bad);
    EXPECT_EQ(piped.status, 3);
    EXPECT_NE(piped.err.find("compressed byte"), std::string::npos) << piped.err;
  }
  for (const std::string& name : listing()) EXPECT_EQ(name.find("out"), std::string::npos) << name;
}

// zstd frames with their content size (compressed from a named file) and without (from a pipe),
// empty and skippable frames between them, characters cut across frames, in chunks smaller and
// larger than a frame (frames decoded at once into a part's block, or streamed): every way gives
// what CPython gives for the text. A frame whose content-size field lies is exit 3 at a compressed
// position, with nothing left at -o.
TEST_F(compressed, ZstdFramesWithAndWithoutTheirSize) {
  write("in", text_with_errors(300007, 51));
  const std::string replaced = cpython("in", "replace", "utf-8");
  pack(formats[1], "in", "unused.zst", 4);  // part0..part3, cut inside characters
  write("skip", std::string("\x50\x2a\x4d\x18\x03\x00\x00\x00", 8) + "abc");  // a skippable frame
  write("nothing", "");
  ASSERT_EQ(shell("zstd -q -c part0 > in.zst && zstd -q -c < part1 >> in.zst && cat skip >> in.zst && "
                  "zstd -q -c nothing >> in.zst && cat part2 | zstd -q -c >> in.zst && zstd -q -c part3 >> in.zst")
                .status,
            0);
  ASSERT_EQ(unpack(formats[1], "in.zst"), read("in"));
  for (const std::string chunk : {"4099", "65536", "4M"}) {
    SCOPED_TRACE(chunk);
    for (const std::string source : {std::string("in.zst"), std::string("- < in.zst")}) {
      EXPECT_EQ(gutf8("validate --replace -o out --chunk-size " + chunk + " " + source).status, 1) << source;
      EXPECT_EQ(read("out"), replaced) << source;
      EXPECT_EQ(gutf8("validate --replace -o out.zst --chunk-size " + chunk + " " + source).status, 1) << source;
      EXPECT_EQ(unpack(formats[1], "out.zst"), replaced) << source;
    }
  }
  // part0 holds 75001 bytes or so: a 4-byte content-size field (Single_Segment, FCS_Flag 2) after
  // the magic number and the frame header descriptor.
  const std::string good = shell("zstd -q -c part0").out;
  ASSERT_EQ(static_cast<unsigned char>(good.at(4)) >> 5, 5) << "FCS_Flag 2, Single_Segment";
  for (const int delta : {-1, 1}) {
    std::string bad = good;
    bad[5] = static_cast<char>(static_cast<unsigned char>(bad[5]) + delta);
    write("bad.zst", bad);
    ASSERT_NE(shell("zstd -q -t bad.zst").status, 0) << "the zstd tool finds it corrupt";
    const result r = gutf8("validate --replace -o out.zst bad.zst");
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_NE(r.err.find("bad.zst: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("corrupt zstd data at compressed byte "), std::string::npos) << r.err;
    EXPECT_EQ(gutf8("validate - < bad.zst").status, 3);
  }
  fs::remove(dir_ / "out.zst");
  EXPECT_EQ(gutf8("validate --replace -o out.zst bad.zst").status, 3);
  EXPECT_FALSE(fs::exists(dir_ / "out.zst"));
}

// Bytes after the last member are handled as gzip and bzip2 handle them: ignored, with one warning
// line naming the input and the compressed offset where they start (gzip: none for zeros), which
// -q hides; the text, the output and the exit status are those of the input without them.
TEST_F(compressed, TrailingGarbageIsAWarningAsTheToolsGive) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "gr\xC3\xBC\xC3\x9F " + std::to_string(i * 7919) + (i % 13 ? " " : "\n");
  write("in", text);
  write("bad", text_with_errors(7001, 52));
  struct tail_case {
    const format& f;
    std::string tail;
    bool warned;
  };
  const std::string zeros(11, '\0');
  for (const tail_case& c : {tail_case{formats[0], "junk\n", true}, {formats[0], zeros, false},
                             {formats[3], "junk\n", true}, {formats[3], zeros, true}}) {
    SCOPED_TRACE(std::string(c.f.tool) + (c.warned ? " warned" : " silent") + " tail of " +
                 std::to_string(c.tail.size()));
    const std::string members = read(pack(c.f, "in", "packed", 3));
    const std::string z = write(std::string("in.") + c.f.suffix, members + c.tail);
    const std::string bad_members = read(pack(c.f, "bad", "packed", 2));
    const std::string bad = write(std::string("bad.") + c.f.suffix, bad_members + c.tail);
    const result tool = shell(std::string(c.f.tool) + " -q -d -c < " + z);
    ASSERT_EQ(tool.out, text) << "the tool takes it";
    EXPECT_EQ(tool.status, c.warned && c.f.suffix == std::string("gz") ? 2 : 0) << "gzip's warning status";
    const std::string unit = c.f.suffix == std::string("gz") ? " member)\n" : " stream)\n";
    const auto expect_warning = [&](const result& r, const std::string& name, std::size_t at = 0) {
      const std::string warning = "gutf8: " + name + ": trailing garbage ignored from compressed byte " +
                                  std::to_string(at != 0 ? at : members.size()) + " (after the last " + c.f.tool + unit;
      EXPECT_EQ(r.err.find(warning) != std::string::npos, c.warned) << r.err;
      EXPECT_EQ(r.err.find("trailing") != std::string::npos, c.warned) << r.err;
    };
    for (const std::string& source : {z, "- < " + z}) {
      SCOPED_TRACE(source);
      const std::string name = source == z ? z : "<stdin>";
      const result v = gutf8("validate " + source);
      EXPECT_EQ(v.status, 0);
      expect_warning(v, name);
      const result q = gutf8("validate -q " + source);
      EXPECT_EQ(q.status, 0);
      EXPECT_EQ(q.err, "");
      const result o = gutf8("validate --replace -o out.zst --chunk-size 4099 " + source);
      EXPECT_EQ(o.status, 0);
      expect_warning(o, name);
      EXPECT_EQ(unpack(formats[1], "out.zst"), text);
      const result d = gutf8("decode " + source);
      EXPECT_EQ(d.status, 0);
      expect_warning(d, name);
      EXPECT_EQ(d.out, cpython("in", "strict", "utf-32-le"));
    }
    // An invalid text keeps its exit status 1; the warning comes with the report line.
    const result r = gutf8("validate --json " + bad);
    EXPECT_EQ(r.status, 1);
    expect_warning(r, bad, bad_members.size());
    EXPECT_EQ(r.out, renamed(gutf8("validate --json bad").out, "\"bad\"", "\"" + bad + "\""));
  }
}

// gutf8's own gzip output splits into parts at its members: bytes after the last one are ignored
// as gunzip ignores them, whichever worker decompresses that last part.
TEST_F(compressed, TrailingGarbageAfterSplitMembers) {
  write("in", text_with_errors(200003, 53));
  const std::string replaced = cpython("in", "replace", "utf-8");
  ASSERT_EQ(gutf8("validate --replace -o own.gz --chunk-size 16384 in").status, 1);  // its text is valid
  const std::string members = read("own.gz");
  for (const std::string& tail : {std::string("garbage"), std::string(5, '\0'), std::string("\x1f")}) {
    SCOPED_TRACE(tail.size());
    write("in.gz", members + tail);
    const bool one_byte = tail.size() == 1;  // gzip wants two magic bytes: one is a truncated member
    const result g = shell("gzip -d -c < in.gz > /dev/null");
    ASSERT_EQ(g.status, one_byte ? 1 : tail[0] == '\0' ? 0 : 2) << g.err;
    for (const std::string chunk : {"4099", "1M"}) {
      const result r = gutf8("validate --replace -o out --chunk-size " + chunk + " in.gz");
      EXPECT_EQ(r.status, one_byte ? 3 : 0) << r.err;
      if (one_byte) continue;
      EXPECT_EQ(read("out"), replaced);
      const std::string warning = "gutf8: in.gz: trailing garbage ignored from compressed byte " +
                                  std::to_string(members.size()) + " (after the last gzip member)\n";
      EXPECT_EQ(r.err.find(warning) != std::string::npos, tail[0] != '\0') << r.err;
    }
  }
}

TEST_F(compressed, NoDecompressReadsTheBytes) {
  write("in", "caf\xC3\xA9\n");
  const std::string z = pack(formats[1], "in", "in.zst", 1);
  const std::string size = std::to_string(read(z).size());
  EXPECT_NE(gutf8("stats --no-decompress " + z).out.find(size), std::string::npos);
  const result json = gutf8("validate --json " + z);
  EXPECT_NE(json.out.find("\"bytes\":6"), std::string::npos) << json.out;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUTF8_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(GUTF8_TEST_ASAN)
constexpr bool sanitized = true;  // ASan's shadow and quarantine: resident memory says nothing
#else
constexpr bool sanitized = false;
#endif

// A text far larger than the run's buffers, compressed to kilobytes, is never held whole: validated
// and repaired into a compressed -o, the process stays far below the text's size. Measured from a
// small python3 parent: a child's peak RSS counts its parent's before the exec.
TEST_F(compressed, HighRatioInputInBoundedMemory) {
  const std::size_t text = sanitized ? (std::size_t{24} << 20) + 3 : (std::size_t{128} << 20) + 3;
  ASSERT_EQ(shell("head -c " + std::to_string(text) + " /dev/zero | tr '\\0' a | zstd -q -c > big.zst").status, 0);
  const auto peak_kib = [&](const std::string& args) {
    write("peak.py", "import resource, subprocess, sys\n"
                     "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
                     "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n");
    const result r = shell("python3 peak.py \"$GUTF8\" " + args + " --backend=" + test_backend() + " --no-progress");
    long status = -1, kib = 0;
    EXPECT_EQ(std::sscanf(r.out.c_str(), "%ld %ld", &status, &kib), 2) << r.out << r.err;
    EXPECT_EQ(status, 0) << args;
    return kib;
  };
  const long validate = peak_kib("validate big.zst");
  const long repair = peak_kib("validate --replace -o out.zst big.zst");
  EXPECT_EQ(shell("zstd -q -d -c out.zst | wc -c").out, std::to_string(text) + "\n");
  EXPECT_EQ(shell("zstd -q -d -c out.zst | tr -d a | wc -c").out, "0\n");
  if (sanitized) return;
  EXPECT_LT(validate, 48L << 10) << "validate peak RSS " << validate << " KiB";
  EXPECT_LT(repair, 96L << 10) << "validate --replace peak RSS " << repair << " KiB";
}

}  // namespace
}  // namespace gutf8::cli_test
