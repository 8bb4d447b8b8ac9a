// Byte compaction: a named variant of select (select.cuh) for one case, the bytes of in[0 .. n)
// that are not `pad` and lie before an optional end bound read from device memory, written in
// order with their count. It is the compact UTF-8 encoder's second pass (its first pads every code
// point to 4 bytes with 0xFF), kept apart from the general fused select, which trails the encoder's
// former dedicated kernel there (bench/results/codec_tuning.md, "select_bytes").
// It keeps that kernel's schedule:
//   * one 32-bit block scan (one barrier) ranks a thread's 32 bytes, whose selection is 32 bits by
//     SWAR over words;
//   * thread 0 publishes the tile's count right after that scan, every warp compacts its bytes
//     into its own staging area, then warp 0 looks back (lookback_exclusive over one 64-bit word a
//     tile, flagged_count_state, stored publication); one barrier after it;
//   * every warp writes its own range with aligned 16-byte stores (store_range.cuh).
// Two barriers a tile, where the general select has three and warp 0 stages after its look-back.
// Two things differ from the old kernel: a thread's bytes are 2 warp-striped rows of 16 (a warp's
// row is 512 consecutive bytes; each row's count is a 16-bit field of the scanned word), so that
// staging a dense warp conflicts 4-way in shared memory, not 8-way as 32 consecutive bytes a lane
// did, and ASCII- or CJK-like rows not at all; and the staging address stays in a register.
//
//   select_bytes_impl(d_temp, temp_bytes, in, out, num_selected, n, pad, end, stream)
//       CUB convention; the tile states in the temporary storage are cleared with a memset;
//   select_bytes_on_states(in, out, num_selected, n, pad, end, states, stream)
//       over states the caller cleared (one word per select_bytes_policy::tile bytes).
// end == nullptr: no bound. *end is read by the kernel (a kernel before it may set it).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "block_scan.cuh"
#include "common.cuh"
#include "tuning.cuh"
#include "store_range.cuh"
#include "tile_lookback.cuh"
#include "warp_scan.cuh"

namespace gutf8::prim::detail {

// Bit b set where byte b of x is not zero (SWAR: bit 7 of each byte, gathered by one multiply).
__device__ __forceinline__ unsigned nonzero_byte_bits(unsigned x) {
  const unsigned hi = (((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x) & 0x80808080u;
  return (hi * 0x00204081u) >> 28;
}

// The 32-bit shared-memory address of p, in a register the compiler cannot rematerialize: from the
// array's symbol it recomputed it before every predicated byte store (S2R, MOV, LEA and an add).
__device__ __forceinline__ unsigned shared_address(const void* p) {
  auto a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm("" : "+r"(a));
  return a;
}
// The low byte of v at shared address a.
__device__ __forceinline__ void store_shared_byte(unsigned a, unsigned v) {
  asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}

// Field k (16 bits) of a word of per-row counts; the sum of its R fields.
__device__ __forceinline__ unsigned row_field(unsigned packed, int k) { return (packed >> (16 * k)) & 0xFFFFu; }
template <int R>
__device__ __forceinline__ unsigned row_fields_total(unsigned packed) {
  if constexpr (R == 1) return packed;
  else return (packed & 0xFFFFu) + (packed >> 16);
}

// One tile of the byte compaction, a step per phase; the kernel below runs them in order. A lane's
// bytes are R rows of 16: row k from lane_base + k * row_bytes.
template <class P, bool Bounded>
struct select_bytes_tile {
  static constexpr int R = P::vectors;
  static constexpr unsigned row_bytes = warp_threads * 16;
  static constexpr unsigned warp_bytes = R * row_bytes;
  using words = unsigned[R][4];

  // An aligned full tile: one 16-byte load a row.
  __device__ __forceinline__ static void load_full(const std::uint8_t* in, std::size_t lane_base, words& w) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(in + lane_base + k * row_bytes));
      w[k][0] = v.x, w[k][1] = v.y, w[k][2] = v.z, w[k][3] = v.w;
    }
  }

