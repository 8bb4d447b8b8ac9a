#include "cpu/cpu_block.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "codec/boundary.hpp"
#include "codec/lines.hpp"
#include "cpu/scan.hpp"
#include "gutf8/prim/cpu.hpp"

namespace gutf8::internal {
namespace {

using cpu::mode;
using cpu::segment_result;
using cpu::u8;
using enum error_policy;

// One thread's share of a block, scanned.
struct scanned_segment {
  segment_result scan;
  std::uint64_t lines = 0;
  std::size_t written_at = 0;  // where in rq.out the segment's output starts
};

template <mode M>
segment_result utf8_by_policy(error_policy policy, const cpu::scan_request& j) {
  switch (policy) {
    case strict:
      return cpu::scan_utf8<M, strict>(j);
    case drop:
      return cpu::scan_utf8<M, drop>(j);
    default:
      return cpu::scan_utf8<M, replace>(j);
  }
}

segment_result utf32_by_policy(error_policy policy, const cpu::scan_request& j) {
  switch (policy) {
    case strict:
      return cpu::scan_utf32<strict>(j);
    case drop:
      return cpu::scan_utf32<drop>(j);
    default:
      return cpu::scan_utf32<replace>(j);
  }
}

segment_result scan(operation op, error_policy policy, const cpu::scan_request& j) {
  switch (op) {
    case operation::validate:
      return cpu::scan_utf8<mode::validate, replace>(j);
    case operation::stats:
      if (j.histogram != nullptr) return cpu::scan_utf8<mode::stats, replace, true>(j);
      return cpu::scan_utf8<mode::stats, replace>(j);
    case operation::decode:
      return utf8_by_policy<mode::decode>(policy, j);
    case operation::repair:
      return utf8_by_policy<mode::repair>(policy, j);
    case operation::encode:
      return utf32_by_policy(policy, j);
  }
  return {};
}

std::size_t capacity(const block_request& rq) {
  return output_width(rq.op) * rq.size + (rq.op == operation::encode ? 3 : 0);
}

// The units of the request that start in [begin, end), output to [out_at, out_end).
scanned_segment scan_segment(const block_request& rq, std::size_t begin, std::size_t end, cpu::isa level,
                              std::size_t out_at, std::size_t out_end) {
  cpu::scan_request j;
  j.in = rq.data + begin;
  j.end = end - begin;
  j.limit = rq.size - begin;
  j.at_end = rq.at_end;
  if (rq.out != nullptr) {
    j.out = rq.out + out_at;
    j.out_limit = rq.out + out_end;
  }
  j.histogram = rq.histogram;
  j.level = level;
  scanned_segment s{scan(rq.op, rq.policy, j), 0, out_at};
  if (rq.count_lines) s.lines = count_newlines(j.in, s.scan.consumed, line_unit(rq.op));
  return s;
}

// Runs work(k) for k in [0, count): k = 0 on this thread, the others on their own.
template <class Work>
void parallel(std::size_t count, const Work& work) {
  std::vector<std::jthread> threads;
  threads.reserve(count - 1);
  for (std::size_t k = 1; k < count; ++k) threads.emplace_back([&work, k] { work(k); });
  work(0);
}

std::size_t split_point(const block_request& rq, std::size_t q) {
  return unit_start_at_or_after(rq.data, q, rq.end, rq.op == operation::encode);
}

// Joins the segments in order, moving each output next to the previous one if it is not there.
block_result merge(const block_request& rq, std::span<const std::size_t> bounds,
                   std::span<const scanned_segment> segments) {
  block_result out;
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const segment_result& s = segments[k].scan;
    if (s.written != 0) {
      if (segments[k].written_at != out.written)
        std::memmove(rq.out + out.written, rq.out + segments[k].written_at, s.written);
      out.written += s.written;
    }
    if (s.errors != 0 && out.first_error == no_error) {
      out.first_error = bounds[k] + s.first_error;
      out.first_kind = s.first_kind;
    }
    out.errors += s.errors;
    out.lines += segments[k].lines;
    for (std::size_t l = 0; l < 4; ++l) out.by_length[l] += s.by_length[l];
    out.consumed = bounds[k] + s.consumed;
    if (s.stopped) {  // strict: everything after the first error unit is discarded
      out.stopped = true;
      break;
    }
  }
  return out;
}

// Output bytes of a segment, from its stats: what decode or repair will write.
std::size_t sized_output(const block_request& rq, const segment_result& s) {
  const std::uint64_t errors = rq.policy == replace ? s.errors : 0;
  if (rq.op == operation::decode)
    return 4 * (s.by_length[0] + s.by_length[1] + s.by_length[2] + s.by_length[3] + errors);
  return s.by_length[0] + 2 * s.by_length[1] + 3 * s.by_length[2] + 4 * s.by_length[3] + 3 * errors;
}

class cpu_processor final : public block_processor {
 public:
  cpu_processor(unsigned threads, cpu_tuning tuning) : threads_(threads), tuning_(tuning) {}

