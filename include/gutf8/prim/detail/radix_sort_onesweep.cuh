// Onesweep-style LSD radix sort (Adinets & Merrill 2022), production variant.
//   1. histogram: ONE read of the keys builds the 256-bin histograms of every 8-bit digit
//      (lane-private 16-bit shared counters: conflict-free shared atomics; one global atomic
//      per bin per block).
//   2. bin scan: one block per digit position turns counts into global bin starts.
//   3. one kernel per digit: each block ranks its tile (onesweep_tile below: ballot multi-split
//      ranking into per-warp shared counters), publishes its 256 per-digit counts, and thread d
//      walks back over the preceding tiles' status words of digit d (decoupled look-back:
//      aggregate -> keep adding, inclusive -> stop; Window words a step) to find where its run
//      of digit d goes; then writes keys (and values) in digit-sorted runs. Tile 0 seeds the
//      chains with the global bin starts.
// Traffic per digit: read keys (+values) once, write once. Tiles are blocks (blockIdx order).
// Status words are 64-bit {epoch(pass) << 2 | kind : 32 | value : 32}; all passes share one
// array that is cleared ONCE per sort: a word from an earlier pass has a smaller epoch and reads
// as "not yet published". Positions are 32-bit: n <= 2^32 - 1.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "block_scan.cuh"
#include "common.cuh"
#include "radix_tile.cuh"
#include "sort_tuning.cuh"
#include "tuning.cuh"

namespace gutf8::prim::detail {

inline constexpr int onesweep_bins = 256;

// Grid-stride: count(key) for every key of keys[0, n). With vec_ok (keys 16-byte aligned) each
// thread has 4 independent 16-byte loads in flight before it counts their keys (the counting is
// shared-memory atomics).
template <int Threads, class K, class Count>
__device__ __forceinline__ void for_each_key(const K* keys, std::size_t n, bool vec_ok, Count& count) {
  constexpr int V = vec_items<K>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * Threads;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * Threads + threadIdx.x;
  std::size_t scalar_from = 0;
  if (vec_ok) {
    constexpr int U = 4;
    const std::size_t nv = n / V;
    for (std::size_t v = first; v < nv; v += U * stride) {
      K k[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v + u * stride < nv) load_vec<V>(keys + (v + u * stride) * V, k[u]);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (v + u * stride < nv)
#pragma unroll
          for (int j = 0; j < V; ++j) count(k[u][j]);
    }
    scalar_from = nv * V;
  }
  for (std::size_t i = scalar_from + first; i < n; i += stride) count(keys[i]);
}

template <class K, int Threads>
__global__ void __launch_bounds__(Threads)
    onesweep_histogram_kernel(const K* keys, std::size_t n, unsigned* hist, int begin_bit, int end_bit,
                              int passes, bool vec_ok) {
  constexpr int MaxPasses = static_cast<int>(sizeof(K));
  __shared__ unsigned sh[MaxPasses * onesweep_bins];
  for (int i = static_cast<int>(threadIdx.x); i < passes * onesweep_bins; i += Threads) sh[i] = 0;
  __syncthreads();
  auto count = [&](K k) {
    for (int p = 0; p < passes; ++p) {
      const int shift = begin_bit + 8 * p;
      const int bits = end_bit - shift < 8 ? end_bit - shift : 8;
      atomicAdd(&sh[p * onesweep_bins + radix_digit(k, shift, (1u << bits) - 1u)], 1u);
    }
  };
  for_each_key<Threads>(keys, n, vec_ok, count);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < passes * onesweep_bins; i += Threads)
    if (sh[i]) atomicAdd(&hist[i], sh[i]);
}

// Histogram with lane-private counters: lane l of every warp counts into column l, two 16-bit
// counters a word (word (digit >> 1) * 32 + lane, half digit & 1), so a warp's shared atomics
// always hit 32 different banks (random digits into shared bins conflict ~3.5 ways otherwise).
// Passes is a compile-time count (<= 4: 16 KiB of counters each). A column of a block counts at
// most (keys of the block) / 32 < 2^16: the grid gives each block at most 2^20 keys.
inline constexpr std::size_t onesweep_hist_block_keys = std::size_t{1} << 20;

