// The CUDA backend of the string-column operations (gutf8/device_columns.hpp), on the kernels
// of kernels/utf8/columns.cuh with the scans of gutf8/prim.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "columns/arrow_io.hpp"
#include "gutf8/cuda_resources.hpp"
#include "gutf8/device_columns.hpp"
#include "gutf8/prim/scan.cuh"
#include "utf8/columns.cuh"

namespace gutf8::device {
namespace {

using namespace gutf8::kern::columns;
using internal::columns::array_parts;
using internal::columns::buffer;
using internal::columns::no_buffer;
using internal::columns::string_array;
using cuda::check;
using cuda::device_buffer;

unsigned grid_for(u64 threads) {
  return static_cast<unsigned>(std::max<u64>(1, (threads + block_threads - 1) / block_threads));
}

template <class Kernel, class... Args>
void launch(const char* name, Kernel kernel, u64 threads, cudaStream_t stream, Args... args) {
  if (threads == 0) return;
  kernel<<<grid_for(threads), block_threads, 0, stream>>>(args...);
  cuda::check_launch(name);
}

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
}

template <class T>
T download_one(const T* d, cudaStream_t stream) {
  T v{};
  check(cudaMemcpyAsync(&v, d, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync D2H");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return v;
}

string_array describe_device(const ArrowDeviceArray& a, const ArrowSchema& schema, cudaStream_t stream) {
  if (a.device_type != ARROW_DEVICE_CUDA && a.device_type != ARROW_DEVICE_CUDA_MANAGED)
    throw error(errc::invalid_argument, "gutf8 device column operation given an array on device type " +
                                            std::to_string(a.device_type) + " (use the host entry points)");
  string_array s = internal::columns::describe(a.array, schema);
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
device_rows<Off> checked_rows(const string_array& s, std::int64_t data_bytes, cudaStream_t stream) {
  const auto* offsets = static_cast<const Off*>(s.offsets) + s.offset;
  const device_rows<Off> r{s.data, offsets, s.validity, static_cast<u64>(s.offset), static_cast<u64>(s.length)};
  if (s.length == 0) return r;
  device_buffer<ull> bad(1);
  const ull none = ~0ull;
  check(cudaMemcpyAsync(bad.data(), &none, sizeof none, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync H2D");
  launch("check_offsets_kernel", check_offsets_kernel<Off>, r.length, stream, offsets, r.length,
         static_cast<long long>(data_bytes), bad.data());
  const ull row = download_one(bad.data(), stream);
  if (row == none) return r;
  Off pair[2]{};
  check(cudaMemcpy(pair, offsets + row, sizeof pair, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  internal::columns::bad_offsets(static_cast<std::int64_t>(row), pair[0], pair[1], data_bytes);
}

// Segments and per-row totals of a column: what every operation starts from.
template <class Off>
struct analysis {
  device_rows<Off> rows;
  u64 segments = 0;
  device_buffer<u64> first, seg_row, seg_kept, seg_errors;
  device_buffer<row_totals> totals;
  device_buffer<u8> states;
  device_buffer<column_totals> whole;
};

template <class Off>
analysis<Off> analyze(const device_rows<Off>& r, cudaStream_t stream) {
  analysis<Off> a{r};
  a.first = device_buffer<u64>(r.length + 1);
  launch("count_segments_kernel", count_segments_kernel<Off>, r.length + 1, stream, r, a.first.data());
  exclusive_sum_in_place(a.first.data(), r.length + 1, stream);
  a.segments = download_one(a.first.data() + r.length, stream);
  a.seg_row = device_buffer<u64>(a.segments);
  a.seg_kept = device_buffer<u64>(a.segments);
  a.seg_errors = device_buffer<u64>(a.segments);
  a.totals = device_buffer<row_totals>(r.length);
  a.states = device_buffer<u8>(r.length);
  a.whole = device_buffer<column_totals>(1);
  launch("init_totals_kernel", init_totals_kernel, r.length, stream, a.totals.data(), r.length);
  const column_totals start{0, ~0ull};
  check(cudaMemcpyAsync(a.whole.data(), &start, sizeof start, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync H2D");
  launch("analyze_segments_kernel", analyze_segments_kernel<Off>, a.segments, stream, r, a.first.data(), a.segments,
         a.seg_row.data(), a.seg_kept.data(), a.seg_errors.data(), a.totals.data());
  return a;
}

// Runs finish_rows_kernel and returns the column totals (synchronises).
template <class Off>
column_totals finish(analysis<Off>& a, on_invalid policy, Off* counts, long long* error_offsets, u8* error_kinds,
                     cudaStream_t stream) {
  launch("finish_rows_kernel", finish_rows_kernel<Off>, a.rows.length, stream, a.rows, a.totals.data(), a.states.data(),
         policy, counts, error_offsets, error_kinds, a.whole.data());
  return download_one(a.whole.data(), stream);
}

template <class Off>
row_error first_error_of(analysis<Off>& a, u64 row, cudaStream_t stream) {
  const row_totals t = download_one(a.totals.data() + row, stream);
  return row_error{static_cast<std::int64_t>(row), t.first_error >> 8, static_cast<error_kind>(t.first_error & 0xFF)};
}

// A validity (or boolean value) bitmap from the row states; the count of clear bits.
std::pair<buffer, std::int64_t> bitmap(const device_buffer<u8>& states, u64 rows, keep_rule rule, bool null_invalid,
                                       cudaStream_t stream) {
  buffer bits = device_result((rows + 7) / 8);
  device_buffer<ull> clear(1);
  check(cudaMemsetAsync(clear.data(), 0, sizeof(ull), stream), "cudaMemsetAsync");
  launch("bitmap_kernel", bitmap_kernel, (rows + 7) / 8, stream, states.data(), rows, rule, null_invalid,
         static_cast<u8*>(bits.get()), clear.data());
  return {std::move(bits), static_cast<std::int64_t>(download_one(clear.data(), stream))};
}

// Validity buffer of a result: absent when every row is kept.
std::pair<buffer, std::int64_t> validity(const device_buffer<u8>& states, u64 rows, keep_rule rule, bool null_invalid,
                                         cudaStream_t stream) {
  auto v = bitmap(states, rows, rule, null_invalid, stream);
  if (v.second == 0) v.first = no_buffer();
  return v;
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
row_validity is_valid_rows(const device_rows<Off>& r, const column_options& opt, cudaStream_t stream) {
  analysis<Off> a = analyze(r, stream);
  buffer offsets = opt.first_errors ? device_result(r.length * sizeof(long long)) : no_buffer();
  buffer kinds = opt.first_errors ? device_result(r.length) : no_buffer();
  const column_totals t = finish<Off>(a, on_invalid::null, nullptr, static_cast<long long*>(offsets.get()),
                                      static_cast<u8*>(kinds.get()), stream);
  row_validity out;
  out.invalid_rows = static_cast<std::int64_t>(t.invalid_rows);
  if (t.invalid_rows != 0) out.first = first_error_of(a, t.first_invalid_row, stream);
  std::vector<buffer> values;
  values.push_back(bitmap(a.states, r.length, keep_rule::valid_only, false, stream).first);
  out.valid = device_column("b", r.length, validity(a.states, r.length, keep_rule::not_null, false, stream),
                            std::move(values), stream);
  if (opt.first_errors) {
    std::vector<buffer> at, kind;
    at.push_back(std::move(offsets));
    kind.push_back(std::move(kinds));
    out.error_offsets = device_column("l", r.length, validity(a.states, r.length, keep_rule::invalid_only, false, stream),
                                      std::move(at), stream);
    out.error_kinds = device_column("C", r.length, validity(a.states, r.length, keep_rule::invalid_only, false, stream),
                                    std::move(kind), stream);
  }
  return out;
}

template <class Off>
column count_rows(const device_rows<Off>& r, on_invalid policy, cudaStream_t stream) {
  analysis<Off> a = analyze(r, stream);
  buffer counts = device_result(r.length * sizeof(Off));
  const column_totals t = finish<Off>(a, policy, static_cast<Off*>(counts.get()), nullptr, nullptr, stream);
  if (policy == on_invalid::raise && t.invalid_rows != 0)
    internal::columns::raise_invalid(first_error_of(a, t.first_invalid_row, stream));
  std::vector<buffer> values;
  values.push_back(std::move(counts));
  return device_column(sizeof(Off) == 8 ? "l" : "i", r.length,
                       validity(a.states, r.length, keep_rule::not_null, policy == on_invalid::null, stream),
                       std::move(values), stream);
}

template <class Off>
column repair_rows(const device_rows<Off>& r, on_invalid policy, cudaStream_t stream) {
  analysis<Off> a = analyze(r, stream);
  const column_totals t = finish<Off>(a, policy, nullptr, nullptr, nullptr, stream);
  if (policy == on_invalid::raise && t.invalid_rows != 0)
    internal::columns::raise_invalid(first_error_of(a, t.first_invalid_row, stream));
  device_buffer<u64> seg_at(a.segments + 1);
  launch("segment_output_kernel", segment_output_kernel, a.segments + 1, stream, a.seg_row.data(), a.seg_kept.data(),
         a.seg_errors.data(), a.states.data(), a.segments, policy, seg_at.data());
  exclusive_sum_in_place(seg_at.data(), a.segments + 1, stream);
  const u64 total = download_one(seg_at.data() + a.segments, stream);
  if (total > static_cast<u64>(std::numeric_limits<Off>::max()))
    throw error(errc::output_too_small, "gutf8 device columns: the repaired column holds " + std::to_string(total) +
                                            " bytes, more than int32 offsets address (use large_utf8)");
  buffer offsets = device_result((r.length + 1) * sizeof(Off));
  buffer data = device_result(total);
  launch("row_offsets_kernel", row_offsets_kernel<Off>, r.length + 1, stream, a.first.data(), seg_at.data(), r.length,
         static_cast<Off*>(offsets.get()));
  launch("write_segments_kernel", write_segments_kernel<Off>, a.segments, stream, r, a.first.data(), a.seg_row.data(),
         seg_at.data(), a.segments, a.states.data(), policy, static_cast<u8*>(data.get()));
  std::vector<buffer> rest;
  rest.push_back(std::move(offsets));
  rest.push_back(std::move(data));
  return device_column(sizeof(Off) == 8 ? "U" : "u", r.length,
                       validity(a.states, r.length, keep_rule::not_null, policy == on_invalid::null, stream),
                       std::move(rest), stream);
}

template <class F>
auto with_rows(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt,
               cudaStream_t stream, const F& f) {
  const string_array s = describe_device(array, schema, stream);
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
