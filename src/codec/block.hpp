// The seam between the backend-neutral bookkeeping (stream_core: carry, offsets, lines,
// first error) and a backend that does the per-byte work on one contiguous block. Each backend
// lives in its folder: src/cpu (cpu/cpu_block.hpp), src/cuda (codec/gpu_backend.hpp), and src/none
// in a build without CUDA.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "gutf8/codec.hpp"
#include "gutf8/stream.hpp"
#include "gutf8/types.hpp"

namespace gutf8::internal {

inline constexpr std::size_t no_error = SIZE_MAX;

// Output bytes an operation may write per input byte (encode adds 3 for a ragged tail,
// which becomes one U+FFFD).
constexpr std::size_t output_width(operation op) noexcept {
  switch (op) {
    case operation::decode:
      return 4;
    case operation::repair:
      return 3;
    case operation::encode:
      return 1;
    default:
      return 0;
  }
}

struct block_request {
  operation op = operation::validate;
  error_policy policy = error_policy::replace;  // validate and stats never stop: use replace
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;                // readable bytes at data
  std::size_t end = 0;                 // process the units that start before end (end <= size)
  bool at_end = false;                 // the input really ends at data + size
  bool count_lines = false;            // fill block_result::lines
  std::uint64_t* histogram = nullptr;  // stats only: 0x110000 counters, or null
  std::uint8_t* out = nullptr;         // room for output_width(op) * size (+3 for encode)
};

struct block_result {
  std::size_t consumed = 0;  // bytes of complete units; the rest of [0, size) is carried
  std::size_t written = 0;   // output bytes
  std::uint64_t errors = 0;
  std::size_t first_error = no_error;  // block-relative offset of the first error unit
  error_kind first_kind = error_kind::none;
  bool stopped = false;                      // strict policy hit an error unit; consumed is its offset
  std::uint64_t lines = 0;                   // LF bytes (U+000A values for encode) in [0, consumed)
  std::array<std::uint64_t, 4> by_length{};  // stats: well-formed sequences by length
};

class block_processor {
 public:
  virtual ~block_processor() = default;
  virtual block_result process(const block_request& request) = 0;
  // Where the GPU time went (all zero for a processor that never used one).
  [[nodiscard]] virtual stream_timings timings() const noexcept { return {}; }
};


// Backend selection, the one place that knows which backends exist (dispatch.cpp).
std::unique_ptr<block_processor> make_processor(const options& opt);

// Whether opt sends an input of opt.size_hint bytes to the GPU (host_buffer pins memory then);
// next to make_processor in dispatch.cpp, so that the two cannot disagree.
bool gpu_selected(const options& opt);

}  // namespace gutf8::internal
