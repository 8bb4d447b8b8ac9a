#include "cli/output.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/signals.hpp"

namespace gutf8::cli {

fd_writer::fd_writer(int fd, std::size_t capacity) : fd_(fd), capacity_(capacity) {}

void fd_writer::write(std::span<const std::byte> data) {
  // Large writes go out as they are: copying them into the buffer first would be a serial copy
  // of everything on the writing thread (16 GiB for 4 GiB of ASCII decoded).
  const bool large = data.size() >= capacity_ / 16;
  if (large || buffer_.size() + data.size() > capacity_) flush();
  if (large) {
    write_through(data);
    return;
  }
  if (buffer_.capacity() < capacity_) buffer_.reserve(capacity_);
  buffer_.insert(buffer_.end(), data.begin(), data.end());
}

void fd_writer::flush() {
  write_through(buffer_);
  buffer_.clear();
}

void fd_writer::write_through(std::span<const std::byte> data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw broken_pipe{};
      if (errno == EFAULT) input_shrank();  // the bytes lay in a mapped input file's pages, now gone
      throw io_error("write error: " + error_text(errno));
    }
    data = data.subspan(static_cast<std::size_t>(n));
  }
}

namespace {

unsigned default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666u & ~static_cast<unsigned>(mask);
}

// A symbolic link OUT is followed, so that the link keeps pointing at the new text
// instead of being replaced by a regular file.
std::string resolve_link(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

}  // namespace

atomic_output_file::atomic_output_file(const std::string& path)
    : shown_(path), target_(resolve_link(path)) {
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const int fd = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw io_error(shown_ + ": " + error_text(errno));
    fd_ = file_descriptor(fd);
    return;
  }
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  create_temporary(target_, exists ? (st.st_mode & 07777u) : default_file_mode());
}

void atomic_output_file::create_temporary(const std::string& target, unsigned mode) {
  // ".OUT.gutf8-XXXXXX" beside OUT: hidden, and recognisable if a crash leaves it.
  const auto slash = target.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::string pattern = target.substr(0, base) + "." + target.substr(base) + ".gutf8-XXXXXX";
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) throw io_error(shown_ + ": " + error_text(errno));
  temporary_ = std::move(pattern);
  fd_ = file_descriptor(fd);
  mode_ = mode;
  register_temporary(temporary_.c_str());
}

void atomic_output_file::commit() {
  if (temporary_.empty()) {  // written directly
    if (const int err = fd_.close()) throw io_error("write error: " + error_text(err));
    committed_ = true;
    return;
  }
  if (::fchmod(fd_.get(), mode_) != 0) throw io_error(shown_ + ": " + error_text(errno));
  if (const int err = fd_.close()) throw io_error("write error: " + error_text(err));
  if (::rename(temporary_.c_str(), target_.c_str()) != 0)
    throw io_error(shown_ + ": " + error_text(errno));
  unregister_temporary();
  committed_ = true;
}

atomic_output_file::~atomic_output_file() {
  if (committed_ || temporary_.empty()) return;
  unregister_temporary();
  ::unlink(temporary_.c_str());
}

}  // namespace gutf8::cli
