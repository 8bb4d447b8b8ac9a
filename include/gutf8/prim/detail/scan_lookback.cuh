// Single-pass scan with decoupled look-back (production algorithm).
//
// One read and one write per element. A tile is `threads * vectors * vec` items; warp w of the
// block owns the contiguous range [tile + w*32*vectors*vec, ...), split into `vectors` rows of
// 32 lanes x vec items, so lane l of row k holds items (k*32 + l)*vec ... + vec-1 and every load
// and store instruction is a fully coalesced 16-byte-per-lane access (512 B per warp).
// Per thread: serial scan of each 16-byte run; per row: one warp shuffle scan of the run totals
// (rows are independent, so the `vectors` scans interleave); per block: warp totals through
// shared memory (one __syncthreads); per tile: decoupled look-back by warp 0 (tile_lookback.cuh).
// Operators are applied strictly in element order (non-commutative operators are fine); no
// identity element is needed (absent prefixes are tracked with flags).
// The last, partial tile pads with a copy of a valid element; padded results are never stored.
// Shapes and look-back pacings: scan_tuning.cuh (4-byte values), tuning.cuh (others).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "block_scan.cuh"
#include "common.cuh"
#include "scan_source.cuh"
#include "scan_tuning.cuh"
#include "tile_lookback.cuh"
#include "tuning.cuh"
#include "warp_scan.cuh"

namespace gutf8::prim::detail {

template <class P>
constexpr bool scan_streams() {
  if constexpr (requires { P::streaming; }) return P::streaming;
  else return false;
}

// V consecutive items with evict-first accesses (the widest words vec_bytes allows, as load_vec).
template <int V, class U>
__device__ __forceinline__ void load_vec_cs(const U* p, U (&dst)[V]) {
  constexpr std::size_t B = vec_bytes<U, V>;
  if constexpr (B >= 4 && B > alignof(U)) {
    using W = typename word_of<B>::type;
    W w[sizeof(U) * V / B];
#pragma unroll
    for (std::size_t i = 0; i < sizeof(U) * V / B; ++i) w[i] = __ldcs(reinterpret_cast<const W*>(p) + i);
    std::memcpy(dst, w, sizeof(U) * V);
  } else {
    load_vec<V>(p, dst);
  }
}
template <int V, class U>
__device__ __forceinline__ void store_vec_cs(U* p, const U (&src)[V]) {
  constexpr std::size_t B = vec_bytes<U, V>;
  if constexpr (B >= 4 && B > alignof(U)) {
    using W = typename word_of<B>::type;
    W w[sizeof(U) * V / B];
    std::memcpy(w, src, sizeof(U) * V);
#pragma unroll
    for (std::size_t i = 0; i < sizeof(U) * V / B; ++i) __stcs(reinterpret_cast<W*>(p) + i, w[i]);
  } else {
    store_vec<V>(p, src);
  }
}

// tile_state read through the look-back's spin: a word not yet published costs a sleep first.
template <class T>
struct paced_tile_state {
  using value_type = T;
  tile_state<T> inner;
  unsigned spin_ns;
  __device__ __forceinline__ unsigned read(unsigned tile, T& v) const {
    const unsigned s = inner.read(tile, v);
    if (s == tile_status_invalid && spin_ns != 0) __nanosleep(spin_ns);
    return s;
  }
};

// tile_prefix's exclusive_prefix with a pacing (scan_tuning.cuh); tile 0's return is no prefix.
template <class T, class Op>
__device__ __forceinline__ T paced_exclusive_prefix(const tile_state<T>& state, unsigned tile, T aggregate, Op op,
                                                    lookback_pacing pacing, T& shared_prefix) {
  if (tile == 0) {
    if (threadIdx.x == 0) state.publish_inclusive(0, aggregate);
    return aggregate;
  }
  if (threadIdx.x < warp_threads) {
    if (threadIdx.x == 0) state.publish_aggregate(tile, aggregate);
    const bool pace = gridDim.x >= pacing.min_tiles;
    if (pace && pacing.first_ns != 0) __nanosleep(pacing.first_ns);
    const T prefix = lookback_exclusive(paced_tile_state<T>{state, pace ? pacing.spin_ns : 0u}, tile, op);
    if (threadIdx.x == 0) {
      state.publish_inclusive(tile, op(prefix, aggregate));
      shared_prefix = prefix;
    }
  }
  __syncthreads();
  return shared_prefix;
}

// One tile of the look-back scan, a step per phase; the kernel below runs them in order. Lane l of
// row k holds items (k*32 + l)*V ... of its warp's range.
template <class P, class T, class Src, class Op>
struct lookback_scan_tile {
  static constexpr int V = P::vec;
  static constexpr int K = P::vectors;
  static constexpr int W = P::threads / warp_threads;
  using items = T[K][V];

