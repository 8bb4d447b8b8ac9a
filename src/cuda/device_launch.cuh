// Host-side helpers shared by the device-API entry points (src/cuda/device_*.cu): temporary
// storage layout, grid sizing and the summary kernels every entry point launches.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "gutf8/device.hpp"
#include "prim/tile_lookback.cuh"
#include "utf8/common.cuh"
#include "utf8/summary.cuh"

namespace gutf8::device::launch {

using kern::u64;
using kern::u8;
using tile_state = prim::detail::tile_state<u64>;

inline constexpr std::size_t accum_bytes = prim::detail::align_up(sizeof(kern::accum), 256);

// Temporary storage: [accumulator][tile states][extra], every part 256-byte aligned.
struct temp_layout {
  std::size_t tiles = 0;
  std::size_t state_offset = accum_bytes;
  std::size_t extra_offset = 0;
  std::size_t total = 0;

  temp_layout(std::size_t num_tiles, std::size_t extra_bytes) : tiles(num_tiles) {
    extra_offset = state_offset + (tiles ? tile_state::storage_bytes(tiles) : 0);
    total = extra_offset + prim::detail::align_up(extra_bytes, 256);
  }
  [[nodiscard]] kern::accum* acc(void* t) const { return static_cast<kern::accum*>(t); }
  [[nodiscard]] tile_state state(void* t) const {
    return tile_state::attach(static_cast<unsigned char*>(t) + state_offset, tiles ? tiles : 1);
  }
  [[nodiscard]] void* extra(void* t) const { return static_cast<unsigned char*>(t) + extra_offset; }
};

inline u64 ceil_div(u64 a, u64 b) { return a / b + (a % b != 0); }

// Number of streaming multiprocessors of the current device (0 on failure).
inline int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 0;
  return sms;
}

// A grid for a grid-stride kernel: enough resident blocks to fill the device, at most `work`.
template <class Kernel>
unsigned stride_grid(Kernel kernel, u64 work_blocks, int fallback_per_sm = 8) {
  const int sms = std::max(sm_count(), 1);
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kern::block_threads, 0) !=
          cudaSuccess ||
      per_sm <= 0)
    per_sm = fallback_per_sm;
  const u64 resident = static_cast<u64>(sms) * static_cast<u64>(per_sm);
  return static_cast<unsigned>(std::max<u64>(1, std::min(work_blocks, resident)));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// One tile per block: the grid must fit gridDim.x and the 32-bit tile index of tile_state.
inline bool tiles_fit(u64 tiles) { return tiles <= static_cast<u64>(INT_MAX); }

inline cudaError_t begin(const temp_layout& l, void* d_temp, const u8* in, u64 n, bool is_last,
                         kern::input_kind kind, bool needs_state, cudaStream_t stream) {
  kern::prepare_kernel<<<1, 32, 0, stream>>>(l.acc(d_temp), in, n, is_last, kind);
  if (needs_state && l.tiles) {
    if (const cudaError_t e = l.state(d_temp).reset(stream); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <kern::input_kind Kind>
cudaError_t end(const temp_layout& l, void* d_temp, const u8* in, u64 n, device_summary* out,
                bool strict, cudaStream_t stream) {
  const u64 fix_blocks = std::max<u64>(1, ceil_div(n, u64{kern::block_threads} * 16));
  const unsigned grid = stride_grid(kern::lf_fixup_kernel<Kind>, fix_blocks);
  kern::lf_fixup_kernel<Kind><<<grid, kern::block_threads, 0, stream>>>(in, n, l.acc(d_temp),
                                                                        aligned16(in));
  kern::finalize_kernel<Kind><<<1, 32, 0, stream>>>(l.acc(d_temp), in, n, out, strict);
  return cudaGetLastError();
}

// Argument checks shared by the entry points (after the size query).
inline bool bad_args(std::size_t temp_bytes, const temp_layout& l, const void* in, u64 n,
                     const void* summary) {
  return temp_bytes < l.total || summary == nullptr || (n != 0 && in == nullptr) ||
         !tiles_fit(l.tiles);
}

}  // namespace gutf8::device::launch
