// Text decompressed from one part of a compressed file on its own (engine/compressed.hpp): a
// character may straddle two parts, so each part is processed from its first certain unit start to
// its last one, and the few bytes around each seam (at most 3 of the part before, 3 of the part
// after) are processed as their own block when the parts are committed, in order (seam_block).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "codec/block.hpp"
#include "engine/pieces.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::internal {

// The first unit start that the text's own bytes prove (a byte that is no continuation, or a
// continuation after three others): at most 3; size when there is none (3 continuations or fewer).
std::size_t first_certain_start(const std::uint8_t* p, std::size_t size) noexcept;
// The last unit start at or after `from` (itself a certain start) that the bytes before it prove:
// size itself after an ASCII byte or three continuations, else one of the last 3 bytes.
std::size_t last_certain_start(const std::uint8_t* p, std::size_t from, std::size_t size) noexcept;

// What a part leaves to the committer at its edges.
struct text_edges {
  std::array<std::uint8_t, 6> head{};  // the bytes before its first certain unit start, then up to 3 after it
  std::uint8_t head_size = 0;
  std::uint8_t lead = 0;               // bytes of head before the first certain start
  std::array<std::uint8_t, 3> tail{};  // the bytes after its last certain unit start
  std::uint8_t tail_size = 0;
  bool no_start = false;               // the part has no certain unit start: head holds all its text
  [[nodiscard]] bool has_start() const noexcept { return !no_start; }
};

// One block of a part's text: data[0, size), whose units before `end` are its own (the bytes from
// end on are read ahead, then carried to the next block); head_open: the block starts the part (its
// first bytes may finish a character of the part before); tail_open: it ends the part.
struct part_block {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t end = 0;
  bool head_open = false;
  bool tail_open = false;
};

// Processes the block from its first certain unit start (head_open, else 0) to its last (tail_open,
// else end), counting lines; what lies outside goes to edges (head when head_open, tail when
// tail_open). out: room for output_room(op, size).
piece_outcome process_part_block(block_processor& processor, const run_config& config, const part_block& b,
                                 std::uint8_t* out, std::uint64_t* histogram, text_edges& edges);

// total followed by next (whose offsets count from its own start), as one outcome; both counted lines.
void append_outcome(piece_outcome& total, const piece_outcome& next);

// The committer's side of the seams of one input: the bytes that no part could place, from a
// certain unit start on, and the blocks they make in order.
class seam_joiner {
 public:
  // A block to process: bytes[0, end) are its units, the bytes after end are read ahead.
  struct block {
    std::string bytes;
    std::size_t end = 0;
    bool at_end = false;
  };
  // Before a part's own outcome: the seam block its head closes, if any.
  [[nodiscard]] bool before(const text_edges& e, block& seam);
  // After it: its tail waits for the next part.
  void after(const text_edges& e);
  // At the end of the input: what is left, as the input's last block.
  [[nodiscard]] bool finish(block& last);

 private:
  std::string pending_;  // starts at a certain unit start
};

}  // namespace gutf8::internal
