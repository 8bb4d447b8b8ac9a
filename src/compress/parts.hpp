// A compressed file cut, without decompressing it, into parts that decompress independently (on
// any thread, in bounded memory): zstd and lz4 frames walked by their headers, xz blocks from the
// index, gzip members whose header records their size (gutf8's own 'G8' members and BGZF). bzip2,
// and gzip from the first member that records no size, are one part to the end of the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "compress/codecs.hpp"
#include "compress/format.hpp"

namespace gutf8::internal::compress {

// What a part's bytes hold: whole members, frames or streams of the format, or one block of an xz
// stream (its header, index and footer lie outside every part; the index gives the block's sizes).
enum class layout : std::uint8_t { members, xz_block };

struct part {
  std::uint64_t offset = 0;                // the part is the file's compressed bytes
  std::uint64_t size = 0;                  //   [offset, offset + size)
  std::optional<std::uint64_t> text_size;  // its decompressed size, where headers or the index say it
  layout holds = layout::members;
  std::uint32_t xz_check = 0;  // xz_block: its stream's check type
  bool first = true;           // it opens the file (else a member of the file precedes it)
  bool last = true;            // it ends the file: bytes after its last member are judged as the
                               // format's tool judges trailing bytes (else they are corrupt data)
  std::optional<std::uint64_t> text_bound;  // where text_size is unknown, the most text it can hold

  // The most text the part holds, where its headers say it.
  [[nodiscard]] std::optional<std::uint64_t> most_text() const noexcept { return text_size ? text_size : text_bound; }
};

class splitter {
 public:
  // The parts of a file of file_size bytes in format f, each grouping whole frames (members) up to
  // about target compressed bytes (a frame larger than target is a part alone; an xz block is a
  // part alone, whatever its size: xz -T writes blocks of 3 dictionaries, 24 MiB of text at -6).
  // The reader serves the frame headers (and an xz file's index, read at once).
  splitter(format f, random_reader read, std::uint64_t file_size, std::uint64_t target);
  splitter(splitter&&) noexcept;
  splitter& operator=(splitter&&) noexcept;
  ~splitter();

  // The next part in file order (reading the headers it needs); none after the last. A frame whose
  // header is not valid ends the splitting: the rest of the file is one last part, whose
  // decompression reports what is wrong where it is.
  std::optional<part> next();

 private:
  struct state;
  std::unique_ptr<state> s_;
};

// Every part of the file at once (what a caller that plans the whole file wants).
std::vector<part> split(format f, const random_reader& read, std::uint64_t file_size, std::uint64_t target);

}  // namespace gutf8::internal::compress
