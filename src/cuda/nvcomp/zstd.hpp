// Batched zstd decompression on the device through nvCOMP (built with GUTF8_NVCOMP only; internal:
// the engine's GPU lanes, tests, benchmarks). nvCOMP calls a corrupt frame undefined behaviour, so
// a caller hands over only frames whose structure the CPU has checked (compress::zstd_frame_extent:
// the header parses, the blocks end inside the frame, the content size is known), and sends every
// frame whose verdict is not `ok` back to the CPU. nvCOMP does not verify the frame's XXH64 content
// checksum: verify_checksums does, on the texts it wrote.
//
// CUB's shape: call with d_temp == nullptr to learn temp_bytes (nothing is launched), then again
// with at least that many bytes (256-byte aligned, as cudaMalloc's are); the results land in device
// memory, stream-ordered; nothing is allocated or synchronised. Errors throw gutf8::error.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gutf8::cuda::nvcomp {

// One compressed frame of a batch: its bytes on the device and where its text goes.
struct zstd_frame {
  const std::byte* d_data = nullptr;  // the whole frame (header to checksum), device memory
  std::size_t bytes = 0;              // compressed size
  std::size_t text_bytes = 0;         // its header's frame content size (checked by the CPU)
  std::size_t out_offset = 0;         // where its text starts in the batch's output buffer
  std::size_t room = 0;               // the output nvCOMP may write (at least text_bytes; 0: text_bytes)
};

enum class frame_verdict : std::uint32_t {
  ok = 0,
  failed = 1,         // nvCOMP's status for the frame is not success
  size_mismatch = 2,  // decompressed to a size other than its header's content size
  checksum_mismatch = 3,  // its text's XXH64 is not the content checksum the frame stores
};

// What the device decided for one frame (device memory, one per frame).
struct frame_result {
  std::uint64_t written = 0;     // bytes nvCOMP reports decompressed
  std::int32_t status = 0;       // nvCOMP's nvcompStatus_t for the frame
  frame_verdict verdict = frame_verdict::failed;
};
static_assert(sizeof(frame_result) == 16);

// Decompresses `frames` into d_out (room for every frame's out_offset + room) and writes one
// frame_result a frame into d_results (ok: nvCOMP's status is success and it wrote text_bytes).
// Frames' rooms must not overlap. nvCOMP writes past the room it is told where a header understates
// the text: a caller that keeps frames apart gives each the most text its blocks can hold
// (compress::member_extent::room), which no frame's text exceeds.
void decompress_zstd(void* d_temp, std::size_t& temp_bytes, std::span<const zstd_frame> frames,
                     std::byte* d_out, frame_result* d_results, cudaStream_t stream);

// Folds nvCOMP's per-frame statuses and sizes into results (a kernel; verdicts.cu).
void fold_verdicts(const std::int32_t* d_statuses, const std::size_t* d_written, const std::size_t* d_expected,
                   std::size_t n, frame_result* d_results, cudaStream_t stream);

// A frame whose content checksum is to be verified: its text in a batch's output, the low 4 bytes
// of XXH64 that the frame stores, and its index among the batch's frame_results.
struct checksum_frame {
  std::size_t text_offset = 0;
  std::size_t text_bytes = 0;
  std::uint32_t expected = 0;
  std::uint32_t frame = 0;
};

// After decompress_zstd on the same stream: hashes each listed frame's text in d_text and turns the
// verdict of an ok frame whose checksum differs into checksum_mismatch (d_frames: device memory).
void verify_checksums(const std::byte* d_text, const checksum_frame* d_frames, std::size_t n,
                      frame_result* d_results, cudaStream_t stream);

// After decompress_zstd on the same stream: copies d_sizes[i] bytes from d_from[i] to d_to[i] for
// each of n frames (device arrays), CUB's shape (d_temp == nullptr: temp_bytes only). Frames
// decompressed into guarded slots are packed into one text this way.
void pack_texts(void* d_temp, std::size_t& temp_bytes, const void* const* d_from, void* const* d_to,
                const std::size_t* d_sizes, std::size_t n, cudaStream_t stream);

// The latest a batch of this many compressed bytes is waited for: 2 s (CUDA's lazy module loading,
// other work queued on the GPU; GUTF8_NVCOMP_WAIT_SECONDS sets it) and its bytes at 0.5 GB/s, a
// hundredth of nvCOMP's rate; nvCOMP spins on some corrupt frames, so a batch past it is given up.
std::chrono::steady_clock::time_point batch_deadline(std::size_t compressed_bytes);
// Whether `done` (recorded after a batch) completes by `deadline`: polled (cudaEventQuery never
// blocks), so that a kernel that does not finish holds no thread; a failed batch throws.
bool completes_by(cudaEvent_t done, std::chrono::steady_clock::time_point deadline);

// The indices of the frames whose verdict is not ok (host copies of the results).
std::vector<std::size_t> failed_frames(std::span<const frame_result> results);

}  // namespace gutf8::cuda::nvcomp
