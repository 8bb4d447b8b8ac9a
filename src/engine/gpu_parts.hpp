// A GPU lane's slots of a compressed parts job (engine/compressed.hpp). A slot of zstd frames that
// the CPU's structure check passes, each with its content size and its proof (frames gutf8 wrote,
// intact: compress/proof.hpp), crosses PCIe compressed, is decompressed on the GPU straight into the
// codec's input (codec/gpu_decompress.hpp; content checksums verified there) and processed there;
// its edges and line facts come from the few bytes copied back. Any other slot, and one a frame of
// which the GPU does not decompress to its header's size and checksum, goes through part_worker on
// the lane's thread, as a CPU worker takes it, which names the position of any damage
// (docs/COMPRESSION.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "codec/gpu_decompress.hpp"
#include "engine/compressed.hpp"

namespace gutf8::internal {

// Whether this build's GPU lanes decompress compressed parts for the run's operation (validate and
// stats: no output, so a slot's text is never needed on the host).
bool gpu_decompresses(const run_config& config) noexcept;

class gpu_part_worker {
 public:
  // gpu: the lane's CUDA processor; buffer: page-locked memory a file's compressed bytes are read into.
  run_result process(compressed_input& in, const piece_run& run, block_processor& gpu, std::span<std::uint8_t> buffer,
                     unsigned read_threads, const run_context& ctx, std::uint64_t* histogram);
  [[nodiscard]] std::uint64_t decompressed_bytes() const noexcept { return zstd_ ? zstd_->decompressed_bytes() : 0; }

 private:
  // The slot done on the GPU, or nothing where it is not for the GPU.
  std::optional<run_result> on_device(compressed_input& in, const part_slot& s, const piece_run& run,
                                      std::span<std::uint8_t> buffer, unsigned read_threads, const run_context& ctx,
                                      std::uint64_t* histogram);
  std::unique_ptr<gpu_zstd> zstd_;  // made at the first slot
  bool made_ = false;
  std::vector<gpu_frame> frames_;
  part_worker cpu_;
};

// The frames of a slot's compressed bytes as a GPU lane takes them; false (frames then unspecified)
// where one is not for the GPU: a header the CPU's check refuses, no content size, more than 4 MiB,
// blocks that could make more than 8 MiB (its room on the GPU).
bool gpu_frames(std::span<const std::uint8_t> bytes, std::vector<gpu_frame>& frames);
// Whether each of the frames (gpu_frames of bytes) is followed by its proof (compress/proof.hpp):
// bytes gutf8's writer wrote, not damaged since, so that nvCOMP never sees a damaged frame (a crafted
// file can carry a matching proof: the batch deadline stays for it). Hashed on `threads` threads.
bool frames_proven(std::span<const std::uint8_t> bytes, std::span<const gpu_frame> frames, unsigned threads);
// process_part_block of a whole part (both edges open) whose text, size bytes, z holds on the
// device: its edges from its first 8 and last 16 bytes, which decide its first and last certain
// unit starts; its line facts from the bytes copied back (validate and stats: no output).
piece_outcome process_device_part(gpu_zstd& z, std::size_t size, const run_config& config, std::uint64_t* histogram,
                                  text_edges& edges);
// Whether a zstd file goes in parts to the GPU lanes under the CUDA backend (rather than in order
// through one reader): where a lane would take its first frame, past skippable frames, and where the
// structure check refuses that frame, so that the lanes' CPU decoder gets the CPU workers' parts and
// names the damage where they do (one reader feeds libzstd in slices, which moves the position named).
bool lanes_take_in_parts(const compress::random_reader& read, std::uint64_t file_size);

}  // namespace gutf8::internal
