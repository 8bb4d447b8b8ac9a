// Kernels of the string-column operations (src/cuda/device_columns.cu runs them).
//
// Every row is cut into segments of segment_bytes; the segments of all non-null rows are
// numbered by an exclusive scan of their counts (prim scan), so a row of any size (beyond one
// tile, beyond 2^31 bytes) spreads over many threads and millions of tiny rows cost one thread
// each. A segment handles the units that *start* in it, reading on to its row's end but never
// past it: whether a byte starts a unit is decided from at most 3 bytes before it, inside the
// row (SPEC §1). Segment counts reach their row through atomics; output positions come from a
// second exclusive scan, of the segments' output sizes, in row order.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gutf8/columns.hpp"
#include "utf8/row_units.hpp"

namespace gutf8::kern::columns {

using u8 = std::uint8_t;
using u64 = std::uint64_t;
using ull = unsigned long long;

inline constexpr u64 segment_bytes = 256;
inline constexpr unsigned block_threads = 256;
inline constexpr u64 no_error = ~u64{0};

enum class row_state : u8 { null, valid, invalid };

// What a result row keeps (its validity bit).
enum class keep_rule : u8 {
  not_null,      // every non-null row
  valid_only,    // valid rows (is_valid's value bits; cast with on_invalid::null)
  invalid_only,  // invalid rows (the first-error columns)
};

template <class Off>
struct device_rows {
  const u8* data;
  const Off* offsets;  // offsets[i]: where row i starts
  const u8* validity;  // bit (bit0 + i); null: no nulls
  u64 bit0;
  u64 length;

  __device__ bool is_null(u64 i) const {
    return validity != nullptr && !((validity[(bit0 + i) >> 3] >> ((bit0 + i) & 7)) & 1u);
  }
  __device__ u64 begin(u64 i) const { return static_cast<u64>(offsets[i]); }
  __device__ u64 size(u64 i) const { return static_cast<u64>(offsets[i + 1] - offsets[i]); }
};

// Per-row totals, summed over the row's segments.
struct row_totals {
  ull errors;
  ull kept_bytes;   // bytes of well-formed sequences
  ull code_points;  // well-formed sequences
  ull first_error;  // offset << 8 | error_kind, min over segments; no_error: none
};

__device__ __forceinline__ u64 thread_index() { return u64{blockIdx.x} * blockDim.x + threadIdx.x; }

template <class Off>
__global__ void check_offsets_kernel(const Off* o, u64 n, long long data_bytes, ull* first_bad) {
  const u64 i = thread_index();
  if (i >= n) return;
  const bool bad = (i == 0 && o[0] < 0) || o[i + 1] < o[i] || (data_bytes >= 0 && static_cast<long long>(o[i + 1]) > data_bytes);
  if (bad) atomicMin(first_bad, static_cast<ull>(i));
}

__global__ void init_totals_kernel(row_totals* totals, u64 rows) {
  const u64 i = thread_index();
  if (i < rows) totals[i] = row_totals{0, 0, 0, no_error};
}

// counts[i] = segments of row i (0 for null and empty rows); counts[length] = 0.
template <class Off>
__global__ void count_segments_kernel(device_rows<Off> r, u64* counts) {
  const u64 i = thread_index();
  if (i > r.length) return;
  counts[i] = i == r.length || r.is_null(i) ? 0 : (r.size(i) + segment_bytes - 1) / segment_bytes;
}

// The row that owns segment s: the last row whose first segment is <= s.
__device__ u64 owner_row(const u64* first, u64 rows, u64 s) {
  u64 lo = 0, hi = rows;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const u64 mid = lo + (hi - lo) / 2;
    if (first[mid] <= s) lo = mid; else hi = mid;
  }
  return lo;
}

template <class Off>
__global__ void analyze_segments_kernel(device_rows<Off> r, const u64* first, u64 segments, u64* seg_row,
                                        u64* seg_kept, u64* seg_errors, row_totals* totals) {
  const u64 s = thread_index();
  if (s >= segments) return;
  const u64 i = owner_row(first, r.length + 1, s);
  const u8* row = r.data + r.begin(i);
  const u64 n = r.size(i);
  const segment_span span = span_of(row, n, s - first[i], segment_bytes);
  u64 kept = 0, errors = 0, code_points = 0, first_error = no_error;
  for (u64 p = span.from; p < span.to;) {
    const unit u = next_unit(row, n, p);
    if (u.kind == error_kind::none) {
      kept += u.length;
      ++code_points;
    } else {
      if (errors++ == 0) first_error = p << 8 | static_cast<u64>(u.kind);
    }
    p += u.length;
  }
  seg_row[s] = i;
  seg_kept[s] = kept;
  seg_errors[s] = errors;
  row_totals& t = totals[i];
  if (code_points != 0) atomicAdd(&t.code_points, static_cast<ull>(code_points));
  if (kept != 0) atomicAdd(&t.kept_bytes, static_cast<ull>(kept));
  if (errors != 0) {
    atomicAdd(&t.errors, static_cast<ull>(errors));
    atomicMin(&t.first_error, static_cast<ull>(first_error));
  }
}

