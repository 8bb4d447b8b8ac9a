// gutf8._gutf8: the nanobind layer between Python and the gutf8 library. It only converts
// arguments and results (buffers in; numpy arrays, bytes and the typed reports of reports.hpp out)
// and releases the GIL around library calls; python/gutf8/__init__.py turns reports into exceptions.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unistd.h>

#include "columns.hpp"
#include "file_runner.hpp"
#include "reports.hpp"
#include "gutf8/codec.hpp"
#include "gutf8/error.hpp"
#include "utf8/utf8_rules.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/stream.hpp"

#ifdef GUTF8_PY_CUDA
#include "device_run.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// A contiguous read-only export of any buffer-protocol object (PEP 3118), released with the GIL
// held: declare it outside the gil_scoped_release scope.
class input_buffer {
 public:
  explicit input_buffer(nb::handle obj) {
    if (PyUnicode_Check(obj.ptr()))
      throw nb::type_error("expected a bytes-like object (bytes, bytearray, memoryview, mmap, "
                           "numpy array), not str");
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  }
  ~input_buffer() { PyBuffer_Release(&view_); }
  input_buffer(const input_buffer&) = delete;
  input_buffer& operator=(const input_buffer&) = delete;

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return {static_cast<const std::byte*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

struct free_deleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using malloc_block = std::unique_ptr<void, free_deleter>;

malloc_block allocate(std::size_t bytes) {
  malloc_block b(std::malloc(bytes ? bytes : 1));
  if (!b) throw std::bad_alloc();
  return b;
}

// A numpy uint32 array over the first `count` values of `block`, which it takes over. Shrinking
// with realloc keeps the data in place (large blocks are remapped), so nothing is copied.
nb::ndarray<nb::numpy, std::uint32_t, nb::ndim<1>> to_array(malloc_block block, std::size_t count) {
  if (void* shrunk = std::realloc(block.get(), count ? count * 4 : 1)) {
    (void)block.release();
    block.reset(shrunk);
  }
  nb::capsule owner(block.get(), [](void* p) noexcept { std::free(p); });
  void* data = block.release();
  return {data, {count}, owner};
}

// A bytes object of `capacity` bytes, filled without the GIL, then cut to its length.
class bytes_out {
 public:
  explicit bytes_out(std::size_t capacity)
      : obj_(nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(capacity)))) {
    if (!obj_.is_valid()) throw nb::python_error();
  }
  [[nodiscard]] std::span<char8_t> span() const noexcept {
    return {reinterpret_cast<char8_t*>(PyBytes_AS_STRING(obj_.ptr())),
            static_cast<std::size_t>(PyBytes_GET_SIZE(obj_.ptr()))};
  }
  nb::object finish(std::size_t length) {
    PyObject* p = obj_.release().ptr();
    if (_PyBytes_Resize(&p, static_cast<Py_ssize_t>(length)) != 0) throw nb::python_error();
    return nb::steal(p);
  }

 private:
  nb::object obj_;
};

gutf8::backend parse_backend(std::string_view name) {
  if (name == "auto") return gutf8::backend::auto_select;
  if (name == "cpu") return gutf8::backend::cpu;
  if (name == "cuda") return gutf8::backend::cuda;
  throw nb::value_error("backend must be 'auto', 'cpu' or 'cuda'");
}

// device < 0 (Python's device=None): no GPU named, so a one-shot call takes the first usable GPU,
// which CUDA numbers 0 (gutf8::all_devices).
gutf8::options make_options(std::string_view backend, unsigned threads, int device) {
  return {.backend = parse_backend(backend), .threads = threads, .device = device < 0 ? 0 : device};
}

gutf8::error_policy parse_policy(std::string_view errors) {
  if (errors == "strict") return gutf8::error_policy::strict;
  if (errors == "replace") return gutf8::error_policy::replace;
  if (errors == "drop" || errors == "ignore") return gutf8::error_policy::drop;
  throw nb::value_error("errors must be 'strict', 'replace' or 'drop' ('ignore' is an alias of 'drop')");
}

gutf8_py::summary py_validate(nb::handle data, std::string_view backend, unsigned threads, int device) {
  const input_buffer in(data);
  const auto opt = make_options(backend, threads, device);
  gutf8::summary s;
  {
    nb::gil_scoped_release unlocked;
    s = gutf8::validate(in.bytes(), opt);
  }
  return gutf8_py::summary_of(s, in.bytes());
}

gutf8_py::text_stats py_stats(nb::handle data, std::string_view backend, unsigned threads, int device) {
  const input_buffer in(data);
  const auto opt = make_options(backend, threads, device);
  gutf8::text_stats t;
  {
    nb::gil_scoped_release unlocked;
    t = gutf8::stats(in.bytes(), opt);
  }
  return gutf8_py::stats_of(t, in.bytes());
}

