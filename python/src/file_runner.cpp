#include "file_runner.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "gutf8/error.hpp"

namespace gutf8_py {
namespace {

[[noreturn]] void io_error(const std::string& path, const char* what) {
  throw gutf8::error(gutf8::errc::io_failure, path + ": " + what + ": " + std::strerror(errno));
}

class file_descriptor {
 public:
  explicit file_descriptor(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) io_error(path, "cannot open");
  }
  ~file_descriptor() { ::close(fd_); }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

std::uint64_t size_of(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) io_error(path, "cannot stat");
  if (!S_ISREG(st.st_mode)) throw gutf8::error(gutf8::errc::io_failure, path + ": not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

std::uint64_t file_size(const std::string& path) { return size_of(file_descriptor(path).get(), path); }

gutf8::file_report run_file(const std::string& path, const gutf8::file_config& config,
                            const gutf8::output_sink& sink, const gutf8::progress_function& progress) {
  const auto start = std::chrono::steady_clock::now();
  const file_descriptor fd(path);
  const std::uint64_t size = size_of(fd.get(), path);
  gutf8::stream_config stream_config = config.stream;
  stream_config.backend.size_hint = size;
  gutf8::stream st(stream_config);
  std::vector<std::byte> chunk(std::size_t{8} << 20), out;
  std::uint64_t done = 0;
  bool going = true;
  while (going) {
    const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_error(path, "read failed");
    if (n == 0) break;
    done += static_cast<std::uint64_t>(n);
    out.clear();
    going = st.feed({chunk.data(), static_cast<std::size_t>(n)}, out);
    if (sink && !out.empty()) sink(out);
    if (progress) progress(done);
  }
  if (going && done != size)
    throw gutf8::error(gutf8::errc::io_failure, path + ": the file changed size while it was read");
  out.clear();
  st.finish(out);
  if (sink && !out.empty()) sink(out);
  gutf8::file_report r;
  r.stats = st.stats();
  r.stopped = st.stopped();
  r.timings.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gutf8_py
