// The CUDA backend of the string-column operations (gutf8/device_columns.hpp): one analysis walk
// of the bytes (kernels/utf8/kernel_column_scan.cuh) and, for a repair with errors, the scan of the
// warp tiles' output sizes (gutf8/prim) and one write walk (kernel_column_write.cuh); a clean column's
// repair is a copy of its bytes and its offsets rebased to 0. View arrays are gathered into the
// large layout first (device_column_views.cu).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "columns/arrow_io.hpp"
#include "cuda/device_column_views.hpp"
#include "cuda/device_columns_shared.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device_columns.hpp"
#include "utf8/kernel_column_write.cuh"
#include "utf8/kernel_columns.cuh"

namespace gutf8::device {
namespace {

using namespace gutf8::kern::columns;
using kern::u8;
using kern::u32;
using kern::u64;
using internal::columns::array_parts;
using internal::columns::buffer;
using internal::columns::no_buffer;
using internal::columns::string_array;
using cuda::check;
using shared::buffers_of;
using shared::call_memory;
using shared::download_one;
using shared::exclusive_sum_in_place;
using shared::launch;
using shared::walk;

template <class T>
void upload_one(T* d, const T& v, cudaStream_t stream) {
  check(cudaMemcpyAsync(d, &v, sizeof(T), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync H2D");
}

// The placement checks around structure() (describe or describe_view), then the wait for the
// input's sync_event.
template <class Structure>
auto describe_device(const ArrowDeviceArray& a, cudaStream_t stream, const Structure& structure) {
  if (a.device_type != ARROW_DEVICE_CUDA && a.device_type != ARROW_DEVICE_CUDA_MANAGED)
    throw error(errc::invalid_argument, "gutf8 device column operation given an array on device type " +
                                            std::to_string(a.device_type) + " (use the host entry points)");
  auto s = structure();
  int current = 0;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (a.device_id != current)
    throw error(errc::invalid_argument, "gutf8 device columns: the array is on device " + std::to_string(a.device_id) +
                                            ", the current device is " + std::to_string(current));
  if (a.sync_event != nullptr)
    check(cudaStreamWaitEvent(stream, *static_cast<cudaEvent_t*>(a.sync_event), 0), "cudaStreamWaitEvent");
  return s;
}

// The rows, their offsets checked and their first and last read back (one synchronisation).
template <class Off>
column_rows<Off> checked_rows(const call_memory& mem, const string_array& s, std::int64_t data_bytes) {
  const auto* offsets = static_cast<const Off*>(s.offsets) + s.offset;
  column_rows<Off> r{s.data, offsets, s.validity, static_cast<u64>(s.offset), static_cast<u64>(s.length), 0, 0, 0, false};
  if (s.length == 0) return r;
  const auto found = mem.temp<offsets_check>(1);
  upload_one(found.data(), offsets_check{~0ull, 0, 0}, mem.stream());
  launch("check_offsets_kernel", check_offsets_kernel<Off>, r.length, mem.stream(), offsets, r.length,
         static_cast<long long>(data_bytes), found.data());
  const offsets_check c = download_one(found.data(), mem.stream());
  if (c.first_bad != ~0ull) {
    Off pair[2]{};
    check(cudaMemcpy(pair, offsets + c.first_bad, sizeof pair, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    internal::columns::bad_offsets(static_cast<std::int64_t>(c.first_bad), pair[0], pair[1], data_bytes);
  }
  r.begin = c.begin;
  r.end = c.end;
  if (s.data == nullptr && r.end != r.begin)
    throw error(errc::invalid_argument, "gutf8 device columns: the data buffer is missing");
  r.base = r.begin & ~u64{15};
  r.vec = (reinterpret_cast<std::uintptr_t>(s.data) & 15u) == 0;
  return r;
}

// What a column walk learnt: per-row validity bits (a result buffer) and the totals.
struct analysis {
  buffer valid_bits = no_buffer();  // u32 words, bit i = row i has no error (null rows: 1)
  column_totals totals{};
};

// Presets an optional device array (null: not asked for, nothing to fill).
template <class T>
void fill(T* d, int byte, u64 count, cudaStream_t stream) {
  if (d != nullptr && count != 0) check(cudaMemsetAsync(d, byte, count * sizeof(T), stream), "cudaMemsetAsync");
}

u64 bit_words(u64 rows) { return (rows + 31) / 32; }

// One analysis pass (column_scan_kernel); synchronises to read the totals.
template <class Off>
analysis scan(const call_memory& mem, const column_rows<Off>& r, row_sum sum, Off* counts, u64* first_error,
              u64* warp_tile_out, const u32* kept_rows, bool want_bits, u8* warp_tile_verbatim = nullptr) {
  const cudaStream_t stream = mem.stream();
  analysis a;
  const auto totals = mem.temp<column_totals>(1);
  upload_one(totals.data(), column_totals{0, ~0ull, 0}, stream);
  if (want_bits) {
    a.valid_bits = mem.result(bit_words(r.length) * 4);
    fill(static_cast<u32*>(a.valid_bits.get()), 0xFF, bit_words(r.length), stream);
  }
  fill(counts, 0, r.length, stream);
  fill(first_error, 0xFF, r.length, stream);
  const scan_outputs<Off> o{static_cast<u32*>(a.valid_bits.get()), kept_rows, totals.data(), counts, first_error,
                            warp_tile_out, warp_tile_verbatim, sum};
  if (r.length == 0) return a;  // no offsets to read
  if (needs_cover(sum))
    walk<column_scan_kernel<Off, true>>("column_scan_kernel", r.warp_tiles(), stream, r, o);
  else
    walk<column_scan_kernel<Off, false>>("column_scan_kernel", r.warp_tiles(), stream, r, o);
  a.totals = download_one(totals.data(), stream);
  return a;
}

template <class Off>
row_error first_error_of(const call_memory& mem, const column_rows<Off>& r, const column_totals& t) {
  const auto at = mem.temp<located_error>(1);
  locate_first_error_kernel<Off><<<1, 1, 0, mem.stream()>>>(r, t.first_error, at.data());
  cuda::check_launch("locate_first_error_kernel");
  const located_error e = download_one(at.data(), mem.stream());
  return row_error{static_cast<std::int64_t>(e.row), e.offset, static_cast<error_kind>(e.kind)};
}

// A result bitmap: the input's validity (shifted to bit 0) and `with` (or its complement); no
// buffer when every bit is set. Synchronises for the count of clear bits.
template <class Off>
std::pair<buffer, std::int64_t> result_bits(const call_memory& mem, const column_rows<Off>& r, const void* with,
                                            bool not_with) {
  if (r.validity == nullptr && with == nullptr) return {no_buffer(), 0};
  buffer bits = mem.result(bit_words(r.length) * 4);
  const auto clear = mem.temp<ull>(1);
  fill(clear.data(), 0, 1, mem.stream());
  launch("combine_bits_kernel", combine_bits_kernel, bit_words(r.length), mem.stream(), r.validity, r.bit0,
         static_cast<const u32*>(with), not_with, r.length, static_cast<u32*>(bits.get()), clear.data());
  const auto zeros = static_cast<std::int64_t>(download_one(clear.data(), mem.stream()));
  if (zeros == 0) bits = no_buffer();
  return {std::move(bits), zeros};
}


template <class Off>
row_validity is_valid_rows(const call_memory& mem, const column_rows<Off>& r, const column_options& opt) {
  const auto first = mem.temp<u64>(opt.first_errors ? r.length : 0);
  analysis a = scan<Off>(mem, r, row_sum::none, nullptr, first.data(), nullptr, nullptr, true);
  row_validity out;
  out.invalid_rows = static_cast<std::int64_t>(a.totals.invalid_rows);
  if (a.totals.invalid_rows != 0) out.first = first_error_of(mem, r, a.totals);
  if (opt.first_errors) {
    buffer offsets = mem.result(r.length * sizeof(long long));
    buffer kinds = mem.result(r.length);
    launch("first_errors_kernel", first_errors_kernel<Off>, r.length, mem.stream(), r,
           static_cast<const u32*>(a.valid_bits.get()), static_cast<const u64*>(first.data()),
           static_cast<long long*>(offsets.get()), static_cast<u8*>(kinds.get()));
    out.error_offsets = shared::result_column(mem, "l", r.length, result_bits(mem, r, a.valid_bits.get(), true),
                                      buffers_of(std::move(offsets)));
    out.error_kinds = shared::result_column(mem, "C", r.length, result_bits(mem, r, a.valid_bits.get(), true),
                                    buffers_of(std::move(kinds)));
  }
  auto validity = result_bits(mem, r, nullptr, false);
  out.valid = shared::result_column(mem, "b", r.length, std::move(validity), buffers_of(std::move(a.valid_bits)));
  return out;
}

template <class Off>
column count_rows(const call_memory& mem, const column_rows<Off>& r, on_invalid policy) {
  buffer counts = mem.result(r.length * sizeof(Off));
  analysis a = scan<Off>(mem, r, policy == on_invalid::drop ? row_sum::wf_units : row_sum::units,
                         static_cast<Off*>(counts.get()), nullptr, nullptr, nullptr, true);
  if (policy == on_invalid::raise && a.totals.invalid_rows != 0)
    internal::columns::raise_invalid(first_error_of(mem, r, a.totals));
  const bool null_invalid = policy == on_invalid::null && a.totals.invalid_rows != 0;
  return shared::result_column(mem, sizeof(Off) == 8 ? "l" : "i", r.length,
                       result_bits(mem, r, null_invalid ? a.valid_bits.get() : nullptr, false),
                       buffers_of(std::move(counts)));
}

// A column without errors or bytes under null rows: its bytes as they are, offsets rebased to 0.
template <class Off>
std::vector<buffer> copied_rows(const call_memory& mem, const column_rows<Off>& r) {
  buffer offsets = mem.result((r.length + 1) * sizeof(Off));
  const u64 total = r.end - r.begin;
  buffer data = mem.result(total);
  if (total != 0)
    check(cudaMemcpyAsync(data.get(), r.data + r.begin, total, cudaMemcpyDeviceToDevice, mem.stream()),
          "cudaMemcpyAsync");
  if (r.length == 0)
    fill(static_cast<Off*>(offsets.get()), 0, 1, mem.stream());
  else
    launch("rebase_offsets_kernel", rebase_offsets_kernel<Off>, r.length + 1, mem.stream(), r.offsets, r.length + 1,
           static_cast<Off*>(offsets.get()));
  return buffers_of(std::move(offsets), std::move(data));
}

template <class Off>
column repair_rows(const call_memory& mem, const column_rows<Off>& r, on_invalid policy) {
  const char* format = sizeof(Off) == 8 ? "U" : "u";
  const u64 warp_tiles = r.warp_tiles();
  const auto warp_tile_at = mem.temp<u64>(warp_tiles + 1);
  const auto warp_tile_verbatim = mem.temp<u8>(warp_tiles);
  const bool replace = policy == on_invalid::replace;
  // raise and null keep valid rows only, whose repair under drop is the row itself.
  analysis a = scan<Off>(mem, r, replace ? row_sum::repaired_replace : row_sum::repaired_drop, nullptr, nullptr,
                         warp_tile_at.data(), nullptr, true, warp_tile_verbatim.data());
  if (policy == on_invalid::raise && a.totals.invalid_rows != 0)
    internal::columns::raise_invalid(first_error_of(mem, r, a.totals));
  const bool null_invalid = policy == on_invalid::null && a.totals.invalid_rows != 0;
  auto validity = result_bits(mem, r, null_invalid ? a.valid_bits.get() : nullptr, false);
  if (a.totals.invalid_rows == 0 && a.totals.null_bytes == 0)
    return shared::result_column(mem, format, r.length, std::move(validity), copied_rows(mem, r));
  if (null_invalid)  // the sizes of the valid rows only
    a.totals = scan<Off>(mem, r, row_sum::row_bytes, nullptr, nullptr, warp_tile_at.data(),
                         static_cast<const u32*>(a.valid_bits.get()), false).totals;
  fill(warp_tile_at.data() + warp_tiles, 0, 1, mem.stream());
  exclusive_sum_in_place(mem, warp_tile_at.data(), warp_tiles + 1);
  const u64 total = download_one(warp_tile_at.data() + warp_tiles, mem.stream());
  if (total > static_cast<u64>(std::numeric_limits<Off>::max()))
    throw error(errc::output_too_small, "gutf8 device columns: the repaired column holds " + std::to_string(total) +
                                            " bytes, more than int32 offsets address (use large_utf8)");
  buffer offsets = mem.result((r.length + 1) * sizeof(Off));
  buffer data = mem.result(total);
  // Under null, the scan's verbatim warp tiles may hold bytes of rows that are now dropped.
  const write_outputs<Off> o{null_invalid ? static_cast<const u32*>(a.valid_bits.get()) : nullptr, warp_tile_at.data(),
                             null_invalid ? nullptr : warp_tile_verbatim.data(), static_cast<u8*>(data.get()),
                             static_cast<Off*>(offsets.get()), replace};
  walk<column_write_kernel<Off>>("column_write_kernel", warp_tiles, mem.stream(), r, o);
  return shared::result_column(mem, format, r.length, std::move(validity), buffers_of(std::move(offsets), std::move(data)));
}

// A view array's rows, gathered: per-row results as they are, counts int32 and repairs utf8_view
// as the host gives them for a view array.
row_validity is_valid_rows(const call_memory& mem, const views::gathered& g, const column_options& opt) {
  return is_valid_rows(mem, g.rows, opt);
}
column count_rows(const call_memory& mem, const views::gathered& g, on_invalid policy) {
  return views::int32_counts(mem, count_rows(mem, g.rows, policy));
}
column repair_rows(const call_memory& mem, const views::gathered& g, on_invalid policy) {
  return views::view_column(mem, repair_rows(mem, g.rows, policy));
}

template <class F>
auto with_rows(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
               cudaStream_t stream, cudaMemPool_t pool, const F& f) {
  if (internal::columns::is_view(schema)) {
    const auto v =
        describe_device(array, stream, [&] { return internal::columns::describe_view(array.array, schema); });
    const call_memory mem(stream, pool);
    return f(mem, views::gather(mem, v));
  }
  const string_array s =
      describe_device(array, stream, [&] { return internal::columns::describe(array.array, schema); });
  const call_memory mem(stream, pool);
  if (s.large) return f(mem, checked_rows<std::int64_t>(mem, s, opt.data_bytes));
  return f(mem, checked_rows<std::int32_t>(mem, s, opt.data_bytes));
}

}  // namespace

row_validity is_valid(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
                      cudaStream_t stream, cudaMemPool_t pool) {
  return with_rows(array, schema, opt, stream, pool,
                   [&](const call_memory& mem, const auto& r) { return is_valid_rows(mem, r, opt); });
}

void validate(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
              cudaStream_t stream, cudaMemPool_t pool) {
  column_options no_details = opt;
  no_details.first_errors = false;
  const row_validity v = is_valid(array, schema, no_details, stream, pool);
  if (v.first) internal::columns::raise_invalid(*v.first);
}

column make_valid(const ArrowDeviceArray& array, const ArrowSchema& schema, error_policy policy,
                  const column_options& opt, cudaStream_t stream, cudaMemPool_t pool) {
  if (policy == error_policy::strict)
    throw error(errc::invalid_argument, "gutf8 columns: make_valid repairs (replace or drop), it cannot be strict");
  return cast_to_utf8(array, schema, policy == error_policy::replace ? on_invalid::replace : on_invalid::drop, opt,
                      stream, pool);
}

column cast_to_utf8(const ArrowDeviceArray& array, const ArrowSchema& schema, on_invalid policy,
                    const column_options& opt, cudaStream_t stream, cudaMemPool_t pool) {
  return with_rows(array, schema, opt, stream, pool,
                   [&](const call_memory& mem, const auto& r) { return repair_rows(mem, r, policy); });
}

column count_code_points(const ArrowDeviceArray& array, const ArrowSchema& schema, on_invalid policy,
                         const column_options& opt, cudaStream_t stream, cudaMemPool_t pool) {
  return with_rows(array, schema, opt, stream, pool,
                   [&](const call_memory& mem, const auto& r) { return count_rows(mem, r, policy); });
}

}  // namespace gutf8::device

namespace gutf8::device::shared {

column result_column(const call_memory& mem, const char* format, u64 rows, std::pair<buffer, std::int64_t> valid,
                     std::vector<buffer> rest) {
  internal::columns::array_parts p;
  p.format = format;
  p.length = static_cast<std::int64_t>(rows);
  p.null_count = valid.second;
  p.buffers.push_back(std::move(valid.first));
  for (buffer& b : rest) p.buffers.push_back(std::move(b));
  p.device_type = ARROW_DEVICE_CUDA;
  int device = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  p.device_id = device;
  p.sync_event = mem.sync_event();
  return internal::columns::make_column(std::move(p));
}

}  // namespace gutf8::device::shared
