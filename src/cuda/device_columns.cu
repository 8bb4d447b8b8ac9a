// The CUDA backend of the string-column operations (gutf8/device_columns.hpp): one analysis walk
// of the bytes (kernels/utf8/kernel_column_scan.cuh) and, for a repair with errors, the scan of the
// segments' output sizes (gutf8/prim) and one write walk (kernel_column_write.cuh); a clean column's
// repair is a copy of its bytes and its offsets rebased to 0. View arrays are gathered into the
// large layout first (device_column_views.cu).
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "columns/arrow_io.hpp"
#include "cuda/device_column_views.hpp"
#include "cuda/device_columns_shared.hpp"
#include "gutf8/cuda_resources.hpp"
#include "gutf8/device_columns.hpp"
#include "gutf8/prim/scan.cuh"
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
using cuda::device_buffer;
using shared::buffers_of;
using shared::launch;
using shared::sm_count;

// Result memory, freed by the release callback of the array that holds it.
buffer device_result(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc (column result)");
  return buffer(p, [](void* q) { cudaFree(q); });
}

// The Device Data Interface's sync_event: a cudaEvent_t*, recorded when the result is ready.
buffer ready_event(cudaStream_t stream) {
  auto event = std::make_unique<cudaEvent_t>();
  check(cudaEventCreateWithFlags(event.get(), cudaEventDisableTiming), "cudaEventCreate");
  buffer owned(event.release(), [](void* e) {
    std::unique_ptr<cudaEvent_t> held(static_cast<cudaEvent_t*>(e));
    cudaEventDestroy(*held);
  });
  check(cudaEventRecord(*static_cast<cudaEvent_t*>(owned.get()), stream), "cudaEventRecord");
  return owned;
}

void exclusive_sum_in_place(u64* d, u64 n, cudaStream_t stream) {
  std::size_t temp_bytes = 0;
  check(prim::exclusive_sum(nullptr, temp_bytes, d, d, n, stream), "prim::exclusive_sum (size)");
  device_buffer<std::byte> temp(temp_bytes);
  check(prim::exclusive_sum(temp.data(), temp_bytes, d, d, n, stream), "prim::exclusive_sum");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // temp is freed on return
}

