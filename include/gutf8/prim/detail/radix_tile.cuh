// Block-level LSD radix step of the digit sort (4-bit, 3-kernel; the onesweep sort has its own
// instruction-lean 8-bit tile in radix_sort_onesweep.cuh): load a tile, rank its keys by one digit stably, scatter them
// into shared memory in digit order, then write each digit's run to its global offset.
//
// Ranking (warp-level match): keys are loaded warp-striped (item i of lane l of warp w is tile
// element w*32*Items + i*32 + l, so every load is one coalesced 128/256-byte warp access and
// (w, i, l) order is the original order). For each item, __match_any_sync groups the lanes with
// the same digit; the lowest lane of each group bumps the warp's private shared-memory counter
// for that digit by the group size (one shared atomic per distinct digit per step) and
// broadcasts the old value; rank = old + lanes of the group below this lane. Afterwards,
// threads < bins turn the per-warp counters into per-warp exclusive offsets and the tile's
// digit counts, and a block scan over digits gives each digit's start inside the tile.
//
// The caller supplies how a digit's tile count becomes its global offset (Offsets):
//   __device__ void publish(unsigned digit, unsigned count)   // right after counting (thread < bins)
//   __device__ unsigned offset(unsigned digit, unsigned count) // exclusive global offset of the
//                                                              // digit's first key in this tile
// offset() is called after the keys were scattered to shared memory, so the look-back latency
// of the onesweep variant overlaps that work.
//
// Shared memory (dynamic): one region reused for the per-warp counters, the keys, then the
// values, plus 2 x bins words and the block-scan storage.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "block_scan.cuh"
#include "common.cuh"
#include "warp_scan.cuh"

namespace gutf8::prim::detail {

struct no_values {};

template <class K>
__device__ __forceinline__ unsigned radix_digit(K key, int shift, unsigned mask) {
  return static_cast<unsigned>(key >> shift) & mask;
}

template <class K, class V, bool HasValues, int Threads, int Items, int RadixBits>
struct radix_tile {
  static constexpr int bins = 1 << RadixBits;
  static constexpr int warps = Threads / warp_threads;
  static constexpr int tile = Threads * Items;
  static_assert(bins <= Threads, "one thread per digit");
  static_assert(tile <= 65536 && Items % 2 == 0, "tile positions are packed two per register");
  static constexpr std::size_t cmax(std::size_t a, std::size_t b) { return a < b ? b : a; }
  // region A: per-warp counters, then the keys; region B: the values (kept apart so the
  // global position of a value can be recomputed from its key instead of living in registers)
  static constexpr std::size_t region =
      align_up(cmax(sizeof(K) * tile, sizeof(unsigned) * warps * bins), 16);
  static constexpr std::size_t value_region = HasValues ? align_up(sizeof(V) * tile, 16) : 0;
  using scan_t = block_scan<unsigned, Threads>;
  static constexpr std::size_t smem_bytes = region + value_region + 2 * bins * sizeof(unsigned) +
                                            align_up(sizeof(typename scan_t::storage), 16);

  // A thread's place in its tile: item i of the lane is tile element warp_base + i * 32 + lane.
  struct place {
    unsigned tid, lane, warp_base, valid;
    __device__ __forceinline__ unsigned item(int i) const { return warp_base + i * warp_threads + lane; }
  };
  // tile positions (< 65536), two per register to leave room for the keys
  __device__ __forceinline__ static unsigned pos_of(const unsigned (&pos2)[Items / 2], int i) {
    return (pos2[i / 2] >> (16 * (i % 2))) & 0xffffu;
  }

