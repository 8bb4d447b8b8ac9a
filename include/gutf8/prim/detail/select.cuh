// Stream compaction (stable select by flag array or by predicate).
//
// (a) select_by_scan: the textbook three steps on any scan algorithm:
//       map:     offs[i] = selected(i) ? 1 : 0                       (O = u32, or u64 past 2^32)
//       scan:    exclusive sum of offs, in place, with the chosen scan algorithm
//       scatter: out[offs[i]] = in[i] for selected i; the last element writes the count.
// (b) select_fused: single pass with decoupled look-back over per-tile selection counts.
//     Each thread holds 4 rows x 16 bytes of items (warp-striped, as the look-back scan) and
//     their selection bits; the per-row counts of a lane are packed into one 64-bit word (16 bits
//     per row), so ONE 64-bit warp shuffle scan ranks all rows at once. Warp counts meet in
//     shared memory, the tile's global offset comes from the look-back, the selected items are
//     compacted into shared memory in order and written out with aligned 16-byte stores; the last tile
//     writes the total count to device memory. Reads n items (+ n flags), writes the selected.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "block_scan.cuh"
#include "common.cuh"
#include "tuning.cuh"
#include "store_range.cuh"
#include "tile_lookback.cuh"
#include "warp_scan.cuh"

namespace gutf8::prim::detail {

// ---- selectors ----
// A selector decides per item (select_vec: V items at once into bools; select_one: one item), and
// may also offer select_bits<V>(i, items) -> bit j = item j selected, for a whole vector at once
// (e.g. SWAR over bytes), which the fused select then uses.
template <class FlagT>
struct flag_selector {
  static constexpr bool reads_flags = true;
  const FlagT* flags;
  template <int V, class T>
  __device__ __forceinline__ void select_vec(std::size_t i, const T (&)[V], bool (&s)[V]) const {
    FlagT f[V];
    load_vec<V>(flags + i, f);
#pragma unroll
    for (int j = 0; j < V; ++j) s[j] = f[j] != FlagT(0);
  }
  template <class T>
  __device__ __forceinline__ bool select_one(std::size_t i, const T&) const {
    return flags[i] != FlagT(0);
  }
  template <int V>
  bool vector_ok() const {
    return is_aligned(flags, vec_bytes<FlagT, V>);
  }
};

template <class Pred>
struct pred_selector {
  static constexpr bool reads_flags = false;
  Pred pred;
  template <int V, class T>
  __device__ __forceinline__ void select_vec(std::size_t, const T (&x)[V], bool (&s)[V]) const {
#pragma unroll
    for (int j = 0; j < V; ++j) s[j] = static_cast<bool>(pred(x[j]));
  }
  template <class T>
  __device__ __forceinline__ bool select_one(std::size_t, const T& x) const {
    return static_cast<bool>(pred(x));
  }
  template <int V>
  bool vector_ok() const {
    return true;
  }
};

// ---- (a) flags -> scan -> scatter ----
inline constexpr int select_ew_items = 4;

template <class O, class T, class Sel>
__global__ void __launch_bounds__(elementwise_policy::threads)
    select_map_kernel(const T* in, Sel sel, O* offs, std::size_t n) {
  constexpr int B = elementwise_policy::threads;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * B * select_ew_items + threadIdx.x;
#pragma unroll
  for (int j = 0; j < select_ew_items; ++j) {
    const std::size_t i = base + static_cast<std::size_t>(j) * B;
    if (i < n) offs[i] = sel.select_one(i, in[i]) ? O(1) : O(0);
  }
}

template <class O, class T, class Sel, class NumT>
__global__ void __launch_bounds__(elementwise_policy::threads)
    select_scatter_kernel(const T* in, Sel sel, const O* offs, T* out, NumT* num_selected,
                          std::size_t n) {
  constexpr int B = elementwise_policy::threads;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * B * select_ew_items + threadIdx.x;
#pragma unroll
  for (int j = 0; j < select_ew_items; ++j) {
    const std::size_t i = base + static_cast<std::size_t>(j) * B;
    if (i < n) {
      const T x = in[i];
      const bool s = sel.select_one(i, x);
      const O o = offs[i];
      if (s) out[o] = x;
      if (i == n - 1) *num_selected = static_cast<NumT>(o + (s ? 1 : 0));
    }
  }
}

// ScanFn: cudaError_t(void* temp, size_t& bytes, const O* in, O* out, size_t n, cudaStream_t)
// computing an exclusive sum.
template <class O, class T, class Sel, class NumT, class ScanFn>
cudaError_t select_by_scan(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                           NumT* num_selected, std::size_t n, cudaStream_t stream, ScanFn scan) {
  std::size_t scan_bytes = 0;
  GUTF8_PRIM_TRY(scan(nullptr, scan_bytes, static_cast<const O*>(nullptr), static_cast<O*>(nullptr), n, stream));
  const std::size_t sizes[2] = {n * sizeof(O), scan_bytes};
  void* ptrs[2];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr) return cudaSuccess;
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(NumT), stream);
  O* offs = static_cast<O*>(ptrs[0]);
  constexpr unsigned B = elementwise_policy::threads;
  const auto grid = static_cast<unsigned>(ceil_div(n, std::size_t{B} * select_ew_items));
  select_map_kernel<<<grid, B, 0, stream>>>(in, sel, offs, n);
  GUTF8_PRIM_LAUNCHED();
  GUTF8_PRIM_TRY(scan(ptrs[1], scan_bytes, static_cast<const O*>(offs), offs, n, stream));
  select_scatter_kernel<<<grid, B, 0, stream>>>(in, sel, static_cast<const O*>(offs), out, num_selected, n);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

