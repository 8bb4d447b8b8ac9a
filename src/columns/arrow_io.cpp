#include "columns/arrow_io.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gutf8 {
namespace {

void release_array(ArrowDeviceArray& a) noexcept {
  if (a.array.release != nullptr) a.array.release(&a.array);
}
void release_schema(ArrowSchema& s) noexcept {
  if (s.release != nullptr) s.release(&s);
}

}  // namespace

column::column() noexcept : array_{}, schema_{} {}
column::column(ArrowDeviceArray array, ArrowSchema schema) noexcept : array_(array), schema_(schema) {}
column::column(column&& other) noexcept : array_(other.array_), schema_(other.schema_) {
  other.array_ = {};
  other.schema_ = {};
}
column& column::operator=(column&& other) noexcept {
  if (this != &other) {
    reset();
    array_ = std::exchange(other.array_, {});
    schema_ = std::exchange(other.schema_, {});
  }
  return *this;
}
column::~column() { reset(); }

void column::reset() noexcept {
  release_array(array_);
  release_schema(schema_);
  array_ = {};
  schema_ = {};
}

void column::export_to(ArrowDeviceArray* array, ArrowSchema* schema) && noexcept {
  if (array != nullptr) *array = std::exchange(array_, {});
  if (schema != nullptr) *schema = std::exchange(schema_, {});
  reset();
}

void column::export_to(ArrowArray* array, ArrowSchema* schema) && noexcept {
  if (array != nullptr) {
    *array = array_.array;
    array_ = {};
  }
  if (schema != nullptr) *schema = std::exchange(schema_, {});
  reset();
}

invalid_row::invalid_row(std::int64_t row, std::uint64_t offset, error_kind kind)
    : error(errc::invalid_argument, "invalid UTF-8 in row " + std::to_string(row) + " at byte " +
                                        std::to_string(offset) + ": " + std::string(describe(kind))),
      row_(row),
      offset_(offset),
      kind_(kind) {}

const ArrowArray& host_array(const ArrowDeviceArray& array) {
  if (array.device_type != ARROW_DEVICE_CPU && array.device_type != ARROW_DEVICE_CUDA_HOST)
    throw error(errc::invalid_argument, "gutf8 host column operation given an array on device type " +
                                            std::to_string(array.device_type) +
                                            " (use the gutf8::device entry points)");
  return array.array;
}

