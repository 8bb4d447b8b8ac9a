// The column repair kernel: writes the repaired bytes and the new offsets of every row, the bytes
// of all kept rows being one flat output in row order, so each warp tile's output starts where the
// exclusive scan of the warp tiles' sizes (kernel_column_scan.cuh's warp_tile_out, scanned with gutf8::prim)
// says and lands in it as the flat repair kernel's warps do: a warp whose bytes are all kept
// and well-formed stores its input with aligned 16-byte stores, others stage their output in
// shared memory first. A row's new offset is its warp tile's start plus the output of the bytes
// before it in the warp tile (the lane masks' prefix counts).
#pragma once

#include "utf8/kernel_column_scan.cuh"
#include "utf8/tile_classify.cuh"
#include "utf8/tile_write.cuh"

namespace gutf8::kern::columns {

template <class Off>
struct write_outputs {
  const u32* kept_rows;           // null: every non-null row is kept; else only rows whose bit is set
  const u64* warp_tile_at;        // where each warp tile's output starts
  const u8* warp_tile_verbatim;   // 1: the warp tile's bytes are output as they are (the scan's), or null
  u8* out;
  Off* out_offsets;               // length + 1
  bool replace;                   // an error unit becomes U+FFFD; else it is dropped
};

struct write_shared {
  warp_tile_marks marks;
  warp_tile_sums out;  // a = kept covered bytes, b = kept error units (3 bytes each under replace)
  __align__(16) u8 stage[3 * warp_tile_bytes + 32];
};

// One warp: its warp tile's bytes x (count of them, from the start) written at out + at, through
// the warp's staging area so that the stores are 16-byte aligned whatever `at` is.
__device__ __forceinline__ void write_warp_tile_bytes(const u32 (&x)[8], u8* stage, u32 count, u8* out, u64 at) {
  const u32 lane = threadIdx.x & 31u;
  *reinterpret_cast<uint4*>(stage + lane * lane_bytes) = make_uint4(x[0], x[1], x[2], x[3]);
  *reinterpret_cast<uint4*>(stage + lane * lane_bytes + 16) = make_uint4(x[4], x[5], x[6], x[7]);
  __syncwarp();
  const u32 s0 = static_cast<u32>((reinterpret_cast<std::uintptr_t>(out) + at) & 15u);
  write_staged_bytes(stage, s0, count, out + at - s0);
}

template <class Off>
__global__ void __launch_bounds__(column_block_threads, column_write_min_blocks)
    column_write_kernel(column_rows<Off> r, write_outputs<Off> o, u64 warp_tiles_per_warp) {
  __shared__ write_shared shared[column_block_warps];
  const u32 lane = threadIdx.x & 31u;
  write_shared& sh = shared[threadIdx.x >> 5];
  const auto dropped = [&](u64 i) {
    return i >= r.length || r.is_null(i) || (o.kept_rows != nullptr && !bit_of(o.kept_rows, i));
  };
  // A verbatim warp tile: its 1 KiB and the new offsets of its rows, without classifying it.
  const auto verbatim = [&](u64 s, u64 S, u64& cursor, const u32(&x)[8]) {
    if (o.warp_tile_verbatim == nullptr || o.warp_tile_verbatim[s] == 0) return false;
    const u64 at = o.warp_tile_at[s];
    cursor = for_rows_starting_in(r, S, cursor, [&](u64 row, u64 p) {
      o.out_offsets[row] = static_cast<Off>(at + (p - S));
    });
    write_warp_tile_bytes(x, sh.stage, warp_tile_bytes, o.out, at);
    return true;
  };
  u32 carry = 0;
  walk_warp_tiles(r, warp_tiles_per_warp, sh.marks, dropped, verbatim,
                  [&](u64 s, u64 S, u64 before, const u32(&x)[8], u32 nx, bool first) {
    const lane_units u = classify_warp_tile<true>(r, S, x, nx, sh.marks, first, carry);

    // Which bytes are kept: the state of the row each lane begins in, then its own row starts.
    const u32 halo = sh.marks.rs[0] & 0xF0000000u;
    const bool dropped_in = halo != 0 ? ((sh.marks.drop[0] >> highest_bit(halo)) & 1u) != 0
                                      : before == 0 || dropped(before - 1);
    const u32 rs = sh.marks.rs[lane + 1], dr = sh.marks.drop[lane + 1];
    const u32 with_starts = __ballot_sync(warp_all, rs != 0);
    const u32 ends_dropped = __ballot_sync(warp_all, rs != 0 && ((dr >> highest_bit(rs)) & 1u) != 0);
    const u32 earlier = with_starts & below_bit(lane);
    const bool lane_dropped = earlier != 0 ? ((ends_dropped >> highest_bit(earlier)) & 1u) != 0 : dropped_in;
    const u32 keep = kept_bytes(rs, dr, lane_dropped);
    const u32 copy = u.cover & keep, repl = o.replace ? u.errors() & keep : 0u;
    const u32 count = sh.out.publish(copy, repl, 3);
    const u64 at = o.warp_tile_at[s];

    // New offsets of the rows that start here (the end's too).
    (void)for_rows_starting_in(r, S, before, [&](u64 row, u64 p) {
      o.out_offsets[row] = static_cast<Off>(at + sh.out.below(static_cast<u32>(p - S), 3));
    });

    if (__all_sync(warp_all, copy == ~0u)) {  // the warp tile's 1 KiB as it is
      write_warp_tile_bytes(x, sh.stage, count, o.out, at);
    } else if (count != 0) {
      stage_repaired_bytes(x, copy, repl, sh.stage, sh.out.pre[lane]);
      __syncwarp();
      const u32 s0 = static_cast<u32>((reinterpret_cast<std::uintptr_t>(o.out) + at) & 15u);
      write_staged_bytes(sh.stage, s0, count, o.out + at - s0);
    }
  });
}

}  // namespace gutf8::kern::columns
