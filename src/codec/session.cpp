#include "codec/session.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "codec/lines.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {

namespace {
constexpr bool never_stops(operation op) { return op == operation::validate || op == operation::stats; }
}  // namespace

session::session(const stream_config& config, std::unique_ptr<block_processor> processor, bool single_block)
    : processor_(std::move(processor)),
      op_(config.operation),
      policy_(never_stops(config.operation) ? error_policy::replace : config.policy),
      single_block_(single_block),
      want_histogram_(config.histogram && config.operation == operation::stats) {}

session::session(const stream_config& config, bool single_block)
    : session(config, make_processor(config.backend), single_block) {}

std::size_t session::max_output(std::size_t n) const noexcept {
  const std::size_t width = output_width(op_);
  if (width == 0) return 0;
  return width * (carried_ + n) + (op_ == operation::encode ? 3 : 0);
}

std::size_t session::feed(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out) {
  if (stopped_ || finished_) return 0;
  finished_ = at_end;
  std::size_t written = 0;
  if (carried_ != 0) {
    // Complete (or refute) the carried sequence with just the bytes it can still take: a
    // UTF-8 sequence or a UTF-32 value has at most 4 bytes.
    const std::size_t held = carried_;
    const std::size_t take = std::min(data.size(), carry_.size() - held);
    std::array<std::uint8_t, 8> joint{};
    std::memcpy(joint.data(), carry_.data(), held);
    if (take != 0) std::memcpy(joint.data() + held, data.data(), take);
    const block_result r = run_block(joint.data(), held + take, held, at_end && take == data.size(), out);
    written = r.written;
    if (stopped_) return written;
    if (r.consumed == 0) {  // still a valid prefix: the chunk was shorter than the rest
      std::memcpy(carry_.data() + held, joint.data() + held, take);
      carried_ = held + take;
      return written;
    }
    carried_ = 0;
    data = data.subspan(r.consumed - held);
  }
  if (!data.empty()) {
    const block_result r = run_block(data.data(), data.size(), data.size(), at_end, out + written);
    written += r.written;
    if (!stopped_) {
      carried_ = data.size() - r.consumed;
      std::memcpy(carry_.data(), data.data() + r.consumed, carried_);
    }
  }
  return written;
}

block_result session::run_block(const std::uint8_t* data, std::size_t size, std::size_t end, bool at_end,
                                std::uint8_t* out) {
  if (want_histogram_ && histogram_.empty()) histogram_.assign(code_space, 0);
  block_request rq;
  rq.op = op_;
  rq.policy = policy_;
  rq.data = data;
  rq.size = size;
  rq.end = end;
  rq.at_end = at_end;
  // Lines are needed for stats, and to place an error that a later block may hold.
  rq.count_lines = op_ == operation::stats || (!single_block_ && !stats_.input.first_error);
  rq.histogram = want_histogram_ ? histogram_.data() : nullptr;
  rq.out = out;
  const block_result r = processor_->process(rq);
  account(r, find_line_facts(data, r, unit(), !stats_.input.first_error), rq.count_lines);
  return r;
}

void session::commit(const block_result& r, const line_facts& lines, bool counted_lines) {
  if (stopped_ || finished_ || carried_ != 0)
    throw error(errc::invalid_argument, "session::commit: not a fresh session fed only by pieces");
  account(r, lines, counted_lines);
}

void session::add_histogram(std::span<const std::uint64_t> counts) {
  if (!want_histogram_ || counts.size() != code_space)
    throw error(errc::invalid_argument, "session::add_histogram: no histogram wanted, or not one counter a code point");
  if (histogram_.empty()) histogram_.assign(code_space, 0);
  for (std::size_t c = 0; c < code_space; ++c) histogram_[c] += counts[c];
}

void session::set_lines_before(const lines_before& before) noexcept {
  newlines_ = before.newlines;
  line_start_ = before.line_start;
}

// Order matters: the error is placed, and the newline state moved on, relative to the
// bytes before this block.
void session::account(const block_result& r, const line_facts& lines, bool counted_lines) {
  summary& in = stats_.input;
  if (r.errors != 0 && !in.first_error) in.first_error = locate(r.first_error, lines, r.first_kind);
  in.errors += r.errors;
  if (counted_lines) {
    if (r.lines != 0) line_start_ = in.bytes + lines.last + unit();
    newlines_ += r.lines;
  }
  in.bytes += r.consumed;
  stopped_ = r.stopped;
  if (op_ != operation::stats) return;
  stats_.lines = newlines_;
  for (std::size_t l = 0; l < 4; ++l) {
    stats_.by_length[l] += r.by_length[l];
    stats_.code_points += r.by_length[l];
  }
}

// Line = 1 + newlines before the unit; column = 1 + units since the last newline: bytes
// for UTF-8, code points (4-byte values) for encode's UTF-32 input.
error_position session::locate(std::size_t offset, const line_facts& lines, error_kind kind) const {
  const std::size_t u = unit();
  const std::uint64_t base = stats_.input.bytes;
  const std::uint64_t start =
      lines.last_before_error == no_newline ? line_start_ : base + lines.last_before_error + u;
  error_position at;
  at.offset = base + offset;
  at.line = 1 + newlines_ + lines.before_error;
  at.column = (at.offset - start) / u + 1;
  at.kind = kind;
  return at;
}

std::vector<code_point_count> session::top(std::size_t n) const {
  if (!want_histogram_)
    throw error(errc::invalid_argument, "top() needs operation::stats with stream_config::histogram");
  std::vector<code_point_count> seen;
  for (std::size_t c = 0; c < histogram_.size(); ++c)
    if (histogram_[c] != 0) seen.push_back({static_cast<char32_t>(c), histogram_[c]});
  n = std::min(n, seen.size());
  std::partial_sort(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(n), seen.end(),
                    [](const code_point_count& a, const code_point_count& b) {
                      return a.count != b.count ? a.count > b.count : a.code_point < b.code_point;
                    });
  seen.resize(n);
  return seen;
}

}  // namespace gutf8::internal
