// Hostile inputs at the command line: the real `gutf8` binary (tests/cli/cli_runner.hpp), on
// the backend named by GUTF8_TEST_BACKEND (cpu when unset). docs/RELIABILITY.md lists each case.
//
//   Empty            empty input to every command, policy and output
//   SingleByte       each byte value 00..FF alone, every operation (one run per operation, the
//                    256 one-byte files as its arguments: each file is its own stream)
//   GiB*             1 GiB of FF, of 80 and of F0 90 80 repeated, streamed from a generator
//                    thread through a pipe (no disk): counts, exact repaired output, exit status
//   ChunkBoundary    lone leads (E2, F0 90) at every chunk boundary, --chunk-size 16..64
//   Beyond4GiB       a sparse file of 2^32 + 3 bytes with errors past 2^32: exact offset, line,
//                    column in the message and in --json
//   RaggedUtf32      UTF-32 input with 1, 2, 3 extra bytes (also right at a chunk boundary)
//   DevFull          -o /dev/full and stdout on /dev/full for every command
//   ClosedPipe       the reader of stdout goes away early
//   UnreadableInput  inputs that cannot be opened or read, among readable ones
//   Sigint           SIGINT while reading a slowly fed FIFO: no OUT, no temporary
//   GpuOutOfMemory   --backend=cuda with --gpu-memory below the smallest sub-block, every command,
//                    file and stdin: exit 3, one line, no output, OUT untouched (GPU only)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <pthread.h>
#include <span>
#include <spawn.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "cli/cli_runner.hpp"
#include "gutf8/codec.hpp"
#include "gutf8/types.hpp"
#include "support/reference.hpp"

extern char** environ;

