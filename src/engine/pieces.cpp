#include "engine/pieces.hpp"

#include "codec/boundary.hpp"

namespace gutf8::internal {

piece_outcome process_pieces(block_processor& processor, operation op, error_policy policy,
                             const piece_plan& plan, const piece_run& run, const std::uint8_t* window,
                             std::uint8_t* out, std::uint64_t* histogram) {
  const std::uint64_t at = run.window_begin(plan);
  const std::size_t size = static_cast<std::size_t>(run.window_end(plan) - at);
  const bool utf32 = op == operation::encode;
  const auto cut = [&](std::uint64_t nominal) -> std::size_t {
    if (nominal >= plan.total) return size;
    const auto q = static_cast<std::size_t>(nominal - at);
    // UTF-32 values sit at multiples of 4 of the input, and piece_bytes is one.
    return utf32 ? q : unit_start_at_or_after(window, q, size, false);
  };
  const std::size_t begin = run.first == 0 ? 0 : cut(run.first * plan.piece_bytes);
  const std::size_t end = cut(run.end() * plan.piece_bytes);

  block_request rq;
  rq.op = op;
  rq.policy = op == operation::validate || op == operation::stats ? error_policy::replace : policy;
  rq.data = window + begin;
  rq.size = size - begin;
  rq.end = end - begin;
  rq.at_end = run.window_end(plan) == plan.total;
  rq.count_lines = op == operation::stats;
  rq.histogram = histogram;
  rq.out = out;
  piece_outcome o;
  o.begin = at + begin;
  o.counted_lines = rq.count_lines;
  o.result = processor.process(rq);
  o.lines = find_line_facts(rq.data, o.result, line_unit(op), /*locate_error=*/true);
  return o;
}

piece_outcome process_counted(block_processor& processor, operation op, error_policy policy, const std::uint8_t* data,
                              std::size_t size, std::size_t end, bool at_end, std::uint8_t* out,
                              std::uint64_t* histogram) {
  block_request rq;
  rq.op = op;
  rq.policy = op == operation::validate || op == operation::stats ? error_policy::replace : policy;
  rq.data = data;
  rq.size = size;
  rq.end = end;
  rq.at_end = at_end;
  rq.count_lines = true;
  rq.histogram = histogram;
  rq.out = out;
  piece_outcome o;
  o.counted_lines = true;
  o.result = processor.process(rq);
  o.lines = find_line_facts(rq.data, o.result, line_unit(op), /*locate_error=*/true);
  return o;
}

}  // namespace gutf8::internal
