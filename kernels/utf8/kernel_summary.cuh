// The chunk summary: prepare_kernel (carry, accumulator init, look-back states cleared) before
// the work kernels, finish_kernel (LF units before the first error, only when there is an error;
// then the device_summary, written by its last block) after them. All order-sensitive information is recovered
// here, so the work kernels only need commutative per-tile atomics.
#pragma once

#include "gutf8/prim/detail/warp_scan.cuh"
#include "utf8/common.cuh"

namespace gutf8::kern {

// Grid-stride: clears the tile states of the look-back (`states`, `num_states` words); block 0
// also initialises the accumulator (lane i of warp 0: slot i; the carry decides `limit`).
static __global__ void prepare_kernel(accum* acc, const u8* in, u64 n, bool is_last, input_kind kind,
                                      unsigned long long* states, u64 num_states) {
  allow_dependent_launch();  // its work kernel waits for this one before its first use of acc
  for (u64 i = u64{blockIdx.x} * blockDim.x + threadIdx.x; i < num_states; i += u64{gridDim.x} * blockDim.x)
    states[i] = 0;
  if (blockIdx.x != 0) return;
  const unsigned lane = threadIdx.x;
  if (lane < summary_slots) {
    acc->errors[lane] = 0;
    acc->first_error[lane] = ~u64{0};
    acc->lf[lane] = 0;
    acc->last_lf_p1[lane] = 0;
  }
  if (lane == 0) {
    acc->n = n;
    acc->limit = chunk_limit(kind, in, n, is_last);
    acc->written = 0;
    acc->cut = ~u64{0};
    acc->select_end = ~u64{0};
    acc->lf_before = 0;
    acc->last_lf_before_p1 = 0;
    acc->done = 0;
  }
}

// Warp-wide min / max / sum of 64-bit values, in every lane (the primitives' butterfly).
__device__ __forceinline__ u64 warp_min64(u64 v) {
  return prim::detail::warp_allreduce(v, [](u64 a, u64 b) { return b < a ? b : a; });
}
__device__ __forceinline__ u64 warp_max64(u64 v) {
  return prim::detail::warp_allreduce(v, [](u64 a, u64 b) { return b > a ? b : a; });
}
__device__ __forceinline__ u64 warp_sum64(u64 v) {
  return prim::detail::warp_allreduce(v, [](u64 a, u64 b) { return a + b; });
}

// The first error over all slots (one warp, all lanes get it).
__device__ __forceinline__ u64 first_error_of(const accum* acc) {
  const unsigned lane = threadIdx.x & 31u;
  return warp_min64(acc->first_error[lane]);
}

// Writes the device_summary (lane 0 of the calling warp; all 32 lanes call).
template <input_kind Kind>
__device__ __forceinline__ void write_summary(const accum* acc, const u8* in, u64 n,
                                              device::device_summary* out, bool strict) {
  const unsigned lane = threadIdx.x & 31u;
  const volatile accum* va = acc;  // written by other blocks of this launch
  const u64 errors = warp_sum64(va->errors[lane]);
  const u64 first = warp_min64(va->first_error[lane]);
  const u64 lf = warp_sum64(va->lf[lane]);
  const u64 last_p1 = warp_max64(va->last_lf_p1[lane]);
  if (lane != 0) return;
  const u64 limit = va->limit, lf_before = va->lf_before, last_before_p1 = va->last_lf_before_p1;
  device::device_summary s;
  s.written = va->written < va->cut ? va->written : va->cut;
  const bool stopped = strict && first != ~u64{0};
  s.consumed = stopped ? first : limit;  // as summary::bytes
  s.lines = stopped ? lf_before : lf;
  s.carry = n - limit;
  s.errors = strict ? (errors != 0 ? 1 : 0) : errors;
  s.first_error_offset = first == ~u64{0} ? device::no_offset : first;
  if (first == ~u64{0}) {
    s.lines_before_first_error = lf;
    s.last_lf_before_first_error = last_p1 ? last_p1 - 1 : device::no_offset;
    s.first_error_kind = static_cast<std::uint32_t>(error_kind::none);
  } else {
    s.lines_before_first_error = lf_before;
    s.last_lf_before_first_error = last_before_p1 ? last_before_p1 - 1 : device::no_offset;
    error_kind k;
    if constexpr (Kind == input_kind::utf8) {
      k = error_kind_at(in, n, first);
    } else {
      const u32 v = first + 4 > n ? 0u : load_word(in, n, static_cast<std::int64_t>(first), false);
      k = first + 4 > n ? error_kind::ragged_tail
                        : (v >= 0xD800u && v <= 0xDFFFu) ? error_kind::surrogate : error_kind::too_large;
    }
    s.first_error_kind = static_cast<std::uint32_t>(k);
  }
  *out = s;
}

// Grid-stride over [0, first error): LF units and the last LF (nothing to do without an error);
// then the last block to finish writes the device_summary.
// UTF-8: LF bytes, 16 bytes per thread and step. UTF-32: U+000A values, 4 per thread and step.
template <input_kind Kind>
__global__ void __launch_bounds__(block_threads) finish_kernel(const u8* in, u64 n, accum* acc,
                                                               device::device_summary* out,
                                                               bool strict, bool vec) {
  __shared__ u64 first_sh;
  __shared__ unsigned long long count_sh, last_sh;
  __shared__ bool last_block;
  wait_for_prior_kernel();
  if (threadIdx.x < 32) {
    const u64 f = first_error_of(acc);
    if (threadIdx.x == 0) {
      first_sh = f;
      count_sh = 0;
      last_sh = 0;
    }
  }
  __syncthreads();
  const u64 end = first_sh;
  if (end != ~u64{0} && end != 0) {  // block-uniform
    u64 count = 0, last_p1 = 0;
    const u64 stride = u64{gridDim.x} * block_threads * 16;
    for (u64 p = (u64{blockIdx.x} * block_threads + threadIdx.x) * 16; p < end; p += stride) {
      const uint4 q = load16(in, n, p, vec);
      const u32 words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const u64 wp = p + 4 * k;
        if (wp >= end) break;
        if constexpr (Kind == input_kind::utf8) {
          const u32 m = lf_lanes(words[k]) & first_lanes(static_cast<std::int64_t>(end - wp));
          count += static_cast<u64>(popc(m));
          if (m) last_p1 = wp + static_cast<u64>(highest_bit(m) >> 3) + 1;
        } else {
          if (words[k] == 0x0Au) {
            ++count;
            last_p1 = wp + 1;
          }
        }
      }
    }
    count = warp_sum64(count);
    last_p1 = warp_max64(last_p1);
    if ((threadIdx.x & 31u) == 0) {
      if (count) atomicAdd(&count_sh, count);
      if (last_p1) atomicMax(&last_sh, last_p1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      if (count_sh) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf_before), count_sh);
      if (last_sh) atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_before_p1), last_sh);
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    last_block = atomicAdd(&acc->done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  if (threadIdx.x < 32) write_summary<Kind>(acc, in, n, out, strict);
}

}  // namespace gutf8::kern
