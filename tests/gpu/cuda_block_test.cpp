// The CUDA block processor (src/cuda/cuda_block_processor.hpp) inside the backend-neutral stream core, fed in
// chunks, against the CPU codec's one-shot results.
#include "codec/gpu_backend.hpp"
#include "codec/stream_core.hpp"
#include "cpu/cpu_block.hpp"
#include "gpu_harness.hpp"

namespace gutf8::test::gpu {
namespace {

result run_stream_core(operation oper, error_policy p, const bytes& in, std::size_t chunk) {
  stream_config cfg;
  cfg.operation = oper;
  cfg.policy = p;
  options opt;
  internal::stream_core s(cfg, internal::make_gpu_processor(opt, internal::make_cpu_processor(0)), false);
  result r;
  std::vector<std::uint8_t> out(s.max_output(chunk) + 16);
  for (std::size_t at = 0; at < in.size() || at == 0; at += chunk) {
    const std::size_t len = std::min(chunk, in.size() - at);
    const bool last = at + len == in.size();
    out.resize(s.max_output(len) + 16);
    const std::size_t w = s.feed(std::span(in.data() + at, len), last, out.data());
    r.out.insert(r.out.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(w));
    if (last || s.stopped()) break;
  }
  r.sum = s.stats().input;
  r.written = r.out.size() / (oper == operation::decode ? 4 : 1);
  return r;
}

// A validate stream core writes no output: only its counts and first error are compared with the CPU's.
bool validate_stream_core_equals_cpu(const bytes& text, std::size_t chunk, const std::string& what) {
  result v = run_stream_core(operation::validate, error_policy::strict, text, chunk);
  v.out.clear();
  v.written = 0;
  return same(v, cpu(op::validate, text, error_policy::replace), what);
}

TEST(CudaBlockProcessor, StreamCoreInChunksEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(2024);
  bytes text = random_text(g, 3u << 20, script::mixed);
  corrupt(g, text, 0.0001);
  const bytes u = random_utf32(g, 600000, script::mixed, 0.0001, 1);
  for (std::size_t chunk : {std::size_t{100} << 10, std::size_t{1} << 20, std::size_t{8} << 20}) {
    for (error_policy p : policies) {
      EXPECT_TRUE(same(run_stream_core(operation::decode, p, text, chunk), cpu(op::decode_fused, text, p),
                       "stream core decode " + std::to_string(chunk)));
      EXPECT_TRUE(same(run_stream_core(operation::repair, p, text, chunk), cpu(op::repair, text, p),
                       "stream core repair " + std::to_string(chunk)));
      EXPECT_TRUE(same(run_stream_core(operation::encode, p, u, chunk), cpu(op::encode_fused, u, p),
                       "stream core encode " + std::to_string(chunk)));
    }
    EXPECT_TRUE(validate_stream_core_equals_cpu(text, chunk, "stream core validate"));
  }
}

// The block processor's sub-blocks, carries and both streams on a small input: for racecheck and
// initcheck (scripts/gpu/devrun/tests.py).
TEST(GpuSanitizerSweep, BlockProcessorSubBlocks) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(99);
  bytes text = random_text(g, 300000, script::mixed);
  corrupt(g, text, 0.001);
  const bytes u = random_utf32(g, 70000, script::mixed, 0.001, 3);
  const std::size_t chunk = 100000;
  const error_policy p = error_policy::replace;
  EXPECT_TRUE(same(run_stream_core(operation::decode, p, text, chunk), cpu(op::decode_fused, text, p), "sweep decode"));
  EXPECT_TRUE(same(run_stream_core(operation::repair, p, text, chunk), cpu(op::repair, text, p), "sweep repair"));
  EXPECT_TRUE(same(run_stream_core(operation::encode, p, u, chunk), cpu(op::encode_fused, u, p), "sweep encode"));
  EXPECT_TRUE(validate_stream_core_equals_cpu(text, chunk, "sweep validate"));
}

}  // namespace
}  // namespace gutf8::test::gpu
