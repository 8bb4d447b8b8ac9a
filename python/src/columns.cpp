#include "columns.hpp"

#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "gutf8/columns.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace gutf8_py {
namespace {

// Capsule destructors of the Arrow PyCapsule interface: release what no consumer took, then free.
void drop_schema(PyObject* capsule) {
  std::unique_ptr<ArrowSchema> s(static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema")));
  if (s && s->release) s->release(s.get());
}
void drop_array(PyObject* capsule) {
  std::unique_ptr<ArrowArray> a(static_cast<ArrowArray*>(PyCapsule_GetPointer(capsule, "arrow_array")));
  if (a && a->release) a->release(a.get());
}

// (schema capsule, array capsule) of a result, for pyarrow.array(...) to import without a copy.
nb::tuple to_capsules(gutf8::column c) {
  auto schema = std::make_unique<ArrowSchema>();
  auto array = std::make_unique<ArrowArray>();
  std::move(c).export_to(array.get(), schema.get());
  nb::object s = nb::steal(PyCapsule_New(schema.get(), "arrow_schema", drop_schema));
  if (!s.is_valid()) throw nb::python_error();
  (void)schema.release();
  nb::object a = nb::steal(PyCapsule_New(array.get(), "arrow_array", drop_array));
  if (!a.is_valid()) throw nb::python_error();
  (void)array.release();
  return nb::make_tuple(s, a);
}

// The input: borrowed from the producer's capsules, which stay alive (and owned) for the call.
struct borrowed_column {
  const ArrowSchema* schema;
  const ArrowArray* array;
  borrowed_column(nb::handle schema_capsule, nb::handle array_capsule)
      : schema(static_cast<const ArrowSchema*>(PyCapsule_GetPointer(schema_capsule.ptr(), "arrow_schema"))),
        array(static_cast<const ArrowArray*>(PyCapsule_GetPointer(array_capsule.ptr(), "arrow_array"))) {
    if (!schema || !array) throw nb::python_error();
  }
};

gutf8::on_invalid on_invalid_of(std::string_view errors) {
  if (errors == "strict") return gutf8::on_invalid::raise;
  if (errors == "null") return gutf8::on_invalid::null;
  if (errors == "replace") return gutf8::on_invalid::replace;
  if (errors == "drop" || errors == "ignore") return gutf8::on_invalid::drop;
  throw nb::value_error("errors must be 'strict', 'null', 'replace' or 'drop'");
}

gutf8::column_options options_of(unsigned threads, std::int64_t data_bytes) {
  return {.threads = threads, .data_bytes = data_bytes};
}

nb::tuple col_is_valid(nb::handle schema, nb::handle array, unsigned threads, std::int64_t data_bytes) {
  const borrowed_column in(schema, array);
  gutf8::row_validity v;
  {
    nb::gil_scoped_release unlocked;
    v = gutf8::is_valid(*in.array, *in.schema, options_of(threads, data_bytes));
  }
  nb::object first = nb::none();
  if (v.first) first = nb::make_tuple(v.first->row, v.first->offset, v.first->kind);
  return nb::make_tuple(to_capsules(std::move(v.valid)), v.invalid_rows, first);
}

void col_validate(nb::handle schema, nb::handle array, unsigned threads, std::int64_t data_bytes) {
  const borrowed_column in(schema, array);
  nb::gil_scoped_release unlocked;
  gutf8::validate(*in.array, *in.schema, options_of(threads, data_bytes));
}

nb::tuple col_make_valid(nb::handle schema, nb::handle array, std::string_view errors, unsigned threads,
                         std::int64_t data_bytes) {
  const borrowed_column in(schema, array);
  gutf8::error_policy policy = gutf8::error_policy::replace;
  if (errors == "drop" || errors == "ignore") policy = gutf8::error_policy::drop;
  else if (errors != "replace") throw nb::value_error("errors must be 'replace' or 'drop'");
  gutf8::column out;
  {
    nb::gil_scoped_release unlocked;
    out = gutf8::make_valid(*in.array, *in.schema, policy, options_of(threads, data_bytes));
  }
  return to_capsules(std::move(out));
}

template <auto Operation>
nb::tuple col_with_policy(nb::handle schema, nb::handle array, std::string_view errors, unsigned threads,
                          std::int64_t data_bytes) {
  const borrowed_column in(schema, array);
  const auto policy = on_invalid_of(errors);
  gutf8::column out;
  {
    nb::gil_scoped_release unlocked;
    out = Operation(*in.array, *in.schema, policy, options_of(threads, data_bytes));
  }
  return to_capsules(std::move(out));
}

}  // namespace

void bind_columns(nb::module_& m) {
  // Registered after the module's gutf8::error translator, so tried before it (newest first).
  nb::object invalid_row = nb::steal(PyErr_NewException("gutf8._gutf8.InvalidRow", PyExc_ValueError, nullptr));
  if (!invalid_row.is_valid()) throw nb::python_error();
  m.attr("InvalidRow") = invalid_row;  // the module keeps the type alive for the translator
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const gutf8::invalid_row& e) {
          PyErr_SetObject(static_cast<PyObject*>(type), nb::make_tuple(e.row(), e.offset(), e.kind()).ptr());
        }
      },
      invalid_row.ptr());
  m.def("col_is_valid", &col_is_valid, "schema"_a, "array"_a, "threads"_a, "data_bytes"_a);
  m.def("col_validate", &col_validate, "schema"_a, "array"_a, "threads"_a, "data_bytes"_a);
  m.def("col_make_valid", &col_make_valid, "schema"_a, "array"_a, "errors"_a, "threads"_a, "data_bytes"_a);
  m.def("col_cast_to_utf8", &col_with_policy<&gutf8::cast_to_utf8>, "schema"_a, "array"_a, "errors"_a,
        "threads"_a, "data_bytes"_a);
  m.def("col_count_code_points", &col_with_policy<&gutf8::count_code_points>, "schema"_a, "array"_a, "errors"_a,
        "threads"_a, "data_bytes"_a);
}

}  // namespace gutf8_py