// ---- (b) fused single pass ----
// K vectors of V items of a thread in registers. Integer items narrower than 4 bytes (not bool,
// whose conversion from a shifted word would not take one byte) are held as the
// vectors' 32-bit words, which words(k) gives a selector's select_bits.
template <class T, int K, int V,
          bool Packed = (sizeof(T) < 4 && std::is_integral_v<T> && !std::is_same_v<T, bool> && (sizeof(T) * V) % 4 == 0)>
struct item_registers {
  T x[K][V];
  __device__ __forceinline__ void load(int k, const T* p) { load_vec<V>(p, x[k]); }
  __device__ __forceinline__ T get(int k, int j) const { return x[k][j]; }
  __device__ __forceinline__ void set(int k, int j, T v) { x[k][j] = v; }
};
template <class T, int K, int V>
struct item_registers<T, K, V, true> {
  static constexpr int per_word = static_cast<int>(4 / sizeof(T));
  static constexpr int W = V / per_word;
  unsigned w[K][W] = {};
  __device__ __forceinline__ void load(int k, const T* p) { load_vec<W>(reinterpret_cast<const unsigned*>(p), w[k]); }
  __device__ __forceinline__ T get(int k, int j) const {
    return static_cast<T>(w[k][j / per_word] >> (8 * sizeof(T) * (j % per_word)));
  }
  __device__ __forceinline__ void set(int k, int j, T v) {
    constexpr unsigned mask = (1u << (8 * sizeof(T))) - 1u;
    const unsigned shift = 8 * sizeof(T) * (j % per_word);
    w[k][j / per_word] = (w[k][j / per_word] & ~(mask << shift)) | ((static_cast<unsigned>(v) & mask) << shift);
  }
  __device__ __forceinline__ const unsigned (&words(int k) const)[W] { return w[k]; }
};

// Per-row selection counts of a lane, packed into 64-bit words so that one warp shuffle scan
// per word ranks many rows at once: a warp's count for one row is at most 32 * V, so each row
// takes the bits of 32 * V (8 bits for 4-byte items: 8 rows per word).
template <int V, int K>
struct select_row_packing {
  static constexpr int bits = V * 32 < 128 ? 7 : V * 32 < 256 ? 8 : V * 32 < 512 ? 9 : V * 32 < 1024 ? 10 : 11;
  static constexpr int rows_per_word = 64 / bits;
  static constexpr int words = (K + rows_per_word - 1) / rows_per_word;
  static constexpr unsigned long long field = (1ull << bits) - 1ull;
};

// One tile of the fused select, a step per phase; the kernel below runs them in order. Lane l of
// row k holds items (k*32 + l)*V ... of its warp's range.
template <class P, class O, class T, class Sel>
struct select_fused_tile {
  static constexpr int V = P::vec;
  static constexpr int K = P::vectors;
  static constexpr int W = P::threads / warp_threads;
  static constexpr int KV = K * V;
  using pack = select_row_packing<V, K>;
  // Items smaller than 4 bytes are kept as their vectors' 32-bit words: an array of bytes took a
  // register a byte.
  using regs = item_registers<T, K, V>;
  using bits = unsigned[(KV + 31) / 32];  // item k*V+j selected: bit k*V+j

