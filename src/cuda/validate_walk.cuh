// The launches of the validate kernels: kern::validate_screen_kernel for device::validate, and
// kern::validate_kernel for device::repair (whose copying pass it is) and as validate's former
// walk (detail::validate_planes, kept for A/B measurements): every resident warp walks one
// contiguous run of warp tiles.
#pragma once

#include "device_launch.cuh"
#include "utf8/kernel_validate.cuh"
#include "utf8/kernel_validate_screen.cuh"

namespace gutf8::device::launch {

// One launch of Kernel (a validate kernel walking warp tiles of WarpTile bytes), whose own occupancy
// sets how many warps share the warp tiles; `extra` follows the warp tile counts in its parameters.
template <auto Kernel, u64 WarpTile = kern::validate_warp_tile, class... Extra>
cudaError_t walk_with(const u8* in, u64 n, bool is_last, kern::accum* acc, cudaStream_t stream, Extra... extra) {
  // The warp tiles start at the aligned address at or below `in` (kernel_validate.cuh).
  const u64 warp_tiles = n == 0 ? 0 : ceil_div(kern::validate_head(in) + n, WarpTile);
  if (warp_tiles == 0) return cudaSuccess;
  const u64 warps_per_block = kern::block_threads / 32;
  const u64 blocks = stride_grid<Kernel>(ceil_div(warp_tiles, warps_per_block));
  const u64 per_warp = ceil_div(warp_tiles, blocks * warps_per_block);
  const unsigned grid = static_cast<unsigned>(ceil_div(warp_tiles, per_warp * warps_per_block));
  return dependent(Kernel, grid, stream, in, n, is_last, acc, per_warp, warp_tiles, extra...);
}

// Copy: also stores the input at the same offsets of copy.out (in and copy.out 16-byte aligned).
template <bool Copy>
cudaError_t validate_walk(const u8* in, u64 n, bool is_last, kern::accum* acc, kern::verbatim_copy copy,
                          cudaStream_t stream) {
  if (Copy || aligned16(in))
    return walk_with<kern::validate_kernel<true, Copy>>(in, n, is_last, acc, stream, copy);
  return walk_with<kern::validate_kernel<false>>(in, n, is_last, acc, stream, copy);
}

// Validate's walk: warp tiles screened, counted exactly where the screen flags them (B: 32-byte
// slabs a lane; MinBlocks: blocks an SM). OnlyAligned: no kernel for unaligned input (A/B
// variants; cudaErrorInvalidValue for such input).
template <kern::u32 B = kern::validate_lane_slabs, int MinBlocks = kern::validate_screen_min_blocks,
          bool OnlyAligned = false>
cudaError_t screen_walk(const u8* in, u64 n, bool is_last, kern::accum* acc, cudaStream_t stream) {
  constexpr u64 warp_tile = kern::screen_walk<B>::warp_tile;
  if (aligned16(in))
    return walk_with<kern::validate_screen_kernel<true, B, MinBlocks>, warp_tile>(in, n, is_last, acc, stream);
  if constexpr (OnlyAligned) return cudaErrorInvalidValue;
  else return walk_with<kern::validate_screen_kernel<false, B, MinBlocks>, warp_tile>(in, n, is_last, acc, stream);
}

}  // namespace gutf8::device::launch
