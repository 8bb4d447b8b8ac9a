// Validate by screening (device::validate): every warp owns a contiguous run of warp tiles and walks
// it as warp_screen_walk.cuh says (each warp tile screened, counted exactly only where the screen
// flags it or the warp tile before held an error). The warp tiles are laid from the 16-byte aligned
// address at or below the input, as kernel_validate.cuh's are: warp tiles fully in range take
// 16-byte loads, the first (where the input is not aligned) and the last one or two the guarded
// path, which reads only the input's own bytes. Counters are 32-bit and run-relative until the
// warp ends: one set of atomics a warp. Launched as a dependent of prepare_kernel: it derives the
// limit itself and only waits for the cleared accumulator before its atomics.
//
// Template knobs (tuning.cuh names the ones device::validate runs): B, the 32-byte slabs a lane
// (a warp tile is B KiB); MinBlocks, the blocks an SM it is compiled for.
#pragma once

#include "utf8/kernel_summary.cuh"
#include "utf8/kernel_validate.cuh"
#include "utf8/tile_classify.cuh"
#include "utf8/warp_screen_walk.cuh"

namespace gutf8::kern {

// warp_screen_walk.cuh's warp policy on the GPU.
struct device_warp {
  __device__ __forceinline__ u32 lane() const { return threadIdx.x & 31u; }
  __device__ __forceinline__ u32 up(u32 v) const { return __shfl_up_sync(full_mask, v, 1); }
  __device__ __forceinline__ u32 down(u32 v) const { return __shfl_down_sync(full_mask, v, 1); }
  __device__ __forceinline__ u32 idx(u32 v, u32 src) const { return __shfl_sync(full_mask, v, static_cast<int>(src)); }
  __device__ __forceinline__ bool any(bool p) const { return __any_sync(full_mask, p); }
  // 32 bytes at p (16-byte aligned).
  __device__ __forceinline__ void load32(const u8* p, u32 (&x)[8]) const {
    const uint4 a = __ldg(reinterpret_cast<const uint4*>(p));
    const uint4 b = __ldg(reinterpret_cast<const uint4*>(p + 16));
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
  }
  __device__ __forceinline__ u32 word(const u8* p) const { return __ldg(reinterpret_cast<const unsigned*>(p)); }
};

template <bool Aligned, u32 B, int MinBlocks>
__global__ void __launch_bounds__(block_threads, MinBlocks)
    validate_screen_kernel(const u8* in, u64 n, bool is_last, accum* acc, u64 warp_tiles_per_warp,
                           u64 total_warp_tiles) {
  const u32 lane = threadIdx.x & 31u;
  const u64 gw = (u64{blockIdx.x} * block_threads + threadIdx.x) >> 5;
  const u64 warp_tile0 = gw * warp_tiles_per_warp;
  const u64 warp_tile_end =
      warp_tile0 + warp_tiles_per_warp < total_warp_tiles ? warp_tile0 + warp_tiles_per_warp : total_warp_tiles;
  if (warp_tile0 >= warp_tile_end) return;  // warp-uniform
  // Positions count from the aligned start `in - head`.
  const u32 head = Aligned ? 0u : validate_head(in);
  const bool a4 = aligned4(in);
  // The limit from the input itself (acc->limit, before prepare_kernel sets it).
  const screen_run r =
      screen_run_of<B>(in, head, chunk_limit(input_kind::utf8, in, n, is_last), warp_tile0, warp_tile_end);
  const auto guarded = [&](u64 p) { return load_word(in, n, static_cast<std::int64_t>(p) - head, a4); };
  const screen_totals t = screen_walk_run<B>(device_warp{}, r, guarded);

  allow_dependent_launch();
  const u64 lf = warp_sum64(t.lf);
  const u64 last = warp_max64(t.last_lf_p1 == 0 ? 0 : r.run + t.last_lf_p1 - head);
  const u64 errors = warp_sum64(t.errors);
  const u64 first = warp_min64(t.first == ~0u ? ~u64{0} : r.run + t.first - head);
  const unsigned slot = static_cast<unsigned>(gw) & (summary_slots - 1);
  wait_for_prior_kernel();
  if (lane == 0) {
    if (errors) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->errors[slot]), errors);
    if (first != ~u64{0}) atomicMin(reinterpret_cast<unsigned long long*>(&acc->first_error[slot]), first);
    if (lf) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf[slot]), lf);
    if (last) atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_p1[slot]), last);
  }
}

}  // namespace gutf8::kern
