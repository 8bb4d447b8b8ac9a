// How the Python package runs a whole file. Until gutf8::process_file (include/gutf8/file.hpp)
// is in the library, run_file feeds a gutf8::stream by chunked reads with the same contract;
// then run_file becomes a call of process_file.
#pragma once

#include <cstdint>
#include <string>

#include "gutf8/file.hpp"

namespace gutf8_py {

// Size of the regular file at path (throws gutf8::error(io_failure) when it cannot be read).
std::uint64_t file_size(const std::string& path);

gutf8::file_report run_file(const std::string& path, const gutf8::file_config& config,
                            const gutf8::output_sink& sink, const gutf8::progress_function& progress);

}  // namespace gutf8_py
