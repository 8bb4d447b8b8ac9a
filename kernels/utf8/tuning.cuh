// The UTF-8 kernels' tuning knobs, apart from the algorithms (as gutf8/prim/detail/tuning.cuh is the
// primitives'): tile shapes, the blocks per SM the kernels are compiled for, the fused decoder's
// path thresholds, the L2 prefetch distance. Constants only, so host code includes it too (the
// GPU tests place their boundary sizes on the kernels' real tile edges). Each value's reason is
// one line here; the measurements are in bench/results/codec_tuning.md (the section on the knobs
// of this file, then named policy.cuh).
#pragma once

#include <cstdint>

#include "gutf8/types.hpp"

namespace gutf8::kern {

inline constexpr int block_threads = 256;  // every codec kernel

// The UTF-8 tile kernels (tile_classify.cuh): 8 warps, each lane owning 32 consecutive bytes.
inline constexpr int tile_warps = 8;
inline constexpr int tile_threads = 32 * tile_warps;
static_assert(tile_threads == block_threads);
inline constexpr std::uint32_t lane_bytes = 32;
inline constexpr std::uint32_t warp_bytes = 32 * lane_bytes;
inline constexpr std::uint32_t tile_bytes = tile_warps * warp_bytes;

// The UTF-32 encoders: values per thread and per tile. Fused: 24 (96 input bytes a thread)
// spreads a tile's fixed costs over 1.5x the bytes of 16 at 6 blocks per SM.
inline constexpr int encode_elems = 24;
inline constexpr std::uint32_t encode_tile = block_threads * encode_elems;
inline constexpr int expand_elems = 8;  // compact (32 bytes a thread)
inline constexpr std::uint32_t expand_tile = block_threads * expand_elems;

// Blocks per SM the kernels are compiled for (__launch_bounds__), i.e. their register budget.
inline constexpr int decode_fused_min_blocks = 6;  // 40 registers, no spill; 35 KB of shared memory
inline constexpr int encode_fused_min_blocks = 6;  // 40 registers with encode_elems = 24
inline constexpr int validate_min_blocks = 3;      // three warp tiles' loads in flight a warp
// Validate by screening (kernel_validate_screen.cuh): 32-byte slabs a lane, blocks an SM.
inline constexpr std::uint32_t validate_lane_slabs = 2;   // 1 pays the screen and the exact count on sparse errors
inline constexpr int validate_screen_min_blocks = 3;      // 2 is no faster overall: the walk is issue-bound
inline constexpr std::uint32_t validate_screen_warp_tile = warp_bytes * validate_lane_slabs;  // a warp's step
inline constexpr int repair_min_blocks = 8;      // its wait for the look-back needs resident warps
// The string-column walks (warp_column_rows.cuh): the blocks per SM they are compiled for (60
// registers; 6 spills and is slower), and the waves of resident blocks their warp tiles are
// spread over (more, shorter runs even out the warps' finishing times).
inline constexpr int column_scan_min_blocks = 4;
inline constexpr int column_write_min_blocks = 4;
inline constexpr unsigned column_waves = 4;

// The fused decoder's balanced path (kernel_decode_fused.cuh): a warp takes it when some lane
// has more than balance_above units to decode one by one (the staging loop runs as long as its
// busiest lane), and the warp fewer than balance_below units (nearly-ASCII warps would list
// their units with 32-way bank conflicts).
inline constexpr std::uint32_t balance_above = 6;
inline constexpr std::uint32_t balance_below = 768;
// Repair: a warp whose bytes change in at most this many lanes repairs those lanes one at a
// time with all its lanes (the others store their bytes as they are), else each lane byte by byte.
inline constexpr std::uint32_t repair_few_lanes = 8;

// The tile kernels ask L2 for the input this far ahead of their tile as they start: flat from 1
// to 4 MiB, worse from 8 MiB (ASCII decode's output evicts the lines before their tile reads them).
inline constexpr std::uint64_t prefetch_ahead_bytes = std::uint64_t{2} << 20;
// ... and the look-back words' line this many tiles ahead (prim::flagged_count_state::prefetch_line):
// 32, 64 and 128 measured alike.
inline constexpr std::uint32_t state_prefetch_tiles = 64;
// The strict fused decoder's look-back reads this many consecutive tiles' words a lane, 32x as
// many a round trip (prim::lookback_exclusive_span): its walk on dense text takes one window.
// Replace and drop, and the other tile kernels, keep 1 (4 was slower there).
inline constexpr std::uint32_t strict_lookback_slots = 4;

}  // namespace gutf8::kern