// What the host learns about the column as a whole.
struct column_totals {
  ull invalid_rows;
  ull first_invalid_row;  // ~0: none
};

// Row states; counts (characters per `policy`, as Off) and first-error columns when asked for.
template <class Off>
__global__ void finish_rows_kernel(device_rows<Off> r, const row_totals* totals, u8* states, on_invalid policy,
                                   Off* counts, long long* error_offsets, u8* error_kinds, column_totals* whole) {
  const u64 i = thread_index();
  if (i >= r.length) return;
  const row_totals t = totals[i];
  const row_state s = r.is_null(i) ? row_state::null : t.errors == 0 ? row_state::valid : row_state::invalid;
  states[i] = static_cast<u8>(s);
  if (counts != nullptr)
    counts[i] = static_cast<Off>(s == row_state::null ? 0 : t.code_points + (policy == on_invalid::replace ? t.errors : 0));
  if (error_offsets != nullptr) {
    error_offsets[i] = s == row_state::invalid ? static_cast<long long>(t.first_error >> 8) : 0;
    error_kinds[i] = s == row_state::invalid ? static_cast<u8>(t.first_error & 0xFF) : 0;
  }
  if (s == row_state::invalid) {
    atomicAdd(&whole->invalid_rows, 1ull);
    atomicMin(&whole->first_invalid_row, static_cast<ull>(i));
  }
}

__device__ __forceinline__ bool keeps(keep_rule rule, bool null_invalid, row_state s) {
  switch (rule) {
    case keep_rule::valid_only: return s == row_state::valid;
    case keep_rule::invalid_only: return s == row_state::invalid;
    default: return s == row_state::valid || (s == row_state::invalid && !null_invalid);
  }
}

// One bitmap byte a thread; clear bits counted into *clear.
__global__ void bitmap_kernel(const u8* states, u64 rows, keep_rule rule, bool null_invalid, u8* bits, ull* clear) {
  const u64 b = thread_index();
  if (b * 8 >= rows) return;
  u8 v = 0;
  unsigned zeros = 0;
  for (u64 k = 0; k < 8 && b * 8 + k < rows; ++k) {
    const bool keep = keeps(rule, null_invalid, static_cast<row_state>(states[b * 8 + k]));
    v = static_cast<u8>(v | (keep ? 1u << k : 0u));
    zeros += keep ? 0 : 1;
  }
  bits[b] = v;
  if (zeros != 0) atomicAdd(clear, static_cast<ull>(zeros));
}

// out[s] = output bytes of segment s under `policy`; out[segments] = 0 (for the scan's total).
__global__ void segment_output_kernel(const u64* seg_row, const u64* seg_kept, const u64* seg_errors,
                                      const u8* states, u64 segments, on_invalid policy, u64* out) {
  const u64 s = thread_index();
  if (s > segments) return;
  if (s == segments) {
    out[s] = 0;
    return;
  }
  const bool valid = static_cast<row_state>(states[seg_row[s]]) == row_state::valid;
  const u64 repaired = policy == on_invalid::replace ? seg_kept[s] + 3 * seg_errors[s]
                       : policy == on_invalid::drop  ? seg_kept[s]
                                                     : 0;
  out[s] = valid ? seg_kept[s] : repaired;
}

// Row offsets of the result: where the row's first segment writes (rows without segments take
// the next segment's position; the last slot is the total).
template <class Off>
__global__ void row_offsets_kernel(const u64* first, const u64* seg_at, u64 rows, Off* offsets) {
  const u64 i = thread_index();
  if (i <= rows) offsets[i] = static_cast<Off>(seg_at[first[i]]);
}

template <class Off>
__global__ void write_segments_kernel(device_rows<Off> r, const u64* first, const u64* seg_row, const u64* seg_at,
                                      u64 segments, const u8* states, on_invalid policy, u8* out) {
  const u64 s = thread_index();
  if (s >= segments) return;
  const u64 i = seg_row[s];
  const auto state = static_cast<row_state>(states[i]);
  if (state == row_state::invalid && policy == on_invalid::null) return;
  const u8* row = r.data + r.begin(i);
  const u64 n = r.size(i);
  const segment_span span = span_of(row, n, s - first[i], segment_bytes);
  u8* o = out + seg_at[s];
  if (state == row_state::valid) {
    for (u64 p = span.from; p < span.to; ++p) *o++ = row[p];
    return;
  }
  for (u64 p = span.from; p < span.to;) {
    const unit u = next_unit(row, n, p);
    if (u.kind == error_kind::none) {
      for (u64 k = 0; k < u.length; ++k) *o++ = row[p + k];
    } else if (policy == on_invalid::replace) {
      *o++ = 0xEF;
      *o++ = 0xBF;
      *o++ = 0xBD;
    }
    p += u.length;
  }
}

}  // namespace gutf8::kern::columns
