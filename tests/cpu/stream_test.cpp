// Streaming invariance: any chunking gives the one-shot result (output, summary, stats,
// first-error line/column) and the same top code points.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "check.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;

struct streamed_result {
  outcome result;
  std::vector<code_point_count> top;
};

streamed_result streamed(operation op, error_policy p, const std::string& in,
                         const std::function<std::size_t()>& next_chunk, bool histogram = false) {
  stream s(stream_config{op, p, histogram, {}});
  std::vector<std::byte> out;
  const auto all = bytes(in);
  for (std::size_t i = 0; i < all.size();) {
    const std::size_t n = std::min(next_chunk(), all.size() - i);
    const bool going = s.feed(all.subspan(i, n), out);
    EXPECT_EQ(going, !s.stopped());
    i += n;
  }
  s.finish(out);
  streamed_result r{{std::string(reinterpret_cast<const char*>(out.data()), out.size()), s.stats()}, {}};
  if (histogram) r.top = s.top(12);
  return r;
}

// (operation, policy) pairs worth streaming: validate and stats ignore the policy.
std::vector<std::pair<operation, error_policy>> cases() {
  std::vector<std::pair<operation, error_policy>> c{{operation::validate, error_policy::strict},
                                                    {operation::stats, error_policy::strict}};
  for (const operation op : {operation::decode, operation::repair, operation::encode})
    for (const error_policy p : policies) c.emplace_back(op, p);
  return c;
}

std::vector<std::string> inputs(std::mt19937_64& g, operation op) {
  if (op == operation::encode)
    return {random_utf32(g, 401, 0.0), random_utf32(g, 377, 0.02) + "\x41\x00",
            random_utf32(g, 293, 0.2) + "\x0A"};
  return {random_text(g, 1511, 0.0), random_text(g, 1423, 0.01), random_text(g, 997, 0.15) + "\xF0\x9F"};
}

TEST(Stream, EveryChunkSizeFrom1To80) {
  auto g = rng(20);
  for (const auto& [op, p] : cases())
    for (const std::string& in : inputs(g, op)) {
      const outcome whole = one_shot(op, p, in);
      expect_reference(op, p, in, whole);
      for (std::size_t size = 1; size <= 80; ++size) {
        const auto result = streamed(op, p, in, [size] { return size; });
        EXPECT_TRUE(same(result.result, whole)) << name(op) << " " << name(p) << ", chunk " << size;
      }
    }
}

TEST(Stream, RandomChunkSizesIncludingEmpty) {
  auto g = rng(21);
  for (const auto& [op, p] : cases())
    for (const std::string& in : inputs(g, op)) {
      const outcome whole = one_shot(op, p, in);
      for (int round = 0; round < 25; ++round) {
        const std::uint32_t max = round % 5 == 0 ? 3 : round % 5 == 1 ? 15 : 300;
        const auto result = streamed(op, p, in, [&] { return std::size_t{pick(g, 0, max)}; });
        EXPECT_TRUE(same(result.result, whole)) << name(op) << " " << name(p) << ", round " << round;
      }
    }
}

TEST(Stream, SplitAtEveryPositionOfShortInputs) {
  auto g = rng(22);
  for (const auto& [op, p] : cases())
    for (int round = 0; round < 40; ++round) {
      std::string in =
          op == operation::encode ? random_utf32(g, 7, 0.3) : random_text(g, pick(g, 1, 23), 0.3);
      if (op == operation::encode) in.append(pick(g, 0, 3), 'z');  // a ragged tail, sometimes
      const outcome whole = one_shot(op, p, in);
      for (std::size_t a = 0; a <= in.size(); ++a)
        for (std::size_t b = a; b <= in.size(); ++b) {
          std::vector<std::size_t> sizes{a, b - a, in.size() - b};
          std::size_t k = 0;
          const auto result = streamed(op, p, in, [&] { return k < sizes.size() ? sizes[k++] : in.size(); });
          EXPECT_TRUE(same(result.result, whole)) << name(op) << " " << name(p) << " split " << a << "," << b;
        }
    }
}