  template <class Offsets>
  __device__ __forceinline__ static void run(const K* keys_in, K* keys_out, const V* vals_in,
                                             V* vals_out, std::size_t n, int shift, unsigned mask,
                                             Offsets& offsets, unsigned char* smem) {
    auto* hist = reinterpret_cast<unsigned*>(smem);
    auto* skeys = reinterpret_cast<K*>(smem);
    auto* local_start = reinterpret_cast<unsigned*>(smem + region + value_region);
    auto* global_base = local_start + bins;
    auto& scan_storage = *reinterpret_cast<typename scan_t::storage*>(global_base + bins);

    const unsigned tid = threadIdx.x;
    const unsigned lane = lane_id();
    const unsigned warp = warp_id();
    const std::size_t tile_base = static_cast<std::size_t>(blockIdx.x) * tile;
    const unsigned valid =
        n - tile_base < static_cast<std::size_t>(tile) ? static_cast<unsigned>(n - tile_base) : tile;
    const place at{tid, lane, warp * warp_threads * Items, valid};

    K key[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) key[i] = at.item(i) < valid ? keys_in[tile_base + at.item(i)] : K(0);
    for (unsigned i = tid; i < warps * bins; i += Threads) hist[i] = 0;
    __syncthreads();
    unsigned* my_hist = hist + warp * bins;
    unsigned pos2[Items / 2] = {};
    rank_keys(at, key, my_hist, shift, mask, pos2);
    __syncthreads();
    unsigned count = 0;
    const unsigned start = digit_starts(tid, hist, scan_storage, offsets, count);
    if (tid < bins) local_start[tid] = start;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      if (at.item(i) < valid) {
        const unsigned d = radix_digit(key[i], shift, mask);
        pos2[i / 2] += (local_start[d] + my_hist[d]) << (16 * (i % 2));
      }
    }
    __syncthreads();  // counters are dead from here on: the region now holds keys

#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (at.item(i) < valid) skeys[pos_of(pos2, i)] = key[i];
    if (tid < bins) global_base[tid] = offsets.offset(tid, count) - start;
    __syncthreads();
    write_keys(at, skeys, global_base, keys_out, shift, mask);
    if constexpr (HasValues)
      write_values(at, pos2, vals_in, tile_base, vals_out, reinterpret_cast<V*>(smem + region), skeys, global_base,
                   shift, mask);
  }

  // Warp-level match ranking: for each item the lanes of equal digits, whose lowest lane bumps the
  // warp's counter my_hist[digit] by the group's size; rank = old count + the group's lanes below.
  __device__ __forceinline__ static void rank_keys(const place& at, const K (&key)[Items], unsigned* my_hist,
                                                   int shift, unsigned mask, unsigned (&pos2)[Items / 2]) {
    const unsigned lt_mask = (1u << at.lane) - 1u;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const bool ok = at.item(i) < at.valid;
      const unsigned d = ok ? radix_digit(key[i], shift, mask) : static_cast<unsigned>(bins);
      const unsigned peers = __match_any_sync(full_warp_mask, d);
      const int leader = __ffs(static_cast<int>(peers)) - 1;
      unsigned base = 0;
      if (ok && static_cast<int>(at.lane) == leader)
        base = atomicAdd(&my_hist[d], static_cast<unsigned>(__popc(peers)));
      base = __shfl_sync(full_warp_mask, base, leader);
      pos2[i / 2] |= (base + static_cast<unsigned>(__popc(peers & lt_mask))) << (16 * (i % 2));
    }
  }

  // Threads < bins: the per-warp counters of digit tid become per-warp exclusive offsets, the
  // digit's tile count is published (and returned in count). Returns the digit's start in the tile.
  template <class Offsets>
  __device__ __forceinline__ static unsigned digit_starts(unsigned tid, unsigned* hist,
                                                          typename scan_t::storage& scan_storage, Offsets& offsets,
                                                          unsigned& count) {
    if (tid < bins) {
#pragma unroll 4
      for (int w = 0; w < warps; ++w) {
        const unsigned c = hist[w * bins + tid];
        hist[w * bins + tid] = count;
        count += c;
      }
      offsets.publish(tid, count);
    }
    unsigned total;
    return scan_t(scan_storage).exclusive(tid < bins ? count : 0u, 0u, plus_u32{}, total);
  }

  // Runs of equal digits are contiguous in shared AND global memory: tile item j goes to its
  // digit's global base + j.
  __device__ __forceinline__ static void write_keys(const place& at, const K* skeys, const unsigned* global_base,
                                                    K* keys_out, int shift, unsigned mask) {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const unsigned j = i * Threads + at.tid;
      if (j < at.valid) {
        const K k = skeys[j];
        keys_out[global_base[radix_digit(k, shift, mask)] + j] = k;
      }
    }
  }

  // The values follow their keys: to the keys' tile positions in svals, then out as the keys went.
  __device__ __forceinline__ static void write_values(const place& at, const unsigned (&pos2)[Items / 2],
                                                      const V* vals_in, std::size_t tile_base, V* vals_out, V* svals,
                                                      const K* skeys, const unsigned* global_base, int shift,
                                                      unsigned mask) {
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (at.item(i) < at.valid) svals[pos_of(pos2, i)] = vals_in[tile_base + at.item(i)];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const unsigned j = i * Threads + at.tid;
      if (j < at.valid) vals_out[global_base[radix_digit(skeys[j], shift, mask)] + j] = svals[j];
    }
  }

  struct plus_u32 {
    __device__ __forceinline__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
  };
};

