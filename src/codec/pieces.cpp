#include "codec/pieces.hpp"

#include "codec/boundary.hpp"

namespace gutf8::internal {

piece_outcome process_piece(block_processor& processor, operation op, error_policy policy,
                            const piece_plan& plan, std::uint64_t k, const std::uint8_t* window,
                            std::uint8_t* out) {
  const std::uint64_t at = plan.window_begin(k);
  const std::size_t size = static_cast<std::size_t>(plan.window_end(k) - at);
  const bool utf32 = op == operation::encode;
  const auto cut = [&](std::uint64_t nominal) -> std::size_t {
    if (nominal >= plan.total) return size;
    const auto q = static_cast<std::size_t>(nominal - at);
    // UTF-32 values sit at multiples of 4 of the input, and piece_bytes is one.
    return utf32 ? q : unit_start_at_or_after(window, q, size, false);
  };
  const std::size_t begin = k == 0 ? 0 : cut(k * plan.piece_bytes);
  const std::size_t end = cut((k + 1) * plan.piece_bytes);

  block_request rq;
  rq.op = op;
  rq.policy = op == operation::validate || op == operation::stats ? error_policy::replace : policy;
  rq.data = window + begin;
  rq.size = size - begin;
  rq.end = end - begin;
  rq.at_end = plan.window_end(k) == plan.total;
  rq.count_lines = op == operation::stats;
  rq.out = out;
  piece_outcome o;
  o.begin = at + begin;
  o.counted_lines = rq.count_lines;
  o.result = processor.process(rq);
  o.lines = find_line_facts(rq.data, o.result, line_unit(op), /*locate_error=*/true);
  return o;
}

}  // namespace gutf8::internal
