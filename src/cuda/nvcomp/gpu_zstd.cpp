// codec/gpu_decompress.hpp through nvCOMP: a GPU lane's compressed bytes uploaded once, each frame
// decompressed into a slot that holds the most text its blocks can (nvcomp::decompress_zstd, its
// output room; a verdict a frame), the slots packed back to back into one text
// (nvcomp::pack_texts), content checksums verified there (nvcomp::verify_checksums), and that text
// handed to the CUDA block processor as its input (cuda_processor::process_resident). A batch is
// waited for until its deadline only: past it, the GPU is given up (cuda::device_abandoned). Until
// then no call waits for the device: buffers grow in stream order, verdicts land in page-locked
// memory, and a valid batch at the start loads every kernel a batch launches.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "codec/gpu_decompress.hpp"
#include "compress/codecs.hpp"
#include "cuda/cuda_block_processor.hpp"
#include "cuda/nvcomp/xxh64.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace gutf8::internal {
namespace {

namespace nv = cuda::nvcomp;
constexpr std::size_t slot_align = 256;  // slots start as cudaMalloc's memory does

// Device memory grown by stream-ordered frees and allocations on the batch's stream: cudaFree waits
// for the whole device, which another lane's batch spinning on a corrupt frame holds for ever.
template <class T>
class ordered_buffer {
 public:
  void grow(std::size_t n, cudaStream_t s) {
    if (b_ && b_->size() >= n) return;
    b_.reset();  // freed first: the old and the new need not both fit
    b_.emplace(n, s);
  }
  [[nodiscard]] T* data() const noexcept { return b_ ? b_->data() : nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return b_ ? b_->size() : 0; }
  void upload(std::span<const T> host, cudaStream_t s) {
    cuda::check(cudaMemcpyAsync(data(), host.data(), host.size_bytes(), cudaMemcpyHostToDevice, s),
                "cudaMemcpyAsync H2D");
  }

 private:
  std::optional<cuda::stream_buffer<T>> b_;
};

// Page-locked memory that grows by doubling and frees what it outgrew only when it goes (cudaFreeHost
// waits for the whole device).
template <class T>
class pinned_room {
 public:
  T* at_least(std::size_t n) {
    if (now_.size() < n) {
      retired_.push_back(std::move(now_));
      now_ = cuda::pinned_buffer<T>(std::max(n, 2 * now_.size()));
    }
    return now_.data();
  }

 private:
  cuda::pinned_buffer<T> now_;
  std::vector<cuda::pinned_buffer<T>> retired_;
};

std::size_t aligned(std::size_t n) { return (n + slot_align - 1) / slot_align * slot_align; }

// A frame of compressed, raw and RLE blocks (words, noise, one repeated byte) with its checksum:
// the warm-up batch, which runs each kernel a batch may launch.
std::vector<std::uint8_t> warm_up_frame(std::size_t& text_bytes) {
  constexpr std::size_t block = std::size_t{128} << 10;
  std::vector<std::uint8_t> text;
  static constexpr char words[] = "the text of a frame, \xC3\xA9t\xC3\xA9 \xE6\x96\x87 \xF0\x9F\x98\x80 \n";
  for (std::size_t i = 0; text.size() < block; ++i) text.push_back(static_cast<std::uint8_t>(words[i % (sizeof words - 1)]));
  for (std::uint64_t x = 0x9E3779B97F4A7C15ull; text.size() < 2 * block;) {  // xorshift: incompressible
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    text.push_back(static_cast<std::uint8_t>(x >> 56));
  }
  text.resize(3 * block + 17, 'a');
  text_bytes = text.size();
  const auto encoder = compress::make_zstd_part_encoder(1);
  std::vector<std::uint8_t> frame(encoder->bound(text.size()));
  frame.resize(encoder->encode(text, frame));
  return frame;
}

class nvcomp_zstd final : public gpu_zstd {
 public:
  nvcomp_zstd(cuda_processor& gpu, std::size_t most_text, const block_request& shape)
      : gpu_(gpu), stream_(on_device(gpu)), done_(on_device_event(gpu)) {
    warm_up(std::max<std::size_t>(most_text, 1), shape);
  }

