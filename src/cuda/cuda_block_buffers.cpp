// The CUDA block processor's buffers (cuda/cuda_block_processor.hpp): the sub-block size of a
// block, each CUDA stream's device and staging buffers grown to hold it, halved on out-of-memory
// (real, or options::device_memory_limit checked before anything is allocated).
#include <algorithm>
#include <string>

#include "cuda/cuda_block_processor.hpp"

namespace gutf8::internal {
namespace {

template <class T>
void grow(cuda::device_buffer<T>& b, std::size_t n) {
  if (b.size() < n) {
    b = cuda::device_buffer<T>();  // free first: the old and the new need not both fit
    b = cuda::device_buffer<T>(n);
  }
}
template <class T>
void grow(cuda::pinned_buffer<T>& b, std::size_t n) {
  if (b.size() < n) {
    b = cuda::pinned_buffer<T>();
    b = cuda::pinned_buffer<T>(n);
  }
}

}  // namespace

// The sub-block size for a block: about tuning.sub_blocks of them, whole MiB, within the limits.
std::size_t cuda_processor::plan(std::size_t size) const {
  constexpr std::size_t mib = std::size_t{1} << 20;
  std::size_t sub = (size / tuning_.sub_blocks + mib - 1) / mib * mib;
  sub = std::max(sub, tuning_.min_sub_block);
  sub = std::min(sub, tuning_.max_sub_block);
  return std::min(sub, size);
}

// Makes both streams' buffers hold sub-blocks of the planned size, halving it when the GPU (or the pinned
// host memory, or options::device_memory_limit) runs out. Returns the sub-block size, or 0 when
// even the smallest does not fit and the processor is lazy (auto_select falls back to the CPU).
std::size_t cuda_processor::reserve(const block_request& rq, bool in_pinned, bool out_pinned) {
  std::size_t sub = plan(rq.size);
  for (;;) {
    try {
      const buffer_sizes need = sizes_for(rq, sub);
      check_memory_limit(need);  // inside the try: a limit takes the path a real failure takes
      for (stream_resources& s : streams_) reserve_stream(s, rq, need, in_pinned, out_pinned);
      return sub;
    } catch (const error& e) {
      if (e.code() != errc::out_of_memory) throw;
      cudaGetLastError();
      for (stream_resources& s : streams_) release(s);
      if (sub <= tuning_.min_retry_block) {
        if (tuning_.lazy) {
          give_up(e);
          return 0;
        }
        throw error(errc::out_of_memory,
                    "not enough GPU memory for the CUDA backend, even in pieces of " +
                        std::to_string(sub) + " bytes: " + e.what());
      }
      sub = std::max(tuning_.min_retry_block, sub / 2);
      tuning_.max_sub_block = sub;  // later blocks start from the size that fitted
    }
  }
}

void cuda_processor::release(stream_resources& s) {
  s.in = {}, s.out = {}, s.temp = {}, s.hist_temp = {}, s.runs = {};
  s.in_stage = {}, s.out_stage = {}, s.runs_host = {};
  s.capacity = 0;
}

auto cuda_processor::sizes_for(const block_request& rq, std::size_t sub) const -> buffer_sizes {
  buffer_sizes z;
  const bool stats = rq.op == operation::stats;
  const std::size_t width = stats ? 4 : output_width(rq.op);
  z.sub_block = z.in = sub;
  z.out = width == 0 ? 0 : width * sub + 16;
  z.temp = std::max<std::size_t>(temp_bytes(rq, sub), 1);
  z.histogram = stats && rq.histogram != nullptr;
  if (z.histogram) {
    cuda::check(kern::stats::histogram_runs(nullptr, z.hist_temp, nullptr, sub, nullptr, nullptr, nullptr),
                "histogram_runs (size query)");
    z.runs = kern::stats::max_runs(sub);
  }
  return z;
}

// Device bytes a stream's buffers hold once reserve_stream(z) ran: buffers only grow, so for each the larger
// of what it holds and what z asks for.
std::uint64_t cuda_processor::device_bytes_after(const stream_resources& s, const buffer_sizes& z) {
  const auto after = [](const auto& b, std::size_t bytes) {
    return std::max<std::uint64_t>(b.bytes(), bytes);
  };
  return after(s.in, z.in) + after(s.out, z.out) + after(s.temp, z.temp) + after(s.hist_temp, z.hist_temp) +
         after(s.runs, z.runs * sizeof(cp_run)) + sizeof(sub_block_result);
}

// options::device_memory_limit: buffers that would exceed it fail as cudaMalloc would, before
// anything is allocated, so the caller's retry and fallback are those of a real out-of-memory.
void cuda_processor::check_memory_limit(const buffer_sizes& z) const {
  if (memory_limit_ == 0) return;
  std::uint64_t total = 0;
  for (const stream_resources& s : streams_) total += device_bytes_after(s, z);
  if (total > memory_limit_)
    throw error(errc::out_of_memory, "the buffers need " + std::to_string(total) +
                                         " bytes, over the device memory limit of " +
                                         std::to_string(memory_limit_) + " bytes");
}

void cuda_processor::reserve_stream(stream_resources& s, const block_request& rq, const buffer_sizes& z,
                                    bool in_pinned, bool out_pinned) {
  grow(s.in, z.in);
  if (z.out != 0) grow(s.out, z.out);
  grow(s.temp, z.temp);
  if (s.result.size() == 0) {
    s.result = cuda::device_buffer<sub_block_result>(1);
    // Every sub-block downloads the whole sub_block_result, whose stats fields only stats writes.
    cuda::check(cudaMemset(s.result.data(), 0, sizeof(sub_block_result)), "cudaMemset (sub-block result)");
  }
  if (z.histogram) {
    grow(s.hist_temp, z.hist_temp);
    grow(s.runs, z.runs);
    grow(s.runs_host, z.runs);
  }
  if (!in_pinned) grow(s.in_stage, z.sub_block);
  if (!out_pinned && rq.op != operation::stats && z.out != 0) grow(s.out_stage, z.out);
  s.capacity = z.sub_block;
}

// Temporary storage of the device API for a sub-block of n bytes.
std::size_t cuda_processor::temp_bytes(const block_request& rq, std::size_t n) {
  std::size_t bytes = 0;
  cuda::check(launch(rq.op, rq.policy, nullptr, bytes, nullptr, n, nullptr, nullptr, true, nullptr),
              "device API (size query)");
  return bytes;
}

}  // namespace gutf8::internal
