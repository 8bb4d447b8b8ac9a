// codec/gpu_decompress.hpp through nvCOMP: a GPU lane's compressed bytes uploaded once, its frames
// decompressed back to back into one device buffer (nvcomp::decompress_zstd, a verdict a frame), and
// content checksums verified there (nvcomp::verify_checksums), and that buffer handed to the CUDA
// block processor as its input (cuda_processor::process_resident).
#include <algorithm>
#include <vector>

#include "codec/gpu_decompress.hpp"
#include "cuda/cuda_block_processor.hpp"
#include "cuda/nvcomp/xxh64.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace gutf8::internal {
namespace {

namespace nv = cuda::nvcomp;

template <class Buffer>
void grow(Buffer& b, std::size_t n) {
  if (b.size() < n) {
    b = Buffer();  // free first: the old and the new need not both fit
    b = Buffer(n);
  }
}

class nvcomp_zstd final : public gpu_zstd {
 public:
  explicit nvcomp_zstd(cuda_processor& gpu) : gpu_(gpu), stream_(on_device(gpu)) {}

  bool decompress(std::span<const std::uint8_t> compressed, std::span<const gpu_frame> frames) override {
    const cuda::device_scope on(gpu_.device());
    text_size_ = 0;
    grow(compressed_, std::max<std::size_t>(compressed.size(), 1));
    cuda::check(cudaMemcpyAsync(compressed_.data(), compressed.data(), compressed.size(), cudaMemcpyHostToDevice,
                                stream_),
                "cudaMemcpyAsync (compressed bytes to GPU)");
    frames_.clear();
    checks_.clear();
    std::size_t text = 0;
    for (const gpu_frame& f : frames) {
      const auto* at = reinterpret_cast<const std::byte*>(compressed_.data() + f.offset);
      if (f.checksum)  // the frame's last 4 bytes
        checks_.push_back({text, f.text_bytes, nv::xxh64::load32(compressed.data() + f.offset + f.bytes - 4),
                           static_cast<std::uint32_t>(frames_.size())});
      frames_.push_back(nv::zstd_frame{at, f.bytes, f.text_bytes, text});
      text += f.text_bytes;
    }
    grow(text_, std::max<std::size_t>(text, 1));
    grow(results_, std::max<std::size_t>(frames_.size(), 1));
    grow(verdicts_, std::max<std::size_t>(frames_.size(), 1));
    auto* out = reinterpret_cast<std::byte*>(text_.data());
    std::size_t temp_bytes = 0;
    nv::decompress_zstd(nullptr, temp_bytes, frames_, out, results_.data(), stream_);
    grow(temp_, temp_bytes);
    nv::decompress_zstd(temp_.data(), temp_bytes, frames_, out, results_.data(), stream_);
    if (!checks_.empty()) {
      grow(d_checks_, checks_.size());
      d_checks_.upload(checks_, stream_);
      nv::verify_checksums(out, d_checks_.data(), checks_.size(), results_.data(), stream_);
    }
    cuda::check(cudaMemcpyAsync(verdicts_.data(), results_.data(), frames_.size() * sizeof(nv::frame_result),
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (verdicts to host)");
    stream_.synchronize();
    const std::span<const nv::frame_result> verdicts(verdicts_.data(), frames_.size());
    if (!nv::failed_frames(verdicts).empty()) return false;
    text_size_ = text;
    decompressed_ += text;
    return true;
  }

  block_result process(std::size_t at, const block_request& rq) override {
    if (at > text_size_ || rq.size > text_size_ - at)
      throw error(errc::invalid_argument, "gpu_zstd::process: beyond the decompressed text");
    block_request on_device = rq;
    on_device.data = text_.data() + at;
    return gpu_.process_resident(on_device);
  }

  void copy_text(std::size_t at, std::span<std::uint8_t> to) override {
    if (at > text_size_ || to.size() > text_size_ - at)
      throw error(errc::invalid_argument, "gpu_zstd::copy_text: beyond the decompressed text");
    if (to.empty()) return;
    const cuda::device_scope on(gpu_.device());
    cuda::check(cudaMemcpy(to.data(), text_.data() + at, to.size(), cudaMemcpyDeviceToHost),
                "cudaMemcpy (decompressed text to host)");
  }

  [[nodiscard]] std::uint64_t decompressed_bytes() const noexcept override { return decompressed_; }

 private:
  // The stream is made on the processor's GPU.
  static cuda::stream on_device(const cuda_processor& gpu) {
    const cuda::device_scope on(gpu.device());
    return cuda::stream();
  }

  cuda_processor& gpu_;
  cuda::stream stream_;
  cuda::device_buffer<std::uint8_t> compressed_, text_, temp_;
  cuda::device_buffer<nv::frame_result> results_;
  cuda::pinned_buffer<nv::frame_result> verdicts_;
  std::vector<nv::zstd_frame> frames_;
  std::vector<nv::checksum_frame> checks_;
  cuda::device_buffer<nv::checksum_frame> d_checks_;
  std::size_t text_size_ = 0;
  std::uint64_t decompressed_ = 0;
};

}  // namespace

bool gpu_zstd_built() noexcept { return true; }

std::unique_ptr<gpu_zstd> make_gpu_zstd(block_processor& gpu) {
  auto* cuda = dynamic_cast<cuda_processor*>(&gpu);
  if (cuda == nullptr) return nullptr;
  return std::make_unique<nvcomp_zstd>(*cuda);
}

}  // namespace gutf8::internal
