// Decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back", 2016): per-tile status words in global memory let one pass compute every tile's
// exclusive prefix without a second sweep.
//
// Host side:
//   size_t bytes = tile_state<T>::storage_bytes(num_tiles);          // part of temp storage
//   auto st = tile_state<T>::attach(d_ptr, num_tiles);               // d_ptr 256-byte aligned
//   st.reset(stream);            // async cudaMemsetAsync to "invalid"; before EVERY launch
//   kernel<<<num_tiles, B, 0, stream>>>(st, ...);
// Device side (every thread of the block calls; the tile's aggregate must be valid in warp 0):
//   __shared__ typename tile_prefix<T, B>::storage lb;
//   T prefix = tile_prefix<T, B>::exclusive_prefix(st, tile, tile_aggregate, op, lb);
//   // tile == 0: publishes tile_aggregate as its inclusive value and returns tile_aggregate —
//   //            that return value is NOT a prefix and must not be used (there is none).
//   // tile  > 0: returns op(agg_0, ..., agg_{tile-1}), combined in tile order.
//
// Tile index = blockIdx.x (as CUB): the hardware dispatches blocks in increasing blockIdx
// order, so every predecessor of a resident block is resident or done and the spin terminates.
// Grids are therefore 1-D with one tile per block; storage is indexed by that tile number.
//
// Status encoding: 0 = not yet published, 1 = aggregate (this tile only), 2 = inclusive prefix.
// T of <= 4 bytes: value and status share one 64-bit word, written and read with single relaxed
// device-scope atomics. T of 8 bytes (or more): separate status / aggregate / inclusive arrays;
// the value is stored first and the status published with release, read with acquire.
// Aggregate and inclusive values live in different arrays so a reader that saw status 1 can
// never pick up the (later) inclusive value by mistake.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common.cuh"
#include "flagged_sum.cuh"
#include "warp_scan.cuh"

namespace gutf8::prim::detail {

inline constexpr unsigned tile_status_invalid = 0;
inline constexpr unsigned tile_status_aggregate = 1;
inline constexpr unsigned tile_status_inclusive = 2;

template <class T, bool Packed = (sizeof(T) <= 4)>
struct tile_state;

// ---- values of at most 4 bytes: one 64-bit word {status:32 | value bits:32} per tile ----
template <class T>
struct tile_state<T, true> {
  using value_type = T;
  unsigned long long* words = nullptr;
  std::size_t num_tiles = 0;

  static std::size_t storage_bytes(std::size_t tiles) {
    return align_up(tiles * sizeof(unsigned long long), 256);
  }
  static tile_state attach(void* storage, std::size_t tiles) {
    tile_state s;
    s.words = static_cast<unsigned long long*>(storage);
    s.num_tiles = tiles;
    return s;
  }
  cudaError_t reset(cudaStream_t stream) const {
    if (num_tiles == 0) return cudaSuccess;
    return cudaMemsetAsync(words, 0, num_tiles * sizeof(unsigned long long), stream);
  }