nb::tuple py_decode(nb::handle data, std::string_view errors, std::string_view backend, unsigned threads,
                    int device) {
  const input_buffer in(data);
  const auto opt = make_options(backend, threads, device);
  const auto policy = parse_policy(errors);
  const std::size_t capacity = gutf8::max_decoded_size(in.bytes().size());
  malloc_block out = allocate(capacity * sizeof(char32_t));
  gutf8::transcode_result r;
  {
    nb::gil_scoped_release unlocked;
    r = gutf8::decode(in.bytes(), {static_cast<char32_t*>(out.get()), capacity}, policy, opt);
  }
  return nb::make_tuple(to_array(std::move(out), r.written), gutf8_py::summary_of(r.input, in.bytes()));
}

nb::tuple py_repair(nb::handle data, std::string_view errors, std::string_view backend, unsigned threads,
                    int device) {
  const input_buffer in(data);
  const auto opt = make_options(backend, threads, device);
  const auto policy = parse_policy(errors);
  bytes_out out(gutf8::max_repaired_size(in.bytes().size()));
  gutf8::transcode_result r;
  {
    nb::gil_scoped_release unlocked;
    r = gutf8::repair(in.bytes(), out.span(), policy, opt);
  }
  return nb::make_tuple(out.finish(r.written), gutf8_py::summary_of(r.input, in.bytes()));
}

nb::tuple py_encode(nb::handle data, std::string_view errors, std::string_view backend, unsigned threads,
                    int device) {
  const input_buffer in(data);
  const auto opt = make_options(backend, threads, device);
  const auto policy = parse_policy(errors);
  bytes_out out(gutf8::max_encoded_size(in.bytes().size()));
  gutf8::transcode_result r;
  {
    nb::gil_scoped_release unlocked;
    r = gutf8::encode(in.bytes(), out.span(), policy, opt);
  }
  return nb::make_tuple(out.finish(r.written), gutf8_py::summary_of(r.input, in.bytes(), 4));
}

// Calls the Python progress callback (if any) with the GIL; what it raises ends the run. It holds
// a borrowed handle (the caller's argument outlives the call), so the library may copy and drop
// the function on any thread without touching a reference count.
std::function<void(std::uint64_t)> progress_caller(nb::handle callback) {
  if (callback.is_none()) return {};
  return [callback](std::uint64_t done) {
    nb::gil_scoped_acquire locked;
    callback(done);
  };
}

void write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw gutf8::system_call_failure(errno, "write failed");
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

// device < 0: every usable GPU may take pieces (with backend auto only where they pay). Big files
// are scanned in place, as the CLI does (read="copy" copies them out: a file that shrinks while it
// is read is then an OSError, where a map of it would end the process with SIGBUS).
gutf8::run_config run_config(gutf8::operation op, std::string_view errors, std::string_view backend,
                             unsigned threads, int device, std::string_view read,
                             std::shared_ptr<gutf8::gpu_lane_cache> lanes) {
  gutf8::run_config c;
  c.gpu_lanes = std::move(lanes);
  c.stream = {.operation = op, .policy = parse_policy(errors),
              .backend = make_options(backend, threads, device < 0 ? 0 : device)};
  if (device < 0) c.all_devices = true;
  else c.devices = {device};
  if (read == "map") c.read = gutf8::read_method::map;
  else if (read == "copy") c.read = gutf8::read_method::copy;
  else throw nb::value_error("read must be 'map' or 'copy'");
  return c;
}

// A file's report, with the bytes of its first error unit read back (from the text, for a
// compressed file) for the exception; an unreadable file's failure (its message).
gutf8_py::summary file_summary(const std::string& path, const gutf8_py::file_outcome& o, double seconds) {
  if (o.failure) return {.failure = std::string(o.failure->what())};
  gutf8_py::summary s = gutf8_py::summary_of(o.report.stats.input);
  s.seconds = seconds;
  if (s.first) {
    // The offset counts in the file's text: a compressed file is decompressed up to it.
    std::vector<std::byte> window;
    try {
      window = gutf8::text_at(gutf8::input::file(path), s.first->offset, 4);
    } catch (const gutf8::error&) {  // the file changed or vanished since: the unit's first byte
    }
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(window.data());
    if (!window.empty()) s.first->length = gutf8::detail::error_unit_length(bytes, window.size());
    s.first->unit.assign(reinterpret_cast<const char*>(bytes),
                         std::min<std::size_t>(s.first->length, window.size()));  // the DecodeError's object
  }
  return s;
}

