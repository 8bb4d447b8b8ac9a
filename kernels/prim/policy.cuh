// Tuning policies (block size, items per thread, digit width) kept apart from the algorithms.
// Chosen for Hopper (sm_90, 132 SMs, 50 MB L2): enough bytes in flight per SM to cover HBM
// latency, 16-byte vector accesses, register use that leaves >= 1024 resident threads per SM.
#pragma once

#include <cstddef>

#include "common.cuh"

namespace gutf8::prim::detail {

// Single-pass look-back scan: each thread owns `vectors` runs of 16 bytes (warp-striped, so
// every warp-wide load/store instruction moves 512 contiguous bytes); a tile is
// threads * vectors * vec_items<T> items (u32: 256 x 16 = 4096 items = 16 KiB).
template <class T>
struct lookback_scan_policy {
  static constexpr int threads = 256;
  static constexpr int vec = vec_items<T>;
  static constexpr int vectors = vec == 1 ? 8 : (sizeof(T) >= 8 ? 4 : 4);
  static constexpr int items = vec * vectors;
  static constexpr int tile = threads * items;
};

// Shared-memory blocked (reduce-then-scan) scan: same per-thread footprint as the look-back
// scan so the two differ only in the algorithm.
template <class T>
struct blocked_scan_policy {
  static constexpr int threads = 256;
  static constexpr int items = (sizeof(T) >= 8) ? 8 : 16;
  static constexpr int tile = threads * items;
};

// Element-wise kernels of the naive scans (Hillis-Steele passes, Blelloch levels).
struct elementwise_policy {
  static constexpr int threads = 256;
};

// Fused single-pass select: like the scan (items staged through shared memory for the
// coalesced compacted write).
template <class T>
struct select_policy {
  static constexpr int threads = 256;
  static constexpr int vec = vec_items<T>;
  static constexpr int vectors = vec == 1 ? 8 : 4;
  static constexpr int items = vec * vectors;
  static constexpr int tile = threads * items;
};

// Radix sorts.
template <class K>
struct onesweep_policy {
  static constexpr int radix_bits = 8;
  static constexpr int threads = 512;
  static constexpr int items = sizeof(K) >= 8 ? 8 : 16;  // tile: 8192 u32 / 4096 u64 keys
  static constexpr int tile = threads * items;
  static constexpr int min_blocks = 2;       // <= 64 registers: two tiles per SM overlap phases
  static constexpr int hist_threads = 256;   // upfront histogram of all digits
  static constexpr int hist_items = 32;      // keys per thread per histogram block
};

template <class K>
struct digit_sort_policy {
  static constexpr int radix_bits = 4;
  static constexpr int threads = 256;
  static constexpr int items = sizeof(K) >= 8 ? 8 : 12;
  static constexpr int tile = threads * items;
  static constexpr int min_blocks = 3;
};

struct split_sort_policy {
  static constexpr int threads = 256;
  static constexpr int items = 8;  // scatter kernel: keys per thread
};

}  // namespace gutf8::prim::detail