  __device__ __forceinline__ void publish(unsigned tile, unsigned status, T v) const {
    unsigned bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    const unsigned long long w = (static_cast<unsigned long long>(status) << 32) | bits;
    ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(words[tile]).store(
        w, ::cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ void publish_aggregate(unsigned tile, T v) const {
    publish(tile, tile_status_aggregate, v);
  }
  __device__ __forceinline__ void publish_inclusive(unsigned tile, T v) const {
    publish(tile, tile_status_inclusive, v);
  }
  // One read of tile's status and (when status != invalid) its value.
  __device__ __forceinline__ unsigned read(unsigned tile, T& v) const {
    const unsigned long long w =
        ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(words[tile]).load(
            ::cuda::memory_order_relaxed);
    const auto bits = static_cast<unsigned>(w);
    std::memcpy(&v, &bits, sizeof(T));
    return static_cast<unsigned>(w >> 32);
  }
};

// ---- wider values: status array + aggregate array + inclusive array, release/acquire ----
template <class T>
struct tile_state<T, false> {
  static_assert(sizeof(T) % 4 == 0, "wide tile values must be a whole number of 32-bit words");
  using value_type = T;
  unsigned* status = nullptr;
  T* aggregates = nullptr;
  T* inclusives = nullptr;
  std::size_t num_tiles = 0;

  static std::size_t storage_bytes(std::size_t tiles) {
    return align_up(tiles * sizeof(unsigned), 256) + 2 * align_up(tiles * sizeof(T), 256);
  }
  static tile_state attach(void* storage, std::size_t tiles) {
    tile_state s;
    auto* base = static_cast<unsigned char*>(storage);
    s.status = reinterpret_cast<unsigned*>(base);
    base += align_up(tiles * sizeof(unsigned), 256);
    s.aggregates = reinterpret_cast<T*>(base);
    base += align_up(tiles * sizeof(T), 256);
    s.inclusives = reinterpret_cast<T*>(base);
    s.num_tiles = tiles;
    return s;
  }
  cudaError_t reset(cudaStream_t stream) const {
    if (num_tiles == 0) return cudaSuccess;
    return cudaMemsetAsync(status, 0, num_tiles * sizeof(unsigned), stream);
  }

  // Values are moved as relaxed 64-bit (8-byte T) or 32-bit word atomics; the status store /
  // load with release / acquire orders them.
  __device__ __forceinline__ static void store_value(T* slot, const T& v) {
    if constexpr (sizeof(T) == 8) {
      unsigned long long bits;
      std::memcpy(&bits, &v, 8);
      ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
          *reinterpret_cast<unsigned long long*>(slot))
          .store(bits, ::cuda::memory_order_relaxed);
    } else {
      unsigned w[sizeof(T) / 4];
      std::memcpy(w, &v, sizeof(T));
#pragma unroll
      for (std::size_t i = 0; i < sizeof(T) / 4; ++i)
        ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(reinterpret_cast<unsigned*>(slot)[i])
            .store(w[i], ::cuda::memory_order_relaxed);
    }
  }
  __device__ __forceinline__ static T load_value(const T* slot) {
    T v;
    if constexpr (sizeof(T) == 8) {
      const unsigned long long bits =
          ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(
              *reinterpret_cast<unsigned long long*>(const_cast<T*>(slot)))
              .load(::cuda::memory_order_relaxed);
      std::memcpy(&v, &bits, 8);
    } else {
      unsigned w[sizeof(T) / 4];
#pragma unroll
      for (std::size_t i = 0; i < sizeof(T) / 4; ++i)
        w[i] = ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(
                   reinterpret_cast<unsigned*>(const_cast<T*>(slot))[i])
                   .load(::cuda::memory_order_relaxed);
      std::memcpy(&v, w, sizeof(T));
    }
    return v;
  }

  __device__ __forceinline__ void publish_aggregate(unsigned tile, T v) const {
    store_value(aggregates + tile, v);
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(status[tile]).store(
        tile_status_aggregate, ::cuda::memory_order_release);
  }
  __device__ __forceinline__ void publish_inclusive(unsigned tile, T v) const {
    store_value(inclusives + tile, v);
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(status[tile]).store(
        tile_status_inclusive, ::cuda::memory_order_release);
  }
  __device__ __forceinline__ unsigned read(unsigned tile, T& v) const {
    const unsigned s = ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(status[tile]).load(
        ::cuda::memory_order_acquire);
    if (s == tile_status_aggregate) v = load_value(aggregates + tile);
    else if (s == tile_status_inclusive) v = load_value(inclusives + tile);
    return s;
  }
};

// ---- one 64-bit word per tile for flagged counts (flagged_sum.cuh), published early ----
// word = status (bits 62..63) | stop (bit 61) | count (bits 0..60); values are flagged_sum<u64, 61>.
// Written and read with single relaxed atomics: no release/acquire pairs, no second array.
// Two ways to publish, which the look-back reads alike:
//  * stored: the owner stores aggregate | value, later inclusive | value (one thread each);
//  * counted: each of a tile's Parts parts (e.g. its warps) adds an arrival of 2^62 / Parts and
//    its count as soon as it knows it; after the last arrival the status bits read "aggregate",
//    before it "invalid". The owner adds aggregate + its exclusive prefix after a barrier that
//    follows every part's add, so in the word's order of modifications it comes last: the
//    status carries to "inclusive", the count becomes prefix + count. Counted values never stop.
// The words live in global memory and are cleared (zero) before every launch, by a memset or by a
// kernel before it. A tile's own value must stay below 2^27, so that a look-back window of 31 of
// them sums in 32 bits (the codec's tiles hold at most 2^15), and below 2^32 / (32 * Slots) for
// lookback_exclusive_span; prefixes (inclusive values) may use all 61 bits.
struct flagged_count_state {
  using value_type = unsigned long long;
  using sum = flagged_sum<value_type, 61>;
  static constexpr value_type aggregate_bits = value_type{tile_status_aggregate} << 62;
  static constexpr value_type inclusive_bits = value_type{tile_status_inclusive} << 62;
  static constexpr value_type status_bits = value_type{3} << 62;

