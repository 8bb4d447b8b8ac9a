// The column analysis kernel: which rows are invalid (and where their first error lies), per-row
// counts, and each warp tile's output size for a repair, in one read of the bytes and the offsets
// (warp_column_rows.cuh walks them). A warp tile without errors and without per-row sums does no
// per-row work at all; per-row results are plain stores for rows inside the warp tile and atomics
// only for the pieces of rows that cross a warp tile edge (and for invalid rows).
#pragma once

#include "utf8/warp_column_rows.cuh"

namespace gutf8::kern::columns {

// What is summed per row (and per warp tile for a repair).
enum class row_sum : u8 {
  none,             // validity only
  units,            // output units under replace: code points + error units
  wf_units,         // well-formed sequences (drop)
  repaired_replace, // repaired bytes under replace: covered bytes + 3 an error unit
  repaired_drop,    // repaired bytes under drop: covered bytes
  row_bytes,        // the row's bytes (a kept row is copied as it is)
};
__host__ __device__ constexpr bool needs_cover(row_sum s) {
  return s == row_sum::repaired_replace || s == row_sum::repaired_drop;
}

struct column_totals {
  ull invalid_rows;
  ull first_error;  // absolute data position of the first error in a non-null row; ~0: none
  ull null_bytes;   // non-zero when a null row has bytes (a repair cannot copy the data as is)
};

template <class Off>
struct scan_outputs {
  u32* valid_bits;          // preset to ones; bits of invalid non-null rows are cleared. Null: not asked
  const u32* kept_rows;     // rows whose bit is clear here add nothing to counts and warp_tile_out. Null: all
  column_totals* totals;
  Off* counts;              // per-row sums (preset to 0) or null
  u64* first_error;         // per-row absolute position of the first error (preset to ~0) or null
  u64* warp_tile_out;       // a sum over kept rows per warp tile, or null
  u8* warp_tile_verbatim;   // Detail: per warp tile, 1 where its bytes are output as they are (whole
                            // in the column, every byte covered, no nulls or row filter), or null
  row_sum sum;
};

// The sum's masks: count = popc(a) + weight * popc(b).
struct sum_masks {
  u32 a, b, weight;
};
__device__ __forceinline__ sum_masks masks_of(row_sum s, const lane_units& u) {
  switch (s) {
    case row_sum::units: return {u.start, 0u, 0u};
    case row_sum::wf_units: return {u.wf, 0u, 0u};
    case row_sum::repaired_replace: return {u.cover, u.errors(), 3u};
    case row_sum::repaired_drop: return {u.cover, 0u, 0u};
    case row_sum::row_bytes: return {~0u, 0u, 0u};
    default: return {0u, 0u, 0u};
  }
}

template <class Off>
__device__ __forceinline__ void add_count(Off* counts, u64 row, u32 v, bool whole) {
  if (whole) {
    counts[row] = static_cast<Off>(v);
  } else if constexpr (sizeof(Off) == 8) {
    atomicAdd(reinterpret_cast<ull*>(counts + row), static_cast<ull>(v));
  } else {
    atomicAdd(reinterpret_cast<int*>(counts + row), static_cast<int>(v));
  }
}

struct scan_shared {
  warp_tile_marks marks;
  warp_tile_sums errors, sums;
};

// The pieces of the rows that meet warp tile S: the row it begins in and those that start in it.
// first_row: the first row that may meet it (the one before the cursor's).
template <class Off>
__device__ u32 scan_rows(const column_rows<Off>& r, const scan_outputs<Off>& o, u64 S, u64 first_row,
                         const scan_shared& sh, const sum_masks& sm, bool any_errors) {
  const u32 lane = threadIdx.x & 31u;
  const u64 warp_tile_end = S + warp_tile_bytes;
  u32 kept_sum = 0;
  for (u64 b = first_row;; b += 32) {
    const u64 idx = b + lane;
    const bool has = idx < r.length;
    const u64 p = idx <= r.length ? r.at(idx) : ~u64{0};  // the end too: the last row's e
    u64 e = prim::detail::warp_shfl_down(p, 1);
    if (lane == 31) e = has ? r.at(idx + 1) : ~u64{0};
    if (has && p < warp_tile_end && e > S && !r.is_null(idx)) {
      const u32 from = static_cast<u32>((p > S ? p : S) - S);
      const u32 to = static_cast<u32>((e < warp_tile_end ? e : warp_tile_end) - S);
      const bool whole = p >= S && e <= warp_tile_end;
      const bool kept = o.kept_rows == nullptr || bit_of(o.kept_rows, idx);
      const u32 errs = any_errors ? sh.errors.below(to, 0) - sh.errors.below(from, 0) : 0u;
      if (errs != 0) {
        const u64 at = S + sh.errors.first_a(from, to);
        if (o.valid_bits != nullptr) {
          const u32 bit = 1u << (idx & 31);
          if (atomicAnd(o.valid_bits + (idx >> 5), ~bit) & bit) atomicAdd(&o.totals->invalid_rows, 1ull);
          atomicMin(&o.totals->first_error, static_cast<ull>(at));
        }
        if (o.first_error != nullptr) atomicMin(reinterpret_cast<ull*>(o.first_error + idx), static_cast<ull>(at));
      }
      if (o.sum != row_sum::none && kept) {
        const u32 v = sh.sums.below(to, sm.weight) - sh.sums.below(from, sm.weight);
        kept_sum += v;
        if (o.counts != nullptr && (v != 0 || !whole)) add_count(o.counts, idx, v, whole);
      }
    } else if (has && p < warp_tile_end && e > S && o.valid_bits != nullptr) {
      atomicOr(&o.totals->null_bytes, 1ull);  // a null row with bytes
    }
    const bool more = __shfl_sync(warp_all, has && e < warp_tile_end, 31);
    if (!more) break;
  }
  return kept_sum;
}

template <class Off, bool Detail>
__global__ void __launch_bounds__(column_block_threads, column_scan_min_blocks)
    column_scan_kernel(column_rows<Off> r, scan_outputs<Off> o, u64 warp_tiles_per_warp) {
  __shared__ scan_shared shared[column_block_warps];
  const u32 lane = threadIdx.x & 31u;
  scan_shared& sh = shared[threadIdx.x >> 5];
  // No nulls, no kept-row filter, no per-row output: a clean warp tile's sum is its lanes' sum.
  const bool plain_sum = o.sum != row_sum::none && r.validity == nullptr && o.kept_rows == nullptr &&
                         o.counts == nullptr;
  u32 carry = 0;
  const auto no_drops = [](u64) { return false; };
  const auto no_skips = [](u64, u64, u64&, const u32(&)[8]) { return false; };
  walk_warp_tiles(r, warp_tiles_per_warp, sh.marks, no_drops, no_skips,
                  [&](u64 s, u64 S, u64 before, const u32(&x)[8], u32 nx, bool first) {
    const lane_units u = classify_warp_tile<Detail>(r, S, x, nx, sh.marks, first, carry);
    const u64 first_row = before == 0 ? 0 : before - 1;
    // Bytes outside [offsets[0], end) belong to no row; inside, errors count per row.
    const u32 in_range = column_bytes(r, S + lane * lane_bytes);
    const u32 errs = u.errors() & in_range;
    const bool any_errors = __any_sync(warp_all, errs != 0);
    if (any_errors) sh.errors.publish(errs, 0u, 0u);
    const sum_masks sm = masks_of(o.sum, u);
    const bool verbatim = Detail && plain_sum && !any_errors && S >= r.begin && S + warp_tile_bytes <= r.end &&
                          __all_sync(warp_all, u.cover == ~0u);
    if (lane == 0 && o.warp_tile_verbatim != nullptr) o.warp_tile_verbatim[s] = verbatim ? 1 : 0;
    if (plain_sum && !any_errors) {  // every row of the warp tile is kept and summed
      const u32 mine =
          static_cast<u32>(__popc(sm.a & in_range)) + sm.weight * static_cast<u32>(__popc(sm.b & in_range));
      const u32 v = prim::detail::warp_reduce(mine, [](u32 p, u32 q) { return p + q; });
      if (lane == 0 && o.warp_tile_out != nullptr) o.warp_tile_out[s] = v;
    } else if (any_errors || o.sum != row_sum::none) {
      if (o.sum != row_sum::none) sh.sums.publish(sm.a & in_range, sm.b & in_range, sm.weight);
      const u32 mine = scan_rows(r, o, S, first_row, sh, sm, any_errors);
      const u32 v = prim::detail::warp_reduce(mine, [](u32 p, u32 q) { return p + q; });
      if (lane == 0 && o.warp_tile_out != nullptr) o.warp_tile_out[s] = v;
    }
  });
}

}  // namespace gutf8::kern::columns
