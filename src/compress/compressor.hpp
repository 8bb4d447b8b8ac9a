// Compressed output: a stream written in order (one member, frame or stream, as the format's tool
// writes it at its default level), or parts compressed each into a self-contained member on any
// thread, whose concatenation in order is a valid file of the format that the standard tools
// decompress to the parts' text (gzip and pigz members, zstd frames, xz streams, bzip2 streams,
// lz4 frames). gzip parts record their size in the header ('G8' subfield), so they split again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "compress/codecs.hpp"
#include "compress/format.hpp"

namespace gutf8::internal::compress {

class compressor {
 public:
  // Compressed bytes buffered before they go to the sink.
  static constexpr std::size_t output_buffer = 128 * 1024;

  // level: the format's levels (gzip 1-9, zstd 1-19 and more, xz 0-9, bzip2 1-9, lz4 1-12).
  compressor(format f, byte_sink sink, int level);
  compressor(format f, byte_sink sink) : compressor(f, std::move(sink), default_level(f)) {}

  void write(std::span<const std::uint8_t> text);
  // Writes the end of the stream to the sink; nothing may be written after it.
  void finish();

 private:
  void flush();
  void stalled();
  std::unique_ptr<frame_encoder> enc_;
  byte_sink sink_;
  std::vector<std::uint8_t> buf_;
  std::size_t used_ = 0;
  bool finished_ = false;
};

// One per worker thread: it keeps the format's context between parts.
class part_compressor {
 public:
  part_compressor(format f, int level);
  explicit part_compressor(format f) : part_compressor(f, default_level(f)) {}

  // The most bytes a part of `text` bytes compresses to.
  [[nodiscard]] std::size_t bound(std::size_t text) const { return enc_->bound(text); }
  // The text as one member into out (out.size() >= bound(text.size())); returns its size.
  std::size_t compress(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) {
    return enc_->encode(text, out);
  }
  // The text's member appended to out.
  void append(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& out);

 private:
  std::unique_ptr<part_encoder> enc_;
};

}  // namespace gutf8::internal::compress