  // Full tiles take vector loads; the last one pads with a copy of a valid item.
  __device__ __forceinline__ static void load(Src& src, std::size_t n, std::size_t tile_base, std::size_t warp_base,
                                              unsigned lane, bool full, items& x) {
    if (full) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const std::size_t i = warp_base + (k * warp_threads + lane) * V;
        if constexpr (scan_streams<P>() && std::is_same_v<Src, ptr_source<T>>) load_vec_cs<V>(src.p + i, x[k]);
        else src.template load<V>(i, x[k]);
      }
    } else {
      const T fill = src.load_one(tile_base);
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const std::size_t i = warp_base + (k * warp_threads + lane) * V + j;
          x[k][j] = i < n ? src.load_one(i) : fill;
        }
    }
  }

  // Serial scan of each run, then one warp scan per row over the run totals (the rows' scans
  // interleave): each row's total over the warp and the run totals of the lanes below this one.
  __device__ __forceinline__ static void scan_rows(items& x, unsigned lane, Op op, T (&row_total)[K],
                                                   T (&lane_excl)[K]) {
    T run_incl[K];  // lane-inclusive scan of run totals within row k
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int j = 1; j < V; ++j) x[k][j] = op(x[k][j - 1], x[k][j]);
      run_incl[k] = x[k][V - 1];
    }
#pragma unroll
    for (int d = 1; d < warp_threads; d <<= 1) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const T t = warp_shfl_up(run_incl[k], static_cast<unsigned>(d));
        if (lane >= static_cast<unsigned>(d)) run_incl[k] = op(t, run_incl[k]);
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      row_total[k] = warp_shfl_idx(run_incl[k], 31);
      lane_excl[k] = warp_shfl_up(run_incl[k], 1);
    }
  }

  // The warps' totals meet in shared memory (one barrier): returns the tile's aggregate and sets
  // warp_prefix to the total of the warps before this one (warp 0: unused).
  __device__ __forceinline__ static T block_aggregate(const T (&row_total)[K], unsigned lane, unsigned warp,
                                                      T (&warp_totals)[W], Op op, T& warp_prefix) {
    T warp_total = row_total[0];
#pragma unroll
    for (int k = 1; k < K; ++k) warp_total = op(warp_total, row_total[k]);
    if (lane == 0) warp_totals[warp] = warp_total;
    __syncthreads();
    T aggregate = warp_totals[0];
    warp_prefix = aggregate;
#pragma unroll
    for (int w = 1; w < W; ++w) {
      if (static_cast<unsigned>(w) == warp) warp_prefix = aggregate;
      aggregate = op(aggregate, warp_totals[w]);
    }
    return aggregate;
  }

  // prefix (where has_prefix) covers everything before this warp's items; walks the rows in order.
  __device__ __forceinline__ static void add_prefix(items& x, const T (&row_total)[K], const T (&lane_excl)[K],
                                                    unsigned lane, T prefix, bool has_prefix, bool exclusive, Op op) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      T p = prefix;
      bool has = has_prefix;
      if (lane != 0) {
        p = has ? op(p, lane_excl[k]) : lane_excl[k];
        has = true;
      }
      if (exclusive) {  // has == true here: init is always in front
#pragma unroll
        for (int j = V - 1; j >= 1; --j) x[k][j] = op(p, x[k][j - 1]);
        x[k][0] = p;
      } else if (has) {
#pragma unroll
        for (int j = 0; j < V; ++j) x[k][j] = op(p, x[k][j]);
      }
      if (k + 1 < K) {
        prefix = has_prefix ? op(prefix, row_total[k]) : row_total[k];
        has_prefix = true;
      }
    }
  }

  // Padded results of the last tile are never stored.
  __device__ __forceinline__ static void store(T* out, std::size_t n, std::size_t warp_base, unsigned lane, bool full,
                                               const items& x) {
    if (full) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        T* p = out + warp_base + (k * warp_threads + lane) * V;
        if constexpr (scan_streams<P>()) store_vec_cs<V>(p, x[k]);
        else store_vec<V>(p, x[k]);
      }
    } else {
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const std::size_t i = warp_base + (k * warp_threads + lane) * V + j;
          if (i < n) out[i] = x[k][j];
        }
    }
  }
};

