#include "reports.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "utf8/utf8_rules.hpp"

namespace nb = nanobind;

namespace gutf8_py {

summary summary_of(const gutf8::summary& s, std::span<const std::byte> input, unsigned unit) {
  summary r{.bytes = s.bytes, .errors = s.errors};
  if (!s.first_error) return r;
  const gutf8::error_position& e = *s.first_error;
  first_error f{.offset = e.offset, .line = e.line, .column = e.column, .kind = e.kind, .length = unit};
  if (unit == 1 && e.offset < input.size())
    f.length = gutf8::detail::error_unit_length(reinterpret_cast<const std::uint8_t*>(input.data()) + e.offset,
                                                input.size() - e.offset);
  else if (unit != 1 && e.offset + unit > input.size() && e.offset < input.size())
    f.length = input.size() - e.offset;  // the ragged tail of UTF-32 input
  r.first = std::move(f);
  return r;
}

text_stats stats_of(const gutf8::text_stats& t, std::span<const std::byte> input) {
  text_stats r;
  static_cast<summary&>(r) = summary_of(t.input, input);
  r.code_points = t.code_points;
  r.lines = t.lines;
  r.by_length = t.by_length;
  return r;
}

namespace {

void bind_error_kind(nb::module_& m) {
  // Every gutf8::error_kind (tests/python/test_types.py compares this list with the C++ enum).
  nb::enum_<gutf8::error_kind>(m, "ErrorKind", "Why a byte (UTF-8) or a value (UTF-32, UTF-16) starts an error unit.")
      .value("none", gutf8::error_kind::none)
      .value("stray_continuation", gutf8::error_kind::stray_continuation)
      .value("invalid_byte", gutf8::error_kind::invalid_byte)
      .value("overlong", gutf8::error_kind::overlong)
      .value("surrogate", gutf8::error_kind::surrogate)
      .value("too_large", gutf8::error_kind::too_large)
      .value("truncated", gutf8::error_kind::truncated)
      .value("truncated_at_end", gutf8::error_kind::truncated_at_end)
      .value("ragged_tail", gutf8::error_kind::ragged_tail)
      .value("unpaired_surrogate", gutf8::error_kind::unpaired_surrogate)
      .value("odd_length", gutf8::error_kind::odd_length);
}

void bind_summaries(nb::module_& m) {
  nb::class_<first_error>(m, "FirstError", "The first error unit of a pass.")
      .def_ro("offset", &first_error::offset)
      .def_ro("line", &first_error::line)
      .def_ro("column", &first_error::column)
      .def_ro("kind", &first_error::kind)
      .def_ro("length", &first_error::length, "Bytes of the error unit.")
      .def_prop_ro("reason", [](const first_error& e) { return std::string(gutf8::describe(e.kind)); })
      .def_prop_ro(
          "unit", [](const first_error& e) { return nb::bytes(e.unit.data(), e.unit.size()); },
          "File runs: the unit's bytes, read back from the file's text; empty otherwise.");
  nb::class_<summary>(m, "Summary", "What one pass over an input found.")
      .def_ro("bytes", &summary::bytes)
      .def_ro("errors", &summary::errors)
      .def_ro("first", &summary::first)
      .def_ro("seconds", &summary::seconds)
      .def_prop_ro(
          "failure",
          [](const summary& s) -> nb::object {
            if (!s.failure) return nb::none();
            nb::object text = nb::steal(PyUnicode_DecodeFSDefault(s.failure->c_str()));  // names need not be UTF-8
            if (!text.is_valid()) throw nb::python_error();
            return text;
          },
          "Why the file could not be read (file runs), else None.");
  nb::class_<text_stats, summary>(m, "TextStats", "A Summary plus counts.")
      .def_ro("code_points", &text_stats::code_points)
      .def_ro("lines", &text_stats::lines)
      .def_ro("by_length", &text_stats::by_length);
}

void bind_rows(nb::module_& m) {
  nb::class_<gutf8::row_error>(m, "RowError", "A column's first invalid row (the argument of InvalidRow).")
      .def_ro("row", &gutf8::row_error::row)
      .def_ro("offset", &gutf8::row_error::offset, "Byte offset of the error in the row.")
      .def_ro("kind", &gutf8::row_error::kind);
  nb::class_<row_validity>(m, "RowValidity", "is_valid of a column.")
      .def_ro("valid", &row_validity::valid, "The boolean column's Arrow capsules.")
      .def_ro("invalid_rows", &row_validity::invalid_rows)
      .def_ro("first", &row_validity::first);
}

}  // namespace

void bind_reports(nb::module_& m) {
  bind_error_kind(m);
  bind_summaries(m);
  bind_rows(m);
}

}  // namespace gutf8_py
