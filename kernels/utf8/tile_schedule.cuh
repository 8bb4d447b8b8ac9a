// How many 8 KiB tiles a block of the fused decoder takes: one, or two with one look-back
// (decode_fused.cuh). Two pay where a tile's output is small beside the wait for its prefix and
// cost where writing the output dominates (H100, corpus sample, two against one: CJK +8 %, emoji
// +7 %, ASCII -20 %, mixed scripts -12 %; bench/results/codec_tuning.md, session 12), so unless the
// caller fixes the schedule (device::decoder::fused_single / fused_paired), block 0 of
// prepare_kernel estimates the output bytes per input byte from samples spread over the chunk and
// the decoder's blocks read its choice from the accumulator. The grid has a block a tile either
// way; with two a block, its second half exits at once (measured: the sampled schedule runs within
// 1-2 % of the fixed one it picks).
#pragma once

#include "utf8/common.cuh"

namespace gutf8::kern {

enum class tile_schedule : u32 { sample = 0, single = 1, paired = 2 };

inline constexpr u32 schedule_samples = 1024;  // 16 bytes each: 16 KiB, one load round trip
inline constexpr u64 schedule_min_bytes = u64{1} << 20;  // below: one tile a block
// Paired below this many output bytes (4 per unit) per 1000 input bytes: the corpus sample's CJK
// text writes 1720 and gains, its emoji 1460 and gains, its mixed-script text 1950 and loses.
inline constexpr u32 paired_below_permille = 1850;

// Bytes of x that do not continue a sequence: the units of valid UTF-8.
__device__ __forceinline__ u32 lead_bytes(u32 x) { return 4u - static_cast<u32>(popc(cont_lanes(x))); }

// All threads of one block: tiles a block of the decoder takes (tile_schedule's value).
// sum_sh: one word of shared memory.
__device__ __forceinline__ u32 sampled_tiles_per_block(const u8* in, u64 n, u32* sum_sh) {
  if (n < schedule_min_bytes) return static_cast<u32>(tile_schedule::single);
  if (threadIdx.x == 0) *sum_sh = 0;
  __syncthreads();
  const u64 step = n / schedule_samples;
  const bool vec = (reinterpret_cast<std::uintptr_t>(in) & 15u) == 0;
  u32 units = 0;
  for (u32 k = threadIdx.x; k < schedule_samples; k += blockDim.x) {
    const uint4 v = load16(in, n, (k * step + step / 2) & ~u64{15}, vec);
    units += lead_bytes(v.x) + lead_bytes(v.y) + lead_bytes(v.z) + lead_bytes(v.w);
  }
  units = __reduce_add_sync(0xFFFFFFFFu, units);
  if ((threadIdx.x & 31u) == 0) atomicAdd(sum_sh, units);
  __syncthreads();
  const u64 out_permille = u64{4} * *sum_sh * 1000 / (16 * schedule_samples);
  return static_cast<u32>(out_permille < paired_below_permille ? tile_schedule::paired : tile_schedule::single);
}

}  // namespace gutf8::kern
