// Validate: a pure read-and-reduce kernel. Fixed grid, each block strides over 8 KiB tiles
// (256 threads x 32 bytes, two 16-byte loads per thread); all-ASCII threads only count LFs,
// the others classify their window (classify.cuh). Counters stay in registers until the block
// ends: one set of atomics per block. Order-sensitive results come from summary.cuh.
#pragma once

#include "utf8/common.cuh"
#include "utf8/summary.cuh"

namespace gutf8::kern {

inline constexpr int validate_words = 8;  // 32 bytes per thread per step
inline constexpr u64 validate_tile = u64{block_threads} * 4 * validate_words;

static __global__ void __launch_bounds__(block_threads, 4) validate_kernel(const u8* in, u64 n, accum* acc,
                                                                 u64 num_tiles, bool vec) {
  constexpr int NW = validate_words;
  __shared__ unsigned long long sh_err, sh_first, sh_lf, sh_last;
  if (threadIdx.x == 0) {
    sh_err = 0;
    sh_first = ~0ull;
    sh_lf = 0;
    sh_last = 0;
  }
  const u64 limit = acc->limit;
  u64 errors = 0, first = ~u64{0}, lf = 0, last_p1 = 0;

  for (u64 tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const u64 pos0 = tile * validate_tile + u64{threadIdx.x} * (4 * NW);
    u32 w[NW + 2];
    load_own<NW>(in, n, pos0, vec, w);
    const u32 inr = range_bits<NW>(pos0, limit);
    u32 any = 0;
    u32 lfl[NW];
#pragma unroll
    for (int k = 0; k < NW; ++k) {
      any |= w[k + 1];
      lfl[k] = lf_lanes(w[k + 1]);
    }
    const u32 lf_bits = gather_bits<NW>(lfl) & inr;
    lf += static_cast<u64>(popc(lf_bits));
    if (lf_bits) last_p1 = pos0 + static_cast<u64>(highest_bit(lf_bits)) + 1;
    const bool non_ascii = (any & lane_hi) != 0;
    if (__any_sync(0xFFFFFFFFu, non_ascii)) {  // warp-uniform: halos need every lane
      load_halo<NW>(in, n, pos0, vec, w);
      if (non_ascii) {
        u32 start[NW], wf[NW], err[NW];
        classify_window<NW>(w, start, wf);
#pragma unroll
        for (int k = 0; k < NW; ++k) err[k] = start[k] & ~wf[k];
        const u32 err_bits = gather_bits<NW>(err) & inr;
        errors += static_cast<u64>(popc(err_bits));
        if (err_bits && first == ~u64{0}) first = pos0 + static_cast<u64>(lowest_bit(err_bits));
      }
    }
  }

  errors = warp_sum64(errors);
  first = warp_min64(first);
  lf = warp_sum64(lf);
  last_p1 = warp_max64(last_p1);
  __syncthreads();  // shared counters initialised
  if ((threadIdx.x & 31u) == 0) {
    if (errors) atomicAdd(&sh_err, errors);
    if (first != ~u64{0}) atomicMin(&sh_first, first);
    if (lf) atomicAdd(&sh_lf, lf);
    if (last_p1) atomicMax(&sh_last, last_p1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned slot = blockIdx.x & (summary_slots - 1);
    if (sh_err) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->errors[slot]), sh_err);
    if (sh_first != ~0ull)
      atomicMin(reinterpret_cast<unsigned long long*>(&acc->first_error[slot]), sh_first);
    if (sh_lf) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf[slot]), sh_lf);
    if (sh_last) atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_p1[slot]), sh_last);
  }
}

}  // namespace gutf8::kern