namespace gutf8::cli_test {
namespace {

using hostile = cli;
namespace fs = std::filesystem;

constexpr std::uint64_t gib = std::uint64_t{1} << 30;

std::string reason(error_kind k) { return std::string(describe(k)); }

std::string json_validate(const std::string& file, std::uint64_t bytes, std::uint64_t errors,
                          std::uint64_t offset = 0, std::uint64_t line = 1, std::uint64_t column = 1,
                          error_kind kind = error_kind::invalid_byte) {
  std::string s = "{\"file\":\"" + file + "\",\"bytes\":" + std::to_string(bytes) +
                  ",\"valid\":" + (errors == 0 ? "true" : "false") + ",\"errors\":" + std::to_string(errors) +
                  ",\"first_error\":";
  if (errors == 0) return s + "null}\n";
  return s + "{\"offset\":" + std::to_string(offset) + ",\"line\":" + std::to_string(line) +
         ",\"column\":" + std::to_string(column) + ",\"reason\":\"" + reason(kind) + "\"}}\n";
}

std::string utf32_of(const std::u32string& s) {
  return std::string(reinterpret_cast<const char*>(s.data()), 4 * s.size());
}

bool has_temporary(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [](const std::string& n) { return n.find(".gutf8-") != std::string::npos; });
}

// Waits for a child for at most `limit`; kills it (and fails) if it hangs.
int wait_bounded(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "gutf8 did not finish within " << limit.count() << " s: killed";
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// ---------------------------------------------------------------- piped runs ----

// gutf8 ARGS with standard input fed by `produce` (a generator thread writing into a pipe) and
// standard output read by `consume` (this thread) from another pipe; stderr goes to a file in
// `dir`. Nothing touches the disk but stderr.
struct piped_result {
  int status = -1;
  std::string err;
};

piped_result run_piped(const fs::path& dir, const std::vector<std::string>& args,
                       const std::function<void(int fd)>& produce,
                       const std::function<void(const char*, std::size_t)>& consume) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return {};
  }
  std::vector<std::string> argv_strings{gutf8_binary()};
  const std::vector<std::string> full = with_test_backend(args);
  argv_strings.insert(argv_strings.end(), full.begin(), full.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string err_path = (dir / ".piped-stderr").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(rc);
    ::close(in[1]);
    ::close(out[0]);
    return {};
  }
  std::thread producer([&] {
    // SIGPIPE for this thread only: if gutf8 stops reading, write() fails with EPIPE here
    // instead of killing the test (the process-wide disposition, which children inherit, stays).
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, nullptr);
    produce(in[1]);
    ::close(in[1]);
  });
  std::vector<char> buffer(std::size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(out[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    consume(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  producer.join();
  piped_result r;
  r.status = wait_bounded(pid, std::chrono::seconds(600));
  std::ifstream e(err_path, std::ios::binary);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  fs::remove(err_path);
  return r;
}

// Writes `total` bytes of `period` repeated (the pattern keeps its phase across writes).
std::function<void(int)> repeat(std::string period, std::uint64_t total) {
  return [period = std::move(period), total](int fd) {
    std::string block;
    while (block.size() < (std::size_t{1} << 20)) block += period;  // a whole number of periods
    std::uint64_t left = total;
    while (left > 0) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
      std::size_t done = 0;
      while (done < n) {
        const ssize_t w = ::write(fd, block.data() + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;  // gutf8 went away: its status tells
        done += static_cast<std::size_t>(w);
      }
      left -= n;
    }
  };
}

// Checks that a byte stream is `period` repeated: counts it and remembers the first mismatch.
struct pattern_check {
  explicit pattern_check(std::string p) : period(std::move(p)) {
    while (block.size() < (std::size_t{1} << 20) + period.size()) block += period;
  }
  void operator()(const char* data, std::size_t n) {
    while (n > 0) {
      const std::size_t phase = static_cast<std::size_t>(bytes % period.size());
      const std::size_t k = std::min(n, block.size() - phase);
      if (!mismatch && std::memcmp(data, block.data() + phase, k) != 0) {
        std::size_t i = 0;
        while (data[i] == block[phase + i]) ++i;
        mismatch = bytes + i;
      }
      bytes += k;
      data += k;
      n -= k;
    }
  }
  std::string period, block;
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> mismatch;
};

// ------------------------------------------------------------------- empty ----

TEST_F(hostile, EmptyInputEverywhere) {
  write("empty", "");
  for (const std::string source : {"file", "stdin"}) {
    SCOPED_TRACE(source);
    const auto go = [&](std::vector<std::string> args) {
      if (source == "file") {
        args.push_back("empty");
        return run(args);
      }
      return run_stdin(args, "");
    };
    for (const std::string command : {"decode", "encode"})
      for (const std::string policy : {"strict", "replace", "drop"}) {
        const result r = go({command, "--errors=" + policy, "--chunk-size", "16"});
        EXPECT_EQ(r.status, 0) << command << " " << policy << ": " << r.err;
        EXPECT_EQ(r.out, "") << command << " " << policy;
        EXPECT_EQ(r.err, "") << command << " " << policy;
      }
    for (const std::string option : {"-q", "--replace", "--drop"}) {
      const result r = go({"validate", option});
      EXPECT_EQ(r.status, 0) << option;
      EXPECT_EQ(r.out, "") << option;
      EXPECT_EQ(r.err, "") << option;
    }
    const std::string name = source == "file" ? "empty" : "<stdin>";
    EXPECT_EQ(go({"validate", "--json"}).out, json_validate(name, 0, 0));
    const result s = go({"stats", "--json", "--top", "3"});
    EXPECT_EQ(s.status, 0);
    EXPECT_EQ(s.out, "{\"file\":\"" + name +
                         "\",\"bytes\":0,\"code_points\":0,\"lines\":0,\"errors\":0,"
                         "\"sequences\":{\"1\":0,\"2\":0,\"3\":0,\"4\":0},\"top\":[]}\n");
  }
  // -o OUT of empty output: an empty file, no temporary left.
  EXPECT_EQ(run({"validate", "--replace", "empty", "-o", "fixed"}).status, 0);
  EXPECT_TRUE(fs::exists(dir_ / "fixed"));
  EXPECT_EQ(fs::file_size(dir_ / "fixed"), 0u);
  EXPECT_EQ(run({"encode", "empty", "empty", "-o", "enc"}).status, 0);
  EXPECT_EQ(fs::file_size(dir_ / "enc"), 0u);
  EXPECT_FALSE(has_temporary(listing()));
}

// ------------------------------------------------------- every single byte ----

TEST_F(hostile, SingleByteOfEveryValue) {
  std::vector<std::string> files;
  std::string want_replace_utf8, want_drop_utf8;
  std::u32string want_replace, want_drop;
  std::string want_json, want_report;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "b%02x", b);
    files.push_back(write(name, std::string(1, static_cast<char>(b))));
    const std::uint8_t byte = static_cast<std::uint8_t>(b);
    const std::vector<ref::unit> u = ref::units(std::span(&byte, 1));
    ASSERT_EQ(u.size(), 1u);
    const bool valid = u[0].valid;
    ASSERT_EQ(valid, b < 0x80);  // the oracle agrees with the obvious
    want_json += json_validate(name, 1, valid ? 0 : 1, 0, 1, 1,
                               valid ? error_kind::none : ref::reason_of(std::span(&byte, 1), u[0]));
    if (valid) {
      want_replace += char32_t(b);
      want_drop += char32_t(b);
      want_replace_utf8 += static_cast<char>(b);
      want_drop_utf8 += static_cast<char>(b);
      continue;
    }
    want_replace += U'\uFFFD';
    want_replace_utf8 += "\xEF\xBF\xBD";
    const error_kind kind = b <= 0xBF                          ? error_kind::stray_continuation
                            : (b <= 0xC1 || b >= 0xF5)         ? error_kind::invalid_byte
                                                               : error_kind::truncated_at_end;
    want_report += std::string(name) + ": invalid UTF-8 at byte 0 (line 1, column 1): " + reason(kind) +
                   "; 1 invalid sequence\n";
  }
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), files.begin(), files.end());
    return run(args);
  };

  const result json = with({"validate", "--json"});
  EXPECT_EQ(json.status, 1);
  EXPECT_EQ(json.out, want_json);
  const result report = with({"validate"});
  EXPECT_EQ(report.status, 1);
  EXPECT_EQ(report.err, want_report);

  const result replace = with({"decode", "--errors=replace"});
  EXPECT_EQ(replace.status, 0) << replace.err;
  EXPECT_EQ(replace.out, utf32_of(want_replace));
  const result drop = with({"decode", "--errors=drop"});
  EXPECT_EQ(drop.status, 0) << drop.err;
  EXPECT_EQ(drop.out, utf32_of(want_drop));
  // strict: each bad file stops on its own byte; the next file is still processed.
  const result strict = with({"decode"});
  EXPECT_EQ(strict.status, 1);
  EXPECT_EQ(strict.out, utf32_of(want_drop));
  EXPECT_EQ(std::count(strict.err.begin(), strict.err.end(), '\n'), 128);
  EXPECT_NE(strict.err.find("gutf8: b80: invalid UTF-8 at byte 0 (line 1, column 1): " +
                            reason(error_kind::stray_continuation)),
            std::string::npos)
      << strict.err.substr(0, 300);

  const result fixed = with({"validate", "--replace", "-q"});
  EXPECT_EQ(fixed.status, 1);
  EXPECT_EQ(fixed.out, want_replace_utf8);
  const result dropped = with({"validate", "--drop", "-q"});
  EXPECT_EQ(dropped.status, 1);
  EXPECT_EQ(dropped.out, want_drop_utf8);

  // As UTF-32 each one-byte file is a ragged tail: one error unit at byte 0.
  const result enc_replace = with({"encode", "--errors=replace"});
  EXPECT_EQ(enc_replace.status, 0) << enc_replace.err;
  std::string three_fffd;
  for (int b = 0; b < 256; ++b) three_fffd += "\xEF\xBF\xBD";
  EXPECT_EQ(enc_replace.out, three_fffd);
  const result enc_strict = with({"encode"});
  EXPECT_EQ(enc_strict.status, 1);
  EXPECT_EQ(enc_strict.out, "");
  EXPECT_EQ(std::count(enc_strict.err.begin(), enc_strict.err.end(), '\n'), 256);
  EXPECT_TRUE(enc_strict.err.starts_with("gutf8: b00: invalid UTF-32LE at byte 0 (line 1, column 1): " + reason(error_kind::ragged_tail)))
      << enc_strict.err.substr(0, 200);
}

