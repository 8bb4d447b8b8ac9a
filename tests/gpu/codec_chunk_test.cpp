// Chunked device calls: split at random points (including inside sequences), carry the
// reported trailing bytes into the next chunk, concatenate the outputs; the result and the
// accumulated summary (chunk_tracker) must equal the CPU codec's one-shot result. The random
// splits' UTF-8 chunks sit at every misalignment (the kernels' unaligned paths end chunks too).
#include "gpu_harness.hpp"

namespace gutf8::test::gpu {
namespace {

std::vector<std::size_t> random_cuts(std::mt19937_64& g, std::size_t n, std::size_t count) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < count && n > 0; ++i) cuts.push_back(g() % (n + 1));
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

bool check_chunked(workspace& ws, op o, const bytes& in, error_policy p,
                   const std::vector<std::size_t>& cuts, const std::string& what, std::size_t misalign = 0) {
  const result g = ws.run_chunked(o, in, p, cuts, misalign);
  const result c = cpu(o, in, p);
  return same(g, c, what + " [" + name(o) + "/" + name(p) + " n=" + std::to_string(in.size()) +
                        " chunks=" + std::to_string(cuts.size() + 1) + " misalign=" + std::to_string(misalign) + "]");
}

TEST(GpuChunks, RandomSplitsEqualOneShot) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    auto g = rng(900 + seed);
    const script s = scripts[seed % 6];
    bytes b = random_text(g, 20000 + g() % 30000, s);
    corrupt(g, b, seed % 3 == 0 ? 0.0 : seed % 3 == 1 ? 0.0005 : 0.02);
    if (seed % 4 == 1) b.resize(b.size() - 1);  // may end inside a sequence
    auto cuts = random_cuts(g, b.size(), 1 + g() % 12);
    // Some cuts 1..3 bytes apart: chunks made only of a partial sequence.
    if (!cuts.empty() && seed % 2) cuts.push_back(std::min(b.size(), cuts.back() + 1 + g() % 3));
    std::sort(cuts.begin(), cuts.end());
    for (op o : utf8_ops)
      for (error_policy p : policies) {
        if (o == op::validate && p != error_policy::replace) continue;
        ASSERT_TRUE(check_chunked(ws, o, b, p, cuts, "seed " + std::to_string(seed), seed % 16));
      }
    const bytes u = random_utf32(g, 3000 + g() % 5000, s, seed % 3 ? 0.001 : 0.0, seed % 4);
    const auto ucuts = random_cuts(g, u.size(), 1 + g() % 8);
    for (op o : encode_ops)
      for (error_policy p : policies)
        ASSERT_TRUE(check_chunked(ws, o, u, p, ucuts, "utf32 seed " + std::to_string(seed)));
  }
}

TEST(GpuChunks, EverySplitOfShortInputs) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  // Every single split point of short inputs with sequences of every length and errors.
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xE1\x80 \xF0\x90\x80\n\xED\xA0\x80z\xC2";
  const bytes b(text.begin(), text.end());
  for (std::size_t cut = 0; cut <= b.size(); ++cut) {
    for (op o : utf8_ops)
      for (error_policy p : policies)
        ASSERT_TRUE(check_chunked(ws, o, b, p, {cut}, "cut " + std::to_string(cut)));
  }
  bytes u;
  for (std::uint32_t v : {0x41u, 0x1F600u, 0xD800u, 0x0Au, 0x110000u, 0xE9u})
    for (int k = 0; k < 4; ++k) u.push_back(std::uint8_t(v >> (8 * k)));
  u.push_back(0x42);
  for (std::size_t cut = 0; cut <= u.size(); ++cut)
    for (op o : encode_ops)
      for (error_policy p : policies)
        ASSERT_TRUE(check_chunked(ws, o, u, p, {cut}, "utf32 cut " + std::to_string(cut)));
}

}  // namespace
}  // namespace gutf8::test::gpu
