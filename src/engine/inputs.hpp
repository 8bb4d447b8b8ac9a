// What the engine reads an opened input from: a regular file or memory at random (pieces), a
// stream in order (chunks), or the bytes of a small input read whole. Opening decides which
// (open_input); failures are gutf8::error(io_failure) whose message is the reason alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "codec/lines.hpp"
#include "codec/stream_core.hpp"
#include "compress/decompressor.hpp"
#include "engine/board.hpp"
#include "engine/mapped_range.hpp"
#include "engine/pieces.hpp"

namespace gutf8::internal {

// An owned descriptor (or one borrowed from the caller, which is left open).
class descriptor {
 public:
  descriptor() = default;
  descriptor(int fd, bool owned) noexcept : fd_(fd), owned_(owned) {}
  descriptor(descriptor&& o) noexcept;
  descriptor& operator=(descriptor&& o) noexcept;
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;
  ~descriptor();
  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool owned() const noexcept { return owned_; }

 private:
  int fd_ = -1;
  bool owned_ = false;
};

// A regular file (from `base` to the size it had when opened) or memory, read in pieces.
class random_input final : public job_input {
 public:
  random_input(std::span<const std::uint8_t> memory, const piece_plan& plan);
  // release_step: see release_before.
  random_input(descriptor fd, std::uint64_t base, const piece_plan& plan, read_method read, std::uint64_t release_step);
  ~random_input() override;

  [[nodiscard]] const piece_plan& plan() const noexcept { return plan_; }
  // The run's window [run.window_begin(plan), run.window_end(plan)): in place (memory, a map of
  // the file) or copied into scratch. Throws io_failure when the file shrank.
  const std::uint8_t* window(const piece_run& run, std::vector<std::uint8_t>& scratch) const;
  // Whether windows are in place (memory, a map), and so stay readable until the input ends.
  [[nodiscard]] bool in_place() const noexcept { return bytes_ != nullptr; }
  // Fills buffer with the input's bytes from `at`, on `threads` threads (a GPU lane's fill).
  void read(std::span<std::uint8_t> buffer, std::uint64_t at, unsigned threads) const;
  // The lines of the input's first `end` bytes: what placing the first error needs when the pieces
  // did not count their lines.
  [[nodiscard]] lines_before count_lines(std::uint64_t end, std::size_t unit, unsigned threads) const;
  // A descriptor's offset is left after the consumed bytes, as a plain read would leave it.
  void consumed(std::uint64_t bytes) const;
  // The input is committed up to `end`: the map's pages before it leave the process (in steps of
  // release_step), so that its resident memory stays bounded whatever the file's size; the page
  // cache keeps them.
  void release_before(std::uint64_t end);

 private:
  void read_once(std::span<std::uint8_t> buffer, std::uint64_t at) const;

  piece_plan plan_;
  descriptor fd_;
  std::uint64_t base_ = 0;
  const std::uint8_t* bytes_ = nullptr;  // memory, or the whole file mapped; null: pread
  std::optional<mapped_range> map_;
  bool populate_ = false;  // read_method::map
  std::uint64_t release_step_ = 0;
  std::uint64_t released_ = 0;  // the map's bytes before this have left the process
};

// A stream's chunk: cut at a unit start, so that it is processed on its own (engine/pieces.hpp).
struct chunk {
  std::vector<std::uint8_t> bytes;  // the chunk, then up to 3 bytes of the next (the carry)
  std::size_t end = 0;              // units that start before end are this chunk's
  bool at_end = false;              // the stream ends at bytes.size()
  std::uint64_t offset = 0;         // of bytes[0] in the stream
};

// A stream read in order by one reader: a pipe, standard input, a character device, or a regular
// file (or bytes in memory) when the config needs one stream or the input is compressed and read
// in order. A compressed stream is read as the text it holds (compress/decompressor.hpp).
class stream_input final : public job_input {
 public:
  // format: the input's compression, known (none: bytes as they are), or found from its first
  // bytes on the first read (nullopt: a pipe, whose reads must be able to stop).
  stream_input(descriptor fd, bool regular, std::optional<std::uint64_t> size,
               std::optional<compress::format> format);
  // Bytes in memory (`owned`, or borrowed `bytes` that outlive the run).
  stream_input(std::vector<std::uint8_t>&& owned, std::span<const std::uint8_t> bytes, compress::format format);
  ~stream_input() override;
  // Fills buffer with text unless the stream ends first; returns the bytes read. A pipe is polled,
  // so that stop() (asked every ~0.1 s) ends a read that waits; it then returns what it has.
  std::size_t read(std::span<std::uint8_t> buffer, const std::function<bool()>& stop);
  // The reader's next chunk, cut at a unit start; the bytes after the cut open the next one.
  chunk next_chunk(std::size_t chunk_bytes, bool utf32, const std::function<bool()>& stop);

