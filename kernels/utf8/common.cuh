// Shared pieces of the UTF-8 kernels: guarded loads, the per-chunk accumulator that the summary
// kernels (kernel_summary.cuh) turn into a device_summary, and per-tile error / LF statistics.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gutf8/device.hpp"
#include "utf8/byte_rule.cuh"
#include "utf8/tuning.cuh"

namespace gutf8::kern {

inline constexpr int summary_slots = 32;  // spreads per-tile atomics over 32 addresses

// ------------------------------------------------------- dependent launches ----
// A kernel started with launch::dependent (programmatic dependent launch, Hopper and later) may
// begin while the kernel before it in the stream is still running: the launch latency between
// them is hidden. It must pass wait_for_prior_kernel before it reads or writes anything that
// kernel writes (the accumulator, the look-back states). Both are no-ops for a kernel launched
// the ordinary way and on older GPUs.
__device__ __forceinline__ void wait_for_prior_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next kernel's blocks start now (by default they start as this kernel's blocks exit).
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// ------------------------------------------------------------------ accumulator ----
// Lives at the start of the temporary storage; initialised by prepare_kernel.
struct accum {
  u64 n;                   // chunk bytes
  u64 limit;               // n - carry: bytes processed
  u64 written;             // output units (set by the last tile)
  u64 cut;                 // ~0, or where strict output ends if sooner (the decoder's first error)
  u64 select_end;          // ~0, or the compact encoder's first error (strict: its selection ends there)
  u64 lf_before;           // fixup_kernel: LF units before the first error
  u64 last_lf_before_p1;   // fixup_kernel: 1 + offset of the last of them (0: none)
  u64 errors[summary_slots];
  u64 first_error[summary_slots];  // min; ~0 = none
  u64 lf[summary_slots];
  u64 last_lf_p1[summary_slots];   // max; 0 = none
  unsigned int done;               // finish_kernel: blocks finished (the last one summarises)
};

// Input of a chunk: UTF-8 bytes, or UTF-32LE (LF = the code point U+000A, offsets in bytes).
enum class input_kind : std::uint8_t { utf8, utf32 };

// Bytes of a chunk processed now (accum::limit): all but the trailing bytes carried into the next
// chunk (a UTF-8 sequence cut by the chunk's end, or a UTF-32 element's first 1..3 bytes).
__device__ __forceinline__ u64 chunk_limit(input_kind kind, const u8* in, u64 n, bool is_last) {
  return n - (kind == input_kind::utf8 ? utf8_carry(in, n, is_last) : (is_last ? 0 : n % 4));
}

// ---------------------------------------------------------------------- loads ----

// 4 bytes at signed position p; bytes outside [0, n) read as 0.
__device__ __forceinline__ u32 load_word(const u8* in, u64 n, std::int64_t p, bool aligned4) {
  if (aligned4 && p >= 0 && static_cast<u64>(p) + 4 <= n)
    return __ldg(reinterpret_cast<const unsigned*>(in + p));
  u32 w = 0;
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const std::int64_t q = p + b;
    if (q >= 0 && static_cast<u64>(q) < n) w |= u32{in[q]} << (8 * b);
  }
  return w;
}

// Word w of the bytes at p (4 bytes at p + 4 w): one unguarded load when the caller knows them
// 4-byte aligned and inside [0, n) (`fast`, usually block-uniform), else load_word.
__device__ __forceinline__ u32 load_word_at(const u8* in, u64 n, u64 p, u32 w, bool fast, bool aligned4) {
  return fast ? __ldg(reinterpret_cast<const unsigned*>(in + p) + w)
              : load_word(in, n, static_cast<std::int64_t>(p + 4 * w), aligned4);
}

