#include "cli/io.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace gutf8::cli {

std::string error_text(int errnum) {
  char buffer[256] = {};
  // GNU strerror_r may return a static string instead of filling the buffer.
  const char* text = strerror_r(errnum, buffer, sizeof buffer);
  return text ? std::string(text) : "error " + std::to_string(errnum);
}

void write_stderr(std::string_view text) noexcept {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

int file_descriptor::close() noexcept {
  int status = 0;
  if (fd_ >= 0 && owned_ && ::close(fd_) != 0) status = errno;
  fd_ = -1;
  owned_ = false;
  return status;
}

}  // namespace gutf8::cli