std::vector<code_point_count> reference_top(const std::string& in, std::size_t n) {
  std::map<char32_t, std::uint64_t> counts;
  for (const ref::unit& u : ref::units(in))
    if (u.valid) ++counts[u.code_point];
  std::vector<code_point_count> all;
  for (const auto& [c, k] : counts) all.push_back({c, k});
  std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.count > b.count; });
  all.resize(std::min(n, all.size()));
  return all;
}

TEST(Stream, StatsHistogramTop) {
  auto g = rng(23);
  for (const double rate : {0.0, 0.05}) {
    std::string in = random_text(g, 20011, rate);
    in += std::string(37, 'e') + std::string(37, 'd');  // ties: code point ascending
    const outcome whole = one_shot(operation::stats, error_policy::strict, in);
    for (const std::size_t size : {std::size_t{1}, std::size_t{17}, std::size_t{4099}, in.size()}) {
      const auto result = streamed(
          operation::stats, error_policy::strict, in, [size] { return size; }, true);
      EXPECT_TRUE(same(result.result, whole));
      EXPECT_EQ(result.top, reference_top(in, 12)) << "chunk " << size;
    }
  }
}

TEST(Stream, FeedAfterStrictStopDoesNothing) {
  stream s(stream_config{operation::decode, error_policy::strict, false, {}});
  std::vector<std::byte> out;
  EXPECT_TRUE(s.feed(bytes("ab\xE2"), out));
  EXPECT_FALSE(s.feed(bytes("\x82x"), out));  // E2 82 then x: one error unit at byte 2
  EXPECT_FALSE(s.feed(bytes("more"), out));
  EXPECT_FALSE(s.finish(out));
  EXPECT_EQ(out.size(), 8u);
  ASSERT_TRUE(s.stats().input.first_error);
  EXPECT_EQ(s.stats().input.first_error->offset, 2u);
  EXPECT_EQ(s.stats().input.first_error->kind, error_kind::truncated);
  EXPECT_EQ(s.stats().input.bytes, 2u);
}

TEST(Stream, CarryBecomesErrorAtFinish) {
  stream s(stream_config{operation::validate, error_policy::strict, false, {}});
  std::vector<std::byte> out;
  EXPECT_TRUE(s.feed(bytes("line\n\xF0\x9F"), out));
  EXPECT_TRUE(s.feed(bytes("\x98"), out));
  EXPECT_FALSE(s.stats().input.first_error);
  EXPECT_TRUE(s.finish(out));
  ASSERT_TRUE(s.stats().input.first_error);
  EXPECT_EQ(s.stats().input.first_error->offset, 5u);
  EXPECT_EQ(s.stats().input.first_error->line, 2u);
  EXPECT_EQ(s.stats().input.first_error->column, 1u);
  EXPECT_EQ(s.stats().input.first_error->kind, error_kind::truncated_at_end);
  EXPECT_EQ(s.stats().input.bytes, 8u);
}

TEST(Stream, LargeChunksOnThreads) {
  auto g = rng(24);
  const std::string in = random_text(g, (5u << 19) + 77, 0.0002);
  for (const auto& [op, p] : cases()) {
    if (op == operation::encode) continue;
    options many;
    many.threads = 3;
    stream s(stream_config{op, p, false, many});
    std::vector<std::byte> out;
    const auto all = bytes(in);
    const std::size_t chunk = (3u << 19) + 5;  // past the split threshold, not aligned
    for (std::size_t i = 0; i < all.size(); i += chunk)
      s.feed(all.subspan(i, std::min(chunk, all.size() - i)), out);
    s.finish(out);
    const outcome got{std::string(reinterpret_cast<const char*>(out.data()), out.size()), s.stats()};
    EXPECT_TRUE(same(got, one_shot(op, p, in))) << name(op) << " " << name(p);
  }
}

}  // namespace
