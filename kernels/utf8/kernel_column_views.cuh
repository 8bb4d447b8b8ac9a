// The view-layout kernels (utf8_view / binary_view; src/cuda/device_column_views.cu runs them):
// every non-null row's view checked and its length taken, the rows' bytes gathered one after the
// other (so the column walk of warp_column_rows.cuh takes them as a large_binary column), and a
// repaired column's rows turned back into views: at most 12 bytes inline, longer rows in one data
// buffer, exactly as the host backend lays them out.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "utf8/arrow_views.hpp"
#include "utf8/warp_column_rows.cuh"  // not kernel_columns.cuh, whose kernels device_columns.cu defines

namespace gutf8::kern::columns {

using gutf8::detail::inline_view_bytes;
using gutf8::detail::view_bytes;

// A view array on the device. Its views are checked by view_lengths_kernel before anything else
// reads them, so row() trusts them.
struct view_source {
  const u8* views;             // the view of row 0 (the array offset applied)
  const u8* validity;          // bit (bit0 + i); null: no nulls
  u64 bit0;
  const void* const* data;     // device copy of the table of variadic data buffers
  const std::int64_t* sizes;   // their sizes (the array's last buffer)
  std::int64_t data_count;
  bool aligned;                // views 16-byte aligned: one vector load a view

  __device__ bool is_null(u64 i) const {
    return validity != nullptr && !((validity[(bit0 + i) >> 3] >> ((bit0 + i) & 7)) & 1u);
  }
  // The view of row i as four words: length, then inline bytes or prefix, buffer index, offset.
  __device__ uint4 view(u64 i) const { return load16(views + view_bytes * i, view_bytes, 0, aligned); }
  // The bytes of row i (non-null, its view checked).
  __device__ const u8* row(u64 i) const {
    const uint4 v = view(i);
    return v.x <= inline_view_bytes ? views + view_bytes * i + 4 : static_cast<const u8*>(data[v.z]) + v.w;
  }
};

// A flat layout's rows: row i at data + offsets[i] (a repaired large_utf8 column).
struct flat_source {
  const u8* data;
  const std::int64_t* offsets;
  __device__ const u8* row(u64 i) const { return data + offsets[i]; }
};

// rows + 1 threads: lengths[i] = the bytes of row i (0 for a null row, whose view is not read,
// and for a bad view), lengths[rows] = 0, so their exclusive scan is the gathered offsets. The
// first bad view (lowest row) is kept as row * 8 + its gutf8::detail::view_fault.
__global__ void view_lengths_kernel(view_source v, u64 rows, u64* lengths, ull* first_bad) {
  const u64 i = thread_index();
  if (i > rows) return;
  u64 n = 0;
  if (i < rows && !v.is_null(i)) {
    const uint4 w = v.view(i);
    const gutf8::detail::view_fault fault =
        gutf8::detail::check_view(static_cast<std::int32_t>(w.x), static_cast<std::int32_t>(w.z),
                           static_cast<std::int32_t>(w.w), v.data_count, v.sizes, v.data);
    if (fault == gutf8::detail::view_fault::none) n = w.x;
    else atomicMin(first_bad, static_cast<ull>(i) * 8 + static_cast<ull>(fault));
  }
  lengths[i] = n;
}

// The row holding position q of a flat output whose row i starts at at[i] (at[rows] > q), looked
// for from row i (at[i] <= q): steps that double, then a binary search, so a cursor crosses any
// number of empty or tiny rows in a few loads.
__device__ __forceinline__ u64 row_from(const u64* at, u64 rows, u64 i, u64 q) {
  u64 lo = i, step = 1, hi = i + 1;
  while (hi < rows && at[hi] <= q) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > rows) hi = rows;
  while (hi - lo > 1) {
    const u64 mid = lo + (hi - lo) / 2;
    if (at[mid] <= q) lo = mid; else hi = mid;
  }
  return lo;
}