// ---------------------------------------------------------- 1 GiB streams ----

struct gib_case {
  const char* name;
  std::string period;
  std::uint64_t errors;  // error units in 1 GiB of the period
  error_kind first_kind;
};

void one_gib(cli& t, const fs::path& dir, const gib_case& c) {
  SCOPED_TRACE(c.name);
  // Counts and the first error, via --json.
  std::string json;
  const piped_result v = run_piped(dir, {"validate", "--json"}, repeat(c.period, gib),
                                   [&](const char* d, std::size_t n) { json.append(d, n); });
  EXPECT_EQ(v.status, 1) << v.err;
  EXPECT_EQ(json, json_validate("<stdin>", gib, c.errors, 0, 1, 1, c.first_kind));
  // The repaired text: exactly one EF BF BD per error unit, streamed back and checked as it
  // comes; the report on stderr; exit status 1 (the input was invalid).
  pattern_check fffd("\xEF\xBF\xBD");
  const piped_result r = run_piped(dir, {"validate", "--replace"}, repeat(c.period, gib), std::ref(fffd));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(fffd.bytes, 3 * c.errors);
  EXPECT_FALSE(fffd.mismatch) << "first wrong output byte at " << *fffd.mismatch;
  EXPECT_EQ(r.err, "<stdin>: invalid UTF-8 at byte 0 (line 1, column 1): " + reason(c.first_kind) + "; " +
                       std::to_string(c.errors) + (c.errors == 1 ? " invalid sequence\n" : " invalid sequences\n"));
  (void)t;
}

