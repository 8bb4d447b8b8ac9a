// gutf8::cuda::nvcomp::fold_verdicts: one thread a frame turns nvCOMP's status and decompressed size
// into the frame's verdict, so the host reads one small array to learn which frames go to the CPU.
#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace gutf8::cuda::nvcomp {
namespace {

__global__ void fold_kernel(const std::int32_t* statuses, const std::size_t* written, const std::size_t* expected,
                            std::size_t n, frame_result* results) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  frame_result r;
  r.written = written[i];
  r.status = statuses[i];
  r.verdict = r.status != 0                ? frame_verdict::failed
              : r.written != expected[i]   ? frame_verdict::size_mismatch
                                           : frame_verdict::ok;
  results[i] = r;
}

}  // namespace

void fold_verdicts(const std::int32_t* d_statuses, const std::size_t* d_written, const std::size_t* d_expected,
                   std::size_t n, frame_result* d_results, cudaStream_t stream) {
  if (n == 0) return;
  constexpr unsigned threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  fold_kernel<<<blocks, threads, 0, stream>>>(d_statuses, d_written, d_expected, n, d_results);
  check_launch("nvcomp fold_kernel");
}

}  // namespace gutf8::cuda::nvcomp
