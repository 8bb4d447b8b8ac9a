// View arrays (utf8_view / binary_view) on the device (device_column_views.cu): their rows checked
// and gathered into one large_binary layout, which device_columns.cu's walk takes as it is, and
// its results turned into those of the view family as the host gives them (int32 counts,
// utf8_view repairs).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "columns/arrow_io.hpp"
#include "cuda/device_columns_shared.hpp"
#include "cuda/cuda_resources.hpp"
#include "utf8/warp_column_rows.cuh"

namespace gutf8::device::views {

// A view array's rows one after the other (a null row empty, its view unread): a large_binary
// layout over buffers of its own, with the input's validity bitmap.
struct gathered {
  cuda::device_buffer<const void*> buffers;  // the input's table of data buffers, for the kernels
  cuda::device_buffer<kern::u64> offsets;    // rows + 1, from 0
  cuda::device_buffer<kern::u8> data;
  kern::columns::column_rows<std::int64_t> rows;  // over the two
};

// Checks every non-null row's view and throws gutf8::error(invalid_argument) for the first bad
// one, with the host's message, before anything is made; then gathers the rows on the call's stream.
gathered gather(const shared::call_memory& mem, const internal::columns::view_array& v);

// The two below read a result of the large walk, which the caller then releases during the call:
// its memory goes back in the call's stream order, after their kernels.

// The int64 counts ("l") of the gathered rows as a view column's int32 ones ("i").
column int32_counts(const shared::call_memory& mem, const column& counts);

// The repair of the gathered rows (large_utf8 "U") as the host repairs a view column: utf8_view
// ("vu"), rows of at most 12 bytes inline, longer ones in one data buffer in row order.
column view_column(const shared::call_memory& mem, const column& repaired);

}  // namespace gutf8::device::views
