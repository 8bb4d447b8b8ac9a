// The stats kernels of the CUDA block processor (declarations and contract: utf8/kernel_stats.hpp).
#include "utf8/kernel_stats.hpp"

#include <algorithm>

#include "gutf8/prim/radix_sort.cuh"

namespace gutf8::kern::stats {
namespace {

constexpr int threads = 256;
constexpr int code_point_bits = 21;  // U+10FFFF < 2^21

std::size_t align256(std::size_t v) { return (v + 255) / 256 * 256; }

// Enough thread blocks (4096 of 256 threads) to fill a GPU a few times over; grid-stride beyond that.
unsigned grid_for(std::uint64_t n) {
  const std::uint64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(blocks, 1, 4096));
}

__global__ void __launch_bounds__(threads)
    length_kernel(const std::uint32_t* cp, const device::device_summary* summary,
                  unsigned long long* counts) {
  __shared__ unsigned long long block_counts[4];
  if (threadIdx.x < 4) block_counts[threadIdx.x] = 0;
  __syncthreads();
  const std::uint64_t n = summary->written;
  unsigned c[4] = {0, 0, 0, 0};
  const std::uint64_t stride = std::uint64_t{gridDim.x} * threads;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * threads + threadIdx.x; i < n; i += stride) {
    const std::uint32_t v = cp[i];
    c[0] += v < 0x80u;
    c[1] += v >= 0x80u && v < 0x800u;
    c[2] += v >= 0x800u && v < 0x10000u;
    c[3] += v >= 0x10000u;
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned warp_total = __reduce_add_sync(0xFFFFFFFFu, c[k]);
    if ((threadIdx.x & 31u) == 0 && warp_total != 0) atomicAdd(&block_counts[k], warp_total);
  }
  __syncthreads();
  if (threadIdx.x < 4 && block_counts[threadIdx.x] != 0)
    atomicAdd(&counts[threadIdx.x], block_counts[threadIdx.x]);
}

// keys[0 .. n) sorted: the last element of each run of equal keys finds where the run begins
// (binary search: runs are few, at most one per distinct code point) and appends one pair.
__global__ void __launch_bounds__(threads)
    runs_kernel(const std::uint32_t* keys, std::uint64_t n, code_point_run* runs,
                std::uint32_t* num_runs) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * threads;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * threads + threadIdx.x; i < n; i += stride) {
    const std::uint32_t key = keys[i];
    if (i + 1 != n && keys[i + 1] == key) continue;
    std::uint64_t lo = 0, hi = i;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    const std::uint32_t slot = atomicAdd(num_runs, 1u);
    runs[slot] = code_point_run{key, static_cast<std::uint32_t>(i - lo + 1)};
  }
}

}  // namespace

cudaError_t count_lengths(const char32_t* d_cp, const device::device_summary* d_summary,
                          std::uint64_t max_n, unsigned long long* d_counts, cudaStream_t stream) {
  if (d_summary == nullptr || d_counts == nullptr || (max_n != 0 && d_cp == nullptr))
    return cudaErrorInvalidValue;
  if (max_n == 0) return cudaSuccess;
  length_kernel<<<grid_for(max_n), threads, 0, stream>>>(
      reinterpret_cast<const std::uint32_t*>(d_cp), d_summary, d_counts);
  return cudaGetLastError();
}

cudaError_t histogram_runs(void* d_temp, std::size_t& temp_bytes, const char32_t* d_cp,
                           std::uint64_t n, code_point_run* d_runs, std::uint32_t* d_num_runs,
                           cudaStream_t stream) {
  if (n > 0xFFFFFFFFull) return cudaErrorInvalidValue;
  // Temporary storage: [sorted keys][radix sort temporary].
  const std::size_t keys_bytes = align256(std::max<std::uint64_t>(n, 1) * sizeof(std::uint32_t));
  std::size_t sort_bytes = 0;
  const auto* in = reinterpret_cast<const std::uint32_t*>(d_cp);
  if (const cudaError_t e = prim::radix_sort_keys<std::uint32_t>(nullptr, sort_bytes, in, nullptr, n,
                                                                  0, code_point_bits, stream);
      e != cudaSuccess)
    return e;
  const std::size_t total = keys_bytes + align256(std::max<std::size_t>(sort_bytes, 1));
  if (d_temp == nullptr) {
    temp_bytes = total;
    return cudaSuccess;
  }
  if (temp_bytes < total || d_num_runs == nullptr || (n != 0 && (d_cp == nullptr || d_runs == nullptr)))
    return cudaErrorInvalidValue;
  if (const cudaError_t e = cudaMemsetAsync(d_num_runs, 0, sizeof(std::uint32_t), stream); e != cudaSuccess)
    return e;
  if (n == 0) return cudaSuccess;
  auto* sorted = static_cast<std::uint32_t*>(d_temp);
  void* sort_temp = static_cast<unsigned char*>(d_temp) + keys_bytes;
  if (const cudaError_t e = prim::radix_sort_keys<std::uint32_t>(sort_temp, sort_bytes, in, sorted, n, 0,
                                                                  code_point_bits, stream);
      e != cudaSuccess)
    return e;
  runs_kernel<<<grid_for(n), threads, 0, stream>>>(sorted, n, d_runs, d_num_runs);
  return cudaGetLastError();
}

}  // namespace gutf8::kern::stats