  // The last tile, or an input that is not 16-byte aligned: bytes past n read as pad.
  __device__ __forceinline__ static void load_partial(const std::uint8_t* in, std::size_t n, std::size_t lane_base,
                                                      unsigned pad_word, words& w) {
#pragma unroll
    for (int k = 0; k < R; ++k)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        unsigned x = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const std::size_t i = lane_base + k * row_bytes + 4 * q + b;
          x |= (i < n ? static_cast<unsigned>(in[i]) : pad_word & 0xFFu) << (8 * b);
        }
        w[k][q] = x;
      }
  }

  // Which bytes are kept (bit 16 k + j: byte j of row k): not pad, and before *end when Bounded.
  __device__ __forceinline__ static unsigned kept(const words& w, std::size_t lane_base, unsigned pad_word,
                                                  const std::uint64_t* end) {
    unsigned keep = 0;
#pragma unroll
    for (int k = 0; k < R; ++k)
#pragma unroll
      for (int q = 0; q < 4; ++q) keep |= nonzero_byte_bits(w[k][q] ^ pad_word) << (16 * k + 4 * q);
    if constexpr (Bounded) {
      const std::uint64_t e = *end;
#pragma unroll
      for (int k = 0; k < R; ++k) {
        const std::size_t p = lane_base + k * row_bytes;
        const unsigned below = e <= p ? 0u : e - p >= 16 ? 0xFFFFu : (1u << static_cast<unsigned>(e - p)) - 1u;
        keep &= ~(0xFFFFu << (16 * k)) | (below << (16 * k));
      }
    }
    return keep;
  }

  // The kept bytes into the warp's staging area at row_start, in the warp's order: row 0 of its
  // lanes, then row 1. in_warp: the lane's place in each row; warp_total: the rows' counts.
  __device__ __forceinline__ static void stage(const words& w, unsigned keep, unsigned row_start, unsigned in_warp,
                                               unsigned warp_total) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      unsigned r = row_start + row_field(in_warp, k);
#pragma unroll
      for (int j = 0; j < 16; ++j)
        if ((keep >> (16 * k + j)) & 1u) store_shared_byte(r++, w[k][j / 4] >> (8 * (j % 4)));
      row_start += row_field(warp_total, k);
    }
  }
};

// Warp 0, after its staging (the predecessors had that time to publish): the tile's global offset
// from the look-back, for every warp through prefix_sh.
__device__ __forceinline__ void select_bytes_lookback(flagged_count_state states, unsigned tile, unsigned lane,
                                                      unsigned tile_count, unsigned long long& prefix_sh) {
  using grid_sum = flagged_count_state::sum;  // plain counts: they never stop
  unsigned long long prefix = 0;
  if (tile != 0) {
    prefix = grid_sum::count(lookback_exclusive(states, tile, grid_sum{}));
    if (lane == 0) states.publish_inclusive(tile, prefix + tile_count);
  }
  if (lane == 0) prefix_sh = prefix;
}