template <class K, int Threads, int Passes>
__global__ void __launch_bounds__(Threads)
    onesweep_histogram_lanes_kernel(const K* keys, std::size_t n, unsigned* hist, int begin_bit, unsigned last_mask,
                                    bool vec_ok) {
  extern __shared__ __align__(16) unsigned char hist_smem[];
  auto* sh = reinterpret_cast<unsigned*>(hist_smem);  // [Passes][128 words][32 lanes]
  constexpr int words = Passes * 128 * 32;
  for (int i = static_cast<int>(threadIdx.x); i < words / 4; i += Threads)
    reinterpret_cast<uint4*>(sh)[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();
  const unsigned lane = lane_id();
  auto count = [&](K k) {
#pragma unroll
    for (int p = 0; p < Passes; ++p) {
      const unsigned d = radix_digit(k, begin_bit + 8 * p, p == Passes - 1 ? last_mask : 0xffu);
      atomicAdd(&sh[p * 128 * 32 + (d >> 1) * 32 + lane], 1u << ((d & 1u) * 16));
    }
  };
  for_each_key<Threads>(keys, n, vec_ok, count);
  __syncthreads();
  // column sums; a warp's 32 digits read 32 different columns at each step (no bank conflicts)
  for (int i = static_cast<int>(threadIdx.x); i < Passes * onesweep_bins; i += Threads) {
    const int p = i / onesweep_bins;
    const unsigned d = static_cast<unsigned>(i % onesweep_bins);
    const unsigned* row = sh + p * 128 * 32 + (d >> 1) * 32;
    unsigned sum = 0;
#pragma unroll 8
    for (unsigned r = 0; r < 32; ++r) sum += (row[(r + d) & 31u] >> ((d & 1u) * 16)) & 0xffffu;
    if (sum) atomicAdd(&hist[i], sum);
  }
}

// One block per digit position: exclusive scan of its Bins bins, in place (a template, so that
// several translation units of one program may include this header).
template <int Bins>
__global__ void __launch_bounds__(Bins) onesweep_bin_scan_kernel(unsigned* hist) {
  __shared__ typename block_scan<unsigned, Bins>::storage st;
  unsigned* h = hist + blockIdx.x * Bins;
  unsigned total;
  h[threadIdx.x] = block_scan<unsigned, Bins>(st).exclusive(h[threadIdx.x], 0u, plus_op{}, total);
}

template <int Window = 1>
struct onesweep_offsets {
  unsigned long long* status;  // [tiles][256] of this sort (shared by all passes)
  const unsigned* bin_start;   // [256] global starts of this pass's digits
  unsigned epoch;              // pass index
  unsigned tile;

  static constexpr unsigned kind_aggregate = 1, kind_inclusive = 2;
  __device__ __forceinline__ void store(unsigned d, unsigned kind, unsigned v) const {
    const unsigned long long w =
        (static_cast<unsigned long long>((epoch << 2) | kind) << 32) | v;
    ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
        status[static_cast<std::size_t>(tile) * onesweep_bins + d])
        .store(w, ::cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ void publish(unsigned d, unsigned count) const {
    if (tile == 0) store(d, kind_inclusive, bin_start[d] + count);
    else store(d, kind_aggregate, count);
  }
  __device__ __forceinline__ unsigned long long load(unsigned t, unsigned d) const {
    return ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
               status[static_cast<std::size_t>(t) * onesweep_bins + d])
        .load(::cuda::memory_order_relaxed);
  }
  // Walks back over the predecessors' words of digit d, Window of them per step (read at once,
  // consumed in order up to the first one not yet published), summing aggregates until an
  // inclusive value. Tile 0 always holds an inclusive value, so the walk never passes it.
  __device__ __forceinline__ unsigned offset(unsigned d, unsigned count) const {
    if (tile == 0) return bin_start[d];
    unsigned sum = 0;
    long long t = static_cast<long long>(tile) - 1;  // next predecessor to consume
    for (;;) {
      unsigned long long w[Window];
#pragma unroll
      for (int k = 0; k < Window; ++k) w[k] = t - k >= 0 ? load(static_cast<unsigned>(t - k), d) : 0ull;
      int consumed = 0;
      bool done = false;
#pragma unroll
      for (int k = 0; k < Window; ++k) {
        if (done || consumed != k) continue;
        const auto hi = static_cast<unsigned>(w[k] >> 32);
        if ((hi >> 2) != epoch || (hi & 3u) == 0) continue;  // not yet published: stop here
        sum += static_cast<unsigned>(w[k]);
        consumed = k + 1;
        if ((hi & 3u) == kind_inclusive) done = true;
      }
      if (done) break;
      t -= consumed;
    }
    store(d, kind_inclusive, sum + count);
    return sum;
  }
};

// ---- lean per-digit tile (the production path) ----
// Same structure as radix_tile (warp-striped load, warp ranking into per-warp counters, tile
// sorted in shared memory, digit runs written out), tuned for instruction count: the kernel is
// issue-bound, so
//   * full tiles take a path with no bounds checks (the last tile alone takes the checked one);
//   * peers of equal digits come from 8 ballots (warp multi-split), ~4 instructions a bit,
//     instead of __match_any_sync (a slow shared-pipe instruction on sm_90);
//   * the group leader's counter update is a predicated shared atomic (no branch), its old
//     value is broadcast with one shuffle;
//   * per-warp digit offsets and the tile's digit starts are folded into one table, so a key's
//     tile position needs a single shared load.
// Lanes of the warp whose 8-bit digit equals this lane's: AND over the bits of (this lane's bit
// set ? ballot : ~ballot). Written in PTX so that each bit is one predicate-producing AND, one
// ballot, one select and one 3-input logic op (the C++ form compiled to ~7 instructions a bit).
#define GUTF8_PRIM_PEERS_BIT(m)                 \
  "and.b32 t, %1, " #m ";\n\t"                  \
  "setp.ne.u32 p, t, 0;\n\t"                    \
  "vote.sync.ballot.b32 b, p, 0xffffffff;\n\t"  \
  "selp.b32 t, 0, 0xffffffff, p;\n\t"           \
  "xor.b32 b, b, t;\n\t"                        \
  "and.b32 %0, %0, b;\n\t"
__device__ __forceinline__ unsigned ballot_peers8(unsigned d) {
  unsigned peers = full_warp_mask;
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .b32 t, b;\n\t" GUTF8_PRIM_PEERS_BIT(1) GUTF8_PRIM_PEERS_BIT(2)
          GUTF8_PRIM_PEERS_BIT(4) GUTF8_PRIM_PEERS_BIT(8) GUTF8_PRIM_PEERS_BIT(16) GUTF8_PRIM_PEERS_BIT(32)
              GUTF8_PRIM_PEERS_BIT(64) GUTF8_PRIM_PEERS_BIT(128) "}"
      : "+r"(peers)
      : "r"(d));
  return peers;
}
#undef GUTF8_PRIM_PEERS_BIT

