// Reading one input (a file or standard input) in large chunks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cli/io.hpp"

namespace gutf8::cli {

// How a file is named in messages: "-" is shown as "<stdin>".
std::string display_name(std::string_view path);

// The size of a regular file, for the progress bar's total and ETA; nullopt for pipes,
// terminals, devices and files that cannot be examined (their error comes on open).
std::optional<std::uint64_t> regular_file_size(const std::string& path);

class input_file {
 public:
  // Opens path ("-" = standard input); throws input_error ("FILE: reason"), also for a
  // directory, so that the error names the file rather than a later read.
  explicit input_file(const std::string& path);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // The size when it is a regular file (not one of procfs or sysfs, whose sizes are nominal).
  [[nodiscard]] std::optional<std::uint64_t> size() const noexcept { return size_; }

  // Fills buffer unless the input ends first; returns the bytes read, 0 at the end. A regular
  // file that ends before the size it had when opened throws input_error (it shrank).
  // Filling completely gives the library chunks of the requested size even from a pipe.
  // With cancel, a read from a pipe or terminal waits at most ~0.1 s at a time and returns
  // early (with what it has) once *cancel is true, so a reader thread can always be joined.
  std::size_t read(std::span<std::byte> buffer, const std::atomic<bool>* cancel = nullptr);

  // Regular files: fills buffer from byte `offset` of the file unless the file ends first and
  // returns the bytes read; safe on several threads at once (pread), the file offset unmoved.
  std::size_t read_at(std::span<std::byte> buffer, std::uint64_t offset) const;
  // read_at that fills buffer or throws input_error: bytes the file had when the run began.
  void read_exactly_at(std::span<std::byte> buffer, std::uint64_t offset) const;
  // The file offset: where the next read() starts, and where the input begins for read_at's
  // users (standard input may be a regular file that others have read from).
  [[nodiscard]] std::uint64_t tell() const;
  void seek(std::uint64_t offset);
  [[nodiscard]] int native_handle() const noexcept { return fd_.get(); }

 private:
  std::size_t read_parallel(std::span<std::byte> buffer, std::uint64_t at);
  void check_not_shrunk(std::uint64_t end) const;
  [[noreturn]] void shrank() const;

  file_descriptor fd_;
  std::string name_;
  std::optional<std::uint64_t> size_;
};

}  // namespace gutf8::cli