// A path as the Python layer passes it: os.fsencode's bytes, so that any name the system allows
// arrives unchanged (str would refuse names that are not UTF-8).
std::string path_of(const nb::bytes& path) { return {path.c_str(), path.size()}; }

// One file through the engine; an unreadable one raises.
gutf8_py::file_outcome run_one(const std::string& path, const gutf8::run_config& config, const gutf8_py::file_sink& sink,
                               nb::handle progress, double& seconds) {
  const auto report_progress = progress_caller(progress);
  std::vector<gutf8_py::file_outcome> out;
  {
    nb::gil_scoped_release unlocked;
    out = gutf8_py::run_files({path}, config, sink, report_progress, &seconds);
  }
  if (out.front().failure) throw gutf8::error(gutf8::errc::io_failure, path + ": " + out.front().failure->what(),
                                              out.front().failure->errno_value());
  return std::move(out.front());
}

gutf8_py::summary py_validate_file(const nb::bytes& path_bytes, std::string_view backend, unsigned threads, int device,
                                   nb::handle progress, std::shared_ptr<gutf8::gpu_lane_cache> lanes,
                                   std::string_view read) {
  const std::string path = path_of(path_bytes);
  const auto config = run_config(gutf8::operation::validate, "replace", backend, threads, device, read, std::move(lanes));
  double seconds = 0;
  const gutf8_py::file_outcome o = run_one(path, config, {}, progress, seconds);
  return file_summary(path, o, seconds);
}

// Many files in one run of the engine: one report a path, in order (an unreadable one says why).
std::vector<gutf8_py::summary> py_validate_files(const std::vector<nb::bytes>& path_bytes, std::string_view backend,
                                                 unsigned threads, int device, nb::handle progress,
                                                 std::shared_ptr<gutf8::gpu_lane_cache> lanes, std::string_view read) {
  std::vector<std::string> paths;
  paths.reserve(path_bytes.size());
  for (const nb::bytes& p : path_bytes) paths.push_back(path_of(p));
  const auto config = run_config(gutf8::operation::validate, "replace", backend, threads, device, read, std::move(lanes));
  const auto report_progress = progress_caller(progress);
  std::vector<gutf8_py::file_outcome> out;
  double seconds = 0;
  {
    nb::gil_scoped_release unlocked;
    out = gutf8_py::run_files(paths, config, {}, report_progress, &seconds);
  }
  std::vector<gutf8_py::summary> reports;
  reports.reserve(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) reports.push_back(file_summary(paths[i], out[i], seconds));
  return reports;
}

// Decodes a file into one numpy array (sized for the worst case, shrunk in place at the end).
nb::tuple py_decode_file(const nb::bytes& path_bytes, std::string_view errors, std::string_view backend,
                         unsigned threads, int device, nb::handle progress,
                         std::shared_ptr<gutf8::gpu_lane_cache> lanes, std::string_view read) {
  const std::string path = path_of(path_bytes);
  const auto config = run_config(gutf8::operation::decode, errors, backend, threads, device, read, std::move(lanes));
  // A plain file's text is its size; a compressed file's is unknown, so its array grows as it comes.
  const bool compressed = gutf8_py::compressed_file(path);
  std::size_t capacity = gutf8_py::file_size(path) * sizeof(char32_t);
  malloc_block out = allocate(capacity);
  std::size_t filled = 0;
  const gutf8_py::file_sink sink = [&](std::size_t, std::span<const std::byte> chunk) {
    if (filled + chunk.size() > capacity) {
      if (!compressed) throw gutf8::error(gutf8::errc::io_failure, path + ": the file grew while it was read");
      capacity = std::max(2 * capacity, filled + chunk.size());
      void* grown = std::realloc(out.get(), capacity);
      if (grown == nullptr) throw std::bad_alloc();
      (void)out.release();
      out.reset(grown);
    }
    std::memcpy(static_cast<std::byte*>(out.get()) + filled, chunk.data(), chunk.size());
    filled += chunk.size();
  };
  double seconds = 0;
  const gutf8_py::file_outcome o = run_one(path, config, sink, progress, seconds);
  return nb::make_tuple(to_array(std::move(out), filled / sizeof(char32_t)), file_summary(path, o, seconds));
}

