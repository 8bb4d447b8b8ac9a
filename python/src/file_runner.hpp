// How the Python package runs files: one gutf8::run (the library's input engine) over the paths,
// outputs to a per-input sink, one outcome a path in order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gutf8/engine.hpp"

namespace gutf8_py {

struct file_outcome {
  gutf8::input_report report;
  std::optional<gutf8::error> failure;  // the file could not be read (report is then empty)
};

// sink(index, bytes): the output of path `index`, in order (none for validate).
using file_sink = std::function<void(std::size_t, std::span<const std::byte>)>;

// Size of the regular file at path (throws gutf8::error(io_failure) when it cannot be read or is
// not a regular file): what decode_file allocates for.
std::uint64_t file_size(const std::string& path);

// Whether the file starts as a compressed format that a run reads as its text (false when it
// cannot be read: the run reports that).
bool compressed_file(const std::string& path);

std::vector<file_outcome> run_files(const std::vector<std::string>& paths, const gutf8::run_config& config,
                                    const file_sink& sink, const std::function<void(std::uint64_t)>& progress,
                                    double* seconds = nullptr);

}  // namespace gutf8_py