  value_type* words = nullptr;

  static std::size_t storage_bytes(std::size_t tiles) { return align_up(tiles * sizeof(value_type), 256); }

  __device__ __forceinline__ ::cuda::atomic_ref<value_type, ::cuda::thread_scope_device> word(unsigned tile) const {
    return ::cuda::atomic_ref<value_type, ::cuda::thread_scope_device>(words[tile]);
  }
  __device__ __forceinline__ unsigned read(unsigned tile, value_type& v) const {
    const value_type w = word(tile).load(::cuda::memory_order_relaxed);
    v = w & ~status_bits;
    return static_cast<unsigned>(w >> 62);
  }
  __device__ __forceinline__ void publish_aggregate(unsigned tile, value_type v) const {
    word(tile).store(aggregate_bits | v, ::cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ void publish_inclusive(unsigned tile, value_type v) const {
    word(tile).store(inclusive_bits | v, ::cuda::memory_order_relaxed);
  }
  // Each add is one relaxed device-scope reduction on the word's global address: an atomic_ref on
  // the generic pointer added a test for a shared-memory address and a compare-and-swap loop for
  // that case around it (bench/results/codec_tuning.md).
  template <unsigned Parts>
  __device__ __forceinline__ void add_part(unsigned tile, unsigned count) const {
    static_assert(Parts >= 1 && Parts <= 8 && (Parts & (Parts - 1)) == 0, "arrivals must sum to the status bit");
    add_relaxed(tile, aggregate_bits / Parts + count);
  }
  __device__ __forceinline__ void add_counted_inclusive(unsigned tile, value_type prefix) const {
    add_relaxed(tile, aggregate_bits + prefix);
  }
  // One thread: where `tile` is the first of its 128-byte line of words, asks L2 for the line
  // `ahead` tiles on (not past `last`). The words are cleared before the kernel, and a kernel that
  // streams more than L2 holds evicts a late tile's line before its first add: that add and the
  // successors' look-backs would wait for DRAM (bench/results/codec_tuning.md).
  __device__ __forceinline__ void prefetch_line(unsigned tile, unsigned last, unsigned ahead) const {
    constexpr unsigned words_per_line = 128 / sizeof(value_type);
    if (tile % words_per_line == 0 && ahead <= last && tile <= last - ahead)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(words + tile + ahead)) : "memory");
  }
  // Slots consecutive words from `first` (a multiple of Slots; the storage is 256-byte aligned and
  // padded to a multiple of 32 words), with 16-byte relaxed loads: single-copy atomic per word.
  template <unsigned Slots>
  __device__ __forceinline__ void read_span(unsigned first, value_type (&w)[Slots]) const {
    static_assert(Slots % 2 == 0 && Slots <= 32);
#pragma unroll
    for (unsigned k = 0; k < Slots; k += 2)
      asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                   : "=l"(w[k]), "=l"(w[k + 1])
                   : "l"(__cvta_generic_to_global(words + first + k))
                   : "memory");
  }
  __device__ __forceinline__ void add_relaxed(unsigned tile, value_type v) const {
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(__cvta_generic_to_global(words + tile)), "l"(v)
                 : "memory");
  }

  // The look-back's window, all 32 lanes: lane `first` holds the nearest inclusive entry (or the
  // window's first aggregate); the others aggregates, tile values below 2^27 (only an inclusive
  // value can be large): one 32-bit warp sum up to the first stop instead of a 64-bit scan.
  __device__ __forceinline__ static value_type window_total(value_type v, unsigned first) {
    const unsigned lane = lane_id();
    const unsigned stops = __ballot_sync(full_warp_mask, sum::stopped(v)) & (full_warp_mask << first);
    const unsigned last = stops ? static_cast<unsigned>(__ffs(static_cast<int>(stops))) - 1u : 31u;
    const unsigned small = (lane > first && lane <= last) ? static_cast<unsigned>(v) : 0u;
    const unsigned total = __reduce_add_sync(full_warp_mask, small);
    const unsigned hi = __shfl_sync(full_warp_mask, static_cast<unsigned>(sum::count(v) >> 32), static_cast<int>(first));
    const unsigned lo = __shfl_sync(full_warp_mask, static_cast<unsigned>(v), static_cast<int>(first));
    return sum::flag(((value_type{hi} << 32) | lo) + total, stops != 0);
  }
};

