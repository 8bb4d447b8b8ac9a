// String columns: per-row validate, repair, cast and length over Arrow arrays (host API).
//
// Input is one Arrow array of type utf8 ("u"), binary ("z"), large_utf8 ("U"), large_binary
// ("Z"), utf8_view ("vu") or binary_view ("vz"), handed over through the Arrow C Data Interface
// (gutf8/arrow_c_abi.h) without a copy.
// It is borrowed: gutf8 reads it during the call and never releases or keeps it. Every row is
// its own text (a sequence cut by the row's end is an error of that row, as the one-shot API
// reports it for that row alone); null rows stay null and their bytes are never read; the
// array offset (slices) and offsets that do not start at 0 are honoured.
//
// Results are new arrays in the Arrow layout (offset 0, own buffers) owned by gutf8::column,
// which releases them on destruction or hands them to any Arrow consumer (export_to).
// Bad input (a type other than the six, offsets that decrease, are negative or run past
// data_bytes, a bad view, a device array given to a host entry point) throws
// gutf8::error(invalid_argument) before anything is made; invalid UTF-8 under a `raise` policy
// throws gutf8::invalid_row.
// The GPU entry points on ArrowDeviceArray are in gutf8/device_columns.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gutf8/arrow_c_abi.h"
#include "gutf8/error.hpp"
#include "gutf8/types.hpp"

namespace gutf8 {

// Owns one Arrow array (with its device placement) and its schema; releases both once.
class column {
 public:
  column() noexcept;
  // Takes ownership of both (their release callbacks are called by this object).
  column(ArrowDeviceArray array, ArrowSchema schema) noexcept;
  column(column&& other) noexcept;
  column& operator=(column&& other) noexcept;
  column(const column&) = delete;
  column& operator=(const column&) = delete;
  ~column();

  [[nodiscard]] bool empty() const noexcept { return array_.array.release == nullptr; }
  [[nodiscard]] const ArrowArray& array() const noexcept { return array_.array; }
  [[nodiscard]] const ArrowDeviceArray& device_array() const noexcept { return array_; }
  [[nodiscard]] const ArrowSchema& schema() const noexcept { return schema_; }
  [[nodiscard]] std::int64_t length() const noexcept { return array_.array.length; }

  // Moves the structs out to a consumer (e.g. an Arrow PyCapsule), who then releases them.
  // Pass nullptr for a struct the consumer does not want: it is released here.
  void export_to(ArrowArray* array, ArrowSchema* schema) && noexcept;
  void export_to(ArrowDeviceArray* array, ArrowSchema* schema) && noexcept;

 private:
  void reset() noexcept;
  ArrowDeviceArray array_;
  ArrowSchema schema_;
};

// Thrown by the `raise` policies: the first invalid row (0-based, relative to the array as
// sliced) and the first error unit's byte offset within that row.
class invalid_row : public error {
 public:
  invalid_row(std::int64_t row, std::uint64_t offset, error_kind kind);
  [[nodiscard]] std::int64_t row() const noexcept { return row_; }
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] error_kind kind() const noexcept { return kind_; }

 private:
  std::int64_t row_;
  std::uint64_t offset_;
  error_kind kind_;
};

// What an operation does with a row that is not valid UTF-8.
enum class on_invalid : std::uint8_t {
  raise,    // throw gutf8::invalid_row for the first one
  null,     // the row becomes null
  replace,  // each error unit becomes U+FFFD (CPython errors='replace')
  drop,     // each error unit is removed (CPython errors='ignore')
};

struct column_options {
  unsigned threads = 0;          // CPU backend: 0 = all hardware threads, 1 = this thread only
  std::int64_t data_bytes = -1;  // size of the data buffer when known (pyarrow: buffers()[2].size);
                                 // offsets past it are rejected. -1: unknown, not checked
  bool first_errors = false;     // is_valid: also fill row_validity::error_offsets / error_kinds
};

// The first error unit of a row.
struct row_error {
  std::int64_t row = 0;      // relative to the array as sliced
  std::uint64_t offset = 0;  // byte offset within the row
  error_kind kind = error_kind::none;
  friend bool operator==(const row_error&, const row_error&) = default;
};

struct row_validity {
  column valid;                  // boolean ("b"); null where the input row is null
  std::int64_t invalid_rows = 0;
  std::optional<row_error> first;  // the first invalid row
  // With column_options::first_errors, for each row: the byte offset of its first error unit
  // (int64 "l") and its gutf8::error_kind (uint8 "C"); null for null and valid rows.
  column error_offsets;
  column error_kinds;
};

// Per-row validity (Spark is_valid_utf8 / try_validate_utf8).
row_validity is_valid(const ArrowArray& array, const ArrowSchema& schema, const column_options& opt = {});

// Strict check (Spark validate_utf8): throws gutf8::invalid_row for the first invalid row.
void validate(const ArrowArray& array, const ArrowSchema& schema, const column_options& opt = {});

// A utf8 column ("u"; "U" for the large types, "vu" for the view types) with every invalid row
// repaired; policy is replace or drop (strict is a bad call). Valid rows are copied as they are. Throws
// gutf8::error(output_too_small) when replace would outgrow int32 offsets (use the large type).
column make_valid(const ArrowArray& array, const ArrowSchema& schema, error_policy policy,
                  const column_options& opt = {});

// binary -> utf8 (Arrow's cast validates; null / replace / drop are our choices for a bad row).
column cast_to_utf8(const ArrowArray& array, const ArrowSchema& schema, on_invalid policy,
                    const column_options& opt = {});

// cast_to_utf8 (and make_valid, as on_invalid::replace / drop) of a utf8, binary or view array
// as a utf8_view column ("vu") that shares the input's bytes: each valid row's view points where
// the row already is (an offset input's data buffer is the result's buffer 0, a view input's
// data buffers keep their indexes), and repaired rows go to new buffers after those (2 GiB at
// most each). The result's buffer table holds the input's data buffers borrowed, not owned: keep
// the input alive as long as the result. No copy of valid rows' bytes. Throws
// gutf8::error(invalid_argument) for the large types and gutf8::error(output_too_small) for a
// repaired row past 2 GiB (a view's int32 length).
column cast_sharing_input(const ArrowArray& array, const ArrowSchema& schema, on_invalid policy,
                          const column_options& opt = {});

// Characters per row (int32 "i", or int64 "l" for the large types): code points of a valid
// row; an invalid row raises, is null, or counts its error units as U+FFFD (replace) or not at
// all (drop), as len(bytes.decode('utf-8', errors)) would.
column count_code_points(const ArrowArray& array, const ArrowSchema& schema, on_invalid policy,
                         const column_options& opt = {});

// The ArrowArray of an ArrowDeviceArray in host memory (ARROW_DEVICE_CPU or
// ARROW_DEVICE_CUDA_HOST), for the entry points above; any other device type is a bad call
// (throws gutf8::error(invalid_argument); gutf8/device_columns.hpp has the GPU entry points).
const ArrowArray& host_array(const ArrowDeviceArray& array);

}  // namespace gutf8
