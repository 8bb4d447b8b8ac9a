// Reading a borrowed Arrow string array and building owned Arrow results: the layout rules
// that the CPU and CUDA column backends share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "gutf8/columns.hpp"
#include "utf8/arrow_views.hpp"

namespace gutf8::internal::columns {

// A borrowed string array after its structure was checked (offsets not yet: that reads them).
struct string_array {
  bool large = false;             // int64 offsets
  std::int64_t length = 0;
  std::int64_t offset = 0;        // array offset: row i is slot offset + i
  std::int64_t null_count = 0;    // as given (-1: unknown)
  const std::uint8_t* validity = nullptr;  // bit (offset + i); null: every row is valid
  const void* offsets = nullptr;  // int32 or int64 slots; length + 1 from slot `offset` are used
  const std::uint8_t* data = nullptr;
};

// Checks the format (u, z, U, Z), buffer count and structure; throws gutf8::error(invalid_argument).
string_array describe(const ArrowArray& array, const ArrowSchema& schema);

// The view types (utf8_view "vu", binary_view "vz"): 16-byte views, a row of at most 12 bytes
// inline, a longer one at (buffer index, offset) of the variadic data buffers.
bool is_view(const ArrowSchema& schema);
struct view_array {
  std::int64_t length = 0;
  std::int64_t offset = 0;
  std::int64_t null_count = 0;
  const std::uint8_t* validity = nullptr;  // bit (offset + i)
  const std::uint8_t* views = nullptr;     // 16 bytes a slot
  const void* const* data = nullptr;       // the variadic data buffers
  const std::int64_t* data_sizes = nullptr;
  std::int64_t data_count = 0;
};
using detail::inline_view_bytes;
using detail::view_bytes;
// Checks the structure (each view is checked when its row is read: detail::check_view).
view_array describe_view(const ArrowArray& array, const ArrowSchema& schema);

// Throws gutf8::error(invalid_argument) naming the bad view of row `row` (relative to the array).
[[noreturn]] void bad_view(std::int64_t row, detail::view_fault fault);

// Throws gutf8::error(invalid_argument) naming the bad offsets (slot i relative to the array).
[[noreturn]] void bad_offsets(std::int64_t row, std::int64_t at, std::int64_t next, std::int64_t data_bytes);

[[noreturn]] void raise_invalid(const row_error& e);

// An owned buffer of an Arrow result: host memory, or device memory whose deleter holds what its
// stream-ordered free must wait for.
using buffer = std::unique_ptr<void, std::function<void(void*)>>;
buffer host_buffer(std::size_t bytes);  // 64-byte aligned, as Arrow recommends
inline buffer no_buffer() { return buffer(nullptr, [](void*) {}); }

// Everything a result array is made of; make_column moves it behind the release callbacks.
struct array_parts {
  const char* format = "";  // a string literal
  std::int64_t length = 0;
  std::int64_t null_count = 0;
  std::vector<buffer> buffers;  // in Arrow order; an empty one exports as nullptr
  ArrowDeviceType device_type = ARROW_DEVICE_CPU;
  std::int64_t device_id = -1;
  buffer sync_event = no_buffer();  // CUDA: a cudaEvent_t*, as the Device Data Interface wants
};
column make_column(array_parts parts);

// Arrow bitmaps (LSB first).
inline bool bit(const std::uint8_t* bits, std::int64_t i) noexcept { return (bits[i >> 3] >> (i & 7)) & 1u; }
inline std::size_t bitmap_bytes(std::int64_t n) noexcept { return static_cast<std::size_t>((n + 7) / 8); }

// A host bitmap of n bits where set(i) says bit i; returns it and the count of clear bits.
template <class Set>
std::pair<buffer, std::int64_t> host_bitmap(std::int64_t n, const Set& set) {
  buffer b = host_buffer(bitmap_bytes(n));
  auto* bits = static_cast<std::uint8_t*>(b.get());
  std::int64_t clear = 0;
  for (std::int64_t byte = 0; byte * 8 < n; ++byte) {
    std::uint8_t v = 0;
    for (std::int64_t k = 0; k < 8 && byte * 8 + k < n; ++k) {
      const bool s = set(byte * 8 + k);
      v = static_cast<std::uint8_t>(v | (s ? 1u << k : 0u));
      clear += s ? 0 : 1;
    }
    bits[byte] = v;
  }
  return {std::move(b), clear};
}

}  // namespace gutf8::internal::columns
