// The core of every stream: the backend-neutral bookkeeping around a block_processor (the
// carried partial sequence, global offsets, line/column of the first error, totals and the
// histogram). The one-shot functions are a stream core fed once with at_end; gutf8::stream is a
// stream core fed per chunk; the input engine commits its pieces' results into one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "codec/block.hpp"
#include "codec/forms.hpp"
#include "codec/lines.hpp"
#include "gutf8/errors.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::internal {

inline constexpr std::size_t code_space = 0x110000;  // histogram counters: one a code point

class stream_core {
 public:
  // single_block: the caller feeds the whole input at once (one-shot), so lines need not
  // be counted ahead of an error that may never come.
  stream_core(const stream_config& config, std::unique_ptr<block_processor> processor, bool single_block = false);
  stream_core(const stream_config& config, bool single_block = false);

  // Output bytes that feeding n more bytes may write at most.
  [[nodiscard]] std::size_t max_output(std::size_t n) const noexcept;
  [[nodiscard]] std::size_t max_codec_output(std::size_t n) const noexcept;  // of UTF-8 / UTF-32LE
  // Consumes data as the next bytes of the input (at_end: and the last); writes the output
  // at out (room for max_output(data.size())) and returns the bytes written.
  std::size_t feed(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out);

  // Accounts a block that was processed elsewhere (engine/pieces.hpp) as the next bytes of the
  // input, its output already placed by the caller. Only for a fresh stream core that is fed nothing
  // else, lists no errors (stream_config::max_listed_errors) and has the default text form; its
  // histogram, if any, comes from add_histogram. counted_lines: the block counted its newlines
  // (stats needs them all).
  // A block that did not count them leaves the newline state behind, so the first error after such blocks is
  // placed only after set_lines_before() has brought that state up to date.
  void commit(const block_result& r, const line_facts& lines, bool counted_lines);
  // The lines of the whole input before the next block, counted by the caller itself instead of
  // by every block.
  void set_lines_before(const lines_before& before) noexcept;
  // Adds code point counts (0x110000 of them) gathered by the blocks' own processors.
  void add_histogram(std::span<const std::uint64_t> counts);
  // Whether the next block's error would be the first one (and so needs the lines before it).
  [[nodiscard]] bool error_unplaced() const noexcept { return !stats_.input.first_error; }

  // In the input's terms: for encode from UTF-16 or UTF-32BE, bytes and offsets of that input.
  [[nodiscard]] const text_stats& stats() const noexcept { return reader_ ? shown_ : stats_; }
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  [[nodiscard]] std::vector<code_point_count> top(std::size_t n) const;
  [[nodiscard]] std::span<const error_unit> listed_errors() const noexcept {
    return listed_ ? std::span<const error_unit>(*listed_) : std::span<const error_unit>();
  }

 private:
  // feed for the UTF-8 / UTF-32LE codec itself.
  std::size_t feed_codec(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out);
  // encode from another form: read into UTF-32LE values, then report in the input's terms.
  std::size_t feed_from_form(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out);
  block_result run_block(const std::uint8_t* data, std::size_t size, std::size_t end, bool at_end,
                         std::uint8_t* out);
  void account(const block_result& r, const line_facts& lines, bool counted_lines);
  [[nodiscard]] error_position locate(std::size_t offset, const line_facts& lines, error_kind kind) const;
  [[nodiscard]] std::size_t unit() const noexcept { return line_unit(op_); }

  std::unique_ptr<block_processor> processor_;
  operation op_;
  error_policy policy_;
  bool single_block_;
  bool want_histogram_;
  bool stopped_ = false;
  bool finished_ = false;
  text_stats stats_{};
  std::uint64_t newlines_ = 0;    // newlines before stats_.input.bytes, while they are needed
  std::uint64_t line_start_ = 0;  // offset just after the last of those newlines
  std::array<std::uint8_t, 4> carry_{};
  std::size_t carried_ = 0;
  std::vector<std::uint64_t> histogram_;  // 0x110000 counters, allocated on first use
  std::unique_ptr<std::vector<error_unit>> listed_;  // stream_config::max_listed_errors > 0
  std::optional<error_walker> lister_;  // fills listed_
  text_form form_;
  bool bom_pending_;
  std::optional<form_reader> reader_;  // encode from a form other than UTF-32LE
  text_stats shown_{};                 // stats_ in the input's terms, with reader_
  std::optional<error_position> shown_first_error_;
};

}  // namespace gutf8::internal
