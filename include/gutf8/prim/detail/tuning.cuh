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
// coalesced compacted write). Tiles are sized per input kind (see bench/results/prim_tuning.md);
// 1-byte items take two vectors a thread (32 registers, 8 blocks per SM; four took 44).
template <class T, int Threads, int Vectors, int MinBlocks = 1>
struct select_shape {
  static constexpr int threads = Threads;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int vec = vec_items<T>;
  static constexpr int vectors = Vectors;
  static constexpr int items = vec * vectors;
  static constexpr int tile = threads * items;
};
template <class T, bool Flagged = true>
struct select_policy
    : select_shape<T, 256, (vec_items<T> == 1 || vec_items<T> <= 4) ? 8 : vec_items<T> >= 16 ? 2 : 4> {};

// Byte compaction (select_bytes.cuh): Threads threads of Vectors rows of 16 bytes (each row's count
// a 16-bit field of one scanned word: Vectors <= 2); MinBlocks caps registers.
template <int Threads, int Vectors, int MinBlocks>
struct select_bytes_shape {
  static_assert(Vectors >= 1 && Vectors <= 2 && Threads % 32 == 0 && Threads * 16 < 65536,
                "a row's block total must fit its 16-bit field");
  static constexpr int threads = Threads;
  static constexpr int vectors = Vectors;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int tile = threads * vectors * 16;
};
// As the compact encoder's former dedicated kernel: 8 KiB tiles (the padded bytes of one expand
// tile), 32 registers so that 8 blocks (2048 threads) fit an SM.
using select_bytes_policy = select_bytes_shape<256, 2, 8>;

// Radix sorts.
// onesweep: 8-bit digits; per-digit pass blocks of Threads x Items keys (tile positions are
// 16-bit: Threads * Items <= 65536, Items even); MinBlocks caps registers (512 x 2: 64);
// Window = status words a digit thread reads per look-back step. See bench/results/prim_tuning.md.
template <class K, int Threads, int Items, int MinBlocks, int Window = 4>
struct onesweep_shape {
  static constexpr int radix_bits = 8;
  static constexpr int threads = Threads;
  static constexpr int items = Items;
  static constexpr int tile = threads * items;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int lookback_window = Window;
  static constexpr int hist_threads = 256;   // upfront histogram of all digits
  static constexpr int hist_items = 32;      // keys per thread per histogram block (fallback kernel)
};
template <class K>
struct onesweep_policy : onesweep_shape<K, 512, sizeof(K) >= 8 ? 8 : 16, 2> {};

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