TEST_F(hostile, GiBOfFF) { one_gib(*this, dir_, {"FF", "\xFF", gib, error_kind::invalid_byte}); }

TEST_F(hostile, GiBOf80) {
  one_gib(*this, dir_, {"80", "\x80", gib, error_kind::stray_continuation});
  // drop: nothing at all comes out, decode replace: 4 bytes per unit.
  std::uint64_t dropped = 0;
  const piped_result d = run_piped(dir_, {"validate", "--drop", "-q"}, repeat("\x80", gib),
                                   [&](const char*, std::size_t n) { dropped += n; });
  EXPECT_EQ(d.status, 1);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(d.err, "");
}

TEST_F(hostile, GiBOfTruncatedFourByteLeads) {
  // F0 90 80 is a maximal subpart (one unit); 2^30 = 3 * 357913941 + 1, so the stream ends
  // with a lone F0: one more unit, cut by the end.
  one_gib(*this, dir_, {"F0 90 80", "\xF0\x90\x80", gib / 3 + 1, error_kind::truncated});
  pattern_check fffd(utf32_of(U"\uFFFD"));
  const piped_result d = run_piped(dir_, {"decode", "--errors=replace"}, repeat("\xF0\x90\x80", gib),
                                   std::ref(fffd));
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(fffd.bytes, 4 * (gib / 3 + 1));
  EXPECT_FALSE(fffd.mismatch);
}

// ---------------------------------------------------- leads at chunk edges ----

