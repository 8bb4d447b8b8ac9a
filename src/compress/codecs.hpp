// Each format's codec behind one small interface: the decompressor, the compressor and the part
// compressor drive these steps; gzip.cpp, zstd.cpp, xz.cpp, bzip2.cpp and lz4.cpp hold the C
// libraries' handles (RAII), this file only what they share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "compress/format.hpp"

namespace gutf8::internal::compress {

struct step {
  std::size_t consumed = 0;  // bytes of in taken
  std::size_t produced = 0;  // bytes of out written
  bool end = false;          // the member (decoder) or the stream (encoder) is complete
};

// Decodes one member (gzip), frame (zstd, lz4), stream (bzip2) or block (xz parts); the xz stream
// decoder takes every concatenated stream and its padding, as liblzma does for xz itself.
class frame_decoder {
 public:
  virtual ~frame_decoder() = default;
  // Decodes from in into out (never empty). last: no input follows in. at: the compressed offset of
  // in[0], which a corrupt-data error names. At the end, consumed stops at the member's last byte.
  // No progress with input left means the decoder needs more of it.
  virtual step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool last, std::uint64_t at) = 0;
  // Ready for the next member.
  virtual void restart() = 0;
  // Whole members at once, when in holds exactly members and out all their text: the text size,
  // or none where the decoder has no such path or anything fails (decode() then says what, where).
  virtual std::optional<std::size_t> decode_whole(std::span<const std::uint8_t>, std::span<std::uint8_t>) {
    return std::nullopt;
  }
  // The most text whole members hold, where their headers say it without decoding (zstd: the frames'
  // content sizes, or their blocks times the block size); none where not.
  virtual std::optional<std::uint64_t> whole_bound(std::span<const std::uint8_t>) { return std::nullopt; }
};

class frame_encoder {
 public:
  virtual ~frame_encoder() = default;
  // Compresses from in into out (never empty); finish: in holds the last of the text, and the call
  // is repeated (with what is left of in) until end says the stream is complete.
  virtual step encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool finish) = 0;
};

// One self-contained member, frame or stream per call (parallel compression).
class part_encoder {
 public:
  virtual ~part_encoder() = default;
  [[nodiscard]] virtual std::size_t bound(std::size_t text) const = 0;
  // Writes the text's member to out (out.size() >= bound(text.size())) and returns its size.
  virtual std::size_t encode(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) = 0;
};

// Where a member ends, read from its header alone (no decompression), and its text size when known.
struct member_extent {
  std::uint64_t size = 0;
  std::optional<std::uint64_t> text_size;
  bool skippable = false;  // a zstd/lz4 skippable frame: no text
  std::optional<std::uint64_t> text_bound;  // where text_size is unknown, the most it can be (zstd: its
                                            // blocks times the block size)
  std::uint64_t room = 0;  // zstd: the most text its blocks make whatever its header says (the window
                           // and content size included): raw and RLE blocks their sizes, others 128 KiB
  bool checksum = false;  // zstd: the frame ends with its content checksum (XXH64's low 4 bytes)
};

// Each format's codec (the tools' defaults: zstd and lz4 frames carry a content checksum, xz streams
// a CRC64 check); make_* below pick one by format.
std::unique_ptr<frame_decoder> make_gzip_decoder();
std::unique_ptr<frame_decoder> make_zstd_decoder();
std::unique_ptr<frame_decoder> make_xz_decoder();
std::unique_ptr<frame_decoder> make_bzip2_decoder();
std::unique_ptr<frame_decoder> make_lz4_decoder();
// One block of an xz stream, with the stream's check type (lzma_check) and, where known, the text
// size the index records (liblzma then holds the block to it).
std::unique_ptr<frame_decoder> make_xz_block_decoder(std::uint32_t check, std::optional<std::uint64_t> text_size);
std::unique_ptr<frame_encoder> make_gzip_encoder(int level);
std::unique_ptr<frame_encoder> make_zstd_encoder(int level);
std::unique_ptr<frame_encoder> make_xz_encoder(int level);
std::unique_ptr<frame_encoder> make_bzip2_encoder(int level);
std::unique_ptr<frame_encoder> make_lz4_encoder(int level);
std::unique_ptr<part_encoder> make_gzip_part_encoder(int level);
std::unique_ptr<part_encoder> make_zstd_part_encoder(int level);
std::unique_ptr<part_encoder> make_xz_part_encoder(int level);
std::unique_ptr<part_encoder> make_bzip2_part_encoder(int level);
std::unique_ptr<part_encoder> make_lz4_part_encoder(int level);

std::unique_ptr<frame_decoder> make_decoder(format f);
std::unique_ptr<frame_encoder> make_encoder(format f, int level);
std::unique_ptr<part_encoder> make_part_encoder(format f, int level);

// The member at `at` of a file of file_size bytes, where its header says its size (gzip: BGZF's 'BC'
// or gutf8's 'G8' extra subfield; zstd and lz4: the frame's blocks walked by their headers); none
// where it does not or the header is not valid (decompressing will say why).
std::optional<member_extent> gzip_member_extent(const random_reader& read, std::uint64_t at, std::uint64_t file_size);
std::optional<member_extent> zstd_frame_extent(const random_reader& read, std::uint64_t at, std::uint64_t file_size);
std::optional<member_extent> lz4_frame_extent(const random_reader& read, std::uint64_t at, std::uint64_t file_size);

// An xz file's blocks from its index (liblzma's file-info decoder reads the stream footers and
// indexes at the ends of its concatenated streams): each decodes alone.
struct xz_block {
  std::uint64_t offset = 0;  // of its header in the file
  std::uint64_t size = 0;    // header, data, padding and check
  std::uint64_t text_size = 0;
  std::uint64_t stream = 0;  // its stream's number (blocks of one stream share a check type)
  std::uint32_t check = 0;
};
// None where the index cannot be read (the file is then decompressed in order, which reports why).
std::optional<std::vector<xz_block>> xz_blocks(const random_reader& read, std::uint64_t file_size);

// C libraries count in 32-bit units: a step takes at most this many bytes at once.
inline constexpr std::size_t max_step_bytes = std::size_t{1} << 30;
inline std::span<const std::uint8_t> clamp(std::span<const std::uint8_t> s) noexcept {
  return s.first(std::min(s.size(), max_step_bytes));
}
inline std::span<std::uint8_t> clamp(std::span<std::uint8_t> s) noexcept {
  return s.first(std::min(s.size(), max_step_bytes));
}

}  // namespace gutf8::internal::compress
