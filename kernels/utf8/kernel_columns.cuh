// The small per-row kernels around the column walk (src/cuda/device_columns.cu runs them): the
// offsets check, result bitmaps, the first error's row and kind, the per-row first-error columns
// and offsets rebased to 0. The walk itself is kernel_column_scan.cuh / kernel_column_write.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "utf8/warp_column_rows.cuh"

namespace gutf8::kern::columns {

// What the offsets check finds: the first row whose offsets are bad (~0: none) and the first
// and last offsets, read in the same pass so the host learns all three at once.
struct offsets_check {
  ull first_bad;
  u64 begin, end;
};

template <class Off>
__global__ void check_offsets_kernel(const Off* o, u64 n, long long data_bytes, offsets_check* out) {
  const u64 i = thread_index();
  if (i >= n) return;
  const bool bad = (i == 0 && o[0] < 0) || o[i + 1] < o[i] || (data_bytes >= 0 && static_cast<long long>(o[i + 1]) > data_bytes);
  if (bad) atomicMin(&out->first_bad, static_cast<ull>(i));
  if (i == 0) {
    out->begin = static_cast<u64>(o[0]);
    out->end = static_cast<u64>(o[n]);
  }
}

// out bit i = validity bit (bit0 + i) (1 without validity), and with `with` bit i (or its
// complement when `not_with`); one 32-bit word a thread; clear bits of the `rows` counted.
__global__ void combine_bits_kernel(const u8* validity, u64 bit0, const u32* with, bool not_with, u64 rows, u32* out,
                                    ull* clear) {
  const u64 w = thread_index();
  if (w * 32 >= rows) return;
  u32 v = 0;
  for (u32 k = 0; k < 32 && w * 32 + k < rows; ++k) {
    const u64 i = w * 32 + k;
    bool b = validity == nullptr || ((validity[(bit0 + i) >> 3] >> ((bit0 + i) & 7)) & 1u);
    if (with != nullptr) b = b && (bit_of(with, i) != not_with);
    v |= b ? 1u << k : 0u;
  }
  out[w] = v;
  const u32 used = rows - w * 32 >= 32 ? 32u : static_cast<u32>(rows - w * 32);
  const u32 zeros = used - static_cast<u32>(__popc(v));
  if (zeros != 0) atomicAdd(clear, static_cast<ull>(zeros));
}

template <class Off>
__global__ void rebase_offsets_kernel(const Off* o, u64 n, Off* out) {
  const u64 i = thread_index();
  if (i < n) out[i] = o[i] - o[0];
}

struct located_error {
  u64 row, offset;
  u32 kind;  // gutf8::error_kind
};

// The row holding the absolute data position `at` (an error start) and the error's kind.
template <class Off>
__device__ located_error locate(const column_rows<Off>& r, u64 row, u64 at) {
  const u64 begin = r.at(row), n = r.at(row + 1) - begin;
  return {row, at - begin, static_cast<u32>(error_kind_at(r.data + begin, n, at - begin))};
}

// One thread: the first error of the column (totals->first_error, set) -> row, offset, kind.
template <class Off>
__global__ void locate_first_error_kernel(column_rows<Off> r, ull at, located_error* out) {
  u64 lo = 0, hi = r.length;  // the last row whose start is <= at
  while (hi - lo > 1) {
    const u64 mid = lo + (hi - lo) / 2;
    if (r.at(mid) <= at) lo = mid; else hi = mid;
  }
  *out = locate(r, lo, at);
}

// The first-error columns of is_valid: offset and kind on invalid non-null rows, 0 elsewhere.
template <class Off>
__global__ void first_errors_kernel(column_rows<Off> r, const u32* valid_bits, const u64* first_error,
                                    long long* offsets, u8* kinds) {
  const u64 i = thread_index();
  if (i >= r.length) return;
  const bool invalid = !r.is_null(i) && !bit_of(valid_bits, i);
  const located_error e = invalid ? locate(r, i, first_error[i]) : located_error{i, 0, 0};
  offsets[i] = static_cast<long long>(e.offset);
  kinds[i] = static_cast<u8>(e.kind);
}

}  // namespace gutf8::kern::columns
