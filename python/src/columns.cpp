#include "columns.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "gutf8/columns.hpp"
#include "gutf8/error.hpp"
#include "reports.hpp"

#ifdef GUTF8_PY_CUDA
#include "device_run.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device_columns.hpp"
#endif

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

void drop_device_array(PyObject* capsule) {
  std::unique_ptr<ArrowDeviceArray> a(
      static_cast<ArrowDeviceArray*>(PyCapsule_GetPointer(capsule, "arrow_device_array")));
  if (a && a->array.release) a->array.release(&a->array);
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

// (schema capsule, device array capsule, device type) of a result of the device interface.
nb::tuple to_device_capsules(gutf8::column c) {
  const int device_type = c.device_array().device_type;
  auto schema = std::make_unique<ArrowSchema>();
  auto array = std::make_unique<ArrowDeviceArray>();
  std::move(c).export_to(array.get(), schema.get());
  nb::object s = nb::steal(PyCapsule_New(schema.get(), "arrow_schema", drop_schema));
  if (!s.is_valid()) throw nb::python_error();
  (void)schema.release();
  nb::object a = nb::steal(PyCapsule_New(array.get(), "arrow_device_array", drop_device_array));
  if (!a.is_valid()) throw nb::python_error();
  (void)array.release();
  return nb::make_tuple(s, a, device_type);
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

// An input of the Arrow C Device Data Interface (__arrow_c_device_array__), borrowed likewise.
struct borrowed_device_column {
  const ArrowSchema* schema;
  const ArrowDeviceArray* array;
  borrowed_device_column(nb::handle schema_capsule, nb::handle array_capsule)
      : schema(static_cast<const ArrowSchema*>(PyCapsule_GetPointer(schema_capsule.ptr(), "arrow_schema"))),
        array(static_cast<const ArrowDeviceArray*>(PyCapsule_GetPointer(array_capsule.ptr(), "arrow_device_array"))) {
    if (!schema || !array) throw nb::python_error();
  }
  [[nodiscard]] bool on_gpu() const noexcept {
    return array->device_type == ARROW_DEVICE_CUDA || array->device_type == ARROW_DEVICE_CUDA_MANAGED;
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

gutf8::row_error error_of(const gutf8::invalid_row& e) {
  return {.row = e.row(), .offset = e.offset(), .kind = e.kind()};
}

// The typed result of is_valid, its boolean column handed over as `capsules`.
row_validity validity_of(const gutf8::row_validity& v, nb::object capsules) {
  row_validity r{.valid = std::move(capsules), .invalid_rows = v.invalid_rows};
  r.first = v.first;
  return r;
}

row_validity col_is_valid(nb::handle schema, nb::handle array, unsigned threads, std::int64_t data_bytes) {
  const borrowed_column in(schema, array);
  gutf8::row_validity v;
  {
    nb::gil_scoped_release unlocked;
    v = gutf8::is_valid(*in.array, *in.schema, options_of(threads, data_bytes));
  }
  nb::object capsules = to_capsules(std::move(v.valid));
  return validity_of(v, std::move(capsules));
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

// One operation of the device interface: host memory (CPU, CUDA host) through the host API,
// CUDA memory through gutf8/device_columns.hpp on the array's GPU and `stream`. op: is_valid,
// validate, make_valid, cast_to_utf8, count_code_points. Results keep the input's placement.
nb::object col_device(std::string_view op, nb::handle schema, nb::handle array, std::string_view errors,
                      unsigned threads, std::uintptr_t stream_handle) {
  const borrowed_device_column in(schema, array);
  const gutf8::column_options opt{.threads = threads};
  const bool repair_drop = errors == "drop" || errors == "ignore";
  if (op == "make_valid" && !repair_drop && errors != "replace")
    throw nb::value_error("errors must be 'replace' or 'drop'");
  const auto policy = (op == "cast_to_utf8" || op == "count_code_points") ? on_invalid_of(errors)
                                                                          : gutf8::on_invalid::raise;
  const auto repair = repair_drop ? gutf8::error_policy::drop : gutf8::error_policy::replace;
  gutf8::column out;
  gutf8::row_validity validity;
  {
    nb::gil_scoped_release unlocked;
    if (!in.on_gpu()) {
      const ArrowArray& host = gutf8::host_array(*in.array);
      if (op == "is_valid") validity = gutf8::is_valid(host, *in.schema, opt);
      else if (op == "validate") gutf8::validate(host, *in.schema, opt);
      else if (op == "make_valid") out = gutf8::make_valid(host, *in.schema, repair, opt);
      else if (op == "cast_to_utf8") out = gutf8::cast_to_utf8(host, *in.schema, policy, opt);
      else if (op == "count_code_points") out = gutf8::count_code_points(host, *in.schema, policy, opt);
      else throw gutf8::error(gutf8::errc::invalid_argument, "unknown column operation");
    } else {
#ifdef GUTF8_PY_CUDA
      const gutf8::cuda::device_scope scope(static_cast<int>(in.array->device_id));
      const auto stream = reinterpret_cast<cudaStream_t>(stream_handle);
      namespace dev = gutf8::device;
      if (op == "is_valid") validity = dev::is_valid(*in.array, *in.schema, opt, stream);
      else if (op == "validate") dev::validate(*in.array, *in.schema, opt, stream);
      else if (op == "make_valid") out = dev::make_valid(*in.array, *in.schema, repair, opt, stream);
      else if (op == "cast_to_utf8") out = dev::cast_to_utf8(*in.array, *in.schema, policy, opt, stream);
      else if (op == "count_code_points") out = dev::count_code_points(*in.array, *in.schema, policy, opt, stream);
      else throw gutf8::error(gutf8::errc::invalid_argument, "unknown column operation");
      // The input is borrowed for this call: its capsules go (and may free it) once we return.
      gutf8::cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#else
      (void)stream_handle;
      throw gutf8::error(gutf8::errc::no_device, "gutf8 was built without CUDA: a CUDA column cannot be read");
#endif
    }
  }
  if (op == "validate") return nb::none();
  if (op != "is_valid") return to_device_capsules(std::move(out));
  nb::object capsules = to_device_capsules(std::move(validity.valid));
  return nb::cast(validity_of(validity, std::move(capsules)));
}

}  // namespace

void bind_columns(nb::module_& m) {
  // Registered after the module's gutf8::error translator, so tried before it (newest first). Needs
  // RowError bound (bind_reports) first.
  nb::object invalid_row = nb::steal(PyErr_NewException("gutf8._gutf8.InvalidRow", PyExc_ValueError, nullptr));
  if (!invalid_row.is_valid()) throw nb::python_error();
  m.attr("InvalidRow") = invalid_row;  // the module keeps the type alive for the translator
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const gutf8::invalid_row& e) {
          PyErr_SetObject(static_cast<PyObject*>(type), nb::cast(error_of(e)).ptr());  // args: (RowError,)
        }
      },
      invalid_row.ptr());
  m.def("col_device", &col_device, "op"_a, "schema"_a, "array"_a, "errors"_a, "threads"_a, "stream"_a);
  m.def("col_is_valid", &col_is_valid, "schema"_a, "array"_a, "threads"_a, "data_bytes"_a);
  m.def("col_validate", &col_validate, "schema"_a, "array"_a, "threads"_a, "data_bytes"_a);
  m.def("col_make_valid", &col_make_valid, "schema"_a, "array"_a, "errors"_a, "threads"_a, "data_bytes"_a);
  m.def("col_cast_to_utf8", &col_with_policy<&gutf8::cast_to_utf8>, "schema"_a, "array"_a, "errors"_a,
        "threads"_a, "data_bytes"_a);
  m.def("col_cast_sharing_input", &col_with_policy<&gutf8::cast_sharing_input>, "schema"_a, "array"_a, "errors"_a,
        "threads"_a, "data_bytes"_a);
  m.def("col_count_code_points", &col_with_policy<&gutf8::count_code_points>, "schema"_a, "array"_a, "errors"_a,
        "threads"_a, "data_bytes"_a);
}

}  // namespace gutf8_py