template <class P, class T, class Src, class Op>
__global__ void __launch_bounds__(P::threads)
    lookback_scan_kernel(Src src, T* out, std::size_t n, tile_state<T> state, Op op,
                         T init, bool exclusive, bool vec_ok, lookback_pacing pacing) {
  using agent = lookback_scan_tile<P, T, Src, Op>;
  __shared__ T warp_totals[agent::W];
  __shared__ T tile_exclusive;

  const unsigned tile = blockIdx.x;
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const std::size_t tile_base = static_cast<std::size_t>(tile) * P::tile;
  const std::size_t warp_base = tile_base + static_cast<std::size_t>(warp) * (warp_threads * agent::K * agent::V);
  const bool full = vec_ok && tile_base + P::tile <= n;
  typename agent::items x;
  agent::load(src, n, tile_base, warp_base, lane, full, x);
  T row_total[agent::K];  // row k's total over the warp
  T lane_excl[agent::K];  // row k's run totals of the lanes below this one
  agent::scan_rows(x, lane, op, row_total, lane_excl);
  T warp_prefix;
  const T aggregate = agent::block_aggregate(row_total, lane, warp, warp_totals, op, warp_prefix);

  // Tile prefix from the look-back (tile 0 has none), then the init value in front.
  T prefix = paced_exclusive_prefix(state, tile, aggregate, op, pacing, tile_exclusive);
  bool has_prefix = tile != 0;
  if (exclusive) {
    prefix = has_prefix ? op(init, prefix) : init;
    has_prefix = true;
  }
  if (warp != 0) {
    prefix = has_prefix ? op(prefix, warp_prefix) : warp_prefix;
    has_prefix = true;
  }
  agent::add_prefix(x, row_total, lane_excl, lane, prefix, has_prefix, exclusive, op);
  agent::store(out, n, warp_base, lane, full, x);
}

// Device-wide single-pass scan in shape P with the given pacing. `src` yields the inputs (see
// scan_source.cuh); out may equal the source pointer (in-place). Temp storage: the tile status words.
template <class P, class T, class Src, class Op>
cudaError_t lookback_scan_with(void* d_temp, std::size_t& temp_bytes, Src src, T* out, std::size_t n, Op op,
                               bool exclusive, T init, cudaStream_t stream, lookback_pacing pacing = {}) {
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t sizes[1] = {tile_state<T>::storage_bytes(tiles)};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr || n == 0) return cudaSuccess;
  if (tiles > 0x7fffffffu) return cudaErrorInvalidValue;
  const auto state = tile_state<T>::attach(ptrs[0], tiles);
  if (tiles > 1) GUTF8_PRIM_TRY(state.reset(stream));  // one tile never looks back
  const bool vec_ok = src.template vector_ok<P::vec>() && is_aligned(out, vec_bytes<T, P::vec>);
  lookback_scan_kernel<P><<<static_cast<unsigned>(tiles), P::threads, 0, stream>>>(
      src, out, n, state, op, init, exclusive, vec_ok, pacing);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

// One tuning of scan_tuning.cuh (a shape and its pacing).
template <class Tuning, class T, class Src, class Op>
cudaError_t lookback_scan_tuned(void* d_temp, std::size_t& temp_bytes, Src src, T* out, std::size_t n, Op op,
                                bool exclusive, T init, cudaStream_t stream) {
  return lookback_scan_with<typename Tuning::shape>(d_temp, temp_bytes, src, out, n, op, exclusive, init, stream,
                                                    Tuning::pacing);
}

// The default: for a plain array of 4-byte values the tuning of n's band (scan_default_bands_u32),
// else lookback_scan_policy<T>.
template <class T, class Src, class Op>
cudaError_t lookback_scan(void* d_temp, std::size_t& temp_bytes, Src src, T* out, std::size_t n, Op op,
                          bool exclusive, T init, cudaStream_t stream) {
  if constexpr (sizeof(T) == 4 && std::is_same_v<Src, ptr_source<T>>) {
    cudaError_t e = cudaErrorInvalidValue;
    with_band<scan_default_bands_u32>(n, [&](auto band) {
      e = lookback_scan_tuned<typename decltype(band)::type::tuning>(d_temp, temp_bytes, src, out, n, op, exclusive,
                                                                      init, stream);
    });
    return e;
  } else {
    return lookback_scan_with<lookback_scan_policy<T>>(d_temp, temp_bytes, src, out, n, op, exclusive, init, stream);
  }
}

// Candidate `index` of scan_candidates_u32 (bench_prim --sweep, the tests); cudaErrorInvalidValue
// past the last.
template <class T, class Op>
cudaError_t lookback_scan_candidate(std::size_t index, void* d_temp, std::size_t& temp_bytes, const T* in, T* out,
                                    std::size_t n, Op op, bool exclusive, T init, cudaStream_t stream) {
  static_assert(sizeof(T) == 4, "the candidates are shapes for 4-byte values");
  cudaError_t e = cudaErrorInvalidValue;
  with_type<scan_candidates_u32>(index, [&](auto tag) {
    e = lookback_scan_tuned<typename decltype(tag)::type>(d_temp, temp_bytes, ptr_source<T>{in}, out, n, op,
                                                          exclusive, init, stream);
  });
  return e;
}

}  // namespace gutf8::prim::detail
