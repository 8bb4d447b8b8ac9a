// What gutf8 does when stderr or stdout is a terminal: the progress bar (fitted to the width, one
// unit, hidden by -q) and the refusal to write binary UTF-32 to a terminal. A pseudo-terminal
// stands in for the terminal.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "cli/progress.hpp"
#include "cli_runner.hpp"

namespace gutf8::cli_test {
namespace {

// A pseudo-terminal of the given width in raw mode (no CR added to LF). The test keeps the
// slave open too, so what gutf8 wrote stays readable after it exits.
class pseudo_terminal {
 public:
  explicit pseudo_terminal(unsigned short columns) {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    name_ = ::ptsname(master_);
    slave_ = ::open(name_.c_str(), O_RDWR | O_NOCTTY);
    termios mode{};
    if (slave_ < 0 || ::tcgetattr(slave_, &mode) != 0) return;
    ::cfmakeraw(&mode);
    ::tcsetattr(slave_, TCSANOW, &mode);
    const winsize size{24, columns, 0, 0};
    ::ioctl(master_, TIOCSWINSZ, &size);
    ::fcntl(master_, F_SETFL, O_NONBLOCK);
  }
  ~pseudo_terminal() {
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  pseudo_terminal(const pseudo_terminal&) = delete;
  pseudo_terminal& operator=(const pseudo_terminal&) = delete;

  [[nodiscard]] bool usable() const { return slave_ >= 0; }
  [[nodiscard]] const std::string& name() const { return name_; }
  // Everything written to the terminal so far.
  std::string drain() {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(master_, buffer, sizeof buffer)) > 0;) text.append(buffer, std::size_t(n));
    return text;
  }

 private:
  int master_ = -1, slave_ = -1;
  std::string name_;
};

using terminal = cli;

// stdin delivers 3 bytes, then 3 more after 1.2 s: long enough for the bar's first draw (0.5 s).
std::string slow_validate(const std::string& options, const std::string& tty) {
  return "(printf 'abc'; sleep 1.2; printf 'def') | \"$GUTF8\" validate " + options + " 2>" + tty;
}

TEST_F(terminal, ProgressBarIsDrawnAndFitsANarrowTerminal) {
  pseudo_terminal tty(10);
  if (!tty.usable()) GTEST_SKIP() << "no pseudo-terminal available";
  const result wide = shell(slow_validate("--backend=" + test_backend(), tty.name()));
  EXPECT_EQ(wide.status, 0) << wide.err;
  const std::string drawn = tty.drain();
  // Without a total the bar is "6 B  0.00 GB/s": in 9 usable columns only "6 B" fits.
  EXPECT_NE(drawn.find("\r6 B\033[K"), std::string::npos) << drawn;
  EXPECT_EQ(drawn.find("GB/s"), std::string::npos) << drawn;
  EXPECT_TRUE(drawn.ends_with("\r\033[K")) << "the bar is erased at the end: " << drawn;
}

TEST_F(terminal, QuietHidesTheProgressBar) {
  pseudo_terminal tty(80);
  if (!tty.usable()) GTEST_SKIP() << "no pseudo-terminal available";
  const result shown = shell(slow_validate("--backend=" + test_backend(), tty.name()));
  EXPECT_EQ(shown.status, 0);
  EXPECT_NE(tty.drain().find("GB/s"), std::string::npos) << "the bar must show without -q";
  for (const char* quiet : {"-q", "--quiet"}) {
    const result r = shell(slow_validate(std::string(quiet) + " --backend=" + test_backend(), tty.name()));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(tty.drain(), "") << quiet;
  }
}

TEST_F(terminal, ProgressTextUsesOneUnitAndFitsEveryWidth) {
  using namespace std::chrono_literals;
  const std::uint64_t mib = 1 << 20;
  const std::string full = gutf8::cli::progress_text(1006 * mib, 1024 * mib, 2s, 200);
  EXPECT_TRUE(full.starts_with("1006.0 / 1024.0 MiB   98%  0.53 GB/s  ETA 0:01")) << full;
  EXPECT_EQ(gutf8::cli::progress_text(1000, 12345, 1s, 200).substr(0, 14), "1.0 / 12.1 KiB");
  EXPECT_EQ(gutf8::cli::progress_text(1000, 9 * 1024, 1s, 200).substr(0, 14), "1000 / 9216 B ");
  EXPECT_EQ(gutf8::cli::progress_text(7, 100, 1s, 200).substr(0, 9), "7 / 100 B");
  const std::string widest = gutf8::cli::progress_text(3 * mib + 17, 5 * mib + 3, 3s, 1000);
  for (unsigned columns = 0; columns < 80; ++columns) {
    SCOPED_TRACE(columns);
    const std::string text = gutf8::cli::progress_text(3 * mib + 17, 5 * mib + 3, 3s, columns);
    EXPECT_LT(text.size(), std::max(columns, 1u));  // the last column is never written
    EXPECT_TRUE(widest.starts_with(text)) << text;
    // Whole fields are left out from the end before the first one is cut.
    if (columns > 20) {  // the first field alone is cut below 21
      EXPECT_TRUE(text == widest || widest.substr(text.size()).starts_with("  ")) << text;
    }
  }
  EXPECT_EQ(gutf8::cli::progress_text(3 * mib, 5 * mib, 3s, 12), "3072.0 / 51");
}

TEST_F(terminal, BinaryOutputToATerminalIsRefusedUnlessForced) {
  pseudo_terminal tty(80);
  if (!tty.usable()) GTEST_SKIP() << "no pseudo-terminal available";
  write("t.txt", "hi");
  const result refused = run({"decode", "t.txt"}, {.stdout_path = tty.name()});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("refusing to write binary UTF-32LE to a terminal"), std::string::npos)
      << refused.err;
  EXPECT_EQ(tty.drain(), "");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"decode", "-f", "t.txt"},
                                               std::vector<std::string>{"decode", "--force", "t.txt"},
                                               std::vector<std::string>{"decode", "-o", "-", "t.txt"}}) {
    SCOPED_TRACE(testing::PrintToString(args));
    const result r = run(args, {.stdout_path = tty.name()});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(tty.drain(), std::string("h\0\0\0i\0\0\0", 8));
  }
  EXPECT_FALSE(fs::exists(dir_ / "-")) << "-o - is standard output, not a file named -";
  // UTF-8 is text: encode writes to a terminal as cat would.
  write("t.u32", utf32le(U"ok"));
  EXPECT_EQ(run({"encode", "t.u32"}, {.stdout_path = tty.name()}).status, 0);
  EXPECT_EQ(tty.drain(), "ok");
}

}  // namespace
}  // namespace gutf8::cli_test
