#include "codec/stream_core.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "codec/lines.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {

namespace {
constexpr bool never_stops(operation op) { return op == operation::validate || op == operation::stats; }

// A strict transcode stops at the first error unit: that one is all it can list.
std::size_t listable_errors(const stream_config& c) {
  if (c.operation == operation::encode) return 0;  // UTF-32 input
  const bool stops = !never_stops(c.operation) && c.policy == error_policy::strict;
  return stops ? std::min<std::size_t>(c.max_listed_errors, 1) : c.max_listed_errors;
}
}  // namespace

stream_core::stream_core(const stream_config& config, std::unique_ptr<block_processor> processor, bool single_block)
    : processor_(std::move(processor)),
      op_(config.operation),
      policy_(never_stops(config.operation) ? error_policy::replace : config.policy),
      single_block_(single_block),
      want_histogram_(config.histogram && config.operation == operation::stats),
      form_(config.operation == operation::decode || config.operation == operation::encode ? config.form
                                                                                         : text_form::utf32le),
      bom_pending_(config.bom && config.operation == operation::decode) {
  if (op_ == operation::encode && form_ != text_form::utf32le) reader_.emplace(form_);
  if (const std::size_t max = listable_errors(config); max != 0) {
    listed_ = std::make_unique<std::vector<error_unit>>();
    // The list lives on the heap, so the visitor stays right when the stream core is moved.
    lister_.emplace([list = listed_.get(), max](const error_unit& u) {
      list->push_back(u);
      return list->size() < max;
    });
  }
}

stream_core::stream_core(const stream_config& config, bool single_block)
    : stream_core(config, make_processor(config.backend), single_block) {}

std::size_t stream_core::max_output(std::size_t n) const noexcept {
  // A UTF-16 or UTF-32BE decode output is never longer than UTF-32LE's.
  const std::size_t bom = bom_pending_ ? 4 : 0;
  return bom + max_codec_output(reader_ ? reader_->max_utf32(n) : n);
}

std::size_t stream_core::max_codec_output(std::size_t n) const noexcept {
  const std::size_t width = output_width(op_);
  if (width == 0) return 0;
  return width * (carried_ + n) + (op_ == operation::encode ? 3 : 0);
}

std::size_t stream_core::feed(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out) {
  if (stopped_ || finished_) return 0;
  if (lister_) {
    lister_->feed(std::as_bytes(data));
    if (at_end) lister_->finish();
  }
  std::size_t bom = 0;
  if (bom_pending_) {
    bom = write_bom(form_, out);
    bom_pending_ = false;
  }
  if (reader_) return bom + feed_from_form(data, at_end, out + bom);
  const std::size_t written = feed_codec(data, at_end, out == nullptr ? nullptr : out + bom);
  if (op_ != operation::decode) return written;
  return bom + utf32le_to_form(out + bom, written, form_);
}

std::size_t stream_core::feed_from_form(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out) {
  const std::uint64_t before = stats_.input.bytes;
  const bool placed = stats_.input.first_error.has_value();
  reader_->read(data, at_end);
  const std::size_t written = feed_codec(reader_->utf32(), at_end, out);
  shown_ = stats_;
  shown_.input.bytes = reader_->input_offset(stats_.input.bytes - before);
  if (!placed && stats_.input.first_error) {
    error_position e = *stats_.input.first_error;
    const std::size_t p = e.offset - before;
    e.offset = reader_->input_offset(p);
    if (const error_kind k = reader_->kind_at(p); k != error_kind::none) e.kind = k;
    shown_first_error_ = e;
  }
  shown_.input.first_error = shown_first_error_;
  return written;
}

std::size_t stream_core::feed_codec(std::span<const std::uint8_t> data, bool at_end, std::uint8_t* out) {
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

block_result stream_core::run_block(const std::uint8_t* data, std::size_t size, std::size_t end, bool at_end,
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

void stream_core::commit(const block_result& r, const line_facts& lines, bool counted_lines) {
  if (stopped_ || finished_ || carried_ != 0)
    throw error(errc::invalid_argument, "stream_core::commit: not a fresh stream core fed only by pieces");
  // Pieces bring counts, not bytes: the error list would silently miss their units.
  if (lister_)
    throw error(errc::invalid_argument, "stream_core::commit: a stream core that lists errors needs the bytes (feed)");
  if (form_ != text_form::utf32le || bom_pending_)
    throw error(errc::invalid_argument, "stream_core::commit: another text form needs the bytes (feed)");
  account(r, lines, counted_lines);
}

void stream_core::add_histogram(std::span<const std::uint64_t> counts) {
  if (!want_histogram_ || counts.size() != code_space)
    throw error(errc::invalid_argument, "stream_core::add_histogram: no histogram wanted, or not one counter a code point");
  if (histogram_.empty()) histogram_.assign(code_space, 0);
  for (std::size_t c = 0; c < code_space; ++c) histogram_[c] += counts[c];
}

void stream_core::set_lines_before(const lines_before& before) noexcept {
  newlines_ = before.newlines;
  line_start_ = before.line_start;
}

// Order matters: the error is placed, and the newline state moved on, relative to the
// bytes before this block.
void stream_core::account(const block_result& r, const line_facts& lines, bool counted_lines) {
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
error_position stream_core::locate(std::size_t offset, const line_facts& lines, error_kind kind) const {
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

std::vector<code_point_count> stream_core::top(std::size_t n) const {
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
