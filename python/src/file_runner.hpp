// How the Python package runs a whole file: the library's file pipeline (gutf8::process_file,
// all CPU cores and the GPUs that pay), after a check that gives Python an OSError for paths that
// are not regular files.
#pragma once

#include <cstdint>
#include <string>

#include "gutf8/file.hpp"

namespace gutf8_py {

// Size of the regular file at path (throws gutf8::error(io_failure) when it cannot be read or is
// not a regular file).
std::uint64_t file_size(const std::string& path);

gutf8::file_report run_file(const std::string& path, const gutf8::file_config& config,
                            const gutf8::output_sink& sink, const gutf8::progress_function& progress);

}  // namespace gutf8_py
