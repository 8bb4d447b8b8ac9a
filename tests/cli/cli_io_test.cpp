// Inputs and outputs: stdin, several files, unreadable ones, -o atomicity, full disks,
// closed pipes and signals.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

using io = cli;

bool has_temporary(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [](const std::string& n) { return n.find(".gutf8-") != std::string::npos; });
}

TEST_F(io, StandardInputWithoutFileOrDash) {
  EXPECT_EQ(run_stdin({"decode"}, "A\xC3\xA9").out, utf32le(U"A\u00E9"));
  EXPECT_EQ(run_stdin({"decode", "-"}, "A\xC3\xA9").out, utf32le(U"A\u00E9"));
  EXPECT_EQ(run_stdin({"encode"}, utf32le(U"\u20AC")).out, "\xE2\x82\xAC");
}

TEST_F(io, SeveralFilesInOrderEachItsOwnStream) {
  write("a", "one\xE2\x82");  // a sequence cut by the end of the file...
  write("b", "\xAC two");     // ...is not completed by the next file
  const result r = run_stdin({"decode", "--errors=replace", "b", "-", "a"}, "\xC3\xA9");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, utf32le(U"\uFFFD two\u00E9one\uFFFD"));
  const result v = run({"validate", "-q", "a", "b"});
  EXPECT_EQ(v.status, 1);
}

