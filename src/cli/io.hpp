// Low-level I/O vocabulary of the CLI: an owning file descriptor and the exceptions that
// carry I/O failures up to the command loop (exit status 3) or end it quietly (EPIPE).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace gutf8::cli {

// Any I/O failure, already worded for the user ("FILE: No such file or directory",
// "write error: No space left on device"); printed after "gutf8: ", exit status 3.
class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An input that cannot be opened or read. Only that file is lost: the others still run.
class input_error : public io_error {
 public:
  input_error(const std::string& name, const std::string& reason)
      : io_error(name + ": " + reason), name_(name), reason_(reason) {}
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string name_, reason_;
};

// The reader downstream went away (EPIPE). Not an error: the work ends quietly.
struct broken_pipe {};

// Writes all of text to stderr, best effort: a failing stderr must not fail the command
// and leaves nowhere to complain to.
void write_stderr(std::string_view text) noexcept;

// "strerror(errno)" without the thread-safety trap of strerror.
std::string error_text(int errnum);

// Owns a POSIX file descriptor; standard streams are wrapped unowned.
class file_descriptor {
 public:
  file_descriptor() = default;
  explicit file_descriptor(int fd, bool owned = true) noexcept : fd_(fd), owned_(owned) {}
  file_descriptor(file_descriptor&& o) noexcept
      : fd_(std::exchange(o.fd_, -1)), owned_(std::exchange(o.owned_, false)) {}
  file_descriptor& operator=(file_descriptor&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
      owned_ = std::exchange(o.owned_, false);
    }
    return *this;
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  // Closes now and reports the error close() gave (NFS reports write errors only there).
  int close() noexcept;

 private:
  void reset() noexcept { (void)close(); }
  int fd_ = -1;
  bool owned_ = false;
};

}  // namespace gutf8::cli
