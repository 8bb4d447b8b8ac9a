// The results the native layer hands to python/gutf8, as typed structs bound as classes
// (_gutf8.FirstError, Summary, TextStats, RowValidity, and gutf8::row_error as RowError): the
// package reads attributes, never string keys, and makes its frozen dataclasses of them.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "gutf8/columns.hpp"
#include "gutf8/types.hpp"

namespace gutf8_py {

// The first error unit of a pass: where it starts, why, and how many bytes it spans.
struct first_error {
  std::uint64_t offset = 0;
  std::uint64_t line = 1;
  std::uint64_t column = 1;
  gutf8::error_kind kind = gutf8::error_kind::none;
  std::uint64_t length = 1;  // UnicodeDecodeError.end - start
  std::string unit;          // file runs: the unit's bytes read back from the file's text
};

// What one pass over an input found; file runs add the run's seconds, or why a file could not be
// read (then the counts are 0).
struct summary {
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;
  std::optional<first_error> first;
  std::optional<double> seconds;
  std::optional<std::string> failure;  // the library's message, in the file system's encoding
};

struct text_stats : summary {
  std::uint64_t code_points = 0;
  std::uint64_t lines = 0;
  std::array<std::uint64_t, 4> by_length{};
};

// is_valid of a column: the boolean column's Arrow capsules, the invalid rows and the first one.
struct row_validity {
  nanobind::object valid;  // (schema, array) capsules, or (schema, device array, device type)
  std::int64_t invalid_rows = 0;
  std::optional<gutf8::row_error> first;
};

// The summary of a pass over `input`; the first error unit's length is measured in the input when
// it is at hand (`unit`: 1 for UTF-8, 4 for UTF-32, whose ragged tail is shorter).
summary summary_of(const gutf8::summary& s, std::span<const std::byte> input = {}, unsigned unit = 1);
text_stats stats_of(const gutf8::text_stats& t, std::span<const std::byte> input = {});

// Adds the classes above and ErrorKind to the module.
void bind_reports(nanobind::module_& m);

}  // namespace gutf8_py
