#include "file_runner.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "gutf8/error.hpp"

namespace gutf8_py {

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw gutf8::system_call_failure(errno, path);
  if (!S_ISREG(st.st_mode)) throw gutf8::error(gutf8::errc::io_failure, path + ": not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

gutf8::file_report run_file(const std::string& path, const gutf8::file_config& config,
                            const gutf8::output_sink& sink, const gutf8::progress_function& progress) {
  (void)file_size(path);
  return gutf8::process_file(path, config, sink, progress);
}

}  // namespace gutf8_py