  // Chunks read and not yet processed, by piece number.
  void put(std::uint64_t k, chunk&& c);
  chunk take(std::uint64_t k);
  // Buffers of processed chunks, for the reader to fill again.
  void recycle(std::vector<std::uint8_t>&& bytes);

  std::optional<stream_core> core;  // one stream over the bytes (configs that need them all)

 private:
  std::size_t read_raw(std::span<std::uint8_t> buffer, const std::function<bool()>& stop);
  void open_decompressor(compress::format f, std::span<const std::uint8_t> head);
  void sniff(const std::function<bool()>& stop);

  descriptor fd_;
  bool regular_ = false;
  std::optional<std::uint64_t> size_;
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> memory_;  // bytes in memory not read yet (instead of fd_)
  bool in_memory_ = false;
  std::optional<compress::format> format_;
  std::unique_ptr<compress::decompressor> decompressor_;
  std::function<bool()> stop_;  // the current read's, for the decompressor's source
  std::vector<std::uint8_t> unread_;  // bytes read to sniff the format, served first
  bool raw_ended_ = false;
  std::uint64_t offset_ = 0;
  std::vector<std::uint8_t> carry_;
  bool ended_ = false;
  numbered_slots<chunk> slots_;
  std::mutex m_;  // spare_
  std::vector<std::vector<std::uint8_t>> spare_;
};

// A small input's bytes, read whole (or borrowed from memory), for a GPU lane to take.
class whole_input final : public job_input {
 public:
  explicit whole_input(std::vector<std::uint8_t>&& owned) : owned_(std::move(owned)), bytes_(owned_) {}
  explicit whole_input(std::span<const std::uint8_t> borrowed) : bytes_(borrowed) {}
  [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

 private:
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> bytes_;
};

// What a worker keeps from one open to the next: whether the last file system seen gives nominal
// sizes (one fstatfs a file system, not a file) and, where the worker processes the small files it
// opens at once, the buffer it reads them into (their jobs borrow the bytes until then).
class opener_state {
 public:
  explicit opener_state(bool reuse_buffer) : reuse_buffer_(reuse_buffer) {}
  bool size_is_nominal(int fd, std::uint64_t device);
  // Room for a small file's n bytes, or an empty span where each job must own its bytes.
  std::span<std::uint8_t> buffer(std::size_t n);

 private:
  std::optional<std::uint64_t> device_;
  bool nominal_ = false;
  bool reuse_buffer_;
  std::vector<std::uint8_t> buffer_;
};

// What opening an input found.
struct opened_input {
  job_shape shape = job_shape::whole;
  std::unique_ptr<job_input> in;
  std::span<const std::uint8_t> whole;  // job_shape::whole: the bytes (owned by `in`)
  std::uint64_t pieces = 1;
  bool holds_fd = false;
};

opened_input open_input(const input& what, const run_plan& plan, bool utf32, opener_state& opener);

// The engine's names of the compression layer's formats (the same values).
[[nodiscard]] compress::format format_of(compression c) noexcept;
[[nodiscard]] compression compression_of(compress::format f) noexcept;

}  // namespace gutf8::internal
