// Decompressed text on demand ("the next up-to-N bytes") from a compressed input read in order (a
// pipe, standard input, a file) or from one part of a file, in bounded memory whatever the ratio:
// a fixed input buffer, the caller's output buffer, the format's own window.
//
// Members follow each other as the standard tools take them: any number of gzip members, zstd
// frames and skippable frames, xz streams and their padding, bzip2 streams, lz4 frames and skippable
// frames. After the last member, trailing bytes are judged as the tool does: gzip ignores them
// (silently when they are zeros, else with a warning: ignored_from() says where), bzip2 ignores them
// with a warning, zstd, xz and lz4 fail. A corrupt or truncated stream throws
// gutf8::error(io_failure) naming the position in the compressed bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "compress/codecs.hpp"
#include "compress/format.hpp"
#include "compress/parts.hpp"

namespace gutf8::internal::compress {

class decompressor {
 public:
  // Bytes of compressed input read from a byte_source at a time.
  static constexpr std::size_t input_buffer = 128 * 1024;

  decompressor();
  decompressor(decompressor&&) noexcept;
  decompressor& operator=(decompressor&&) noexcept;
  ~decompressor();

  // A whole compressed input read in order; head: its first bytes, already read from src (sniffed).
  void open(format f, byte_source src, std::span<const std::uint8_t> head = {});
  // One part of a file, its compressed bytes [p.offset, p.offset + p.size) in memory (a mapped view
  // or a buffer), read in place; they must outlive the reading.
  void open(format f, const part& p, std::span<const std::uint8_t> bytes);
  // One part of a file, read in order through the random reader, input_buffer bytes at a time.
  void open(format f, const part& p, random_reader read);

  // Up to out.size() bytes of text (at least 1 while any is left, out not empty); 0 at the end. A
  // part whose header or index recorded its text size must decompress to exactly that size; given
  // a buffer that holds all of it on the first read, gzip members (libdeflate) and zstd frames
  // decode at once into it (no copy out of a streaming window).
  // Errors name the compressed position where the decoder found the damage (a checksum that does
  // not match is found at its member's end).
  std::size_t read(std::span<std::uint8_t> out);

  // A part in memory of which nothing is read yet: the room its whole text needs to decode at once
  // (the text size its headers record, or the bound that zstd frames give); none otherwise.
  [[nodiscard]] std::optional<std::uint64_t> whole_text() const;

  // The file offset of the next compressed byte to decode.
  [[nodiscard]] std::uint64_t compressed_position() const noexcept;
  // Bytes of text read so far.
  [[nodiscard]] std::uint64_t text_position() const noexcept;
  // Where trailing bytes that gzip or bzip2 would warn about were ignored (known at the end).
  [[nodiscard]] std::optional<std::uint64_t> ignored_from() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace gutf8::internal::compress