__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// if (pred) old = atomicAdd(addr, v) on shared memory, as one predicated instruction
__device__ __forceinline__ unsigned shared_add_if(bool pred, unsigned* addr, unsigned v) {
  unsigned old = 0;
  const auto a = static_cast<unsigned>(__cvta_generic_to_shared(addr));
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p atom.shared.add.u32 %0, [%2], %3;\n\t}"
      : "+r"(old)
      : "r"(static_cast<unsigned>(pred)), "r"(a), "r"(v)
      : "memory");
  return old;
}

// ValuesEarly: values are loaded before the look-back (sort_tuning.cuh), else after it.
template <class K, class V, bool HasValues, int Threads, int Items, bool ValuesEarly = true, bool StreamIn = false>
struct onesweep_tile {
  static constexpr int bins = onesweep_bins;
  static constexpr int warps = Threads / warp_threads;
  static constexpr int tile = Threads * Items;
  static_assert(bins <= Threads, "one thread per digit");
  static_assert(tile <= 65536 && Items % 2 == 0, "tile positions are packed two per register");
  static constexpr std::size_t cmax(std::size_t a, std::size_t b) { return a < b ? b : a; }
  static constexpr std::size_t region = align_up(cmax(sizeof(K) * tile, sizeof(unsigned) * warps * bins), 16);
  static constexpr std::size_t value_region = HasValues ? align_up(sizeof(V) * tile, 16) : 0;
  using scan_t = block_scan<unsigned, Threads>;
  static constexpr std::size_t scan_bytes = align_up(sizeof(typename scan_t::storage), 16);
  static constexpr std::size_t smem_bytes = region + value_region + bins * sizeof(unsigned) + scan_bytes;

