// What `gutf8 stats` needs beyond the device API (kernels/utf8/kernel_stats.cu), used by the CUDA block
// processor (src/cuda/cuda_block_launch.cpp). Both work on the code points that device::decode with
// error_policy::drop wrote: exactly the well-formed sequences of the chunk, in order.
//
//   * count_lengths: the well-formed sequences by encoded length (1..4 bytes), i.e. the CPU
//     codec's text_stats::by_length, read off the code point values;
//   * histogram_runs: the (code point, count) pairs of the chunk, for --top: radix sort of the
//     code points (gutf8::prim::radix_sort_keys, 21 key bits) then a run-length pass.
//
// CUB conventions: asynchronous on `stream`, temporary storage from the caller (size query with
// d_temp == nullptr), errors returned. Plain C++ header: included by host code built with g++.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gutf8/device.hpp"

namespace gutf8::kern::stats {

struct code_point_run {
  std::uint32_t code_point;
  std::uint32_t count;
};

// Adds the number of code points of d_cp[0 .. d_summary->written) that encode in 1, 2, 3, 4
// bytes to d_counts[0..3] (the caller zeroes them). The count is read on the device, so this can
// follow device::decode on the same stream without a synchronisation. max_n bounds the grid.
cudaError_t count_lengths(const char32_t* d_cp, const device::device_summary* d_summary,
                          std::uint64_t max_n, unsigned long long* d_counts, cudaStream_t stream);

// Most runs histogram_runs can produce for n code points (the size of d_runs).
constexpr std::uint64_t max_runs(std::uint64_t n) noexcept { return n < 0x110000u ? n : 0x110000u; }

// Sorts d_cp[0 .. n) (n < 2^32) into temporary storage and writes one run per distinct code
// point to d_runs (in no particular order) and their number to *d_num_runs.
cudaError_t histogram_runs(void* d_temp, std::size_t& temp_bytes, const char32_t* d_cp,
                           std::uint64_t n, code_point_run* d_runs, std::uint32_t* d_num_runs,
                           cudaStream_t stream);

}  // namespace gutf8::kern::stats
