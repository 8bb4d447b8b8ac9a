// gutf8::cuda::nvcomp::verify_checksums: four threads a frame (XXH64's four stripe accumulators, one
// each, joined by warp shuffles) hash the frames' texts where nvCOMP wrote them, and a frame whose
// hash's low 4 bytes are not the ones its frame stores gets the verdict checksum_mismatch.
#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/xxh64.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace gutf8::cuda::nvcomp {
namespace {

constexpr unsigned threads_per_block = 128;  // a multiple of 4: a frame's threads share a warp

__global__ void checksum_kernel(const std::uint8_t* text, const checksum_frame* frames, std::size_t n,
                                frame_result* results) {
  const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t i = t / 4;
  const unsigned lane = threadIdx.x % 4;
  checksum_frame f{};
  std::uint64_t acc = 0;
  if (i < n) {
    f = frames[i];
    acc = xxh64::lane(text + f.text_offset, f.text_bytes, lane);
  }
  std::uint64_t v[4];
  for (unsigned l = 0; l < 4; ++l) v[l] = __shfl_sync(0xFFFFFFFFu, acc, (threadIdx.x & ~3u) + l);
  if (i >= n || lane != 0) return;
  const std::uint64_t h = xxh64::finish(v, text + f.text_offset, f.text_bytes);
  frame_result& r = results[f.frame];
  if (r.verdict == frame_verdict::ok && std::uint32_t(h) != f.expected) r.verdict = frame_verdict::checksum_mismatch;
}

}  // namespace

void verify_checksums(const std::byte* d_text, const checksum_frame* d_frames, std::size_t n,
                      frame_result* d_results, cudaStream_t stream) {
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((4 * n + threads_per_block - 1) / threads_per_block);
  checksum_kernel<<<blocks, threads_per_block, 0, stream>>>(reinterpret_cast<const std::uint8_t*>(d_text), d_frames,
                                                             n, d_results);
  check_launch("nvcomp checksum_kernel");
}

}  // namespace gutf8::cuda::nvcomp
