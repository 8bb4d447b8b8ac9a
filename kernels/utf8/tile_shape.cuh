// The shapes of the codec kernels' tiles, in a header that host code can include too (no device
// code), so that the GPU tests place their boundary sizes on the kernels' real tile edges.
#pragma once

#include <cstdint>

namespace gutf8::kern {

inline constexpr int block_threads = 256;  // every codec kernel

// The UTF-8 kernels (tile.cuh): 8 warps, each lane owning 32 consecutive bytes.
inline constexpr int tile_warps = 8;
inline constexpr int tile_threads = 32 * tile_warps;
static_assert(tile_threads == block_threads);
inline constexpr std::uint32_t lane_bytes = 32;
inline constexpr std::uint32_t warp_bytes = 32 * lane_bytes;
inline constexpr std::uint32_t tile_bytes = tile_warps * warp_bytes;

// The UTF-32 encoders (encode.cuh, which says why 24): values per thread and per tile.
inline constexpr int encode_elems = 24;  // fused (96 input bytes a thread)
inline constexpr std::uint32_t encode_tile = block_threads * encode_elems;
inline constexpr int expand_elems = 8;  // compact (32 bytes a thread)
inline constexpr std::uint32_t expand_tile = block_threads * expand_elems;

}  // namespace gutf8::kern
