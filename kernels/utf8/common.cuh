// Shared pieces of the UTF-8 kernels: launch shape, loads with halos, the flagged-sum scan
// operator, padded shared-memory staging indices and the per-chunk accumulator that the
// summary kernels (summary.cuh) turn into a device_summary.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gutf8/device.hpp"
#include "prim/block_scan.cuh"
#include "prim/tile_lookback.cuh"
#include "prim/warp_scan.cuh"
#include "utf8/classify.cuh"

namespace gutf8::kern {

inline constexpr int block_threads = 256;
inline constexpr int summary_slots = 32;  // spreads per-tile atomics over 32 addresses

// ------------------------------------------------------------------ accumulator ----
// Lives at the start of the temporary storage; initialised by prepare_kernel.
struct accum {
  u64 n;                   // chunk bytes
  u64 limit;               // n - carry: bytes processed
  u64 written;             // output units (set by the last tile)
  u64 lf_before;           // fixup_kernel: LF units before the first error
  u64 last_lf_before_p1;   // fixup_kernel: 1 + offset of the last of them (0: none)
  u64 errors[summary_slots];
  u64 first_error[summary_slots];  // min; ~0 = none
  u64 lf[summary_slots];
  u64 last_lf_p1[summary_slots];   // max; 0 = none
};

// Input of a chunk: UTF-8 bytes, or UTF-32LE (LF = the code point U+000A, offsets in bytes).
enum class input_kind : std::uint8_t { utf8, utf32 };

// ------------------------------------------------------------------- scan op ----
// Count with a "stopped" flag in bit 63: once an operand on the left has stopped (strict mode
// met an error) nothing to its right is added. Associative, identity 0, not commutative.
inline constexpr u64 stop_flag = u64{1} << 63;
struct flagged_sum {
  __host__ __device__ __forceinline__ u64 operator()(u64 a, u64 b) const {
    return (a & stop_flag) ? a : a + b;
  }
};

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

// The own words of a thread: w[1..NW] = bytes pos0 .. pos0 + 4*NW - 1.
template <int NW>
__device__ __forceinline__ void load_own(const u8* in, u64 n, u64 pos0, bool vec,
                                         u32 (&w)[NW + 2]) {
  static_assert(NW % 4 == 0, "threads own whole 16-byte vectors");
#pragma unroll
  for (int v = 0; v < NW / 4; ++v) {
    const uint4 q = load16(in, n, pos0 + 16 * v, vec);
    w[1 + 4 * v] = q.x;
    w[2 + 4 * v] = q.y;
    w[3 + 4 * v] = q.z;
    w[4 + 4 * v] = q.w;
  }
}

// Halo words w[0] (4 bytes before pos0) and w[NW+1] (4 bytes after the own bytes), taken from
// the neighbouring lanes; lanes 0 and 31 read them from memory. All 32 lanes must call, and
// consecutive lanes must own consecutive bytes.
template <int NW>
__device__ __forceinline__ void load_halo(const u8* in, u64 n, u64 pos0, bool vec,
                                          u32 (&w)[NW + 2]) {
  const unsigned lane = threadIdx.x & 31u;
  u32 prev = __shfl_up_sync(0xFFFFFFFFu, w[NW], 1);
  u32 next = __shfl_down_sync(0xFFFFFFFFu, w[1], 1);
  if (lane == 0) prev = load_word(in, n, static_cast<std::int64_t>(pos0) - 4, vec);
  if (lane == 31) next = load_word(in, n, static_cast<std::int64_t>(pos0 + 4 * NW), vec);
  w[0] = prev;
  w[NW + 1] = next;
}

// Own-byte bitmask (bit i = byte pos0 + i) of the positions below `limit`.
template <int NW>
__device__ __forceinline__ u32 range_bits(u64 pos0, u64 limit) {
  constexpr int bytes = 4 * NW;
  if (pos0 >= limit) return 0;
  const u64 r = limit - pos0;
  if (r >= static_cast<u64>(bytes)) return bytes == 32 ? ~0u : ((1u << bytes) - 1);
  return (1u << r) - 1;
}

template <int NW>
__device__ __forceinline__ u32 gather_bits(const u32 (&lanes)[NW]) {
  u32 r = 0;
#pragma unroll
  for (int k = 0; k < NW; ++k) r |= lanes_to_bits(lanes[k]) << (4 * k);
  return r;
}

// Bits strictly below the lowest set bit of m (all bits when m == 0).
__device__ __forceinline__ u32 below_lowest(u32 m) { return m == 0 ? ~0u : (m & (0u - m)) - 1; }

// ------------------------------------------------------------- shared staging ----
// Padded indices: one spare slot per 32 elements keeps lanes that write 16..32 consecutive
// elements each on distinct banks.
__device__ __forceinline__ u32 stage_word(u32 i) { return i + (i >> 5); }
__device__ __forceinline__ u32 stage_byte(u32 i) { return i + ((i >> 5) << 2); }
__host__ __device__ constexpr u32 stage_words_for(u32 n) { return n + n / 32 + 1; }
__host__ __device__ constexpr u32 stage_bytes_for(u32 n) { return n + 4 * (n / 32) + 4; }

// Copies `count` staged bytes (stage_byte layout) to out[0 .. count): bytes at the unaligned
// ends, 32-bit stores in between. Whole block calls.
__device__ __forceinline__ void copy_out_bytes(const u8* stage, u32 count, u8* out) {
  const u32 head = static_cast<u32>((4 - (reinterpret_cast<std::uintptr_t>(out) & 3)) & 3);
  const u32 h = head < count ? head : count;
  for (u32 i = threadIdx.x; i < h; i += block_threads) out[i] = stage[stage_byte(i)];
  const u32 words = (count - h) / 4;
  u32* out_w = reinterpret_cast<u32*>(out + h);
  for (u32 j = threadIdx.x; j < words; j += block_threads) {
    const u32 i = h + 4 * j;
    out_w[j] = u32{stage[stage_byte(i)]} | u32{stage[stage_byte(i + 1)]} << 8 |
               u32{stage[stage_byte(i + 2)]} << 16 | u32{stage[stage_byte(i + 3)]} << 24;
  }
  for (u32 i = h + 4 * words + threadIdx.x; i < count; i += block_threads)
    out[i] = stage[stage_byte(i)];
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
  __device__ __forceinline__ void add(u32 e, u32 f, u32 l, u32 ll) {
    e = __reduce_add_sync(0xFFFFFFFFu, e);
    f = __reduce_min_sync(0xFFFFFFFFu, f);
    l = __reduce_add_sync(0xFFFFFFFFu, l);
    ll = __reduce_max_sync(0xFFFFFFFFu, ll);
    if ((threadIdx.x & 31u) == 0) {
      if (e) atomicAdd(&errors, e);
      if (f != ~0u) atomicMin(&first, f);
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


// ------------------------------------------------------- per-thread classify ----
// A thread's view of its 4*NW bytes at pos0: raw words with halos and bitmasks over its own
// bytes (bit i = byte pos0 + i). Bits of bytes at or beyond `limit` are cleared in every mask.
template <int NW, bool Detail>
struct thread_view {
  u32 w[NW + 2];
  u32 inr;     // own bytes below limit
  u32 start;   // starts an output unit
  u32 wf;      // starts a well-formed sequence
  u32 lf;      // LF bytes
  bool ascii;  // every own byte is ASCII (start == wf == inr)
  // Detail only:
  u32 cover, end2, end3, end4;

  [[nodiscard]] __device__ __forceinline__ u32 err() const { return start & ~wf; }
  [[nodiscard]] __device__ __forceinline__ u32 byte(int i) const {
    return (w[1 + i / 4] >> (8 * (i % 4))) & 0xFFu;
  }

  // Every lane of the warp must call (halo shuffles).
  __device__ __forceinline__ void load(const u8* in, u64 n, u64 pos0, u64 limit, bool vec) {
    load_own<NW>(in, n, pos0, vec, w);
    load_halo<NW>(in, n, pos0, vec, w);
    inr = range_bits<NW>(pos0, limit);
    u32 any = 0;
    u32 lfl[NW];
#pragma unroll
    for (int k = 0; k < NW; ++k) {
      any |= w[k + 1];
      lfl[k] = lf_lanes(w[k + 1]);
    }
    lf = gather_bits<NW>(lfl) & inr;
    ascii = (any & lane_hi) == 0;
    if (ascii) {
      start = wf = inr;
      if constexpr (Detail) {
        cover = inr;
        end2 = end3 = end4 = 0;
      }
      return;
    }
    u32 s[NW], f[NW];
    if constexpr (Detail) {
      window_detail<NW> d;
      classify_window<NW, true>(w, s, f, &d);
      cover = gather_bits<NW>(d.cover) & inr;
      end2 = gather_bits<NW>(d.end2) & inr;
      end3 = gather_bits<NW>(d.end3) & inr;
      end4 = gather_bits<NW>(d.end4) & inr;
    } else {
      classify_window<NW>(w, s, f);
    }
    start = gather_bits<NW>(s) & inr;
    wf = gather_bits<NW>(f) & inr;
  }
};

}  // namespace gutf8::kern
