// Streaming API: feed chunks of any size, get output that is byte-identical to a
// one-shot call on the concatenation (SPEC §1, streaming invariance). A sequence split
// across chunks is carried over; it is an error only if the input really ends there.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "gutf8/codec.hpp"
#include "gutf8/errors.hpp"
#include "gutf8/types.hpp"

namespace gutf8 {

enum class operation : std::uint8_t {
  validate,  // count error units, locate the first; no output
  decode,    // UTF-8 -> UTF-32LE
  encode,    // UTF-32LE -> UTF-8
  repair,  // UTF-8 -> UTF-8 with error units replaced or dropped
  stats,     // validate + code point, line and sequence-length counts (+ histogram)
};

struct stream_config {
  gutf8::operation operation = operation::validate;
  error_policy policy = error_policy::strict;  // ignored by validate and stats
  bool histogram = false;                      // stats: keep per-code-point counts for top()
  options backend{};
  // UTF-8 input (not encode): keep the first N error units for listed_errors(); 0 keeps none.
  // Under a strict decode or repair, which stops at the first, that one is all there is.
  std::size_t max_listed_errors = 0;
  // Decode's output and encode's input form (UTF-32LE by default; types.hpp).
  text_form form = text_form::utf32le;
  bool bom = false;  // decode: write U+FEFF in `form` before the output
};

// Where a stream's time went on the GPU (for diagnostics such as `gutf8 --verbose`), summed
// over its chunks; all zero when the CPU did the work. Measured with CUDA events, so stages that
// overlap (two CUDA streams) add up to more than the wall-clock time.
struct stream_timings {
  double h2d_seconds = 0;      // host-to-device copies
  double kernel_seconds = 0;   // kernels
  double d2h_seconds = 0;      // device-to-host copies (results and output)
  double staging_seconds = 0;  // host copies through page-locked staging (pageable chunk or out)
  std::uint64_t gpu_bytes = 0;  // input bytes processed on the GPU
  std::uint64_t gpu_decompressed_bytes = 0;  // text decompressed on the GPU (compressed inputs, nvCOMP)
  // backend::auto_select gave up on the GPU for lack of device memory (or of
  // options::device_memory_limit), so the CPU did the work from then on.
  bool gpu_memory_fallback = false;
};

struct code_point_count {
  char32_t code_point;
  std::uint64_t count;
  friend bool operator==(const code_point_count&, const code_point_count&) = default;
};

class stream {
 public:
  explicit stream(const stream_config& config);
  ~stream();
  stream(stream&&) noexcept;
  stream& operator=(stream&&) noexcept;
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  // Appends this chunk's output (UTF-32LE bytes for decode, UTF-8 for encode/repair,
  // nothing for validate/stats) to out. Returns false once strict mode stopped at an
  // error; later calls then do nothing.
  bool feed(std::span<const std::byte> chunk, std::vector<std::byte>& out);
  // Ends the input. A carried partial sequence becomes one error unit.
  bool finish(std::vector<std::byte>& out);

  // feed / finish into caller-provided memory of at least max_output(chunk.size()) bytes
  // (max_output(0) for finish_into); return the bytes written (check stopped() for strict mode).
  // Nothing is allocated; with chunk and out in host_buffers the CUDA backend transfers them
  // without staging copies. Throws gutf8::error(output_too_small) for a short out.
  [[nodiscard]] std::size_t max_output(std::size_t chunk_bytes) const noexcept;
  std::size_t feed_into(std::span<const std::byte> chunk, std::span<std::byte> out);
  std::size_t finish_into(std::span<std::byte> out);

  [[nodiscard]] stream_timings timings() const;

  [[nodiscard]] const text_stats& stats() const noexcept;  // counts so far
  [[nodiscard]] bool stopped() const noexcept;
  // The first stream_config::max_listed_errors error units so far, in input order.
  [[nodiscard]] std::span<const error_unit> listed_errors() const noexcept;
  // The n most frequent code points (count descending, then code point ascending).
  // Needs stream_config::histogram.
  [[nodiscard]] std::vector<code_point_count> top(std::size_t n) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Host memory for chunks and outputs that the GPU can transfer without a staging copy:
// page-locked when `opt` selects the GPU for an input of opt.size_hint bytes (backend::cuda, or
// auto_select with a size_hint for which the GPU pays, and a usable GPU) and page-locking
// succeeds; ordinary memory otherwise. Uninitialised, move-only. Throws std::bad_alloc.
class host_buffer {
 public:
  host_buffer() = default;
  host_buffer(std::size_t bytes, const options& opt);
  ~host_buffer();
  host_buffer(host_buffer&& o) noexcept;
  host_buffer& operator=(host_buffer&& o) noexcept;
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<std::byte> span() const noexcept { return {data_, size_}; }
  [[nodiscard]] bool pinned() const noexcept { return pinned_; }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool pinned_ = false;
};

}  // namespace gutf8
