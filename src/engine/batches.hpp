// Small inputs settled together: a GPU lane (or a test's worker) joins the bytes of several small
// inputs read whole into one buffer and validates them as one block, one copy, one launch sequence
// and one synchronisation for all, instead of one each. Only what the joined block settles
// exactly is taken from it: an input before the block's first error is valid, and its report is
// what validating it alone gives (its bytes, no error). The input holding the first error is
// processed alone, as it would be without batching; the inputs after it are joined again.
//
// The inputs are joined with one NUL byte between them. NUL is a whole unit, and no sequence can
// take it as a continuation byte: a sequence cut short at an input's end ends there, an error of
// that input; a continuation byte at an input's start follows the NUL, an error of that input.
// The separator itself is never an error, so every error offset falls inside one input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "codec/block.hpp"
#include "engine/board.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::internal {

// Whether a batch settles the config's reports exactly: validate (with -l / -L, --json), whose
// report of a valid input is its byte count alone.
[[nodiscard]] bool batch_settles(const run_config& config) noexcept;

// The inputs of `jobs` (whole inputs: job::in is a whole_input) in order, joined into `buffer`
// (room for their bytes and a separator each) and validated on `processor`; `alone` processes a
// job as it would be without batching. Returns one result a job, in the jobs' order.
std::vector<run_result> settle_batch(block_processor& processor, std::span<std::uint8_t> buffer,
                                     std::span<job* const> jobs, const run_config& config,
                                     const std::function<run_result(job&)>& alone);

}  // namespace gutf8::internal
