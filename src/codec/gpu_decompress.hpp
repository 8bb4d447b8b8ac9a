// GPU decompression as the input engine sees it: zstd frames decompressed on the device straight
// into the GPU block processor's input and processed there, so that only compressed bytes cross
// PCIe. src/cuda/nvcomp implements it in builds with nvCOMP (GUTF8_NVCOMP); elsewhere
// src/none/gpu_decompress.cpp makes none. Nothing outside src/cuda needs nvCOMP's or CUDA's headers.
//
// nvCOMP calls a corrupt frame undefined behaviour: the caller hands over only frames whose
// structure the CPU has checked (compress::zstd_frame_extent) with their content size, and processes
// the text itself where decompress says no (docs/COMPRESSION.md). Content checksums are verified on
// the device (nvCOMP does not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "codec/block.hpp"

namespace gutf8::internal {

// One frame of the compressed bytes given to gpu_zstd::decompress.
struct gpu_frame {
  std::size_t offset = 0;      // where it starts in the compressed bytes
  std::size_t bytes = 0;       // its size, header to last block
  std::size_t text_bytes = 0;  // its header's content size
  bool checksum = false;       // it ends with its text's XXH64 (low 4 bytes), which is verified
  std::size_t room = 0;        // the most text its blocks make, whatever its header says: what it is
                               // decompressed into, so that a lying header overruns nothing
};

class gpu_zstd {
 public:
  virtual ~gpu_zstd() = default;
  // Uploads `compressed` (page-locked memory goes by DMA) and decompresses the frames into one text
  // on the device, back to back in their order. False when a frame's verdict is not ok (its status,
  // a size other than its header's, a checksum that differs): the text is then not to be used.
  // Throws device_failure where the batch does not finish by a deadline drawn from its size (nvCOMP
  // spins on some corrupt frames): the GPU is then given up for the process (nothing on it is waited
  // for or freed again), and the caller fails as on any GPU fault.
  virtual bool decompress(std::span<const std::uint8_t> compressed, std::span<const gpu_frame> frames) = 0;
  // The text's bytes from `at` on processed as rq asks (rq.data is not read: the text is the data).
  virtual block_result process(std::size_t at, const block_request& rq) = 0;
  // Text bytes [at, at + to.size()) copied to the host.
  virtual void copy_text(std::size_t at, std::span<std::uint8_t> to) = 0;
  // The text it decompressed so far, all calls together.
  [[nodiscard]] virtual std::uint64_t decompressed_bytes() const noexcept = 0;
};

// Whether this build decompresses on the GPU at all (nvCOMP linked).
bool gpu_zstd_built() noexcept;
// GPU decompression beside `gpu`, a processor from make_gpu_processor, on its GPU; null when the
// build has no nvCOMP. Throws gutf8::error as the GPU backend does. Batches hold up to most_text
// bytes of text, processed as `shape` asks (its op and whether it has a histogram; data, size and
// the histogram's counters are not used): the device buffers are sized for them and every kernel
// loaded before it returns, by a valid batch and most_text bytes processed, since growing memory or
// loading a kernel later may wait for the whole device, which a batch that spins holds for ever.
std::unique_ptr<gpu_zstd> make_gpu_zstd(block_processor& gpu, std::size_t most_text, const block_request& shape);

}  // namespace gutf8::internal