template <class T>
T download_one(const T* d, cudaStream_t stream) {
  T v{};
  check(cudaMemcpyAsync(&v, d, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync D2H");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return v;
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

template <class Off>
column_rows<Off> checked_rows(const string_array& s, std::int64_t data_bytes, cudaStream_t stream) {
  const auto* offsets = static_cast<const Off*>(s.offsets) + s.offset;
  column_rows<Off> r{s.data, offsets, s.validity, static_cast<u64>(s.offset), static_cast<u64>(s.length), 0, 0, 0, false};
  if (s.length == 0) return r;
  device_buffer<ull> bad(1);
  const ull none = ~0ull;
  check(cudaMemcpyAsync(bad.data(), &none, sizeof none, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync H2D");
  launch("check_offsets_kernel", check_offsets_kernel<Off>, r.length, stream, offsets, r.length,
         static_cast<long long>(data_bytes), bad.data());
  const ull row = download_one(bad.data(), stream);
  if (row != none) {
    Off pair[2]{};
    check(cudaMemcpy(pair, offsets + row, sizeof pair, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    internal::columns::bad_offsets(static_cast<std::int64_t>(row), pair[0], pair[1], data_bytes);
  }
  r.begin = static_cast<u64>(download_one(offsets, stream));
  r.end = static_cast<u64>(download_one(offsets + s.length, stream));
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
analysis scan(const column_rows<Off>& r, row_sum sum, Off* counts, u64* first_error, u64* seg_out,
              const u32* kept_rows, bool want_bits, cudaStream_t stream) {
  analysis a;
  device_buffer<column_totals> totals(1);
  const column_totals start{0, ~0ull, 0};
  check(cudaMemcpyAsync(totals.data(), &start, sizeof start, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync H2D");
  if (want_bits) {
    a.valid_bits = device_result(bit_words(r.length) * 4);
    fill(static_cast<u32*>(a.valid_bits.get()), 0xFF, bit_words(r.length), stream);
  }
  fill(counts, 0, r.length, stream);
  fill(first_error, 0xFF, r.length, stream);
  const scan_outputs<Off> o{static_cast<u32*>(a.valid_bits.get()), kept_rows, totals.data(), counts, first_error, seg_out,
                            sum};
  if (r.length == 0) return a;  // no offsets to read
  const column_grid g = grid_for_segments(r.segments(), sm_count());
  if (needs_cover(sum))
    column_scan_kernel<Off, true><<<g.blocks, column_block_threads, 0, stream>>>(r, o, g.segs_per_warp);
  else
    column_scan_kernel<Off, false><<<g.blocks, column_block_threads, 0, stream>>>(r, o, g.segs_per_warp);
  cuda::check_launch("column_scan_kernel");
  a.totals = download_one(totals.data(), stream);
  return a;
}

template <class Off>
row_error first_error_of(const column_rows<Off>& r, const column_totals& t, cudaStream_t stream) {
  device_buffer<located_error> at(1);
  locate_first_error_kernel<Off><<<1, 1, 0, stream>>>(r, t.first_error, at.data());
  cuda::check_launch("locate_first_error_kernel");
  const located_error e = download_one(at.data(), stream);
  return row_error{static_cast<std::int64_t>(e.row), e.offset, static_cast<error_kind>(e.kind)};
}

// A result bitmap: the input's validity (shifted to bit 0) and `with` (or its complement); no
// buffer when every bit is set. Synchronises for the count of clear bits.
template <class Off>
std::pair<buffer, std::int64_t> result_bits(const column_rows<Off>& r, const void* with, bool not_with,
                                            cudaStream_t stream) {
  if (r.validity == nullptr && with == nullptr) return {no_buffer(), 0};
  buffer bits = device_result(bit_words(r.length) * 4);
  device_buffer<ull> clear(1);
  check(cudaMemsetAsync(clear.data(), 0, sizeof(ull), stream), "cudaMemsetAsync");
  launch("combine_bits_kernel", combine_bits_kernel, bit_words(r.length), stream, r.validity, r.bit0,
         static_cast<const u32*>(with), not_with, r.length, static_cast<u32*>(bits.get()), clear.data());
  const auto zeros = static_cast<std::int64_t>(download_one(clear.data(), stream));
  if (zeros == 0) bits = no_buffer();
  return {std::move(bits), zeros};
}

column device_column(const char* format, u64 rows, std::pair<buffer, std::int64_t> valid, std::vector<buffer> rest,
                     cudaStream_t stream) {
  array_parts p;
  p.format = format;
  p.length = static_cast<std::int64_t>(rows);
  p.null_count = valid.second;
  p.buffers.push_back(std::move(valid.first));
  for (buffer& b : rest) p.buffers.push_back(std::move(b));
  p.device_type = ARROW_DEVICE_CUDA;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  p.device_id = device;
  p.sync_event = ready_event(stream);
  return internal::columns::make_column(std::move(p));
}

template <class Off>
row_validity is_valid_rows(const column_rows<Off>& r, const column_options& opt, cudaStream_t stream) {
  device_buffer<u64> first(opt.first_errors ? r.length : 0);
  analysis a = scan<Off>(r, row_sum::none, nullptr, opt.first_errors ? first.data() : nullptr, nullptr, nullptr, true,
                         stream);
  row_validity out;
  out.invalid_rows = static_cast<std::int64_t>(a.totals.invalid_rows);
  if (a.totals.invalid_rows != 0) out.first = first_error_of(r, a.totals, stream);
  if (opt.first_errors) {
    buffer offsets = device_result(r.length * sizeof(long long));
    buffer kinds = device_result(r.length);
    launch("first_errors_kernel", first_errors_kernel<Off>, r.length, stream, r,
           static_cast<const u32*>(a.valid_bits.get()), static_cast<const u64*>(first.data()),
           static_cast<long long*>(offsets.get()), static_cast<u8*>(kinds.get()));
    out.error_offsets = device_column("l", r.length, result_bits(r, a.valid_bits.get(), true, stream),
                                      buffers_of(std::move(offsets)), stream);
    out.error_kinds = device_column("C", r.length, result_bits(r, a.valid_bits.get(), true, stream),
                                    buffers_of(std::move(kinds)), stream);
  }
  auto validity = result_bits(r, nullptr, false, stream);
  out.valid = device_column("b", r.length, std::move(validity), buffers_of(std::move(a.valid_bits)), stream);
  return out;
}

template <class Off>
column count_rows(const column_rows<Off>& r, on_invalid policy, cudaStream_t stream) {
  buffer counts = device_result(r.length * sizeof(Off));
  analysis a = scan<Off>(r, policy == on_invalid::drop ? row_sum::wf_units : row_sum::units,
                         static_cast<Off*>(counts.get()), nullptr, nullptr, nullptr, true, stream);
  if (policy == on_invalid::raise && a.totals.invalid_rows != 0)
    internal::columns::raise_invalid(first_error_of(r, a.totals, stream));
  const bool null_invalid = policy == on_invalid::null && a.totals.invalid_rows != 0;
  return device_column(sizeof(Off) == 8 ? "l" : "i", r.length,
                       result_bits(r, null_invalid ? a.valid_bits.get() : nullptr, false, stream),
                       buffers_of(std::move(counts)), stream);
}

template <class Off>
column repair_rows(const column_rows<Off>& r, on_invalid policy, cudaStream_t stream) {
  const u64 segments = r.segments();
  device_buffer<u64> seg_at(segments + 1);
  const bool replace = policy == on_invalid::replace;
  // raise and null keep valid rows only, whose repair under drop is the row itself.
  analysis a = scan<Off>(r, replace ? row_sum::repaired_replace : row_sum::repaired_drop, nullptr, nullptr,
                         seg_at.data(), nullptr, true, stream);
  if (policy == on_invalid::raise && a.totals.invalid_rows != 0)
    internal::columns::raise_invalid(first_error_of(r, a.totals, stream));
  const bool null_invalid = policy == on_invalid::null && a.totals.invalid_rows != 0;
  auto validity = result_bits(r, null_invalid ? a.valid_bits.get() : nullptr, false, stream);
  buffer offsets = device_result((r.length + 1) * sizeof(Off));
  if (a.totals.invalid_rows == 0 && a.totals.null_bytes == 0) {  // the bytes as they are
    const u64 total = r.end - r.begin;
    buffer data = device_result(total);
    if (total != 0)
      check(cudaMemcpyAsync(data.get(), r.data + r.begin, total, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    if (r.length == 0)
      fill(static_cast<Off*>(offsets.get()), 0, 1, stream);
    else
      launch("rebase_offsets_kernel", rebase_offsets_kernel<Off>, r.length + 1, stream, r.offsets, r.length + 1,
             static_cast<Off*>(offsets.get()));
    return device_column(sizeof(Off) == 8 ? "U" : "u", r.length, std::move(validity),
                         buffers_of(std::move(offsets), std::move(data)), stream);
  }
  if (null_invalid)  // the sizes of the valid rows only
    a.totals = scan<Off>(r, row_sum::row_bytes, nullptr, nullptr, seg_at.data(),
                         static_cast<const u32*>(a.valid_bits.get()), false, stream).totals;
  fill(seg_at.data() + segments, 0, 1, stream);
  exclusive_sum_in_place(seg_at.data(), segments + 1, stream);
  const u64 total = download_one(seg_at.data() + segments, stream);
  if (total > static_cast<u64>(std::numeric_limits<Off>::max()))
    throw error(errc::output_too_small, "gutf8 device columns: the repaired column holds " + std::to_string(total) +
                                            " bytes, more than int32 offsets address (use large_utf8)");
  buffer data = device_result(total);
  const write_outputs<Off> o{null_invalid ? static_cast<const u32*>(a.valid_bits.get()) : nullptr, seg_at.data(),
                             static_cast<u8*>(data.get()), static_cast<Off*>(offsets.get()), replace};
  const column_grid g = grid_for_segments(segments, sm_count());
  column_write_kernel<Off><<<g.blocks, column_block_threads, 0, stream>>>(r, o, g.segs_per_warp);
  cuda::check_launch("column_write_kernel");
  return device_column(sizeof(Off) == 8 ? "U" : "u", r.length, std::move(validity),
                       buffers_of(std::move(offsets), std::move(data)), stream);
}

// A view array's rows, gathered: per-row results as they are, counts int32 and repairs utf8_view
// as the host gives them for a view array.
row_validity is_valid_rows(const views::gathered& g, const column_options& opt, cudaStream_t stream) {
  return is_valid_rows(g.rows, opt, stream);
}
column count_rows(const views::gathered& g, on_invalid policy, cudaStream_t stream) {
  return views::int32_counts(count_rows(g.rows, policy, stream), stream);
}
column repair_rows(const views::gathered& g, on_invalid policy, cudaStream_t stream) {
  return views::view_column(repair_rows(g.rows, policy, stream), stream);
}

template <class F>
auto with_rows(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
               cudaStream_t stream, const F& f) {
  if (internal::columns::is_view(schema))
    return f(views::gather(
        describe_device(array, stream, [&] { return internal::columns::describe_view(array.array, schema); }), stream));
  const string_array s =
      describe_device(array, stream, [&] { return internal::columns::describe(array.array, schema); });
  if (s.large) return f(checked_rows<std::int64_t>(s, opt.data_bytes, stream));
  return f(checked_rows<std::int32_t>(s, opt.data_bytes, stream));
}

}  // namespace

row_validity is_valid(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
                      cudaStream_t stream) {
  return with_rows(array, schema, opt, stream, [&](const auto& r) { return is_valid_rows(r, opt, stream); });
}

void validate(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
              cudaStream_t stream) {
  column_options no_details = opt;
  no_details.first_errors = false;
  const row_validity v = is_valid(array, schema, no_details, stream);
  if (v.first) internal::columns::raise_invalid(*v.first);
}

column make_valid(const ArrowDeviceArray& array, const ArrowSchema& schema, error_policy policy,
                  const column_options& opt, cudaStream_t stream) {
  if (policy == error_policy::strict)
    throw error(errc::invalid_argument, "gutf8 columns: make_valid repairs (replace or drop), it cannot be strict");
  return cast_to_utf8(array, schema, policy == error_policy::replace ? on_invalid::replace : on_invalid::drop, opt,
                      stream);
}

column cast_to_utf8(const ArrowDeviceArray& array, const ArrowSchema& schema, on_invalid policy,
                    const column_options& opt, cudaStream_t stream) {
  return with_rows(array, schema, opt, stream, [&](const auto& r) { return repair_rows(r, policy, stream); });
}

column count_code_points(const ArrowDeviceArray& array, const ArrowSchema& schema, on_invalid policy,
                         const column_options& opt, cudaStream_t stream) {
  return with_rows(array, schema, opt, stream, [&](const auto& r) { return count_rows(r, policy, stream); });
}

}  // namespace gutf8::device

// What device_column_views.cu borrows (device_columns_shared.hpp), so both allocate, scan and
// hand out results one way.
namespace gutf8::device::shared {

buffer result_buffer(std::size_t bytes, [[maybe_unused]] cudaStream_t stream) { return device_result(bytes); }

column result_column(const char* format, u64 rows, std::pair<buffer, std::int64_t> validity, std::vector<buffer> rest,
                     cudaStream_t stream) {
  return device_column(format, rows, std::move(validity), std::move(rest), stream);
}

void exclusive_sum(u64* d, u64 n, cudaStream_t stream) { exclusive_sum_in_place(d, n, stream); }

u64 download(const u64* d, cudaStream_t stream) { return download_one(d, stream); }

}  // namespace gutf8::device::shared
