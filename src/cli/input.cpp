#include "cli/input.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace gutf8::cli {

std::string display_name(std::string_view path) {
  return path == "-" ? std::string("<stdin>") : std::string(path);
}

gutf8::input input_named(const std::string& path) {
  return path == "-" ? gutf8::input::descriptor(STDIN_FILENO, display_name(path)) : gutf8::input::file(path);
}

std::optional<std::uint64_t> regular_file_size(const std::string& path) {
  struct stat st {};
  const int status = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  if (status != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace gutf8::cli