  struct plus_u32 {
    __device__ __forceinline__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
  };

  // A thread's place in its tile; Full: the tile is whole (no bounds checks).
  template <bool Full>
  struct place {
    unsigned tid, lane, warp_base, valid;
    __device__ __forceinline__ bool in_tile(int i) const { return Full || warp_base + i * warp_threads + lane < valid; }
  };
  // An input word, read once a pass: evict-first where StreamIn.
  template <class U>
  __device__ __forceinline__ static U load_in(const U* p) {
    if constexpr (StreamIn) return __ldcs(p);
    else return *p;
  }
  __device__ __forceinline__ static unsigned pos_of(const unsigned (&pos2)[Items / 2], int i) {
    return (pos2[i / 2] >> (16 * (i % 2))) & 0xffffu;
  }

  template <class Offsets>
  __device__ __forceinline__ static void run(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out,
                                             std::size_t n, int shift, unsigned mask, Offsets& offsets,
                                             unsigned char* smem) {
    const std::size_t tile_base = static_cast<std::size_t>(blockIdx.x) * tile;
    if (n - tile_base >= static_cast<std::size_t>(tile))
      body<true>(keys_in, keys_out, vals_in, vals_out, tile_base, tile, shift, mask, offsets, smem);
    else
      body<false>(keys_in, keys_out, vals_in, vals_out, tile_base, static_cast<unsigned>(n - tile_base), shift,
                  mask, offsets, smem);
  }

  // The lane's keys, warp-striped (src: its first), then the per-warp counters cleared.
  template <bool Full>
  __device__ __forceinline__ static void load_keys(place<Full> at, const K* src, unsigned* hist,
                                                   K (&key)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i) key[i] = at.in_tile(i) ? load_in(src + i * warp_threads) : K(0);
    auto* h4 = reinterpret_cast<uint4*>(hist);
    for (unsigned i = at.tid; i < warps * bins / 4; i += Threads) h4[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
  }