  // A full tile: vector loads, then the selection of each vector at once.
  __device__ __forceinline__ static void load_full(const T* in, Sel& sel, std::size_t warp_base, unsigned lane,
                                                   regs& x, bits& sbits) {
#pragma unroll
    for (int k = 0; k < K; ++k) x.load(k, in + warp_base + (k * warp_threads + lane) * V);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const std::size_t i = warp_base + (k * warp_threads + lane) * V;
      if constexpr (requires { sel.template select_bits<V>(i, x.words(k)); }) {
        static_assert(32 % V == 0, "a vector's selection bits fit one word");
        sbits[(k * V) / 32] |= sel.template select_bits<V>(i, x.words(k)) << ((k * V) % 32);
      } else {
        T items[V];
#pragma unroll
        for (int j = 0; j < V; ++j) items[j] = x.get(k, j);
        bool s[V];
        sel.template select_vec<V>(i, items, s);
#pragma unroll
        for (int j = 0; j < V; ++j) sbits[(k * V + j) / 32] |= (s[j] ? 1u : 0u) << ((k * V + j) % 32);
      }
    }
  }

  // The last tile (or unaligned input): item by item, none past n.
  __device__ __forceinline__ static void load_partial(const T* in, Sel& sel, std::size_t n, std::size_t warp_base,
                                                      unsigned lane, regs& x, bits& sbits) {
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const std::size_t i = warp_base + (k * warp_threads + lane) * V + j;
        if (i < n) {
          const T item = in[i];
          x.set(k, j, item);
          sbits[(k * V + j) / 32] |= (sel.select_one(i, item) ? 1u : 0u) << ((k * V + j) % 32);
        }
      }
  }

  // The lane's row counts packed into 64-bit words, one warp scan per word: each row's first
  // place among the warp's selected items; returns the warp's count.
  __device__ __forceinline__ static unsigned rank_rows(const bits& sbits, unsigned (&row_base)[K]) {
    unsigned long long packed[pack::words] = {};
#pragma unroll
    for (int k = 0; k < K; ++k) {
      unsigned c;
      if constexpr (V <= 32 && (32 % V) == 0)
        c = static_cast<unsigned>(__popc((sbits[(k * V) / 32] >> ((k * V) % 32)) & (V == 32 ? ~0u : ((1u << V) - 1u))));
      else {
        c = 0;
#pragma unroll
        for (int j = 0; j < V; ++j) c += (sbits[(k * V + j) / 32] >> ((k * V + j) % 32)) & 1u;
      }
      packed[k / pack::rows_per_word] |= static_cast<unsigned long long>(c)
                                         << (pack::bits * (k % pack::rows_per_word));
    }
    unsigned long long excl[pack::words], tot[pack::words];
#pragma unroll
    for (int w = 0; w < pack::words; ++w) {
      const unsigned long long incl = warp_inclusive_scan(packed[w], plus_op{});
      excl[w] = incl - packed[w];
      tot[w] = warp_shfl_idx(incl, 31);
    }
    unsigned warp_count = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int w = k / pack::rows_per_word, sh = pack::bits * (k % pack::rows_per_word);
      row_base[k] = warp_count + static_cast<unsigned>((excl[w] >> sh) & pack::field);
      warp_count += static_cast<unsigned>((tot[w] >> sh) & pack::field);
    }
    return warp_count;
  }

  // The warps' counts meet in shared memory (one barrier): returns the tile's count and sets
  // warp_prefix to the count of the warps before this one.
  __device__ __forceinline__ static unsigned block_count(unsigned warp_count, unsigned lane, unsigned warp,
                                                         unsigned (&warp_counts)[W], unsigned& warp_prefix) {
    if (lane == 0) warp_counts[warp] = warp_count;
    __syncthreads();
    unsigned tile_count = 0;
    warp_prefix = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      if (static_cast<unsigned>(w) == warp) warp_prefix = tile_count;
      tile_count += warp_counts[w];
    }
    return tile_count;
  }

  // The selected items at their tile-local places in shared memory.
  __device__ __forceinline__ static void stage(const regs& x, const bits& sbits, const unsigned (&row_base)[K],
                                               unsigned warp_prefix, T* staged) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      unsigned r = warp_prefix + row_base[k];
#pragma unroll
      for (int j = 0; j < V; ++j)
        if ((sbits[(k * V + j) / 32] >> ((k * V + j) % 32)) & 1u) staged[r++] = x.get(k, j);
    }
  }
};

