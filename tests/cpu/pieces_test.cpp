// Pieces (src/engine/pieces.hpp): an input processed as piece runs (one piece, as a CPU worker
// takes, or several, as a GPU lane does), several threads taking them in a shuffled order, each from
// a copy of just its window, then committed in input order, gives the one-shot result: output,
// summary, first-error line and column, stats.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "check.hpp"
#include "codec/stream_core.hpp"
#include "cpu/cpu_block.hpp"
#include "engine/pieces.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
using internal::piece_outcome;
using internal::piece_plan;

// The pieces cut into runs of 1 to 4 (mostly 1).
std::vector<internal::piece_run> random_runs(std::uint64_t count, std::mt19937_64& g) {
  std::vector<internal::piece_run> runs;
  for (std::uint64_t k = 0; k < count;) {
    const std::uint64_t length = std::min<std::uint64_t>(count - k, g() % 3 == 0 ? 1 + g() % 4 : 1);
    runs.push_back({k, length});
    k += length;
  }
  return runs;
}

outcome by_pieces(operation op, error_policy p, const std::string& in, std::uint64_t piece_bytes,
                  std::mt19937_64& g) {
  const piece_plan plan{in.size(), piece_bytes};
  const std::vector<internal::piece_run> runs = random_runs(plan.count(), g);
  std::vector<piece_outcome> done(runs.size());
  std::vector<std::vector<std::uint8_t>> outs(runs.size());
  std::vector<std::size_t> order(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) order[r] = r;
  std::shuffle(order.begin(), order.end(), g);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    const auto processor = internal::make_cpu_processor(1);
    for (std::size_t i; (i = next++) < runs.size();) {
      const std::size_t r = order[i];
      // A copy of the window alone: a read outside it is a sanitizer finding.
      const auto from = static_cast<std::ptrdiff_t>(runs[r].window_begin(plan));
      const std::vector<std::uint8_t> window(in.begin() + from,
                                             in.begin() + static_cast<std::ptrdiff_t>(runs[r].window_end(plan)));
      outs[r].resize(internal::output_width(op) * window.size() + 3);
      done[r] = internal::process_pieces(*processor, op, p, plan, runs[r], window.data(), outs[r].data());
    }
  };
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < 3; ++t) pool.emplace_back(worker);
  }
  internal::stream_core core(stream_config{op, p, false, {}}, internal::make_cpu_processor(1));
  std::string out;
  std::uint64_t reached = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    EXPECT_EQ(done[r].begin, reached) << "run " << r << " does not start where the last ended";
    const piece_outcome& o = done[r];
    if (o.result.errors != 0 && !o.counted_lines && core.error_unplaced()) {
      // What the engine's committer does then: count the lines before the run itself.
      core.set_lines_before(internal::count_lines_before(reinterpret_cast<const std::uint8_t*>(in.data()),
                                                            o.begin, internal::line_unit(op)));
    }
    core.commit(o.result, o.lines, o.counted_lines);
    out.append(reinterpret_cast<const char*>(outs[r].data()), done[r].result.written);
    reached = done[r].begin + done[r].result.consumed;
    if (core.stopped()) break;
  }
  return {out, core.stats()};
}

std::vector<std::string> inputs(std::mt19937_64& g, operation op) {
  if (op == operation::encode)
    return {random_utf32(g, 701, 0.0) + std::string("\x0A\0\0\0", 4) + random_utf32(g, 300, 0.0),
            random_utf32(g, 577, 0.02) + "\x41\x00", random_utf32(g, 293, 0.3)};
  std::string late = random_text(g, 3001, 0.0);
  late += "\xE2\x82";  // the only error, far into the input: its line counts every piece before
  late += random_text(g, 50, 0.0);
  return {random_text(g, 2511, 0.0), random_text(g, 2423, 0.01), random_text(g, 997, 0.3) + "\xF0\x9F",
          late, std::string(40, '\x80') + "\xC3"};
}

TEST(Pieces, AnyPieceSizeAndOrderEqualsOneShot) {
  auto g = rng(41);
  for (const auto& [op, p] : operations_and_policies)
    for (const std::string& in : inputs(g, op)) {
      const outcome whole = one_shot(op, p, in);
      for (std::uint64_t size : {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 64, 255, 1000, 4099, 100000}) {
        if (op == operation::encode) size = (size + 3) / 4 * 4;  // UTF-32 is cut at multiples of 4
        SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", " << in.size()
                                        << " bytes, pieces of " << size);
        EXPECT_TRUE(same(by_pieces(op, p, in, size, g), whole));
      }
    }
}

// The cut is a unit start whichever side of it a worker stands on, also in runs of continuation
// bytes (each a unit of its own) and right at the start and end of the input.
TEST(Pieces, CutsAgreeInContinuationRuns) {
  auto g = rng(42);
  for (const std::string& in : {std::string(9, '\x80'), std::string("\xF0\x90\x80") + std::string(7, '\xBF'),
                                std::string("a\xE2\x82\xAC\xE2\x82"), std::string("\xF4\x8F\xBF\xBF\xF4")})
    for (std::uint64_t size = 1; size <= in.size() + 1; ++size) {
      SCOPED_TRACE(testing::Message() << in.size() << " bytes, pieces of " << size);
      EXPECT_TRUE(same(by_pieces(operation::decode, error_policy::replace, in, size, g),
                       one_shot(operation::decode, error_policy::replace, in)));
    }
}

}  // namespace
