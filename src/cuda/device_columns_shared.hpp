// What the two sources of the device column operations share: device_columns.cu (the string
// layouts, and every operation's walk) and device_column_views.cu (the view layouts, gathered
// into a string layout first). Launch shapes, and the helpers device_columns.cu lends, so that
// view results are allocated, scanned and handed out exactly as its own are.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "columns/arrow_io.hpp"
#include "gutf8/cuda_resources.hpp"
#include "utf8/warp_column_rows.cuh"

namespace gutf8::device::shared {

using kern::u64;
using kern::columns::column_block_threads;
using gutf8::internal::columns::buffer;

// A thread per item, column_block_threads a block.
inline unsigned grid_for(u64 threads) {
  return static_cast<unsigned>(std::max<u64>(1, (threads + column_block_threads - 1) / column_block_threads));
}

template <class Kernel, class... Args>
void launch(const char* name, Kernel kernel, u64 threads, cudaStream_t stream, Args... args) {
  if (threads == 0) return;
  kernel<<<grid_for(threads), column_block_threads, 0, stream>>>(args...);
  cuda::check_launch(name);
}

// A result's buffers after its validity, in Arrow order.
template <class... B>
std::vector<buffer> buffers_of(B&&... b) {
  std::vector<buffer> v;
  (v.push_back(std::forward<B>(b)), ...);
  return v;
}

inline unsigned sm_count() {
  int device = 0, sms = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return static_cast<unsigned>(sms);
}

// Defined in device_columns.cu (thin forwarders to its own helpers).
// Device memory released with the result (stream: where it is used, for a stream-ordered allocator).
buffer result_buffer(std::size_t bytes, cudaStream_t stream);
column result_column(const char* format, u64 rows, std::pair<buffer, std::int64_t> validity, std::vector<buffer> rest,
                     cudaStream_t stream);  // a CUDA column whose sync_event is recorded on stream
void exclusive_sum(u64* d, u64 n, cudaStream_t stream);  // in place (gutf8::prim); synchronises
u64 download(const u64* d, cudaStream_t stream);        // one value; synchronises

}  // namespace gutf8::device::shared