  // Warp multi-split: each key's rank among the warp's keys of its digit, counted in the warp's
  // counters my_hist by one predicated shared atomic per digit group.
  template <bool Full>
  __device__ __forceinline__ static void rank_keys(place<Full> at, const K (&key)[Items], unsigned* my_hist,
                                                   int shift, unsigned mask, unsigned (&pos2)[Items / 2]) {
    const unsigned lt = lanemask_lt();
    unsigned okb = full_warp_mask;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const bool ok = at.in_tile(i);
      const unsigned d = ok ? radix_digit(key[i], shift, mask) : 0u;
      unsigned peers = ballot_peers8(d);
      if constexpr (!Full) {
        okb = __ballot_sync(full_warp_mask, ok);
        peers &= ok ? okb : ~okb;
      }
      const unsigned below = static_cast<unsigned>(__popc(peers & lt));
      const unsigned old = shared_add_if(ok && below == 0, my_hist + d, static_cast<unsigned>(__popc(peers)));
      const unsigned rank = __shfl_sync(full_warp_mask, old, __ffs(static_cast<int>(peers)) - 1) + below;
      pos2[i / 2] |= rank << (16 * (i % 2));
    }
  }

  // Threads < bins: the tile's count of digit tid (published, and returned in count), and the
  // per-warp counters turned into each warp's first tile position for that digit. Returns the
  // digit's start in the tile.
  template <class Offsets>
  __device__ __forceinline__ static unsigned digit_starts(unsigned tid, unsigned* hist,
                                                          typename scan_t::storage& scan_storage, Offsets& offsets,
                                                          unsigned& count) {
    unsigned c[warps];
    if (tid < bins) {
#pragma unroll
      for (int w = 0; w < warps; ++w) {
        c[w] = hist[w * bins + tid];
        count += c[w];
      }
      offsets.publish(tid, count);
    }
    unsigned total;
    const unsigned start = scan_t(scan_storage).exclusive(tid < bins ? count : 0u, 0u, plus_u32{}, total);
    if (tid < bins) {
      unsigned run = start;
#pragma unroll
      for (int w = 0; w < warps; ++w) {
        hist[w * bins + tid] = run;
        run += c[w];
      }
    }
    return start;
  }

  // Keys (and values) to their tile positions in shared memory; between them, threads < bins look
  // back for their digit's global offset, overlapping the values' loads, issued before it.
  template <bool Full, class Offsets>
  __device__ __forceinline__ static void scatter(place<Full> at, const K (&key)[Items],
                                                 const unsigned (&pos2)[Items / 2], const V* vals_in,
                                                 std::size_t tile_base, unsigned char* smem, Offsets& offsets, unsigned count,
                                                 unsigned start, V (&val)[HasValues ? Items : 1]) {
    auto* skeys = reinterpret_cast<K*>(smem);
    auto* global_base = reinterpret_cast<unsigned*>(smem + region + value_region);
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (at.in_tile(i)) skeys[pos_of(pos2, i)] = key[i];
    const auto load_values = [&] {
      if constexpr (HasValues) {
        const V* src = vals_in + tile_base + at.warp_base + at.lane;
#pragma unroll
        for (int i = 0; i < Items; ++i)
          if (at.in_tile(i)) val[i] = load_in(src + i * warp_threads);
      }
    };
    if constexpr (HasValues && ValuesEarly) load_values();
    if (at.tid < bins) global_base[at.tid] = offsets.offset(at.tid, count) - start;
    if constexpr (HasValues) {
      if constexpr (!ValuesEarly) load_values();
      auto* svals = reinterpret_cast<V*>(smem + region);
#pragma unroll
      for (int i = 0; i < Items; ++i)
        if (at.in_tile(i)) svals[pos_of(pos2, i)] = val[i];
    }
  }

  // Runs of equal digits are contiguous in shared AND global memory: item j of the tile goes to
  // its digit's global offset + j.
  template <bool Full>
  __device__ __forceinline__ static void write_out(place<Full> at, K* keys_out, V* vals_out,
                                                   const unsigned char* smem, int shift, unsigned mask) {
    const auto* skeys = reinterpret_cast<const K*>(smem);
    const auto* global_base = reinterpret_cast<const unsigned*>(smem + region + value_region);
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const unsigned j = i * Threads + at.tid;
      if (Full || j < at.valid) {
        const K k = skeys[j];
        const unsigned g = global_base[radix_digit(k, shift, mask)] + j;
        keys_out[g] = k;
        if constexpr (HasValues) vals_out[g] = reinterpret_cast<const V*>(smem + region)[j];
      }
    }
  }

  template <bool Full, class Offsets>
  __device__ __forceinline__ static void body(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out,
                                              std::size_t tile_base, unsigned valid, int shift, unsigned mask,
                                              Offsets& offsets, unsigned char* smem) {
    auto* hist = reinterpret_cast<unsigned*>(smem);  // [warps][bins] counters, then offsets
    auto& scan_storage = *reinterpret_cast<typename scan_t::storage*>(smem + region + value_region +
                                                                      bins * sizeof(unsigned));
    const unsigned warp = warp_id();
    const place<Full> at{threadIdx.x, lane_id(), warp * warp_threads * Items, valid};
    K key[Items];
    load_keys(at, keys_in + tile_base + at.warp_base + at.lane, hist, key);
    unsigned* my_hist = hist + warp * bins;
    unsigned pos2[Items / 2] = {};
    rank_keys(at, key, my_hist, shift, mask, pos2);
    __syncthreads();
    unsigned count = 0;
    const unsigned start = digit_starts(at.tid, hist, scan_storage, offsets, count);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (at.in_tile(i)) pos2[i / 2] += my_hist[radix_digit(key[i], shift, mask)] << (16 * (i % 2));
    __syncthreads();  // counters are dead from here on: the region now holds keys
    [[maybe_unused]] V val[HasValues ? Items : 1];  // values on their way to shared memory
    scatter(at, key, pos2, vals_in, tile_base, smem, offsets, count, start, val);
    __syncthreads();
    write_out(at, keys_out, vals_out, smem, shift, mask);
  }
};