// For each chunk size c in 16..64, files whose lone leads sit at every chunk boundary
// (positions k*c - 1), plus sequences that straddle the boundary and must not be errors.
// Expected values from the oracle (tests/support/reference.hpp).
TEST_F(hostile, LoneLeadAtEveryChunkBoundary) {
  struct variant {
    const char* name;
    std::string bytes;   // placed across the boundary between chunk k and chunk k + 1 ...
    std::size_t before;  // ... with this many of its bytes in chunk k (the first at k*c - before)
  };
  const std::vector<variant> variants = {
      {"e2", "\xE2", 1},                   // lone 3-byte lead, the next chunk starts with 'a'
      {"e2-ok", "\xE2\x82\xAC", 1},        // U+20AC split 1 | 2: valid
      {"e282-ok", "\xE2\x82\xAC", 2},      // U+20AC split 2 | 1: valid
      {"f090", "\xF0\x90", 1},             // 4-byte prefix split 1 | 1, then 'a'
      {"f090-end", "\xF0\x90", 2},         // 4-byte prefix ending at the boundary, then 'a'
      {"f09080-ok", "\xF0\x90\x80\x80", 2},  // U+10000 split 2 | 2: valid
      {"f09080-3", "\xF0\x90\x80\x80", 3},   // U+10000 split 3 | 1: valid
      {"ed-sur", "\xED\xA0", 1},           // surrogate prefix split 1 | 1: two units
  };
  for (std::size_t c = 16; c <= 64; ++c) {
    SCOPED_TRACE(testing::Message() << "chunk size " << c);
    std::vector<std::string> names;
    std::string want_json, want_decode, want_drop;
    for (const variant& v : variants) {
      const std::size_t chunks = 5;
      std::string s;
      for (std::size_t i = 0; i < chunks * c; ++i) s += (i % 23 == 22) ? '\n' : 'a';
      for (std::size_t k = 1; k < chunks; ++k) {
        s.replace(k * c - v.before, v.bytes.size(), v.bytes);
      }
      // The last one is cut by the end of the input, which is also a chunk boundary.
      s.replace(chunks * c - 1, 1, v.bytes.substr(0, 1));
      const std::string name = std::string(v.name) + "-" + std::to_string(c);
      write(name, s);
      names.push_back(name);
      const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
      const ref::expected rep = ref::expect(bytes, ref::policy::replace);
      const ref::expected drop = ref::expect(bytes, ref::policy::drop);
      const auto [line, column] = ref::line_column(bytes, *rep.first_error);
      const auto split = ref::units(bytes);
      const auto first_bad = std::find_if(split.begin(), split.end(), [](const ref::unit& x) { return !x.valid; });
      want_json += json_validate(name, s.size(), rep.errors, *rep.first_error, line, column,
                                 ref::reason_of(bytes, *first_bad));
      want_decode += utf32_of(rep.decoded);
      want_drop += drop.repaired;
    }
    const auto with = [&](std::vector<std::string> args) {
      args.push_back("--chunk-size");
      args.push_back(std::to_string(c));
      args.insert(args.end(), names.begin(), names.end());
      return run(args);
    };
    const result j = with({"validate", "--json"});
    EXPECT_EQ(j.status, 1);
    EXPECT_EQ(j.out, want_json);
    const result d = with({"decode", "--errors=replace"});
    EXPECT_EQ(d.status, 0) << d.err;
    EXPECT_TRUE(d.out == want_decode) << "decode --errors=replace differs from the oracle";
    const result s = with({"validate", "--drop", "-q"});
    EXPECT_EQ(s.status, 1);
    EXPECT_TRUE(s.out == want_drop) << "validate --drop differs from the oracle";
    if (testing::Test::HasFailure()) return;  // one chunk size's report is enough
  }
}

// ------------------------------------------------------------- past 2^32 ----

TEST_F(hostile, Beyond4GiBOffsetsLinesColumns) {
  // A sparse file: 2^32 + 3 bytes, all zero (valid U+0000) except LF at 0, FF at 2^32 + 1 and a
  // lone E2 at the very end (2^32 + 2). A 32-bit offset anywhere would show as 1 or 2.
  const std::uint64_t size = (std::uint64_t{1} << 32) + 3;
  const std::uint64_t bad = (std::uint64_t{1} << 32) + 1;
  const fs::path path = dir_ / "sparse";
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0) << std::strerror(errno);
    ASSERT_EQ(::pwrite(fd, "\n", 1, 0), 1);
    ASSERT_EQ(::pwrite(fd, "\xFF\xE2", 2, static_cast<off_t>(bad)), 2);
    ::close(fd);
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  if (std::uint64_t(st.st_blocks) * 512 > (std::uint64_t{64} << 20)) {
    fs::remove(path);
    GTEST_SKIP() << "the file system of " << dir_ << " does not keep files sparse";
  }
  // line 2 starts at offset 1, so the column is bad - 1 + 1.
  const result j = run({"validate", "--json", "sparse"});
  EXPECT_EQ(j.status, 1);
  EXPECT_EQ(j.out, json_validate("sparse", size, 2, bad, 2, bad));
  const result t = run({"validate", "sparse"});
  EXPECT_EQ(t.status, 1);
  EXPECT_EQ(t.err, "sparse: invalid UTF-8 at byte 4294967297 (line 2, column 4294967297): " +
                       reason(error_kind::invalid_byte) + "; 2 invalid sequences\n");
  const result s = run({"stats", "--json", "sparse"});
  EXPECT_EQ(s.status, 0);
  EXPECT_EQ(s.out, "{\"file\":\"sparse\",\"bytes\":4294967299,\"code_points\":4294967297,\"lines\":1,"
                   "\"errors\":2,\"sequences\":{\"1\":4294967297,\"2\":0,\"3\":0,\"4\":0},\"top\":[]}\n");
  fs::remove(path);
}