  bool decompress(std::span<const std::uint8_t> compressed, std::span<const gpu_frame> frames) override {
    if (cuda::device_abandoned().load())  // another lane's batch spins there: launch nothing behind it
      throw error(errc::device_failure, "the GPU was given up (nvCOMP did not finish a batch by its deadline)");
    const cuda::device_scope on(gpu_.device());
    text_size_ = 0;
    const std::size_t text = lay_out(compressed, frames);
    upload(compressed);
    enqueue();
    done_.record(stream_);
    if (!nv::completes_by(done_.get(), nv::batch_deadline(compressed.size()))) give_up(compressed.size());
    const std::span<const nv::frame_result> verdicts(verdicts_, frames_.size());
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
    // Pageable memory: the copy returns once done, after the batch (already finished) on its stream.
    cuda::check(cudaMemcpyAsync(to.data(), text_.data() + at, to.size(), cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (decompressed text to host)");
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

  // CUDA loads a kernel at its first launch (lazy loading), and growing device or page-locked memory
  // may wait for the whole device: a batch that spins would hold the launches queued behind it, or
  // another lane's growth, and their threads, for ever. So first a valid batch (its frame written
  // into a text already of its largest size), then the processor's buffers sized by processing
  // most_text bytes of that text, while nothing of this lane spins.
  void warm_up(std::size_t most_text, const block_request& shape) {
    std::size_t text_bytes = 0;
    const std::vector<std::uint8_t> frame = warm_up_frame(text_bytes);
    const compress::random_reader read = compress::memory_reader(frame);
    const std::optional<compress::member_extent> e = compress::zstd_frame_extent(read, 0, frame.size());
    const gpu_frame f{0, e ? static_cast<std::size_t>(e->size) : 0, text_bytes, true, e ? static_cast<std::size_t>(e->room) : 0};
    const std::size_t whole = std::max(most_text, text_bytes);
    {
      const cuda::device_scope on(gpu_.device());
      text_.grow(whole, stream_);
      cuda::check(cudaMemsetAsync(text_.data(), 'a', whole, stream_), "cudaMemsetAsync (warm-up text)");
    }
    if (!e || !decompress(frame, std::span(&f, 1)))
      throw error(errc::device_failure, "nvCOMP did not decompress its warm-up frame");
    block_request rq = shape;
    rq.data = text_.data();
    rq.size = rq.end = whole;
    rq.at_end = true;
    gpu_.process_resident(rq);
    decompressed_ = 0;
    text_size_ = 0;
  }

  // Each frame's slot (the most text its blocks hold) and its place in the packed text; the checksums
  // to verify; buffers grown to hold them. The packed text's size.
  std::size_t lay_out(std::span<const std::uint8_t> compressed, std::span<const gpu_frame> frames) {
    compressed_.grow(std::max<std::size_t>(compressed.size(), 1), stream_);
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
    slots_.grow(std::max<std::size_t>(slots, 1), stream_);
    text_.grow(std::max<std::size_t>(text, 1), stream_);
    results_.grow(n, stream_);
    verdicts_ = verdict_room_.at_least(n);
    pack_.grow(3 * n, stream_);
    std::size_t pack_bytes = 0;
    nv::pack_texts(nullptr, pack_bytes, nullptr, nullptr, nullptr, frames_.size(), stream_);
    pack_temp_.grow(std::max<std::size_t>(pack_bytes, 1), stream_);
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
      d_checks_.grow(checks_.size(), stream_);
      d_checks_.upload(checks_, stream_);
    }
  }

  // nvCOMP into the slots, the slots packed into the text, checksums, verdicts back: all queued.
  void enqueue() {
    const std::size_t n = frames_.size();
    auto* slots = reinterpret_cast<std::byte*>(slots_.data());
    std::size_t temp_bytes = 0;
    nv::decompress_zstd(nullptr, temp_bytes, frames_, slots, results_.data(), stream_);
    temp_.grow(temp_bytes, stream_);
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
    cuda::check(cudaMemcpyAsync(verdicts_, results_.data(), n * sizeof(nv::frame_result),
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
  ordered_buffer<std::uint8_t> compressed_, slots_, text_, temp_, pack_temp_;
  ordered_buffer<nv::frame_result> results_;
  pinned_room<nv::frame_result> verdict_room_;
  nv::frame_result* verdicts_ = nullptr;  // the batch's, in verdict_room_
  std::vector<nv::zstd_frame> frames_;  // out_offset: the frame's slot
  std::vector<nv::checksum_frame> checks_;
  ordered_buffer<nv::checksum_frame> d_checks_;
  std::vector<std::uint64_t> pack_words_;  // [slot pointers][text pointers][sizes]
  ordered_buffer<std::uint64_t> pack_;
  std::size_t text_size_ = 0;
  std::uint64_t decompressed_ = 0;
};

}  // namespace

bool gpu_zstd_built() noexcept { return true; }

std::unique_ptr<gpu_zstd> make_gpu_zstd(block_processor& gpu, std::size_t most_text, const block_request& shape) {
  auto* cuda = dynamic_cast<cuda_processor*>(&gpu);
  if (cuda == nullptr) return nullptr;
  return std::make_unique<nvcomp_zstd>(*cuda, most_text, shape);
}

}  // namespace gutf8::internal