// The exclusive prefix of `tile` > 0, in every lane of the ONE warp that calls (all 32 lanes):
// lane i of a window inspects tile base + i, base = tile - 32, tile - 64, ...; the warp re-reads
// the entries not yet published until the window is whole, then combines it, in tile order, from
// the nearest inclusive entry (if any) to its end; windows are combined nearest first until one
// holds an inclusive entry. One window per round trip: more were loads of hot lines that the
// look-back seldom needed (the codec's encoder and repair, bench/results/codec_tuning.md);
// lookback_exclusive_span reads wider windows for a flagged_count_state, one vector load a lane.
// State: tile_state<T> or any type with value_type and read(tile, v) -> status; one with a static
// window_total(v, first) combines its windows with it (flagged_count_state).
template <class State, class Op>
__device__ __forceinline__ typename State::value_type lookback_exclusive(const State& state, unsigned tile, Op op) {
  using T = typename State::value_type;
  const unsigned lane = lane_id();
  long long base = static_cast<long long>(tile) - warp_threads;
  T prefix{};
  bool have = false;
  for (;;) {
    const long long pred = base + lane;
    T v{};
    // Before tile 0: never the nearest inclusive entry that matters (tile 0 is always inclusive).
    unsigned st = tile_status_inclusive;
    if (pred >= 0) st = state.read(static_cast<unsigned>(pred), v);
    while (__any_sync(full_warp_mask, st == tile_status_invalid))
      if (st == tile_status_invalid) st = state.read(static_cast<unsigned>(pred), v);  // pred >= 0 here
    const unsigned incl = __ballot_sync(full_warp_mask, st == tile_status_inclusive);
    const unsigned first = incl ? 31u - static_cast<unsigned>(__clz(static_cast<int>(incl))) : 0u;
    T window;
    if constexpr (requires { State::window_total(v, first); }) window = State::window_total(v, first);
    else window = warp_shfl_idx(warp_inclusive_scan_from(v, op, first), warp_threads - 1);
    prefix = have ? op(window, prefix) : window;
    have = true;
    if (incl) return prefix;
    base -= warp_threads;
  }
}

// lookback_exclusive_span's window of 32 * Slots entries, all 32 lanes (position i * Slots + k in
// lane i's w[k]): the flagged sum from the nearest inclusive entry (else position 0) up to the
// first stopped entry at or after it. found: the window holds an inclusive entry.
template <unsigned Slots>
__device__ __forceinline__ flagged_count_state::value_type span_total(const flagged_count_state::value_type (&w)[Slots],
                                                                      bool& found) {
  using S = flagged_count_state;
  using T = S::value_type;
  const unsigned lane = lane_id(), my_pos = lane * Slots;
  unsigned incl = 0, stops = 0;  // bit k = slot k
#pragma unroll
  for (unsigned k = 0; k < Slots; ++k) {
    incl |= unsigned{(w[k] >> 62) == tile_status_inclusive} << k;
    stops |= unsigned{S::sum::stopped(w[k] & ~S::status_bits)} << k;
  }
  const unsigned incl_lanes = __ballot_sync(full_warp_mask, incl != 0);
  found = incl_lanes != 0;
  const unsigned first_lane = found ? 31u - static_cast<unsigned>(__clz(static_cast<int>(incl_lanes))) : 0u;
  const unsigned lane_incl = __shfl_sync(full_warp_mask, incl, static_cast<int>(first_lane));
  const unsigned first = first_lane * Slots + (lane_incl ? 31u - static_cast<unsigned>(__clz(static_cast<int>(lane_incl))) : 0u);
  const unsigned stops_from = my_pos + Slots <= first ? 0u : stops & (~0u << (first > my_pos ? first - my_pos : 0u));
  const unsigned stop_lanes = __ballot_sync(full_warp_mask, stops_from != 0);
  unsigned last = warp_threads * Slots - 1;
  if (stop_lanes) {
    const unsigned l = static_cast<unsigned>(__ffs(static_cast<int>(stop_lanes))) - 1u;
    const unsigned b = __shfl_sync(full_warp_mask, stops_from, static_cast<int>(l));
    last = l * Slots + static_cast<unsigned>(__ffs(static_cast<int>(b))) - 1u;
  }
  unsigned small = 0;
  T first_value = 0;
#pragma unroll
  for (unsigned k = 0; k < Slots; ++k) {
    const T v = w[k] & ~S::status_bits;
    if (my_pos + k > first && my_pos + k <= last) small += static_cast<unsigned>(S::sum::count(v));
    if (my_pos + k == first) first_value = v;
  }
  const unsigned total = __reduce_add_sync(full_warp_mask, small);
  const int src = static_cast<int>(first / Slots);
  const unsigned hi = __shfl_sync(full_warp_mask, static_cast<unsigned>(S::sum::count(first_value) >> 32), src);
  const unsigned lo = __shfl_sync(full_warp_mask, static_cast<unsigned>(first_value), src);
  return S::sum::flag(((T{hi} << 32) | lo) + total, stop_lanes != 0);
}