template <class P>
constexpr bool onesweep_values_early() {
  if constexpr (requires { P::values_early; }) return P::values_early;
  else return true;
}
template <class P>
constexpr bool onesweep_stream_in() {
  if constexpr (requires { P::stream_in; }) return P::stream_in;
  else return false;
}
template <class K, class V, bool HasValues, class P>
using onesweep_tile_t =
    onesweep_tile<K, V, HasValues, P::threads, P::items, onesweep_values_early<P>(), onesweep_stream_in<P>()>;

template <class K, class V, bool HasValues, class P>
__global__ void __launch_bounds__(P::threads, P::min_blocks)
    onesweep_pass_kernel(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, std::size_t n,
                         int shift, unsigned mask, unsigned long long* status, const unsigned* bin_start,
                         unsigned epoch) {
  extern __shared__ __align__(16) unsigned char onesweep_smem[];
  onesweep_offsets<P::lookback_window> off{status, bin_start, epoch, blockIdx.x};
  onesweep_tile_t<K, V, HasValues, P>::run(
      keys_in, keys_out, vals_in, vals_out, n, shift, mask, off, onesweep_smem);
}

// Steps 1-2 of the sort: the histograms of all `passes` digits in one read of the keys, then each
// turned into its digits' global starts (hist: passes x 256 counters, cleared).
template <class K, class P>
cudaError_t onesweep_histograms(const K* keys_in, std::size_t n, unsigned* hist, int begin_bit, int end_bit,
                                int passes, cudaStream_t stream) {
  int device = 0, sms = 0;
  GUTF8_PRIM_TRY(cudaGetDevice(&device));
  GUTF8_PRIM_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t hist_chunk = static_cast<std::size_t>(P::hist_threads) * P::hist_items;
  if (passes <= 4) {
    const int last_bits = end_bit - (begin_bit + 8 * (passes - 1));
    const unsigned last_mask = (1u << last_bits) - 1u;
    const bool vec_ok = is_aligned(keys_in, 16);
    const std::size_t smem = static_cast<std::size_t>(passes) * 128 * 32 * sizeof(unsigned);
    const auto blocks = static_cast<unsigned>(std::max<std::size_t>(
        ceil_div(n, onesweep_hist_block_keys),
        std::min<std::size_t>(ceil_div(n, hist_chunk), static_cast<std::size_t>(sms) * (4 / passes + 2))));
    auto launch = [&](auto kernel) {
      GUTF8_PRIM_TRY(allow_dynamic_smem(kernel, smem));
      kernel<<<blocks, P::hist_threads, smem, stream>>>(keys_in, n, hist, begin_bit, last_mask, vec_ok);
      return cudaGetLastError();
    };
    switch (passes) {
      case 1: GUTF8_PRIM_TRY(launch(onesweep_histogram_lanes_kernel<K, P::hist_threads, 1>)); break;
      case 2: GUTF8_PRIM_TRY(launch(onesweep_histogram_lanes_kernel<K, P::hist_threads, 2>)); break;
      case 3: GUTF8_PRIM_TRY(launch(onesweep_histogram_lanes_kernel<K, P::hist_threads, 3>)); break;
      default: GUTF8_PRIM_TRY(launch(onesweep_histogram_lanes_kernel<K, P::hist_threads, 4>)); break;
    }
  } else {
    const auto hist_blocks = static_cast<unsigned>(std::max<std::size_t>(
        1, std::min<std::size_t>(ceil_div(n, hist_chunk), static_cast<std::size_t>(sms) * 4)));
    onesweep_histogram_kernel<K, P::hist_threads><<<hist_blocks, P::hist_threads, 0, stream>>>(
        keys_in, n, hist, begin_bit, end_bit, passes, is_aligned(keys_in, 16));
    GUTF8_PRIM_LAUNCHED();
  }
  onesweep_bin_scan_kernel<onesweep_bins><<<static_cast<unsigned>(passes), onesweep_bins, 0, stream>>>(hist);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

template <class K, class V, bool HasValues, class P = onesweep_policy<K>>
cudaError_t onesweep_sort(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                          const V* vals_in, V* vals_out, std::size_t n, int begin_bit, int end_bit,
                          cudaStream_t stream) {
  using tile_t = onesweep_tile_t<K, V, HasValues, P>;
  const int passes = (end_bit - begin_bit + P::radix_bits - 1) / P::radix_bits;
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t hist_bytes = align_up(sizeof(unsigned) * onesweep_bins * sizeof(K), temp_alignment);
  // the histograms and the look-back status words, cleared together
  const std::size_t scratch_bytes[1] = {hist_bytes + tiles * onesweep_bins * sizeof(unsigned long long)};
  return run_multi_pass_sort<K, V, HasValues>(
      d_temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n, passes, scratch_bytes, stream,
      [&](auto& b, void* const* scratch) {
        auto* hist = static_cast<unsigned*>(scratch[0]);
        auto* status = reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(scratch[0]) + hist_bytes);
        GUTF8_PRIM_TRY(cudaMemsetAsync(scratch[0], 0, scratch_bytes[0], stream));

        // 1-2: all digit histograms in one read, then their exclusive scans
        GUTF8_PRIM_TRY((onesweep_histograms<K, P>(keys_in, n, hist, begin_bit, end_bit, passes, stream)));

        // 3: one look-back pass per digit
        GUTF8_PRIM_TRY(b.prepare(n, stream));
        auto kernel = onesweep_pass_kernel<K, V, HasValues, P>;
        GUTF8_PRIM_TRY(allow_dynamic_smem(kernel, tile_t::smem_bytes));
        for (int p = 0; p < passes; ++p) {
          const int shift = begin_bit + p * P::radix_bits;
          const int bits = std::min(P::radix_bits, end_bit - shift);
          kernel<<<static_cast<unsigned>(tiles), P::threads, tile_t::smem_bytes, stream>>>(
              b.keys.src(p), b.keys.dst(p), b.vals_src(p), b.vals_dst(p), n, shift, (1u << bits) - 1u, status,
              hist + p * onesweep_bins, static_cast<unsigned>(p));
          GUTF8_PRIM_LAUNCHED();
        }
        return cudaSuccess;
      });
}

