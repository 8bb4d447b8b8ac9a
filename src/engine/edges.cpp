#include "engine/edges.hpp"

#include <algorithm>

#include "codec/boundary.hpp"
#include "codec/lines.hpp"

namespace gutf8::internal {

std::size_t first_certain_start(const std::uint8_t* p, std::size_t size) noexcept {
  // Below 3 the rule cannot see the bytes before p, so a continuation there is never taken.
  return unit_start_at_or_after(p, 0, size, false);
}

std::size_t last_certain_start(const std::uint8_t* p, std::size_t from, std::size_t size) noexcept {
  if (size == from || p[size - 1] < 0x80) return size;  // an ASCII byte is a unit of its own
  // From `from` on, continuations that reach `size` are stray units each: size starts one.
  return unit_start_at_or_after(p, size - from >= 3 ? size - 3 : from, size, false);
}

piece_outcome process_part_block(block_processor& processor, const run_config& config, const part_block& b,
                                 std::uint8_t* out, std::uint64_t* histogram, text_edges& edges) {
  std::size_t begin = 0;
  if (b.head_open) {
    begin = first_certain_start(b.data, b.size);
    const std::size_t head = std::min(b.size, begin + 3);
    std::copy_n(b.data, head, edges.head.begin());
    edges.head_size = static_cast<std::uint8_t>(head);
    edges.lead = static_cast<std::uint8_t>(begin);
    // No certain start: 3 continuations or fewer, the whole part (a block is shorter only at its end).
    if (begin == b.size) {
      edges.no_start = true;
      piece_outcome none;
      none.counted_lines = true;
      return none;
    }
  }
  std::size_t end = b.end;
  if (b.tail_open) {
    end = last_certain_start(b.data, begin, b.size);
    edges.tail_size = static_cast<std::uint8_t>(b.size - end);
    std::copy_n(b.data + end, b.size - end, edges.tail.begin());
  }
  return process_counted(processor, config.stream.operation, config.stream.policy, b.data + begin, b.size - begin,
                         end - begin, false, out, histogram);
}

void append_outcome(piece_outcome& total, const piece_outcome& next) {
  block_result& t = total.result;
  const block_result& n = next.result;
  const std::size_t at = t.consumed;
  if (n.errors != 0 && t.errors == 0) {
    t.first_error = at + n.first_error;
    t.first_kind = n.first_kind;
    total.lines.before_error = t.lines + next.lines.before_error;
    total.lines.last_before_error =
        next.lines.last_before_error != no_newline ? at + next.lines.last_before_error : total.lines.last;
  }
  if (n.lines != 0) total.lines.last = at + next.lines.last;
  t.lines += n.lines;
  t.errors += n.errors;
  t.consumed += n.consumed;
  t.written += n.written;
  t.stopped = n.stopped;
  for (std::size_t l = 0; l < t.by_length.size(); ++l) t.by_length[l] += n.by_length[l];
}

bool seam_joiner::before(const text_edges& e, block& seam) {
  pending_.append(reinterpret_cast<const char*>(e.head.data()), e.lead);
  if (!e.has_start()) {
    // Parts of continuations only: once they prove a unit start, the bytes before it go.
    if (pending_.size() < 8) return false;
    const std::size_t cut = last_certain_start(reinterpret_cast<const std::uint8_t*>(pending_.data()), 0, pending_.size());
    seam = {pending_, cut, false};
    pending_.erase(0, cut);
    return true;
  }
  if (pending_.empty()) return false;
  seam = {pending_, pending_.size(), false};
  seam.bytes.append(reinterpret_cast<const char*>(e.head.data()) + e.lead, e.head_size - e.lead);
  pending_.clear();
  return true;
}

void seam_joiner::after(const text_edges& e) {
  if (e.has_start()) pending_.assign(reinterpret_cast<const char*>(e.tail.data()), e.tail_size);
}

bool seam_joiner::finish(block& last) {
  if (pending_.empty()) return false;
  last = {pending_, pending_.size(), true};
  pending_.clear();
  return true;
}

}  // namespace gutf8::internal
