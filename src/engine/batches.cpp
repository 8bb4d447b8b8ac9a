#include "engine/batches.hpp"

#include <algorithm>
#include <cstring>

#include "engine/inputs.hpp"
#include "engine/workers.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

constexpr std::uint8_t separator = 0x00;

// A processor for an input the batch found valid: it reports each block as valid units only, so
// that the stream core books the input exactly as validating it alone would.
class found_valid final : public block_processor {
 public:
  block_result process(const block_request& rq) override {
    block_result r;
    r.consumed = rq.size;
    return r;
  }
};

std::span<const std::uint8_t> bytes_of(const job& j) { return static_cast<const whole_input&>(*j.in).bytes(); }

// Joins jobs[from, end) into buffer; returns each input's start.
std::vector<std::size_t> join(std::span<std::uint8_t> buffer, std::span<job* const> jobs, std::size_t from) {
  std::vector<std::size_t> starts;
  std::size_t at = 0;
  for (std::size_t k = from; k < jobs.size(); ++k) {
    const std::span<const std::uint8_t> b = bytes_of(*jobs[k]);
    if (at + b.size() + 1 > buffer.size()) throw error(errc::invalid_argument, "settle_batch: the batch outgrows its buffer");
    starts.push_back(at);
    if (!b.empty()) std::memcpy(buffer.data() + at, b.data(), b.size());
    at += b.size();
    buffer[at++] = separator;
  }
  return starts;
}

// The input (relative to from) holding the joined block's first error, or the count when none has one.
std::size_t first_invalid(block_processor& processor, std::span<std::uint8_t> buffer, std::span<job* const> jobs,
                          std::size_t from) {
  const std::vector<std::size_t> starts = join(buffer, jobs, from);
  const std::size_t size = starts.back() + bytes_of(*jobs.back()).size();  // the last separator is left out
  block_request rq;
  rq.op = operation::validate;
  rq.data = buffer.data();
  rq.size = rq.end = size;
  rq.at_end = true;
  const block_result r = size == 0 ? block_result{} : processor.process(rq);
  if (r.errors == 0) return starts.size();
  if (r.first_error == no_error) return 0;  // not expected: the first input goes alone, which is exact
  const auto after = std::upper_bound(starts.begin(), starts.end(), r.first_error);
  return static_cast<std::size_t>(after - starts.begin()) - 1;
}

}  // namespace

bool batch_settles(const run_config& config) noexcept {
  const stream_config& sc = config.stream;
  return sc.operation == operation::validate && sc.max_listed_errors == 0;
}

std::vector<run_result> settle_batch(block_processor& processor, std::span<std::uint8_t> buffer,
                                     std::span<job* const> jobs, const run_config& config,
                                     const std::function<run_result(job&)>& alone) {
  if (!batch_settles(config)) throw error(errc::invalid_argument, "settle_batch: the config's reports need each input alone");
  std::vector<run_result> results;
  results.reserve(jobs.size());
  found_valid valid;
  std::size_t from = 0;
  while (from < jobs.size()) {
    const std::size_t bad = from + first_invalid(processor, buffer, jobs, from);
    for (; from < bad; ++from) results.push_back(process_whole(valid, bytes_of(*jobs[from]), config));
    if (from == jobs.size()) break;
    results.push_back(alone(*jobs[from]));
    ++from;
  }
  return results;
}

}  // namespace gutf8::internal