// The default: for u32 keys with 4-byte values the shape of n's band (sort_pairs_default_bands_u32),
// else onesweep_policy<K>.
template <class K, class V, bool HasValues>
cudaError_t onesweep_sort_default(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                  const V* vals_in, V* vals_out, std::size_t n, int begin_bit, int end_bit,
                                  cudaStream_t stream) {
  if constexpr (HasValues && sizeof(K) == 4 && sizeof(V) == 4) {
    cudaError_t e = cudaErrorInvalidValue;
    with_band<sort_pairs_default_bands_u32>(n, [&](auto band) {
      e = onesweep_sort<K, V, true, typename decltype(band)::type::shape>(d_temp, temp_bytes, keys_in, keys_out,
                                                                          vals_in, vals_out, n, begin_bit, end_bit,
                                                                          stream);
    });
    return e;
  } else {
    return onesweep_sort<K, V, HasValues>(d_temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n, begin_bit,
                                          end_bit, stream);
  }
}

// Candidate `index` of sort_pairs_candidates_u32 (bench_prim --sweep, the tests);
// cudaErrorInvalidValue past the last.
template <class V>
cudaError_t onesweep_pairs_candidate(std::size_t index, void* d_temp, std::size_t& temp_bytes,
                                     const std::uint32_t* keys_in, std::uint32_t* keys_out, const V* vals_in,
                                     V* vals_out, std::size_t n, int begin_bit, int end_bit, cudaStream_t stream) {
  static_assert(sizeof(V) == 4, "the candidates are shapes for 4-byte values");
  cudaError_t e = cudaErrorInvalidValue;
  with_type<sort_pairs_candidates_u32>(index, [&](auto tag) {
    e = onesweep_sort<std::uint32_t, V, true, typename decltype(tag)::type>(
        d_temp, temp_bytes, keys_in, keys_out, vals_in, vals_out, n, begin_bit, end_bit, stream);
  });
  return e;
}

}  // namespace gutf8::prim::detail
