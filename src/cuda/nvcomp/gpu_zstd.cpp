// codec/gpu_decompress.hpp through nvCOMP: a GPU lane's compressed bytes uploaded once, each frame
// decompressed into a slot that holds the most text its blocks can (nvcomp::decompress_zstd, its
// output room; a verdict a frame), the slots packed back to back into one text
// (nvcomp::pack_texts), content checksums verified there (nvcomp::verify_checksums), and that text
// handed to the CUDA block processor as its input (cuda_processor::process_resident). A batch is
// waited for until its deadline only: past it, the GPU is given up (cuda::device_abandoned).
#include <algorithm>
#include <string>
#include <vector>

#include "codec/gpu_decompress.hpp"
#include "cuda/cuda_block_processor.hpp"
#include "cuda/nvcomp/xxh64.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace gutf8::internal {
namespace {

namespace nv = cuda::nvcomp;
constexpr std::size_t slot_align = 256;  // slots start as cudaMalloc's memory does

template <class Buffer>
void grow(Buffer& b, std::size_t n) {
  if (b.size() < n) {
    b = Buffer();  // free first: the old and the new need not both fit
    b = Buffer(n);
  }
}

std::size_t aligned(std::size_t n) { return (n + slot_align - 1) / slot_align * slot_align; }

class nvcomp_zstd final : public gpu_zstd {
 public:
  explicit nvcomp_zstd(cuda_processor& gpu) : gpu_(gpu), stream_(on_device(gpu)), done_(on_device_event(gpu)) {}

  bool decompress(std::span<const std::uint8_t> compressed, std::span<const gpu_frame> frames) override {
    const cuda::device_scope on(gpu_.device());
    text_size_ = 0;
    const std::size_t text = lay_out(compressed, frames);
    upload(compressed);
    enqueue();
    done_.record(stream_);
    if (!nv::completes_by(done_.get(), nv::batch_deadline(compressed.size()))) give_up(compressed.size());
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
  static cuda::event on_device_event(const cuda_processor& gpu) {
    const cuda::device_scope on(gpu.device());
    return cuda::event();
  }

  // Each frame's slot (the most text its blocks hold) and its place in the packed text; the checksums
  // to verify; buffers grown to hold them. The packed text's size.
  std::size_t lay_out(std::span<const std::uint8_t> compressed, std::span<const gpu_frame> frames) {
    grow(compressed_, std::max<std::size_t>(compressed.size(), 1));
    frames_.clear();
    checks_.clear();
    std::size_t text = 0, slots = 0;
    for (const gpu_frame& f : frames) {
      const auto* at = reinterpret_cast<const std::byte*>(compressed_.data() + f.offset);
      if (f.checksum)  // the frame's last 4 bytes
        checks_.push_back({text, f.text_bytes, nv::xxh64::load32(compressed.data() + f.offset + f.bytes - 4),
                           static_cast<std::uint32_t>(frames_.size())});
      const std::size_t room = std::max(f.text_bytes, f.room);
      frames_.push_back(nv::zstd_frame{at, f.bytes, f.text_bytes, slots, room});
      text += f.text_bytes;
      slots += aligned(room);
    }
    const std::size_t n = std::max<std::size_t>(frames_.size(), 1);
    grow(slots_, std::max<std::size_t>(slots, 1));
    grow(text_, std::max<std::size_t>(text, 1));
    grow(results_, n);
    grow(verdicts_, n);
    grow(pack_, 3 * n);
    std::size_t pack_bytes = 0;  // sized here: a buffer freed after nvCOMP's launch would wait for it
    nv::pack_texts(nullptr, pack_bytes, nullptr, nullptr, nullptr, frames_.size(), stream_);
    grow(pack_temp_, std::max<std::size_t>(pack_bytes, 1));
    const std::size_t count = frames_.size();
    pack_words_.assign(3 * count, 0);
    for (std::size_t i = 0, packed = 0; i < count; packed += frames_[i++].text_bytes) {
      pack_words_[i] = reinterpret_cast<std::uintptr_t>(slots_.data() + frames_[i].out_offset);
      pack_words_[count + i] = reinterpret_cast<std::uintptr_t>(text_.data() + packed);
      pack_words_[2 * count + i] = frames_[i].text_bytes;
    }
    return text;
  }

  // Every upload before the batch's first kernel: a copy from pageable memory may wait on the stream.
  void upload(std::span<const std::uint8_t> compressed) {
    cuda::check(cudaMemcpyAsync(compressed_.data(), compressed.data(), compressed.size(), cudaMemcpyHostToDevice,
                                stream_),
                "cudaMemcpyAsync (compressed bytes to GPU)");
    if (!pack_words_.empty()) pack_.upload(pack_words_, stream_);
    if (!checks_.empty()) {
      grow(d_checks_, checks_.size());
      d_checks_.upload(checks_, stream_);
    }
  }

  // nvCOMP into the slots, the slots packed into the text, checksums, verdicts back: all queued.
  void enqueue() {
    const std::size_t n = frames_.size();
    auto* slots = reinterpret_cast<std::byte*>(slots_.data());
    std::size_t temp_bytes = 0;
    nv::decompress_zstd(nullptr, temp_bytes, frames_, slots, results_.data(), stream_);
    grow(temp_, temp_bytes);
    nv::decompress_zstd(temp_.data(), temp_bytes, frames_, slots, results_.data(), stream_);
    if (n != 0) {
      const std::uint64_t* words = pack_.data();
      std::size_t pack_bytes = pack_temp_.size();
      nv::pack_texts(pack_temp_.data(), pack_bytes, reinterpret_cast<const void* const*>(words),
                     reinterpret_cast<void* const*>(words + n), reinterpret_cast<const std::size_t*>(words + 2 * n),
                     n, stream_);
    }
    if (!checks_.empty())
      nv::verify_checksums(reinterpret_cast<const std::byte*>(text_.data()), d_checks_.data(), checks_.size(),
                           results_.data(), stream_);
    cuda::check(cudaMemcpyAsync(verdicts_.data(), results_.data(), n * sizeof(nv::frame_result),
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (verdicts to host)");
  }

  // The batch did not finish by its deadline: nothing of this GPU is waited on or freed again.
  [[noreturn]] void give_up(std::size_t compressed_bytes) {
    cuda::device_abandoned().store(true);
    throw error(errc::device_failure,
                "nvCOMP did not finish a batch of " + std::to_string(frames_.size()) + " zstd frames (" +
                    std::to_string(compressed_bytes) + " compressed bytes) within its deadline (a corrupt frame): " +
                    "the GPU is given up");
  }

  cuda_processor& gpu_;
  cuda::stream stream_;
  cuda::event done_;  // the batch's last step
  cuda::device_buffer<std::uint8_t> compressed_, slots_, text_, temp_, pack_temp_;
  cuda::device_buffer<nv::frame_result> results_;
  cuda::pinned_buffer<nv::frame_result> verdicts_;
  std::vector<nv::zstd_frame> frames_;  // out_offset: the frame's slot
  std::vector<nv::checksum_frame> checks_;
  cuda::device_buffer<nv::checksum_frame> d_checks_;
  std::vector<std::uint64_t> pack_words_;  // [slot pointers][text pointers][sizes]
  cuda::device_buffer<std::uint64_t> pack_;
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
