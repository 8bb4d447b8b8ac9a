// Compressed inputs read in parts, and compressed outputs (SPEC §3c, docs/COMPRESSION.md).
//
// A regular file (or a buffer) in a compressed format is a job whose reader walks its parts
// (compress/parts.hpp: zstd and lz4 frames, xz blocks, gzip members that record their size; a file
// that does not split is one part) and posts each as a slot that any worker decompresses and
// processes on its own, a character that straddles two parts being placed at commit time
// (engine/edges.hpp). Small parts are grouped into one slot. Where the run could not hold a part's
// output (an operation with output, and a part whose text is unknown or not decoded at once), the
// reader decompresses that part itself, in order, into chunks that any worker processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "compress/compressor.hpp"
#include "compress/decompressor.hpp"
#include "compress/parts.hpp"
#include "engine/buffers.hpp"
#include "engine/edges.hpp"
#include "engine/inputs.hpp"
#include "engine/workers.hpp"

namespace gutf8::internal {

// A slot of a compressed parts job: a part for a worker to decompress, or a chunk of a part's text
// that the reader decompressed.
struct part_slot {
  compress::part part;
  std::optional<chunk> text;
  bool head_open = false;  // text: the chunk starts its part
  bool tail_open = false;  // text: the chunk ends its part
};

// A part's text, decompressed and cut into blocks at unit starts (the bytes after a cut are carried
// to the next block), in bounded memory whatever its size.
// A part in memory whose text (or its bound: compress::decompressor::whole_text) is at most
// whole_blocks blocks is decoded at once into one block (no copy out of the decoder's window; the
// memory a worker holds is bounded by it).
class part_text {
 public:
  static constexpr std::size_t whole_blocks = 16;

  void open(compress::format f, const compress::part& p, std::span<const std::uint8_t> bytes);  // in memory
  void open(compress::format f, const compress::part& p, compress::random_reader read);
  // The room the next block needs: the carry and block_bytes more (at least 16), or, for the first
  // block of a part decoded at once, its whole text and a byte.
  [[nodiscard]] std::size_t room(std::size_t block_bytes) const noexcept;
  // The next block, decompressed into buffer (at least room() bytes; what it held is not kept);
  // false after the last. Only the last block is shorter than the carry and block_bytes.
  bool next(std::span<std::uint8_t> buffer, part_block& b);
  [[nodiscard]] const compress::decompressor& decoder() const noexcept { return d_; }
  // Whether a part of this text size is decoded at once with blocks of block_bytes.
  [[nodiscard]] static bool at_once(std::optional<std::uint64_t> text_size, std::size_t block_bytes) noexcept {
    return text_size && *text_size <= std::uint64_t{whole_blocks} * block_bytes;
  }

 private:
  void restart();
  compress::decompressor d_;
  std::array<std::uint8_t, 4> carry_{};
  std::size_t carried_ = 0;
  bool first_ = true;
  bool ended_ = false;
};

class compressed_input final : public job_input {
 public:
  compressed_input(compress::format f, descriptor fd, std::uint64_t base, std::uint64_t size);
  compressed_input(compress::format f, std::vector<std::uint8_t>&& owned, std::span<const std::uint8_t> bytes);

  [[nodiscard]] compress::format format() const noexcept { return format_; }
  [[nodiscard]] const compress::random_reader& reader() const noexcept { return read_; }
  // The compressed bytes, where they are in memory (empty for a file).
  [[nodiscard]] std::span<const std::uint8_t> memory() const noexcept { return memory_; }
  // The next part in file order, small ones grouped: up to a chunk of text (with output, where the
  // text is known) or a quarter chunk of compressed bytes (without), or, for GPU lanes that decompress
  // zstd frames (gpu_run_bytes != 0), frames of known text up to gpu_run_bytes of text and of
  // compressed bytes (a frame of unknown text never joins one of known text); none after the last.
  std::optional<compress::part> next_part(std::uint64_t chunk_bytes, bool output, std::uint64_t gpu_run_bytes = 0);
  // Every part was read: a descriptor's offset is left at the input's end.
  void read_all() const;

  void put(std::uint64_t k, part_slot&& s);
  part_slot take(std::uint64_t k);

 private:
  compress::format format_;
  descriptor fd_;
  std::uint64_t base_ = 0, size_ = 0;
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> memory_;
  compress::random_reader read_;
  compress::splitter splitter_;
  std::optional<compress::part> ahead_;  // the splitter's next part, not yet grouped
  bool started_ = false;
  numbered_slots<part_slot> slots_;
};

// One worker's means to decompress and process slots of parts, kept from part to part.
class part_worker {
 public:
  run_result process(compressed_input& in, const piece_run& run, block_processor& processor, const run_context& ctx,
                     std::uint64_t* histogram);
  // A slot already taken from `in` (a GPU lane's that did not decompress it on the device).
  run_result process(compressed_input& in, part_slot& s, const piece_run& run, block_processor& processor,
                     const run_context& ctx, std::uint64_t* histogram);

 private:
  run_result process_text(part_slot& s, const piece_run& run, block_processor& processor, const run_context& ctx,
                          std::uint64_t* histogram);
  void open(compressed_input& in, const compress::part& p, std::uint64_t chunk_bytes);
  part_text text_;
  scratch_bytes buffer_, compressed_;
  std::vector<std::uint8_t> scratch_;
  recycled_outputs outputs_;  // parts' outputs, back from the committer
};

// The reader of a compressed parts job: posts slots until the last part or until the job is
// stopped (help: work to do while the budget is spent).
void read_parts(const run_context& ctx, job& j, compressed_input& in, std::uint64_t& k,
                const std::function<bool()>& help);

// Outputs in a compressed format: each piece run's output becomes members of its own (one a worker,
// so that the work is parallel); their concatenation in order is one valid file of the format.
class output_packer {
 public:
  explicit output_packer(const output_compression& c);
  // The text as members (at most 64 MiB of text each; none for no text).
  std::vector<std::uint8_t> pack(std::span<const std::uint8_t> text);
  // One member of no text: what an input without output gives, so that its output is a file too.
  std::vector<std::uint8_t> empty();
  // The piece run's output replaced by its members (its memory handed back).
  void pack(run_result& r);

 private:
  static constexpr std::size_t most_text = std::size_t{64} << 20;  // a member's (gzip records it in 32 bits)
  [[nodiscard]] std::size_t bound(std::size_t text) const;
  // The text's members into out (at least bound(text.size()) bytes); their size.
  std::size_t pack_into(std::span<const std::uint8_t> text, std::uint8_t* out);
  compress::part_compressor c_;
  scratch_bytes scratch_;
  recycled_outputs members_;
};

}  // namespace gutf8::internal