TEST_F(io, MissingFileAmongGoodOnesStillProcessesThem) {
  write("a", "first ");
  write("b", "second");
  const result r = run({"decode", "a", "missing", "b"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "gutf8: missing: No such file or directory\n");
  EXPECT_EQ(r.out, utf32le(U"first second"));
  // The most severe status wins: I/O failure (3) over invalid input (1).
  write("bad", "\xFF");
  const result v = run({"validate", "-q", "bad", "missing"});
  EXPECT_EQ(v.status, 3);
}

TEST_F(io, DirectoryIsAnIoError) {
  std::filesystem::create_directory(dir_ / "sub");
  const result r = run({"validate", "sub"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "gutf8: sub: Is a directory\n");
}

TEST_F(io, EmptyInputIsValidAndGivesEmptyOutput) {
  write("empty", "");
  for (const char* command : {"decode", "encode", "validate"}) {
    SCOPED_TRACE(command);
    const result r = run({command, "empty"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
  }
  EXPECT_EQ(run_stdin({"validate", "--replace"}, "").out, "");
  EXPECT_EQ(run({"decode", "empty", "-o", "out"}).status, 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "out"));
  EXPECT_EQ(read("out"), "");
  const result s = run({"stats", "--json", "empty"});
  EXPECT_EQ(s.status, 0);
  EXPECT_NE(s.out.find("\"bytes\":0,\"code_points\":0,\"lines\":0,\"errors\":0"), std::string::npos)
      << s.out;
}

TEST_F(io, OutputFileAppearsOnSuccess) {
  write("in", "h\xC3\xA9");
  EXPECT_EQ(run({"decode", "in", "-o", "out"}).status, 0);
  EXPECT_EQ(read("out"), utf32le(U"h\u00E9"));
  EXPECT_EQ(run({"decode", "in", "--output=out2"}).status, 0);
  EXPECT_EQ(read("out2"), utf32le(U"h\u00E9"));
  EXPECT_FALSE(has_temporary(listing()));
}

TEST_F(io, StrictErrorLeavesNoOutputFile) {
  write("bad", "valid prefix, then \xFF");
  const result r = run({"decode", "bad", "-o", "out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
  EXPECT_FALSE(has_temporary(listing()));
}

TEST_F(io, FailureLeavesExistingOutputFileUntouched) {
  write("out", "previous");
  ::chmod((dir_ / "out").c_str(), 0640);
  write("bad", "\xFF");
  write("good", "fine");
  EXPECT_EQ(run({"decode", "bad", "-o", "out"}).status, 1);
  EXPECT_EQ(run({"decode", "good", "missing", "-o", "out"}).status, 3);
  EXPECT_EQ(run({"encode", "good", "-o", "out"}).status, 1);  // "fine" is not UTF-32
  EXPECT_EQ(read("out"), "previous");
  EXPECT_FALSE(has_temporary(listing()));
  // Success replaces it and keeps its permissions.
  EXPECT_EQ(run({"decode", "good", "-o", "out"}).status, 0);
  EXPECT_EQ(read("out"), utf32le(U"fine"));
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "out").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(io, OutputFileInMissingDirectoryIsAnIoError) {
  write("in", "x");
  const result r = run({"decode", "in", "-o", "no/such/dir/out"});
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(r.err.starts_with("gutf8: no/such/dir/out: ")) << r.err;
}

TEST_F(io, FullDeviceIsAWriteError) {
  write("in", "some text");
  const result to_stdout = run({"decode", "in"}, redirect{"/dev/null", "/dev/full"});
  EXPECT_EQ(to_stdout.status, 3);
  EXPECT_EQ(to_stdout.err, "gutf8: write error: No space left on device\n");
  const result to_file = run({"decode", "in", "-o", "/dev/full"});
  EXPECT_EQ(to_file.status, 3);
  EXPECT_EQ(to_file.err, "gutf8: write error: No space left on device\n");
  EXPECT_EQ(run({"validate", "--json", "in"}, redirect{"/dev/null", "/dev/full"}).status, 3);
  EXPECT_EQ(run({"stats", "in"}, redirect{"/dev/null", "/dev/full"}).status, 3);
}

TEST_F(io, ClosedPipeEndsQuietly) {
  write("big", std::string(8 << 20, 'x'));
  const result r = shell(
      "(\"$GUTF8\" decode --chunk-size 64K big 2>err; echo $? >status) | head -c 1 >/dev/null\n"
      "cat status err");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "0\n");  // exit status 0 and nothing on stderr
}

// With the repair going to OUT, standard output carries only the report: its reader leaving
// early ends the report, and OUT still gets the whole repair.
TEST_F(io, ClosedReportPipeKeepsTheRepairedOutput) {
  std::string repaired;
  for (int i = 0; i < 200000; ++i) repaired += "\xef\xbf\xbd";
  write("bad", std::string(200000, '\xff'));  // megabytes of error lines: written as they come
  const result r = shell(
      "(\"$GUTF8\" validate --replace -q --list-errors --max-errors 200000 -o clean bad 2>err; echo $? >status)"
      " | head -c 1 >/dev/null\n"
      "cat status err");
  EXPECT_EQ(r.out, "1\n");  // invalid input: 1; the closed pipe adds nothing and says nothing
  EXPECT_EQ(read("clean"), repaired);
}

TEST_F(io, SignalRemovesTemporaryAndKeepsPreviousOutput) {
  write("out", "previous");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  const pid_t pid = spawn({"decode", "fifo", "-o", "out"}, {});
  // Opening the FIFO for writing waits until gutf8 has opened it for reading, by which
  // time the temporary output exists.
  const int fd = ::open((dir_ / "fifo").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abc", 3), 3);
  for (int i = 0; i < 200 && !has_temporary(listing()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(has_temporary(listing()));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_for(pid), 128 + SIGTERM);  // dies by the signal, as the shell expects
  ::close(fd);
  EXPECT_FALSE(has_temporary(listing()));
  EXPECT_EQ(read("out"), "previous");
}

// procfs and sysfs files are regular files whose sizes are nominal (0 and 4096 bytes): gutf8
// reads them to their end like cat and iconv, neither stopping at the size nor calling a short
// read a shrunk file.
TEST_F(io, PseudoFilesystemFilesAreReadToTheirEnd) {
  for (const char* path : {"/proc/version", "/sys/devices/system/cpu/online"}) {
    std::ifstream f(path, std::ios::binary);
    if (!f) continue;
    const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    ASSERT_FALSE(text.empty()) << path;
    const result r = run({"stats", "--json", path});
    EXPECT_EQ(r.status, 0) << path << ": " << r.err;
    EXPECT_NE(r.out.find("\"bytes\":" + std::to_string(text.size()) + ","), std::string::npos) << r.out;
    const result v = run({"validate", path});
    EXPECT_EQ(v.status, 0) << path << ": " << v.err;
  }
}

// A file that shrinks while gutf8 reads it (a log rotated under it): the CPU backend reads a
// mapped file, where the missing pages raise SIGBUS; the GPU backend's reads come up short.
// Both must end with exit 3 and a message, never a crash. gutf8 is held mid-file by a FIFO
// on its standard output that this test stops reading, so the shrink lands inside the run. One
// GPU is named: the lanes of two read the whole 96 MiB ahead before the shrink (exit 0, rightly).
TEST_F(io, FileThatShrinksWhileReadIsAnInputError) {
  write("big", std::string(std::size_t{96} << 20, 'x'));
  const std::string fifo = (dir_ / "out").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader first, so that gutf8's open of its standard output does not wait.
  const int rfd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rfd, 0);
  const pid_t pid = spawn({"validate", "--replace", "--threads", "2", "--device", "0", "big"}, redirect{"/dev/null", fifo});
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::fcntl(rfd, F_SETFL, 0), 0);
  std::string buffer(std::size_t{1} << 20, '\0');
  std::size_t got = 0;
  while (got < buffer.size()) {  // output has begun: the file was sized and opened
    const ssize_t n = ::read(rfd, buffer.data(), buffer.size() - got);
    ASSERT_GT(n, 0);
    got += static_cast<std::size_t>(n);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its pipeline fills and waits
  ASSERT_EQ(::truncate((dir_ / "big").c_str(), 4096), 0);
  std::size_t drained = got;
  for (ssize_t n; (n = ::read(rfd, buffer.data(), buffer.size())) > 0;) drained += static_cast<std::size_t>(n);
  ::close(rfd);
  EXPECT_EQ(wait_for(pid), 3);
  EXPECT_LT(drained, std::size_t{96} << 20);
  EXPECT_NE(read(".stderr").find("shrank while it was read"), std::string::npos) << read(".stderr");
}

}  // namespace
}  // namespace gutf8::cli_test
