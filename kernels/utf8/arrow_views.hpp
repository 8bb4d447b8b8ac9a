// The Arrow view layout (utf8_view "vu", binary_view "vz") and the check of one view, usable on
// the host and in CUDA kernels: the CPU and GPU column backends accept and reject the same views.
#pragma once

#include <cstdint>

#include "utf8/utf8_rules.hpp"  // GUTF8_HD

namespace gutf8::detail {

// A view is 16 bytes: int32 length, then up to 12 bytes inline (zero padded), or for a longer
// row a 4-byte prefix, the int32 index of its data buffer and the int32 offset in it.
inline constexpr std::int64_t view_bytes = 16, inline_view_bytes = 12;

// What is wrong with a view, in the order the checks are made (the first one found is reported).
enum class view_fault : std::uint8_t { none, negative_length, buffer_index, past_buffer, missing_buffer };

// The check of a non-null row's view (a null row's view is never read). data_count, sizes and
// data describe the variadic data buffers; sizes and data are read at `index` only once it is
// known to be inside them.
GUTF8_HD view_fault check_view(std::int32_t length, std::int32_t index, std::int32_t offset, std::int64_t data_count,
                               const std::int64_t* sizes, const void* const* data) {
  if (length < 0) return view_fault::negative_length;
  if (length <= inline_view_bytes) return view_fault::none;
  if (index < 0 || index >= data_count) return view_fault::buffer_index;
  if (offset < 0 || std::int64_t{offset} + length > sizes[index]) return view_fault::past_buffer;
  if (data[index] == nullptr) return view_fault::missing_buffer;
  return view_fault::none;
}

}  // namespace gutf8::detail