// Repairs a file into the open descriptor `out_fd` (the Python layer makes it a temporary file
// and renames it on success).
// `out_name` ending in .gz, .zst, .xz, .bz2 or .lz4 makes the output that format, as the CLI's -o.
gutf8_py::summary py_repair_file(const nb::bytes& path_bytes, int out_fd, const nb::bytes& out_name,
                                 std::string_view errors, std::string_view backend, unsigned threads, int device,
                                 nb::handle progress, std::shared_ptr<gutf8::gpu_lane_cache> lanes,
                                 std::string_view read) {
  const std::string path = path_of(path_bytes);
  auto config = run_config(gutf8::operation::repair, errors, backend, threads, device, read, std::move(lanes));
  config.compress_output.format = gutf8::compression_by_suffix(path_of(out_name));
  double seconds = 0;
  const gutf8_py::file_outcome o = run_one(path, config, [out_fd](std::size_t, std::span<const std::byte> b) {
    write_all(out_fd, b);
  }, progress, seconds);
  return file_summary(path, o, seconds);
}

// OSError(errno, message) where the library knows the errno, which Python turns into its subclass
// (FileNotFoundError, PermissionError, ...); the message decoded as the file system's names are.
void raise_os_error(const gutf8::error& e) {
  const nb::object message = nb::steal(PyUnicode_DecodeFSDefault(e.what()));
  if (!message.is_valid()) return;  // the decoding error is set
  if (e.errno_value() == 0) {
    PyErr_SetObject(PyExc_OSError, message.ptr());
    return;
  }
  const nb::object raised = nb::steal(PyObject_CallFunction(PyExc_OSError, "iO", e.errno_value(), message.ptr()));
  if (raised.is_valid()) PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(raised.ptr())), raised.ptr());
}

void translate(const gutf8::error& e) {
  switch (e.code()) {
    case gutf8::errc::io_failure: raise_os_error(e); return;
    case gutf8::errc::out_of_memory: PyErr_SetString(PyExc_MemoryError, e.what()); return;
    case gutf8::errc::invalid_argument:
    case gutf8::errc::output_too_small: PyErr_SetString(PyExc_ValueError, e.what()); return;
    default: PyErr_SetString(PyExc_RuntimeError, e.what()); return;
  }
}

}  // namespace

NB_MODULE(_gutf8, m) {
  m.doc() = "Native layer of gutf8 (use the gutf8 package, not this module).";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const gutf8::error& e) {
      translate(e);
    }
  });

  gutf8_py::bind_reports(m);
  m.def("validate", &py_validate, "data"_a, "backend"_a, "threads"_a, "device"_a);
  m.def("stats", &py_stats, "data"_a, "backend"_a, "threads"_a, "device"_a);
  m.def("decode", &py_decode, "data"_a, "errors"_a, "backend"_a, "threads"_a, "device"_a);
  m.def("repair", &py_repair, "data"_a, "errors"_a, "backend"_a, "threads"_a, "device"_a);
  m.def("encode", &py_encode, "data"_a, "errors"_a, "backend"_a, "threads"_a, "device"_a);
  // The GPU lanes that file runs keep for the next (gutf8.gpu_lanes in __init__.py).
  nb::class_<gutf8::gpu_lane_cache>(m, "GpuLaneCache",
                                    "GPU lanes that file runs keep for the next runs (CUDA streams and buffers, "
                                    "page-locked memory); at most `capacity` idle ones.")
      .def(nb::init<std::size_t>(), "capacity"_a = 8)
      .def_prop_ro("idle", &gutf8::gpu_lane_cache::idle, "Lanes kept and not in use.")
      .def_prop_ro("built", &gutf8::gpu_lane_cache::built, "Lanes built by runs given this cache, in all.")
      .def("clear", &gutf8::gpu_lane_cache::clear, nb::call_guard<nb::gil_scoped_release>(),
           "Frees the idle lanes.");
  m.def("validate_file", &py_validate_file, "path"_a, "backend"_a, "threads"_a, "device"_a,
        "progress"_a.none(), "lanes"_a.none(), "read"_a);
  m.def("validate_files", &py_validate_files, "paths"_a, "backend"_a, "threads"_a, "device"_a,
        "progress"_a.none(), "lanes"_a.none(), "read"_a);
  m.def("decode_file", &py_decode_file, "path"_a, "errors"_a, "backend"_a, "threads"_a, "device"_a,
        "progress"_a.none(), "lanes"_a.none(), "read"_a);
  m.def("repair_file", &py_repair_file, "path"_a, "out_fd"_a, "out_name"_a, "errors"_a, "backend"_a, "threads"_a,
        "device"_a, "progress"_a.none(), "lanes"_a.none(), "read"_a);
  m.def("cuda_available", &gutf8::cuda_available);
  m.def("cuda_devices", &gutf8::all_devices);
  gutf8_py::bind_columns(m);
#ifdef GUTF8_PY_CUDA
  m.attr("built_with_cuda") = true;
  gutf8_py::bind_device(m);
#else
  m.attr("built_with_cuda") = false;
#endif
}