// ---------------------------------------------------------- ragged UTF-32 ----

TEST_F(hostile, RaggedUtf32Tail) {
  for (const std::size_t extra : {1u, 2u, 3u}) {
    for (const std::size_t values : {2u, 4u}) {  // 8 bytes, and 16 = --chunk-size: tail in chunk 2
      SCOPED_TRACE(testing::Message() << values << " values + " << extra << " bytes");
      std::u32string text;
      for (std::size_t i = 0; i < values; ++i) text += char32_t(U'A' + i);
      std::string in = utf32le(text) + std::string("\x41\x00\x00", extra);
      write("in", in);
      std::string ascii;
      for (char32_t ch : text) ascii += static_cast<char>(ch);
      const std::string at = std::to_string(4 * values);
      const result strict = run({"encode", "--chunk-size", "16", "in"});
      EXPECT_EQ(strict.status, 1);
      EXPECT_EQ(strict.err, "gutf8: in: invalid UTF-32LE at byte " + at + " (line 1, column " +
                                std::to_string(values + 1) + "): " + reason(error_kind::ragged_tail) + "\n");
      EXPECT_TRUE(ascii.starts_with(strict.out));  // a valid prefix may have been written
      const result replace = run({"encode", "--errors=replace", "--chunk-size", "16", "in"});
      EXPECT_EQ(replace.status, 0) << replace.err;
      EXPECT_EQ(replace.out, ascii + "\xEF\xBF\xBD");
      const result drop = run({"encode", "--errors=drop", "--chunk-size", "16", "in"});
      EXPECT_EQ(drop.status, 0) << drop.err;
      EXPECT_EQ(drop.out, ascii);
      const result to_file = run({"encode", "in", "-o", "out"});
      EXPECT_EQ(to_file.status, 1);
      EXPECT_FALSE(fs::exists(dir_ / "out"));
      // From standard input too (no size known in advance).
      const result piped = run_stdin({"encode", "--errors=replace", "--chunk-size", "16"}, in);
      EXPECT_EQ(piped.out, ascii + "\xEF\xBF\xBD");
    }
  }
  EXPECT_FALSE(has_temporary(listing()));
}

// ------------------------------------------------------------- /dev/full ----

TEST_F(hostile, DevFullForEveryCommandThatWrites) {
  write("text", std::string(3 << 20, 'x') + "\xC3\xA9\n");  // larger than any write buffer
  write("bad", "ok \xFF");
  write("u32", utf32le(U"hello \u20AC"));
  const std::string enospc = "gutf8: write error: No space left on device\n";
  struct run_case {
    std::vector<std::string> args;
    int status;
    std::string err_ends;
  };
  const std::vector<run_case> cases = {
      {{"decode", "text", "-o", "/dev/full"}, 3, enospc},
      {{"decode", "--errors=replace", "bad", "-o", "/dev/full"}, 3, enospc},
      {{"encode", "u32", "-o", "/dev/full"}, 3, enospc},
      {{"validate", "--replace", "text", "-o", "/dev/full"}, 3, enospc},
      {{"validate", "--drop", "-q", "bad", "-o", "/dev/full"}, 3, enospc},  // 3 > 1
      {{"validate", "--json", "--replace", "text", "-o", "/dev/full"}, 3, enospc},
  };
  for (const run_case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const result r = run(c.args);
    EXPECT_EQ(r.status, c.status);
    EXPECT_TRUE(r.err.ends_with(c.err_ends)) << r.err;
    // stdout on /dev/full, without -o.
    const std::vector<std::string> no_o(c.args.begin(), c.args.end() - 2);
    if (std::find(no_o.begin(), no_o.end(), "--json") != no_o.end()) continue;  // needs -o
    const result s = run(no_o, redirect{"/dev/null", "/dev/full"});
    EXPECT_EQ(s.status, 3) << s.err;
    EXPECT_TRUE(s.err.ends_with(enospc)) << s.err;
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"stats", "--top", "5", "text"}, {"validate", "--json", "bad"}}) {
    const result r = run(args, redirect{"/dev/null", "/dev/full"});
    EXPECT_EQ(r.status, 3) << args[0];
    EXPECT_EQ(r.err, enospc) << args[0];
  }
  EXPECT_FALSE(has_temporary(listing()));
}