// 16 bytes at p (p + 16*k from a 16-aligned `in` when vec); outside [0, n) read as 0.
__device__ __forceinline__ uint4 load16(const u8* in, u64 n, u64 p, bool vec) {
  if (vec && p + 16 <= n) return __ldg(reinterpret_cast<const uint4*>(in + p));
  uint4 r;
  const bool a4 = (reinterpret_cast<std::uintptr_t>(in) & 3) == 0;
  r.x = load_word(in, n, static_cast<std::int64_t>(p), a4);
  r.y = load_word(in, n, static_cast<std::int64_t>(p + 4), a4);
  r.z = load_word(in, n, static_cast<std::int64_t>(p + 8), a4);
  r.w = load_word(in, n, static_cast<std::int64_t>(p + 12), a4);
  return r;
}


// One thread: asks L2 for bytes [at, at + bytes) of the input when they lie in it (n bytes),
// without waiting (in + at and bytes 16-byte aligned).
__device__ __forceinline__ void prefetch_l2(const u8* in, u64 n, u64 at, u32 bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (at + bytes <= n)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(__cvta_generic_to_global(in + at)), "r"(bytes)
                 : "memory");
#endif
}

// One thread: the input prefetch_ahead_bytes ahead of a tile at pos (bytes a multiple of 16), from
// the 16-byte aligned address at or below it where the input is not aligned.
__device__ __forceinline__ void prefetch_ahead(const u8* in, u64 n, u64 pos, u32 bytes) {
  const u64 at = pos + prefetch_ahead_bytes;
  prefetch_l2(in, n, at - ((reinterpret_cast<std::uintptr_t>(in) + at) & 15u), bytes);
}

// ----------------------------------------------------------- tile summaries ----
// Per-tile error / LF statistics: warps reduce with redux.sync into shared counters, thread 0
// adds them into one of the accumulator's slots. Tile-local offsets are 32-bit.
struct tile_summary {
  u32 errors, first, lf, last_lf_p1;

  __device__ __forceinline__ void init() {  // thread 0, before a __syncthreads
    errors = 0;
    first = ~0u;
    lf = 0;
    last_lf_p1 = 0;
  }
  // All threads, after init is visible. first: tile-local offset or ~0; last_lf_p1: 1 + offset.
  // A warp without errors (valid text) skips their two reductions.
  __device__ __forceinline__ void add(u32 e, u32 f, u32 l, u32 ll) {
    const bool lane0 = (threadIdx.x & 31u) == 0;
    if (__any_sync(0xFFFFFFFFu, e != 0)) {
      e = __reduce_add_sync(0xFFFFFFFFu, e);
      f = __reduce_min_sync(0xFFFFFFFFu, f);
      if (lane0) {
        atomicAdd(&errors, e);
        atomicMin(&first, f);
      }
    }
    l = __reduce_add_sync(0xFFFFFFFFu, l);
    ll = __reduce_max_sync(0xFFFFFFFFu, ll);
    if (lane0) {
      if (l) atomicAdd(&lf, l);
      if (ll) atomicMax(&last_lf_p1, ll);
    }
  }
  // Thread 0, after a __syncthreads that follows every add().
  __device__ __forceinline__ void flush(accum* acc, u64 base, unsigned slot) const {
    slot &= summary_slots - 1;
    if (errors) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->errors[slot]), u64{errors});
    if (first != ~0u)
      atomicMin(reinterpret_cast<unsigned long long*>(&acc->first_error[slot]), base + first);
    if (lf) atomicAdd(reinterpret_cast<unsigned long long*>(&acc->lf[slot]), u64{lf});
    if (last_lf_p1)
      atomicMax(reinterpret_cast<unsigned long long*>(&acc->last_lf_p1[slot]), base + last_lf_p1);
  }
};

// Per-thread contribution from bitmasks over its own bytes (bit i = tile offset off0 + i).
__device__ __forceinline__ void thread_stats(u32 err_bits, u32 lf_bits, u32 off0, u32& e, u32& f,
                                             u32& l, u32& ll) {
  e = static_cast<u32>(popc(err_bits));
  f = err_bits ? off0 + static_cast<u32>(lowest_bit(err_bits)) : ~0u;
  l = static_cast<u32>(popc(lf_bits));
  ll = lf_bits ? off0 + static_cast<u32>(highest_bit(lf_bits)) + 1 : 0u;
}


}  // namespace gutf8::kern