// Copies each row's bytes from src.row(i) to out[at[i], at[i + 1]) (at: rows + 1 offsets from 0,
// at[rows] = total). Output-driven, so any mix of row sizes balances: a warp per run of
// warp_tiles_per_warp 1 KiB warp tiles of the output, each lane a 4-byte word every 128 bytes (loads and
// stores coalesced across the lanes), a cursor per lane for the row under its word.
template <class Source>
__global__ void __launch_bounds__(column_block_threads)
    copy_rows_kernel(Source src, const u64* at, u64 rows, u64 total, u8* out, u64 warp_tiles_per_warp) {
  const u32 lane = threadIdx.x & 31u;
  const u64 warp = u64{blockIdx.x} * column_block_warps + (threadIdx.x >> 5);
  const u64 first = warp * warp_tiles_per_warp * warp_tile_bytes, last = first + warp_tiles_per_warp * warp_tile_bytes;
  const u64 stop = last < total ? last : total;
  u64 q = first + 4 * lane;
  if (q >= stop) return;  // no warp-wide operation follows
  u64 i = row_from(at, rows, 0, q), begin = at[i], end = at[i + 1];
  const u8* bytes = src.row(i);
  for (; q < stop; q += 4 * 32) {
    u32 w = 0;
    for (u32 b = 0; b < 4 && q + b < total; ++b) {
      const u64 p = q + b;
      if (p >= end) {  // the next non-empty row
        i = row_from(at, rows, i, p);
        begin = at[i];
        end = at[i + 1];
        bytes = src.row(i);
      }
      w |= u32{__ldg(bytes + (p - begin))} << (8 * b);
    }
    if (q + 4 <= total) {
      *reinterpret_cast<u32*>(out + q) = w;  // out is 4-byte aligned, q a multiple of 4
    } else {
      for (u32 b = 0; q + b < total; ++b) out[q + b] = static_cast<u8>(w >> (8 * b));
    }
  }
}

// rows + 1 threads: the bytes each repaired row (offsets: rows + 1) puts in the view result's
// data buffer (rows longer than 12 bytes only), and 0 last, to be scanned into their places.
__global__ void long_row_bytes_kernel(const std::int64_t* offsets, u64 rows, u64* out) {
  const u64 i = thread_index();
  if (i > rows) return;
  const u64 n = i < rows ? static_cast<u64>(offsets[i + 1] - offsets[i]) : 0;
  out[i] = n > static_cast<u64>(inline_view_bytes) ? n : 0;
}

// The view of each repaired row (offsets, data: a large_utf8 layout; a null row is empty): its
// length and its bytes inline, zero padded, when it has at most 12; else its length, its first 4
// bytes, buffer 0 and its place long_at[i] in the data buffer (the long rows' scanned sizes).
__global__ void make_views_kernel(const std::int64_t* offsets, const u8* data, const u64* long_at, u64 rows,
                                  uint4* views) {
  const u64 i = thread_index();
  if (i >= rows) return;
  const u64 begin = static_cast<u64>(offsets[i]);
  const auto n = static_cast<u32>(offsets[i + 1] - offsets[i]);  // <= INT32_MAX: checked by the caller
  u32 w[3] = {0, 0, 0};
  const u32 shown = n <= inline_view_bytes ? n : 4;  // the inline bytes, or the prefix
  for (u32 b = 0; b < shown; ++b) w[b >> 2] |= u32{data[begin + b]} << (8 * (b & 3));
  if (n > inline_view_bytes) w[2] = static_cast<u32>(long_at[i]);  // w[1]: buffer index 0
  views[i] = make_uint4(n, w[0], w[1], w[2]);
}

// out[i] = in[i] for values known to fit (a view row's count: at most its int32 length).
template <class From, class To>
__global__ void narrow_kernel(const From* in, u64 n, To* out) {
  const u64 i = thread_index();
  if (i < n) out[i] = static_cast<To>(in[i]);
}

}  // namespace gutf8::kern::columns