template <class P, bool Bounded, class NumT>
__global__ void __launch_bounds__(P::threads, P::min_blocks)
    select_bytes_kernel(const std::uint8_t* in, std::uint8_t* out, NumT* num_selected, std::size_t n,
                        unsigned pad_word, const std::uint64_t* end, flagged_count_state states, bool vec_ok) {
  using agent = select_bytes_tile<P, Bounded>;
  constexpr int R = P::vectors;
  constexpr int W = P::threads / warp_threads;
  constexpr unsigned stage_stride = agent::warp_bytes + 16;  // store_staged reads 4 bytes past a warp's bytes
  using bscan = block_scan<unsigned, P::threads>;
  __shared__ typename bscan::storage scan_sh;
  __shared__ unsigned long long prefix_sh;
  __shared__ __align__(16) std::uint8_t staged[W * stage_stride];

  const unsigned tile = blockIdx.x;
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const std::size_t tile_base = static_cast<std::size_t>(tile) * P::tile;
  const std::size_t lane_base = tile_base + warp * agent::warp_bytes + lane * 16;

  typename agent::words w;
  if (vec_ok && tile_base + P::tile <= n) agent::load_full(in, lane_base, w);
  else agent::load_partial(in, n, lane_base, pad_word, w);
  const unsigned keep = agent::kept(w, lane_base, pad_word, end);
  unsigned packed = 0;  // the rows' counts, 16 bits each
#pragma unroll
  for (int k = 0; k < R; ++k) packed |= static_cast<unsigned>(__popc(row_field(keep, k))) << (16 * k);

  const block_scan_parts<unsigned> s =
      bscan(scan_sh).template exclusive_parts<warp_scan_by<plus_op>>(packed, 0u, plus_op{});
  const unsigned tile_count = row_fields_total<R>(s.aggregate);
  if (threadIdx.x == 0) {  // before the staging: successors' look-backs need not wait for it
    if (tile == 0) states.publish_inclusive(0, tile_count);
    else states.publish_aggregate(tile, tile_count);
  }
  // No field of exclusive is below its warp's, so the packed difference is the lane's place in each row.
  agent::stage(w, keep, shared_address(staged) + warp * stage_stride, s.exclusive - s.warp_exclusive, s.warp_total);
  if (warp == 0) select_bytes_lookback(states, tile, lane, tile_count, prefix_sh);
  __syncthreads();
  const unsigned long long prefix = prefix_sh;
  if (tile == gridDim.x - 1 && threadIdx.x == 0) *num_selected = static_cast<NumT>(prefix + tile_count);
  store_staged<warp_threads>(out + prefix + row_fields_total<R>(s.warp_exclusive), staged + warp * stage_stride,
                             row_fields_total<R>(s.warp_total), lane);
}

template <class P = select_bytes_policy, class NumT>
cudaError_t select_bytes_on_states(const std::uint8_t* in, std::uint8_t* out, NumT* num_selected, std::size_t n,
                                   std::uint8_t pad, const std::uint64_t* end, flagged_count_state states,
                                   cudaStream_t stream) {
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(NumT), stream);
  const std::size_t tiles = ceil_div(n, P::tile);
  if (tiles > 0x7fffffffu) return cudaErrorInvalidValue;
  const auto grid = static_cast<unsigned>(tiles);
  const unsigned pad_word = 0x01010101u * pad;
  const bool vec_ok = is_aligned(in, 16);
  if (end != nullptr)
    select_bytes_kernel<P, true><<<grid, P::threads, 0, stream>>>(in, out, num_selected, n, pad_word, end, states,
                                                                  vec_ok);
  else
    select_bytes_kernel<P, false><<<grid, P::threads, 0, stream>>>(in, out, num_selected, n, pad_word, end, states,
                                                                   vec_ok);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

template <class P = select_bytes_policy, class NumT>
cudaError_t select_bytes_impl(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* in, std::uint8_t* out,
                              NumT* num_selected, std::size_t n, std::uint8_t pad, const std::uint64_t* end,
                              cudaStream_t stream) {
  const std::size_t tiles = ceil_div(n, P::tile);
  const std::size_t sizes[1] = {flagged_count_state::storage_bytes(tiles)};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr) return cudaSuccess;
  const flagged_count_state states{static_cast<unsigned long long*>(ptrs[0])};
  if (tiles > 1)  // tile 0 never reads the states
    GUTF8_PRIM_TRY(cudaMemsetAsync(states.words, 0, tiles * sizeof(unsigned long long), stream));
  return select_bytes_on_states<P>(in, out, num_selected, n, pad, end, states, stream);
}

}  // namespace gutf8::prim::detail
