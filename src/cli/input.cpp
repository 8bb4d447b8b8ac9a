#include "cli/input.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <exception>
#include <thread>
#include <vector>

namespace gutf8::cli {

std::string display_name(std::string_view path) {
  return path == "-" ? std::string("<stdin>") : std::string(path);
}

std::optional<std::uint64_t> regular_file_size(const std::string& path) {
  struct stat st {};
  const int status = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  if (status != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

namespace {
// Files of the kernel's pseudo filesystems claim a nominal size (sysfs: 4096, procfs: 0) that
// says nothing of what a read returns: they are read like a pipe, to the end.
bool size_is_nominal(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
      return true;
    default:
      return false;
  }
}
}  // namespace

input_file::input_file(const std::string& path) : name_(display_name(path)) {
  if (path == "-") {
    fd_ = file_descriptor(STDIN_FILENO, /*owned=*/false);
  } else {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw input_error(name_, error_text(errno));
    fd_ = file_descriptor(fd);
  }
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) throw input_error(name_, error_text(errno));
  if (S_ISDIR(st.st_mode)) throw input_error(name_, error_text(EISDIR));
  if (S_ISREG(st.st_mode) && !size_is_nominal(fd_.get())) {
    size_ = static_cast<std::uint64_t>(st.st_size);
    (void)::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint; failure is harmless
  }
}

namespace {
// Large reads of a regular file are split into slices read at once with pread: from the page
// cache a read is a memory copy, which one thread does at ~9 GB/s on the GPU host (its 16
// cores: 36 GB/s with 4 threads, 68 with 8, 105 with 16; bench_host_limits), below the 55 GB/s
// PCIe link the GPU backend can take. 8 threads leave cores for the CPU codec and the writer.
constexpr std::size_t read_slice = std::size_t{2} << 20;
constexpr std::size_t max_read_threads = 8;
}  // namespace

std::size_t input_file::read_at(std::span<std::byte> buffer, std::uint64_t offset) const {
  std::size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = ::pread(fd_.get(), buffer.data() + got, buffer.size() - got,
                              static_cast<off_t>(offset + got));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw input_error(name_, error_text(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::uint64_t input_file::tell() const {
  const off_t at = ::lseek(fd_.get(), 0, SEEK_CUR);
  if (at < 0) throw input_error(name_, error_text(errno));
  return static_cast<std::uint64_t>(at);
}

void input_file::seek(std::uint64_t offset) {
  if (::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_SET) < 0)
    throw input_error(name_, error_text(errno));
}

std::size_t input_file::read_parallel(std::span<std::byte> buffer, std::uint64_t at) {
  const std::size_t k = std::min(max_read_threads, buffer.size() / read_slice);
  const std::size_t slice = (buffer.size() + k - 1) / k;
  std::vector<std::size_t> got(k, 0);
  std::vector<std::exception_ptr> failure(k);
  const auto work = [&](std::size_t i) {
    const std::size_t begin = i * slice, length = std::min(slice, buffer.size() - begin);
    try {
      got[i] = read_at(buffer.subspan(begin, length), at + begin);
    } catch (...) {
      failure[i] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (std::size_t i = 1; i < k; ++i) helpers.emplace_back(work, i);
    work(0);
  }
  std::size_t filled = 0;
  for (std::size_t i = 0; i < k; ++i) {
    if (failure[i]) std::rethrow_exception(failure[i]);
    filled += got[i];
    if (got[i] < std::min(slice, buffer.size() - i * slice)) break;  // the end of the file
  }
  return filled;
}

std::size_t input_file::read(std::span<std::byte> buffer, const std::atomic<bool>* cancel) {
  if (size_ && buffer.size() >= 2 * read_slice) {
    // The descriptor's offset is kept up to date: standard input may be shared with others.
    const off_t at = ::lseek(fd_.get(), 0, SEEK_CUR);
    if (at >= 0) {
      const std::size_t filled = read_parallel(buffer, static_cast<std::uint64_t>(at));
      ::lseek(fd_.get(), at + static_cast<off_t>(filled), SEEK_SET);
      if (filled < buffer.size()) check_not_shrunk(static_cast<std::uint64_t>(at) + filled);
      return filled;
    }
  }
  std::size_t filled = 0;
  const bool may_block = cancel != nullptr && !size_;  // not a regular file
  while (filled < buffer.size()) {
    if (may_block) {
      if (cancel->load(std::memory_order_relaxed)) break;
      pollfd p{fd_.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
      // ready < 0 (other errors) or an event: read() reports what is wrong, or the data / EOF.
    }
    const ssize_t n = ::read(fd_.get(), buffer.data() + filled, buffer.size() - filled);
    if (n == 0) {
      if (size_) check_not_shrunk(tell());
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      throw input_error(name_, error_text(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
  return filled;
}

// The end of a regular file came at `end`: before the size it had when opened, the file
// shrank under the reader, and what was read is not the file (the file pipeline's planned
// pieces fail the same way; a file that grows is read to its new end).
void input_file::check_not_shrunk(std::uint64_t end) const {
  if (size_ && end < *size_) shrank();
}

void input_file::read_exactly_at(std::span<std::byte> buffer, std::uint64_t offset) const {
  if (read_at(buffer, offset) != buffer.size()) shrank();
}

void input_file::shrank() const { throw input_error(name_, "the file shrank while it was read"); }

}  // namespace gutf8::cli