// ----------------------------------------------------------- closed pipe ----

TEST_F(hostile, ClosedPipeDownstreamEndsQuietly) {
  write("big", std::string(8 << 20, 'x'));
  write("bad", std::string(4 << 20, '\xFF'));
  write("u32", utf32le(std::u32string(2 << 20, U'\u00E9')));
  const std::string b = "--backend=" + test_backend();
  for (const std::string& cmd : {"decode " + b + " --chunk-size 64K big",
                                "decode " + b + " --errors=replace bad",
                                "validate " + b + " --replace -q bad",
                                "encode " + b + " u32",
                                "stats " + b + " --json big big big big big big"}) {
    SCOPED_TRACE(cmd);
    const result r = shell("(\"$GUTF8\" " + cmd + " 2>err; echo $? >status) | head -c 1 >/dev/null\n"
                           "cat status err");
    EXPECT_EQ(r.status, 0);
    if (cmd.starts_with("validate")) {
      // Finding F1 (docs/RELIABILITY.md), decided: errors found before the pipe closed still
      // make the exit status 1; nothing on stderr.
      EXPECT_EQ(r.out, "1\n");
    } else {
      EXPECT_EQ(r.out, "0\n");  // exit status 0, nothing on stderr
    }
  }
}

// -------------------------------------------------------- unreadable input ----

// Root (as CI runs) can read a chmod 000 file, so the unreadable inputs are ones no permission
// bit governs, each with a fixed errno: a dangling symbolic link (ENOENT), a symbolic-link loop
// (ELOOP), a path through a regular file (ENOTDIR), a directory (EISDIR) and /proc/self/mem,
// which opens but whose first read fails (EIO: address 0 is never mapped) - so a read error,
// not only an open error, is covered. A chmod 000 file is added when not running as root.
TEST_F(hostile, UnreadableInputsAmongReadableOnes) {
  write("a", "first ");
  write("b", "second ");
  write("c", "third");
  fs::create_symlink("nowhere", dir_ / "dangling");
  fs::create_symlink("loop2", dir_ / "loop1");
  fs::create_symlink("loop1", dir_ / "loop2");
  fs::create_directory(dir_ / "dir");
  std::vector<std::string> args{"a", "dangling", "b", "loop1", "a/x", "dir", "/proc/self/mem", "c"};
  std::string want_err = "gutf8: dangling: No such file or directory\n"
                         "gutf8: loop1: Too many levels of symbolic links\n"
                         "gutf8: a/x: Not a directory\n"
                         "gutf8: dir: Is a directory\n"
                         "gutf8: /proc/self/mem: Input/output error\n";
  // --json: a record in place for each unreadable input.
  const auto unreadable = [](const char* name, const char* reason) {
    return "{\"file\":\"" + std::string(name) + "\",\"error\":\"" + reason + "\"}\n";
  };
  std::string want_json = json_validate("a", 6, 0) + unreadable("dangling", "No such file or directory") +
                          json_validate("b", 7, 0) + unreadable("loop1", "Too many levels of symbolic links") +
                          unreadable("a/x", "Not a directory") + unreadable("dir", "Is a directory") +
                          unreadable("/proc/self/mem", "Input/output error");
  if (::geteuid() != 0) {
    write("locked", "secret");
    ::chmod((dir_ / "locked").c_str(), 0);
    args.insert(args.end() - 1, "locked");
    want_err += "gutf8: locked: Permission denied\n";
    want_json += unreadable("locked", "Permission denied");
  }
  want_json += json_validate("c", 5, 0);
  std::vector<std::string> decode{"decode"};
  decode.insert(decode.end(), args.begin(), args.end());
  const result d = run(decode);
  EXPECT_EQ(d.status, 3);
  EXPECT_EQ(d.out, utf32le(U"first second third"));
  EXPECT_EQ(d.err, want_err);
  // -o: failure keeps no OUT.
  decode.insert(decode.end(), {"-o", "out"});
  EXPECT_EQ(run(decode).status, 3);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  std::vector<std::string> validate{"validate", "--json"};
  validate.insert(validate.end(), args.begin(), args.end());
  const result v = run(validate);
  EXPECT_EQ(v.status, 3);
  EXPECT_EQ(v.out, want_json);
  EXPECT_FALSE(has_temporary(listing()));
}