// Opt a kernel into more than 48 KiB of dynamic shared memory when needed (host side).
template <class Kernel>
cudaError_t allow_dynamic_smem(Kernel k, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

// Ping-pong plan shared by the multi-pass sorts: pass p reads src(p) and writes dst(p); the
// last pass lands in the caller's output. When input and output are the same array and pass 0
// would write it, the input is first copied to the alternate buffer.
template <class T>
struct ping_pong {
  const T* in;
  T* out;
  T* alt;
  int passes;
  const T* first_src = nullptr;
  cudaError_t prepare(std::size_t n, cudaStream_t s) {
    first_src = in;
    if (in == out && passes % 2 == 1 && n != 0) {
      GUTF8_PRIM_TRY(cudaMemcpyAsync(alt, in, n * sizeof(T), cudaMemcpyDeviceToDevice, s));
      first_src = alt;
    }
    return cudaSuccess;
  }
  T* dst(int p) const { return (passes - 1 - p) % 2 == 0 ? out : alt; }
  const T* src(int p) const { return p == 0 ? first_src : dst(p - 1); }
};

// The keys and the values of a multi-pass sort. A keys-only sort (HasValues false) allocates no
// alternate value buffer, copies no values and passes null value pointers to its kernels.
template <class K, class V, bool HasValues>
struct sort_ping_pong {
  ping_pong<K> keys;
  ping_pong<V> vals;

  sort_ping_pong(const K* keys_in, K* keys_out, void* alt_keys, const V* vals_in, V* vals_out, void* alt_vals,
                 int passes)
      : keys{keys_in, keys_out, static_cast<K*>(alt_keys), passes},
        vals{vals_in, vals_out, static_cast<V*>(alt_vals), passes} {}

  // No pass (begin_bit == end_bit): the output is the input.
  cudaError_t copy_through(std::size_t n, cudaStream_t s) const {
    if (keys.out != keys.in)
      GUTF8_PRIM_TRY(cudaMemcpyAsync(keys.out, keys.in, n * sizeof(K), cudaMemcpyDeviceToDevice, s));
    if constexpr (HasValues)
      if (vals.out != vals.in)
        GUTF8_PRIM_TRY(cudaMemcpyAsync(vals.out, vals.in, n * sizeof(V), cudaMemcpyDeviceToDevice, s));
    return cudaSuccess;
  }
  cudaError_t prepare(std::size_t n, cudaStream_t s) {
    GUTF8_PRIM_TRY(keys.prepare(n, s));
    if constexpr (HasValues) GUTF8_PRIM_TRY(vals.prepare(n, s));
    return cudaSuccess;
  }
  const V* vals_src(int p) const { return HasValues ? vals.src(p) : nullptr; }
  V* vals_dst(int p) const { return HasValues ? vals.dst(p) : nullptr; }
};

// What every multi-pass sort does around its passes: d_temp holds the sort's Scratch regions
// (sizes scratch_bytes), then the alternate key and value buffers (none when no pass runs); a
// null d_temp only gets the total. No keys: nothing to do; no pass: the output is the input.
// Otherwise run_passes(sort_ping_pong&, void* const* scratch) prepares the buffers and runs them.
template <class K, class V, bool HasValues, int Scratch, class RunPasses>
cudaError_t run_multi_pass_sort(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                const V* vals_in, V* vals_out, std::size_t n, int passes,
                                const std::size_t (&scratch_bytes)[Scratch], cudaStream_t stream,
                                RunPasses&& run_passes) {
  std::size_t sizes[Scratch + 2];
  for (int i = 0; i < Scratch; ++i) sizes[i] = scratch_bytes[i];
  sizes[Scratch] = passes > 0 ? n * sizeof(K) : 0;
  sizes[Scratch + 1] = (passes > 0 && HasValues) ? n * sizeof(V) : 0;
  void* ptrs[Scratch + 2];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr || n == 0) return cudaSuccess;
  if (n > 0xffffffffu) return cudaErrorInvalidValue;  // positions are 32-bit
  sort_ping_pong<K, V, HasValues> b(keys_in, keys_out, ptrs[Scratch], vals_in, vals_out, ptrs[Scratch + 1], passes);
  if (passes == 0) return b.copy_through(n, stream);
  return run_passes(b, static_cast<void* const*>(ptrs));
}

}  // namespace gutf8::prim::detail
