// Random-access processing of one input in pieces, on any threads, in any order.
//
// The input is cut at nominal offsets k * piece_bytes. A piece's exact bounds are the unit starts
// at or after its nominal ones (codec/boundary.hpp), which depend only on the few bytes around
// each nominal offset: the worker that reads a piece's window (its nominal range widened by
// piece_lead bytes before and piece_tail after) finds both bounds itself, and neighbours agree.
// Every unit of the input then lies in exactly one piece, no partial sequence is carried, and
// stream_core::commit accounts the pieces in input order. The input engine runs big files on all
// cores this way (engine/run.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/block.hpp"
#include "codec/lines.hpp"

namespace gutf8::internal {

inline constexpr std::size_t piece_lead = 3;  // the bytes before a cut that decide it
inline constexpr std::size_t piece_tail = 7;  // a cut moves up to 3 bytes, a unit takes 3 more

struct piece_plan {
  std::uint64_t total = 0;        // input bytes
  std::uint64_t piece_bytes = 0;  // nominal piece size (a multiple of 4 for UTF-32 input)

  [[nodiscard]] std::uint64_t count() const noexcept {
    return piece_bytes == 0 ? 0 : (total + piece_bytes - 1) / piece_bytes;
  }
  // The bytes of the input that piece k's worker reads: [window_begin(k), window_end(k)); pieces
  // first..last together read [window_begin(first), window_end(last)).
  [[nodiscard]] std::uint64_t window_begin(std::uint64_t k) const noexcept {
    const std::uint64_t nominal = k * piece_bytes;
    return nominal < piece_lead ? 0 : nominal - piece_lead;
  }
  [[nodiscard]] std::uint64_t window_end(std::uint64_t k) const noexcept {
    const std::uint64_t end = (k + 1) * piece_bytes + piece_tail;
    return end < total ? end : total;
  }
  // The largest window, for buffers.
  [[nodiscard]] std::size_t max_window() const noexcept {
    return static_cast<std::size_t>(piece_bytes + piece_lead + piece_tail);
  }
};

struct piece_outcome {
  block_result result;  // offsets relative to begin
  line_facts lines;     // the piece's own: its newlines only when it counted them
  bool counted_lines = false;
  std::uint64_t begin = 0;  // where the piece starts in the input
};

// The pieces [first, first + count) of the input: one worker's job.
struct piece_run {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  [[nodiscard]] std::uint64_t end() const noexcept { return first + count; }
  [[nodiscard]] std::uint64_t window_begin(const piece_plan& plan) const noexcept { return plan.window_begin(first); }
  [[nodiscard]] std::uint64_t window_end(const piece_plan& plan) const noexcept { return plan.window_end(end() - 1); }
};

// Processes the pieces of piece run `run` from their window (the input's bytes [run.window_begin(plan),
// run.window_end(plan))) with processor, which must not be shared with another thread. Only stats counts the newlines of
// every piece: that doubles the work of validating ASCII, and the other operations need them just
// to place the first error, so stream_core::commit's caller counts the lines before that piece then
// (set_lines_before). The facts about the piece's own first error are always found.
// out: room for output_width(op) * (window bytes) + 3 bytes (none for validate and stats).
// histogram: stats only, 0x110000 counters to add the piece run's code points to, or null.
piece_outcome process_pieces(block_processor& processor, operation op, error_policy policy,
                             const piece_plan& plan, const piece_run& run, const std::uint8_t* window,
                             std::uint8_t* out, std::uint64_t* histogram = nullptr);

// Processes data[0, size) as the input's next units, those that start before end (at_end: the input
// ends at size), counting lines: the bytes are gone when the outcome is committed (stream chunks,
// parts of compressed files). out: room for output_width(op) * size + 3.
piece_outcome process_counted(block_processor& processor, operation op, error_policy policy, const std::uint8_t* data,
                              std::size_t size, std::size_t end, bool at_end, std::uint8_t* out,
                              std::uint64_t* histogram);

}  // namespace gutf8::internal
