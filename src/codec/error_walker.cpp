// The error walker: one byte at a time by Table 3-7 (kernels/utf8/utf8_rules.hpp, the rules the
// block codecs share), with runs of ASCII skipped eight bytes at a time.
#include "gutf8/errors.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "utf8/utf8_rules.hpp"

namespace gutf8 {
namespace {

constexpr std::uint64_t every_byte(std::uint8_t b) { return 0x0101010101010101ull * b; }

bool has_newline(std::uint64_t word) {
  const std::uint64_t x = word ^ every_byte('\n');
  return ((x - every_byte(1)) & ~x & every_byte(0x80)) != 0;
}

}  // namespace

error_walker::error_walker(visitor v) : visit_(std::move(v)) {}

void error_walker::feed(std::span<const std::byte> chunk) {
  const std::span data(reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size());
  std::size_t i = 0;
  while (i < data.size() && !stopped_) {
    if (pending_length_ == 0) i += skip_ascii(data.subspan(i));
    if (i < data.size()) step(data[i++]);
  }
}

void error_walker::finish() {
  if (pending_length_ != 0 && !stopped_) emit(error_kind::truncated_at_end);
}

// Whole words of ASCII only, so no sequence can start or end inside them.
std::size_t error_walker::skip_ascii(std::span<const std::uint8_t> data) {
  std::size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, data.data() + i, 8);
    if ((word & every_byte(0x80)) != 0) break;
    if (!has_newline(word)) continue;
    for (std::size_t j = 0; j < 8; ++j) {
      if (data[i + j] != '\n') continue;
      ++newlines_;
      line_start_ = offset_ + i + j + 1;
    }
  }
  offset_ += i;
  return i;
}

// pending_ holds the bytes just before offset_; b is the byte at offset_.
void error_walker::step(std::uint8_t b) {
  if (pending_length_ != 0) {
    const std::uint8_t lead = pending_[0];
    if (detail::continues(lead, pending_length_, b)) {
      ++offset_;
      if (pending_length_ + 1 == needed_) pending_length_ = 0;  // complete: well-formed
      else pending_[pending_length_++] = b;
      return;
    }
    emit(detail::reason_for(lead, pending_length_, b));  // b is looked at afresh below
    if (stopped_) return;
  }
  if (b < 0x80) {
    if (b == '\n') {
      ++newlines_;
      line_start_ = offset_ + 1;
    }
    ++offset_;
    return;
  }
  needed_ = static_cast<std::uint8_t>(detail::sequence_length(b));
  pending_[0] = b;
  pending_length_ = 1;
  ++offset_;
  if (needed_ == 0) emit(detail::reason_for(b, 1, b));  // cannot start a sequence
}

// The pending bytes are one error unit; no LF can be among them (LF never continues one).
void error_walker::emit(error_kind kind) {
  error_unit u;
  u.at.offset = offset_ - pending_length_;
  u.at.line = 1 + newlines_;
  u.at.column = u.at.offset - line_start_ + 1;
  u.at.kind = kind;
  u.length = pending_length_;
  std::copy_n(pending_.begin(), pending_length_, u.bytes.begin());
  pending_length_ = 0;
  if (!visit_(u)) stopped_ = true;
}

std::vector<error_unit> list_errors(std::span<const std::byte> text, std::size_t max) {
  std::vector<error_unit> units;
  if (max == 0) return units;
  error_walker walker([&](const error_unit& u) {
    units.push_back(u);
    return units.size() < max;
  });
  walker.feed(text);
  walker.finish();
  return units;
}

}  // namespace gutf8
