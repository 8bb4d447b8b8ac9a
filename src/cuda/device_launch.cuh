// Host-side helpers shared by the device-API entry points (src/cuda/device_*.cu): temporary
// storage layout, grid sizing (device properties cached per device) and the summary kernels every
// entry point launches.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gutf8/device.hpp"
#include "gutf8/prim/detail/tile_lookback.cuh"
#include "utf8/common.cuh"
#include "utf8/kernel_summary.cuh"

namespace gutf8::device::launch {

using kern::u64;
using kern::u8;

constexpr std::size_t align256(std::size_t v) { return (v + 255) / 256 * 256; }
inline constexpr std::size_t accum_bytes = align256(sizeof(kern::accum));

// Temporary storage: [accumulator][tile states: one 64-bit word per tile][extra], every part
// 256-byte aligned. begin() zeroes the states, and the extra too where it is `zeroed`.
struct temp_layout {
  std::size_t tiles = 0;
  std::size_t state_offset = accum_bytes;
  std::size_t extra_offset = 0;
  std::size_t total = 0;
  std::size_t zeroed_words = 0;  // from state_offset on

  temp_layout(std::size_t num_tiles, std::size_t extra_bytes, bool extra_zeroed = false) : tiles(num_tiles) {
    extra_offset = state_offset + align256(tiles * sizeof(u64));
    total = extra_offset + align256(extra_bytes);
    zeroed_words = extra_zeroed ? (total - state_offset) / sizeof(u64) : tiles;
  }
  [[nodiscard]] kern::accum* acc(void* t) const { return static_cast<kern::accum*>(t); }
  [[nodiscard]] prim::detail::flagged_count_state states(void* t) const {
    return {reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(t) + state_offset)};
  }
  [[nodiscard]] void* extra(void* t) const { return static_cast<unsigned char*>(t) + extra_offset; }
};

inline u64 ceil_div(u64 a, u64 b) { return a / b + (a % b != 0); }

inline int current_device() {
  int dev = 0;
  return cudaGetDevice(&dev) == cudaSuccess ? dev : 0;
}

// Number of streaming multiprocessors of the current device (1 on failure), cached per device.
inline int sm_count() {
  static std::atomic<int> cache[64] = {};
  const int dev = current_device();
  std::atomic<int>& c = cache[dev & 63];
  int sms = c.load(std::memory_order_relaxed);
  if (sms > 0) return sms;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) sms = 1;
  c.store(sms, std::memory_order_relaxed);
  return sms;
}

// Resident blocks of Kernel per SM (block_threads threads), cached per device and per kernel:
// kernels of one signature differ in registers (validate_kernel's variants).
template <auto Kernel>
int blocks_per_sm(int fallback = 4) {
  static std::atomic<int> cache[64] = {};
  const int dev = current_device();
  std::atomic<int>& c = cache[dev & 63];
  int per_sm = c.load(std::memory_order_relaxed);
  if (per_sm > 0) return per_sm;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, kern::block_threads, 0) != cudaSuccess ||
      per_sm <= 0)
    per_sm = fallback;
  c.store(per_sm, std::memory_order_relaxed);
  return per_sm;
}

// Blocks of Kernel the whole device holds at once.
template <auto Kernel>
u64 resident_blocks() {
  return static_cast<u64>(sm_count()) * static_cast<u64>(blocks_per_sm<Kernel>());
}

// A grid for a grid-stride kernel: enough resident blocks to fill the device, at most `work`.
template <auto Kernel>
unsigned stride_grid(u64 work_blocks) {
  return static_cast<unsigned>(std::max<u64>(1, std::min(work_blocks, resident_blocks<Kernel>())));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// launch(policy_constant<P>{}, std::bool_constant<Vec>{}) for the run-time policy and input
// alignment (Vec: 16-byte loads), which the kernels take as template arguments.
template <error_policy P>
using policy_constant = std::integral_constant<error_policy, P>;
template <error_policy P, class Launch>
cudaError_t with_alignment(bool vec, Launch& launch) {
  return vec ? launch(policy_constant<P>{}, std::true_type{}) : launch(policy_constant<P>{}, std::false_type{});
}
template <class Launch>
cudaError_t with_policy(error_policy policy, bool vec, Launch launch) {
  switch (policy) {
    case error_policy::strict: return with_alignment<error_policy::strict>(vec, launch);
    case error_policy::replace: return with_alignment<error_policy::replace>(vec, launch);
    case error_policy::drop: return with_alignment<error_policy::drop>(vec, launch);
  }
  return cudaSuccess;  // no other policy: nothing to launch, as before this helper
}

// One tile per block: the grid must fit gridDim.x and the 32-bit tile index.
inline bool tiles_fit(u64 tiles) { return tiles <= static_cast<u64>(INT_MAX); }

// Launches kernel<<<grid, block_threads, 0, stream>>>(args...) as a programmatic dependent of the
// kernel before it in the stream (kern::wait_for_prior_kernel says what the kernel must do).
template <class... Params, class... Args>
cudaError_t dependent(void (*kernel)(Params...), unsigned grid, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kern::block_threads);
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

// Accumulator init and (when the kernels use the look-back) tile states cleared: one launch.
inline cudaError_t begin(const temp_layout& l, void* d_temp, const u8* in, u64 n, bool is_last,
                         kern::input_kind kind, cudaStream_t stream) {
  const u64 words = l.zeroed_words;
  const unsigned grid = static_cast<unsigned>(
      std::max<u64>(1, std::min<u64>(ceil_div(words, kern::block_threads * 4), 4 * static_cast<u64>(sm_count()))));
  kern::prepare_kernel<<<grid, kern::block_threads, 0, stream>>>(
      l.acc(d_temp), in, n, is_last, kind, l.states(d_temp).words, words);
  return cudaSuccess;
}

template <kern::input_kind Kind>
cudaError_t end(const temp_layout& l, void* d_temp, const u8* in, u64 n, device_summary* out,
                bool strict, cudaStream_t stream) {
  // Two blocks per SM: enough to stream the LF fixup (only with an error), few blocks to count
  // when there is nothing to do.
  const u64 fix_blocks = std::max<u64>(1, ceil_div(n, u64{kern::block_threads} * 16));
  const auto grid = static_cast<unsigned>(std::min<u64>(fix_blocks, 2 * static_cast<u64>(sm_count())));
  if (const cudaError_t e = dependent(kern::finish_kernel<Kind>, grid, stream, in, n, l.acc(d_temp), out, strict,
                                      aligned16(in));
      e != cudaSuccess)
    return e;
  return cudaGetLastError();
}

// Argument checks shared by the entry points (after the size query).
inline bool bad_args(std::size_t temp_bytes, const temp_layout& l, const void* in, u64 n,
                     const void* summary) {
  return temp_bytes < l.total || summary == nullptr || (n != 0 && in == nullptr) ||
         !tiles_fit(l.tiles);
}

}  // namespace gutf8::device::launch
