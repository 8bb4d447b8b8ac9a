// Output: a large-buffered writer on a file descriptor, and the -o file that appears
// only when the command succeeds.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/io.hpp"

namespace gutf8::cli {

// Collects small writes into one large buffer and passes large ones straight through,
// so that neither 16-byte chunks nor JSON lines cost a system call each.
// Throws io_error ("write error: REASON") or broken_pipe (EPIPE).
class fd_writer {
 public:
  static constexpr std::size_t default_capacity = std::size_t{1} << 20;

  explicit fd_writer(int fd, std::size_t capacity = default_capacity);
  void write(std::span<const std::byte> data);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
  // Must be called at the end: a destructor could not report the error.
  void flush();

 private:
  void write_through(std::span<const std::byte> data);

  int fd_;
  std::size_t capacity_;
  std::vector<std::byte> buffer_;
};

// The file behind -o OUT. A regular (or not yet existing) OUT is written to a temporary
// in the same directory (same file system, so rename is atomic) and renamed over OUT by
// commit(); destroying the object uncommitted removes the temporary and leaves a
// previous OUT untouched. A signal removes it too (see signals.hpp). OUT that exists but
// is not a regular file (/dev/null, /dev/full, a FIFO) cannot be replaced by renaming and
// is written directly.
class atomic_output_file {
 public:
  explicit atomic_output_file(const std::string& path);  // throws io_error
  ~atomic_output_file();
  atomic_output_file(const atomic_output_file&) = delete;
  atomic_output_file& operator=(const atomic_output_file&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  void commit();  // throws io_error; call after the last flush

 private:
  void create_temporary(const std::string& target, unsigned mode);

  std::string shown_;    // the name as the user gave it, for messages
  std::string target_;   // OUT, through a symbolic link if OUT is one
  std::string temporary_;  // empty when writing directly
  unsigned mode_ = 0;    // permissions OUT gets on commit
  file_descriptor fd_;
  bool committed_ = false;
};

}  // namespace gutf8::cli