// lookback_exclusive over a flagged_count_state, Slots (1, or even up to 32) consecutive tiles a
// lane: a window of 32 * Slots tiles a round trip, read with 16-byte loads and combined with one
// warp sum, where lookback_exclusive spends a vote, a sum and three shuffles on each window of 32
// (a walk of several windows costs their latencies one after another). The window ends at `tile`
// rounded up to Slots; entries from `tile` on are ignored. Tile values below 2^32 / (32 * Slots).
// Slots = 1 is lookback_exclusive itself.
template <unsigned Slots>
__device__ __forceinline__ flagged_count_state::value_type lookback_exclusive_span(const flagged_count_state& state,
                                                                                   unsigned tile) {
  using S = flagged_count_state;
  using T = S::value_type;
  if constexpr (Slots == 1) {
    return lookback_exclusive(state, tile, S::sum{});
  } else {
    long long top = (static_cast<long long>(tile) + Slots - 1) / Slots * Slots;
    T prefix{};
    bool have = false;
    for (;; top -= warp_threads * Slots) {
      const long long lane_first = top - warp_threads * Slots + lane_id() * Slots;
      T w[Slots];
      // Entries before tile 0 read as inclusive zeros (tile 0 may not have added its own yet),
      // those from `tile` on as empty aggregates.
      const auto load = [&] {
        if (lane_first >= 0) state.read_span<Slots>(static_cast<unsigned>(lane_first), w);
#pragma unroll
        for (unsigned k = 0; k < Slots; ++k) {
          if (lane_first < 0) w[k] = S::inclusive_bits;
          else if (lane_first + k >= tile) w[k] = S::aggregate_bits;
        }
      };
      const auto unpublished = [&] {
        bool any = false;
#pragma unroll
        for (unsigned k = 0; k < Slots; ++k) any |= (w[k] & S::status_bits) == 0;
        return any;
      };
      load();
      while (__any_sync(full_warp_mask, unpublished()))
        if (unpublished()) load();
      bool found = false;
      const T window = span_total<Slots>(w, found);
      prefix = have ? S::sum{}(window, prefix) : window;
      have = true;
      if (found) return prefix;
    }
  }
}

// Block-level driver of the look-back. BlockThreads only sizes nothing today but keeps the
// shape of CUB's prefix-callback types and allows per-block tuning later.
template <class T, int BlockThreads>
struct tile_prefix {
  struct storage {
    T exclusive;
  };

  template <class Op>
  __device__ __forceinline__ static T exclusive_prefix(const tile_state<T>& state, unsigned tile,
                                                       T tile_aggregate, Op op, storage& smem) {
    if (tile == 0) {
      if (threadIdx.x == 0) state.publish_inclusive(0, tile_aggregate);
      return tile_aggregate;  // NOT a prefix: tile 0 has none
    }
    if (threadIdx.x < warp_threads) {
      if (threadIdx.x == 0) state.publish_aggregate(tile, tile_aggregate);
      const T prefix = lookback_exclusive(state, tile, op);
      if (threadIdx.x == 0) {
        state.publish_inclusive(tile, op(prefix, tile_aggregate));
        smem.exclusive = prefix;
      }
    }
    __syncthreads();
    return smem.exclusive;
  }
};

}  // namespace gutf8::prim::detail