template <class P, class O, class T, class Sel, class NumT>
__global__ void __launch_bounds__(P::threads, P::min_blocks)
    select_fused_kernel(const T* in, Sel sel, T* out, NumT* num_selected, std::size_t n,
                        tile_state<O> state, bool vec_ok) {
  using agent = select_fused_tile<P, O, T, Sel>;
  extern __shared__ __align__(16) unsigned char select_smem[];
  T* staged = reinterpret_cast<T*>(select_smem);  // P::tile items + 16 bytes (dynamic: may exceed 48 KiB)
  __shared__ unsigned warp_counts[agent::W];
  __shared__ typename tile_prefix<O, P::threads>::storage lb;

  const unsigned tile = blockIdx.x;
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const std::size_t tile_base = static_cast<std::size_t>(tile) * P::tile;
  const std::size_t warp_base = tile_base + static_cast<std::size_t>(warp) * (warp_threads * agent::K * agent::V);
  const bool full = vec_ok && tile_base + P::tile <= n;
  typename agent::regs x;
  typename agent::bits sbits = {};
  if (full) agent::load_full(in, sel, warp_base, lane, x, sbits);
  else agent::load_partial(in, sel, n, warp_base, lane, x, sbits);
  unsigned row_base[agent::K];  // row k's first place among the warp's selected items
  unsigned warp_prefix;
  const unsigned tile_count =
      agent::block_count(agent::rank_rows(sbits, row_base), lane, warp, warp_counts, warp_prefix);
  // staging needs no global offset, so it overlaps the look-back of warp 0 (which ends in a barrier)
  if (warp != 0 || tile == 0) agent::stage(x, sbits, row_base, warp_prefix, staged);
  O tile_offset = tile_prefix<O, P::threads>::exclusive_prefix(state, tile, static_cast<O>(tile_count), plus_op{}, lb);
  if (tile == 0) tile_offset = 0;
  if (warp == 0 && tile != 0) agent::stage(x, sbits, row_base, warp_prefix, staged);
  __syncthreads();
  store_staged<P::threads>(out + tile_offset, staged, tile_count, threadIdx.x);
  if (tile == gridDim.x - 1 && threadIdx.x == 0)
    *num_selected = static_cast<NumT>(tile_offset + static_cast<O>(tile_count));
}

template <class O, class P, class T, class Sel, class NumT>
cudaError_t select_fused_with(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                              NumT* num_selected, std::size_t n, cudaStream_t stream) {
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t sizes[1] = {tile_state<O>::storage_bytes(tiles)};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr) return cudaSuccess;
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(NumT), stream);
  if (tiles > 0x7fffffffu) return cudaErrorInvalidValue;
  const auto state = tile_state<O>::attach(ptrs[0], tiles);
  if (tiles > 1) GUTF8_PRIM_TRY(state.reset(stream));
  const bool vec_ok = is_aligned(in, vec_bytes<T, P::vec>) && sel.template vector_ok<P::vec>();
  constexpr std::size_t smem = sizeof(T) * P::tile + 16;  // store_staged reads 4 bytes past the items
  auto kernel = select_fused_kernel<P, O, T, Sel, NumT>;
  if constexpr (smem + sizeof(unsigned) * (P::threads / warp_threads) + 256 > 48 * 1024)  // + static smem
    GUTF8_PRIM_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<static_cast<unsigned>(tiles), P::threads, smem, stream>>>(in, sel, out, num_selected, n, state, vec_ok);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

template <class O, class T, class Sel, class NumT>
cudaError_t select_fused_impl(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                              NumT* num_selected, std::size_t n, cudaStream_t stream) {
  using P = select_policy<T, Sel::reads_flags>;
  return select_fused_with<O, P>(d_temp, temp_bytes, in, sel, out, num_selected, n, stream);
}

// 32-bit tile counts (one packed 64-bit status word per tile) while the total fits, else 64-bit.
template <class T, class Sel, class NumT>
cudaError_t select_fused(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                         NumT* num_selected, std::size_t n, cudaStream_t stream) {
  if (n <= 0xffffffffu)
    return select_fused_impl<unsigned>(d_temp, temp_bytes, in, sel, out, num_selected, n, stream);
  return select_fused_impl<unsigned long long>(d_temp, temp_bytes, in, sel, out, num_selected, n, stream);
}

}  // namespace gutf8::prim::detail
