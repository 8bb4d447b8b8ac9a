// String columns for the Python package: Arrow arrays handed over as Arrow PyCapsules
// (__arrow_c_array__), the per-row operations of gutf8/columns.hpp, results as new capsules.
#pragma once

#include <nanobind/nanobind.h>

namespace gutf8_py {

// Adds _gutf8.col_* and the exception type _gutf8.InvalidRow (args: row, offset, kind).
void bind_columns(nanobind::module_& m);

}  // namespace gutf8_py
