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
#include "gutf8/types.hpp"

namespace gutf8 {

enum class operation : std::uint8_t {
  validate,  // count error units, locate the first; no output
  decode,    // UTF-8 -> UTF-32LE
  encode,    // UTF-32LE -> UTF-8
  sanitize,  // UTF-8 -> UTF-8 with error units replaced or dropped
  stats,     // validate + code point, line and sequence-length counts (+ histogram)
};

struct stream_config {
  gutf8::operation operation = operation::validate;
  error_policy policy = error_policy::strict;  // ignored by validate and stats
  bool histogram = false;                      // stats: keep per-code-point counts for top()
  options backend{};
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

  // Appends this chunk's output (UTF-32LE bytes for decode, UTF-8 for encode/sanitize,
  // nothing for validate/stats) to out. Returns false once strict mode stopped at an
  // error; later calls then do nothing.
  bool feed(std::span<const std::byte> chunk, std::vector<std::byte>& out);
  // Ends the input. A carried partial sequence becomes one error unit.
  bool finish(std::vector<std::byte>& out);

  [[nodiscard]] const text_stats& stats() const noexcept;  // counts so far
  [[nodiscard]] bool stopped() const noexcept;
  // The n most frequent code points (count descending, then code point ascending).
  // Needs stream_config::histogram.
  [[nodiscard]] std::vector<code_point_count> top(std::size_t n) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace gutf8
