// The CUDA block processor's device context (cuda/cuda_block_processor.hpp): started at
// construction (backend::cuda) or on the first block for the GPU (lazy, backend::auto_select, which
// gives up quietly and leaves every block to the fallback), and drained before it goes.
#include <algorithm>
#include <string>
#include <utility>

#include "cuda/cuda_block_processor.hpp"

namespace gutf8::internal {

cuda_processor::cuda_processor(const options& opt, std::unique_ptr<block_processor> fallback, gpu_tuning tuning)
    : fallback_(std::move(fallback)), tuning_(tuning), device_(opt.device),
      memory_limit_(opt.device_memory_limit) {
  tuning_.sub_blocks = std::max(tuning_.sub_blocks, 1u);
  tuning_.min_retry_block = std::max<std::size_t>(tuning_.min_retry_block, 4096);
  tuning_.max_sub_block = std::max(tuning_.max_sub_block, tuning_.min_retry_block);
  if (!tuning_.lazy) start();
}

cuda_processor::~cuda_processor() {
  if (started_) {
    try {
      on_device_.emplace(device_);
    } catch (const error&) {  // no switch: release where we are, as a failed cudaSetDevice would
    }
    for (stream_resources& s : streams_) cudaStreamSynchronize(s.stream);
  }
}

bool cuda_processor::ensure_started() {
  if (started_) return true;
  if (failed_) return false;
  try {
    start();
    return true;
  } catch (const error& e) {
    give_up(e);
    return false;  // lazy only: an eager processor started in its constructor
  }
}

// Lazy only: every later block goes to the fallback; --verbose says so when memory was why.
void cuda_processor::give_up(const error& why) {
  failed_ = true;
  if (why.code() == errc::out_of_memory) times_.gpu_memory_fallback = true;
}

void cuda_processor::start() {
  const std::string why = cuda::gpu_unavailable_reason();
  if (!why.empty()) throw error(errc::no_device, "no usable GPU for the CUDA backend: " + why);
  int count = 0;
  cuda::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (device_ < 0 || device_ >= count)
    throw error(errc::no_device, "no GPU " + std::to_string(device_) + " for the CUDA backend (" +
                                     std::to_string(count) + (count == 1 ? " GPU" : " GPUs") +
                                     ", numbered from 0)");
  try {
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");
    cuda::check(cudaFree(nullptr), "creating the CUDA context");
    streams_.clear();
    streams_.resize(2);  // streams and events: created only now, never for a CPU-only run
    host_results_ = cuda::pinned_buffer<sub_block_result>(streams_.size());
  } catch (const error& e) {
    cudaGetLastError();
    throw error(e.code() == errc::out_of_memory ? errc::out_of_memory : errc::no_device,
                "cannot use GPU " + std::to_string(device_) + ": " + e.what());
  }
  started_ = true;
}

std::unique_ptr<block_processor> make_gpu_processor(const options& opt, std::unique_ptr<block_processor> fallback,
                                                    gpu_tuning tuning) {
  return std::make_unique<cuda_processor>(opt, std::move(fallback), tuning);
}

}  // namespace gutf8::internal