  block_result process(const block_request& rq) override {
    const std::size_t count = segment_count(rq);
    if (count == 1) {
      const std::array<std::size_t, 2> bounds{0, rq.end};
      const scanned_segment whole = scan_segment(rq, 0, rq.end, tuning_.level, 0, capacity(rq));
      return merge(rq, bounds, std::span(&whole, 1));
    }
    std::vector<std::size_t> bounds(count + 1, rq.end);
    bounds[0] = 0;
    for (std::size_t k = 1; k < count; ++k)
      bounds[k] = std::max(bounds[k - 1], split_point(rq, rq.end / count * k));
    if (rq.op == operation::decode || rq.op == operation::repair) return sized(rq, bounds);
    // Validate and stats write nothing; encode writes less than it reads, so each segment
    // writes where its input starts and merge() moves the (small) outputs together.
    std::vector<scanned_segment> segments(count);
    parallel(count, [&](std::size_t k) {
      const std::size_t width = output_width(rq.op);
      const std::size_t out_end = k + 1 == count ? capacity(rq) : width * bounds[k + 1];
      segments[k] = scan_segment(rq, bounds[k], bounds[k + 1], tuning_.level, width * bounds[k], out_end);
    });
    return merge(rq, bounds, segments);
  }

 private:
  // Decode and repair outputs are larger than their inputs, and moving them after the
  // fact would be a serial copy of everything. So a first parallel pass (the stats scan)
  // sizes every segment's output, and the second writes each segment in its final place.
  block_result sized(const block_request& rq, const std::vector<std::size_t>& bounds) const {
    const std::size_t count = bounds.size() - 1;
    std::vector<segment_result> sizes(count);
    parallel(count, [&](std::size_t k) {
      cpu::scan_request j;
      j.in = rq.data + bounds[k];
      j.end = bounds[k + 1] - bounds[k];
      j.limit = rq.size - bounds[k];
      j.at_end = rq.at_end;
      j.level = tuning_.level;
      sizes[k] = cpu::scan_utf8<mode::stats, replace>(j);
    });
    // Strict keeps nothing after the first segment with an error; that segment ends anywhere.
    std::size_t used = count;
    std::vector<std::size_t> at(count + 1, 0);
    for (std::size_t k = 0; k < count; ++k) {
      if (rq.policy == strict && sizes[k].errors != 0) {
        used = k + 1;
        at[k + 1] = capacity(rq);
        break;
      }
      at[k + 1] = at[k] + sized_output(rq, sizes[k]);
    }
    std::vector<scanned_segment> segments(used);
    parallel(used, [&](std::size_t k) {
      segments[k] = scan_segment(rq, bounds[k], bounds[k + 1], tuning_.level, at[k], at[k + 1]);
    });
    return merge(rq, bounds, segments);
  }

  // The histogram is one shared array, so stats with a histogram stays on one thread.
  std::size_t segment_count(const block_request& rq) const noexcept {
    if (rq.histogram != nullptr || rq.end < tuning_.parallel_threshold) return 1;
    // Asked here, not at construction: small one-shot calls should not pay for the query.
    const unsigned threads = threads_ != 0 ? threads_ : prim::cpu::hardware_threads();
    const std::size_t by_size = rq.end / std::max<std::size_t>(tuning_.min_segment, 1);
    return std::clamp<std::size_t>(by_size, 1, threads);
  }

  unsigned threads_;  // 0: all hardware threads
  cpu_tuning tuning_;
};

}  // namespace

std::unique_ptr<block_processor> make_cpu_processor(unsigned threads, cpu_tuning tuning) {
  return std::make_unique<cpu_processor>(threads, tuning);
}

}  // namespace gutf8::internal