// ---------------------------------------------------------------- SIGINT ----

TEST_F(hostile, SigintWhileReadingLeavesNoOutput) {
  const std::vector<std::vector<std::string>> commands = {
      {"decode", "fifo", "-o", "out"},
      {"validate", "--replace", "fifo", "-o", "out"},
      {"encode", "--errors=replace", "fifo", "-o", "out"},
      {"stats", "fifo"},  // no OUT; must still die by the signal, promptly
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
    const pid_t pid = spawn(args, {});
    ASSERT_GT(pid, 0);
    // Opening for writing waits for gutf8 to open the FIFO for reading.
    const int fd = ::open((dir_ / "fifo").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    // Feed it slowly: 64 KiB now (beyond the first read), then a trickle.
    const std::string block(64 << 10, 'a');
    ASSERT_EQ(::write(fd, block.data(), block.size()), ssize_t(block.size()));
    const bool writes = args.back() == "out";
    for (int i = 0; i < 300 && writes && !has_temporary(listing()); ++i) {
      ASSERT_EQ(::write(fd, "abcd", 4), 4);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (writes) {
      EXPECT_TRUE(has_temporary(listing()));
    }
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(::write(fd, "abcd", 4), 4);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGINT);
    EXPECT_EQ(wait_bounded(pid, std::chrono::seconds(20)), 128 + SIGINT);
    ::close(fd);
    EXPECT_FALSE(fs::exists(dir_ / "out"));
    EXPECT_FALSE(has_temporary(listing()));
    fs::remove(dir_ / "fifo");
  }
}

// -------------------------------------------------------- GPU out of memory ----

// --gpu-memory (options::device_memory_limit) below what even the smallest sub-block needs takes
// the path of a real cudaErrorMemoryAllocation: retries with smaller sub-blocks, then a device failure.
TEST_F(hostile, GpuOutOfMemoryForEveryCommand) {
  if (!cuda_available()) GTEST_SKIP() << "no usable GPU (gutf8::cuda_available() is false)";
  std::string text;
  while (text.size() < (std::size_t{2} << 20)) text += "h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80 \xFF\n";
  write("text", text);
  write("u32", utf32le(std::u32string(std::size_t{1} << 19, U'\u00E9')));
  write("out", "previous");
  const std::vector<std::string> cap{"--backend=cuda", "--gpu-memory", "64K"};
  const std::vector<std::vector<std::string>> cases = {
      {"decode", "text", "-o", "out"},
      {"decode", "--errors=replace", "text"},
      {"encode", "u32", "-o", "out"},
      {"validate", "text"},
      {"validate", "--json", "text"},
      {"validate", "--replace", "text", "-o", "out"},
      {"stats", "--top", "5", "text"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{c.front()};
    args.insert(args.end(), cap.begin(), cap.end());
    args.insert(args.end(), c.begin() + 1, c.end());
    for (const bool from_stdin : {false, true}) {
      std::vector<std::string> a = args;
      std::string input;
      if (from_stdin) {  // the input as standard input: no size known in advance
        const auto file = std::find_if(a.begin() + 1, a.end(),
                                       [](const std::string& x) { return x == "text" || x == "u32"; });
        input = read(*file);
        *file = "-";
      }
      SCOPED_TRACE(testing::PrintToString(a));
      const result r = from_stdin ? run_stdin(a, input) : run(a);
      EXPECT_EQ(r.status, 3) << r.err;
      EXPECT_TRUE(r.err.starts_with("gutf8: ")) << r.err;
      EXPECT_NE(r.err.find("GPU memory"), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(read("out"), "previous");
      EXPECT_FALSE(has_temporary(listing()));
    }
  }
}

}  // namespace
}  // namespace gutf8::cli_test