namespace internal::columns {
namespace {

[[noreturn]] void bad(const std::string& what) { throw error(errc::invalid_argument, "gutf8 columns: " + what); }

// Keeps the buffers of a result and the pointer table Arrow reads.
struct array_holder {
  std::vector<buffer> buffers;
  std::vector<const void*> pointers;
  buffer sync_event = no_buffer();
};

void release_holder(ArrowArray* a) noexcept {
  std::unique_ptr<array_holder>(static_cast<array_holder*>(a->private_data)).reset();
  a->release = nullptr;
}
void release_static_schema(ArrowSchema* s) noexcept { s->release = nullptr; }

}  // namespace

namespace {
void check_released(const ArrowArray& array, const ArrowSchema& schema) {
  if (array.release == nullptr) bad("the array was already released");
  if (schema.release == nullptr || schema.format == nullptr) bad("the schema was already released");
  if (schema.dictionary != nullptr || array.dictionary != nullptr) bad("dictionary arrays are not supported");
  if (array.n_children != 0) bad("a string array has no children");
  if (array.length < 0 || array.offset < 0) bad("negative length or offset");
}
}  // namespace

bool is_view(const ArrowSchema& schema) {
  return schema.format != nullptr && (std::string(schema.format) == "vu" || std::string(schema.format) == "vz");
}

view_array describe_view(const ArrowArray& array, const ArrowSchema& schema) {
  check_released(array, schema);
  // validity, views, the data buffers, then their sizes (int64 each).
  if (array.n_buffers < 3 || array.buffers == nullptr) bad("a view array has at least 3 buffers");
  view_array v;
  v.length = array.length;
  v.offset = array.offset;
  v.null_count = array.null_count;
  v.validity = static_cast<const std::uint8_t*>(array.buffers[0]);
  v.views = static_cast<const std::uint8_t*>(array.buffers[1]);
  v.data = array.buffers + 2;
  v.data_count = array.n_buffers - 3;
  v.data_sizes = static_cast<const std::int64_t*>(array.buffers[array.n_buffers - 1]);
  if (v.views == nullptr && v.length != 0) bad("the views buffer is missing");
  if (v.data_sizes == nullptr && v.data_count != 0) bad("the variadic buffer sizes are missing");
  if (v.validity == nullptr && v.null_count > 0) bad("null_count > 0 without a validity bitmap");
  return v;
}

string_array describe(const ArrowArray& array, const ArrowSchema& schema) {
  check_released(array, schema);
  const std::string format = schema.format;
  string_array s;
  if (format == "u" || format == "z") {
    s.large = false;
  } else if (format == "U" || format == "Z") {
    s.large = true;
  } else {
    bad("unsupported type '" + format +
        "' (utf8 u, binary z, large_utf8 U, large_binary Z, utf8_view vu, binary_view vz)");
  }
  if (array.n_buffers != 3 || array.buffers == nullptr) bad("a string array has 3 buffers");
  s.length = array.length;
  s.offset = array.offset;
  s.null_count = array.null_count;
  s.validity = static_cast<const std::uint8_t*>(array.buffers[0]);
  s.offsets = array.buffers[1];
  s.data = static_cast<const std::uint8_t*>(array.buffers[2]);
  if (s.offsets == nullptr && s.length != 0) bad("the offsets buffer is missing");
  if (s.validity == nullptr && s.null_count > 0) bad("null_count > 0 without a validity bitmap");
  return s;
}

void bad_offsets(std::int64_t row, std::int64_t at, std::int64_t next, std::int64_t data_bytes) {
  if (at < 0) bad("offset of row " + std::to_string(row) + " is negative (" + std::to_string(at) + ")");
  if (next < at)
    bad("offsets decrease at row " + std::to_string(row) + " (" + std::to_string(at) + " then " +
        std::to_string(next) + ")");
  bad("row " + std::to_string(row) + " ends at " + std::to_string(next) + ", past the data buffer (" +
      std::to_string(data_bytes) + " bytes)");
}

void bad_view(std::int64_t row, detail::view_fault fault) {
  using detail::view_fault;
  const char* what = fault == view_fault::negative_length ? "a negative length"
                     : fault == view_fault::buffer_index  ? "a buffer index past the data buffers"
                     : fault == view_fault::past_buffer   ? "bytes past its data buffer"
                                                          : "a missing data buffer";
  bad("the view of row " + std::to_string(row) + " has " + what);
}

void raise_invalid(const row_error& e) { throw invalid_row(e.row, e.offset, e.kind); }

buffer host_buffer(std::size_t bytes) {
  // Large results on 2 MiB huge pages: a fresh buffer's page faults cost more than filling it.
  constexpr std::size_t huge_page = std::size_t{2} << 20;
  const std::size_t align = bytes >= 2 * huge_page ? huge_page : 64;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw error(errc::out_of_memory, "gutf8 columns: cannot allocate " + std::to_string(bytes) + " bytes");
#ifdef MADV_HUGEPAGE
  if (align == huge_page) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: no error path
#endif
  return buffer(p, std::free);
}

column make_column(array_parts parts) {
  auto holder = std::make_unique<array_holder>();
  holder->buffers = std::move(parts.buffers);
  for (const buffer& b : holder->buffers) holder->pointers.push_back(b.get());
  holder->sync_event = std::move(parts.sync_event);
  ArrowDeviceArray d{};
  d.array.length = parts.length;
  d.array.null_count = parts.null_count;
  d.array.n_buffers = static_cast<std::int64_t>(holder->pointers.size());
  d.array.buffers = holder->pointers.data();
  d.array.release = release_holder;
  d.device_type = parts.device_type;
  d.device_id = parts.device_id;
  d.sync_event = holder->sync_event.get();
  d.array.private_data = holder.release();
  ArrowSchema s{};
  s.format = parts.format;
  s.name = "";
  s.flags = ARROW_FLAG_NULLABLE;
  s.release = release_static_schema;
  return column(d, s);
}

}  // namespace internal::columns
}  // namespace gutf8
