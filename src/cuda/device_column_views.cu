// The view layouts on the device (device_column_views.hpp): a view array is checked and gathered
// into a large_binary layout (a scan of the row lengths with gutf8::prim, then one output-driven
// copy), so every operation runs the string layouts' walk of device_columns.cu unchanged; counts
// are narrowed to int32 and a repair is laid out as utf8_view, as the host backend does.
#include "cuda/device_column_views.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cuda/device_columns_shared.hpp"
#include "utf8/kernel_column_views.cuh"

namespace gutf8::device::views {
namespace {

using namespace kern::columns;
using kern::u64;
using kern::u8;
using cuda::check;
using internal::columns::buffer;
using shared::buffers_of;
using shared::call_memory;
using shared::launch;

// The gathered rows' buffers (cudaMalloc; their cudaFree waits for the device, which a
// stream-ordered gather would spare: the view path is untuned).
template <class T>
cuda::device_buffer<T> temporary(u64 n) {
  return cuda::device_buffer<T>(n);
}

// Rows' bytes to their places in one flat output, at any mix of row sizes (copy_rows_kernel).
template <class Source>
void copy_rows(const Source& src, const u64* at, u64 rows, u64 total, u8* out, cudaStream_t stream) {
  if (total == 0) return;
  const u64 warp_tiles = (total + warp_tile_bytes - 1) / warp_tile_bytes;
  shared::walk<copy_rows_kernel<Source>>("copy_rows_kernel", warp_tiles, stream, src, at, rows, total, out);
}

// A copy of a device result's validity bitmap and its null count, for a result made from it.
std::pair<buffer, std::int64_t> validity_of(const call_memory& mem, const column& c) {
  const ArrowArray& a = c.array();
  if (a.buffers[0] == nullptr) return {internal::columns::no_buffer(), a.null_count};
  const std::size_t bytes = internal::columns::bitmap_bytes(a.length);
  buffer bits = mem.result(bytes);
  check(cudaMemcpyAsync(bits.get(), a.buffers[0], bytes, cudaMemcpyDeviceToDevice, mem.stream()), "cudaMemcpyAsync D2D");
  return {std::move(bits), a.null_count};
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace

gathered gather(const call_memory& mem, const internal::columns::view_array& v) {
  const cudaStream_t stream = mem.stream();
  const auto rows = static_cast<u64>(v.length);
  gathered g{temporary<const void*>(static_cast<u64>(v.data_count)), temporary<u64>(rows + 1), {}, {}};
  if (v.data_count != 0) g.buffers.upload(std::span(v.data, static_cast<std::size_t>(v.data_count)), stream);
  const u8* views = rows == 0 ? nullptr : v.views + detail::view_bytes * v.offset;
  const view_source src{views, v.validity, static_cast<u64>(v.offset), g.buffers.data(), v.data_sizes, v.data_count,
                        aligned16(views)};
  const auto first_bad = mem.temp<u64>(1);
  check(cudaMemsetAsync(first_bad.data(), 0xFF, sizeof(u64), stream), "cudaMemsetAsync");
  launch("view_lengths_kernel", view_lengths_kernel, rows + 1, stream, src, rows, g.offsets.data(),
         reinterpret_cast<ull*>(first_bad.data()));
  shared::exclusive_sum_in_place(mem, g.offsets.data(), rows + 1);
  if (const u64 bad = shared::download_one(first_bad.data(), stream); bad != ~u64{0})
    internal::columns::bad_view(static_cast<std::int64_t>(bad / 8), static_cast<detail::view_fault>(bad % 8));
  const u64 total = shared::download_one(g.offsets.data() + rows, stream);
  g.data = temporary<u8>(std::max<u64>(total, 1));
  copy_rows(src, g.offsets.data(), rows, total, g.data.data(), stream);
  g.rows = {g.data.data(), reinterpret_cast<const std::int64_t*>(g.offsets.data()), v.validity,
            static_cast<u64>(v.offset), rows, 0, 0, total, aligned16(g.data.data())};
  return g;
}

column int32_counts(const call_memory& mem, const column& counts) {
  const auto rows = static_cast<u64>(counts.length());
  buffer narrow = mem.result(rows * sizeof(std::int32_t));
  launch("narrow_kernel", narrow_kernel<std::int64_t, std::int32_t>, rows, mem.stream(),
         static_cast<const std::int64_t*>(counts.array().buffers[1]), rows, static_cast<std::int32_t*>(narrow.get()));
  return shared::result_column(mem, "i", rows, validity_of(mem, counts), buffers_of(std::move(narrow)));
}

column view_column(const call_memory& mem, const column& repaired) {
  const cudaStream_t stream = mem.stream();
  const ArrowArray& a = repaired.array();
  const auto rows = static_cast<u64>(a.length);
  const auto* offsets = static_cast<const std::int64_t*>(a.buffers[1]);
  const auto* data = static_cast<const u8*>(a.buffers[2]);
  const auto long_at = mem.temp<u64>(rows + 1);
  launch("long_row_bytes_kernel", long_row_bytes_kernel, rows + 1, stream, offsets, rows, long_at.data());
  shared::exclusive_sum_in_place(mem, long_at.data(), rows + 1);
  const u64 total = shared::download_one(long_at.data() + rows, stream);
  if (total > static_cast<u64>(std::numeric_limits<std::int32_t>::max()))
    throw error(errc::output_too_small, "gutf8 device columns: the repaired view column's long rows hold " +
                                            std::to_string(total) + " bytes, more than one int32-addressed buffer");
  buffer views = mem.result(rows * detail::view_bytes);
  buffer long_rows = mem.result(total);
  buffer sizes = mem.result(sizeof(std::int64_t));
  const auto size = static_cast<std::int64_t>(total);
  check(cudaMemcpyAsync(sizes.get(), &size, sizeof size, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync H2D");
  launch("make_views_kernel", make_views_kernel, rows, stream, offsets, data, static_cast<const u64*>(long_at.data()),
         rows, static_cast<uint4*>(views.get()));
  copy_rows(flat_source{data, offsets}, long_at.data(), rows, total, static_cast<u8*>(long_rows.get()), stream);
  return shared::result_column(mem, "vu", rows, validity_of(mem, repaired),
                               buffers_of(std::move(views), std::move(long_rows), std::move(sizes)));
}

}  // namespace gutf8::device::views
