// Large inputs: 1 GiB of ASCII + multibyte text with sparse errors against the multithreaded
// CPU codec, and a > 4 GiB input (filled on the device) that checks 64-bit offsets and counts.

#include "gpu_harness.hpp"

namespace gutf8::test::gpu {
namespace {

TEST(GpuLarge, OneGiBMixedAgainstCpu) {
  GUTF8_REQUIRE_GPU();
  // An odd-length period (not a multiple of any tile) repeated to 1 GiB.
  auto g = rng(31337);
  bytes period = random_text(g, (1u << 20) + 13, script::mixed);
  const bytes ascii = random_text(g, 1u << 20, script::ascii);
  period.insert(period.end(), ascii.begin(), ascii.end());
  corrupt(g, period, 0.00002);
  const std::size_t n = std::size_t{1} << 30;
  bytes in(n);
  for (std::size_t i = 0; i < n; i += period.size())
    std::memcpy(in.data() + i, period.data(), std::min(period.size(), n - i));
  workspace ws;
  EXPECT_TRUE(check(ws, op::validate, in, error_policy::replace, "1 GiB"));
  EXPECT_TRUE(check(ws, op::decode_fused, in, error_policy::replace, "1 GiB"));
  EXPECT_TRUE(check(ws, op::repair, in, error_policy::drop, "1 GiB"));
}

// Inputs of some hundred tiles of CJK, emoji and ASCII text through decode_fused against the CPU
// codec under every policy, with sparse and dense errors, at sizes
// off the tile grid.
TEST(GpuLarge, ThreeMiBEachScheduleAgainstCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(4242);
  workspace ws;
  for (script sc : {script::cjk, script::emoji, script::ascii})
    for (double rate : {0.0, 0.0001, 0.02}) {
      bytes in = random_text(g, (3u << 20) + 8191 * (1 + static_cast<unsigned>(sc)), sc);
      corrupt(g, in, rate);
      for (error_policy p : policies)
        EXPECT_TRUE(check(ws, op::decode_fused, in, p, "rate=" + std::to_string(rate)));
    }
}

TEST(GpuLarge, MoreThanFourGiBOffsets) {
  GUTF8_REQUIRE_GPU();
  std::size_t free_bytes = 0, total = 0;
  cuda::check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  const std::uint64_t n = (std::uint64_t{9} << 29) + 7;  // 4.5 GiB + 7
  if (free_bytes < n * 5 + (std::uint64_t{1} << 30)) GTEST_SKIP() << "needs ~23 GiB of GPU memory";
  cuda::device_buffer<std::uint8_t> in(n);
  cuda::check(cudaMemset(in.data(), 'a', n), "fill");
  const std::uint64_t big = std::uint64_t{1} << 32;
  auto poke = [&](std::uint64_t at, std::initializer_list<std::uint8_t> b) {
    const std::vector<std::uint8_t> v(b);
    cuda::check(cudaMemcpy(in.data() + at, v.data(), v.size(), cudaMemcpyHostToDevice), "poke");
  };
  poke(1000, {'\n'});
  poke(big - 2, {0xF0, 0x9F, 0x98, 0x80});  // a valid emoji across 2^32
  poke(big + 5, {'\n'});
  poke(big + 100, {0xFF});                  // first error
  poke(big + 200, {0xE1, 0x80});            // second error (truncated)
  poke(n - 1, {0xC3});                      // truncated at the end
  device::device_summary s{};
  cuda::device_buffer<device::device_summary> d_s(1);
  std::size_t temp = 0;
  cuda::check(device::validate(nullptr, temp, reinterpret_cast<const std::byte*>(in.data()), n,
                               d_s.data()),
              "size");
  cuda::device_buffer<std::uint8_t> t(temp);
  cuda::check(device::validate(t.data(), temp, reinterpret_cast<const std::byte*>(in.data()), n,
                               d_s.data()),
              "validate");
  cuda::check(cudaMemcpy(&s, d_s.data(), sizeof s, cudaMemcpyDeviceToHost), "summary");
  EXPECT_EQ(s.errors, 3u);
  EXPECT_EQ(s.first_error_offset, big + 100);
  EXPECT_EQ(s.kind(), error_kind::invalid_byte);
  EXPECT_EQ(s.lines_before_first_error, 2u);
  EXPECT_EQ(s.last_lf_before_first_error, big + 5);
  EXPECT_EQ(s.consumed, n);
  const summary hs = device::to_summary(s);
  ASSERT_TRUE(hs.first_error.has_value());
  EXPECT_EQ(hs.first_error->line, 3u);
  EXPECT_EQ(hs.first_error->column, 95u);

  // Decode (drop) writes n - 3 (emoji) - 1 - 2 - 1 code points; check counts and the values
  // around 2^32.
  cuda::device_buffer<char32_t> out(n);
  for (auto variant : {device::decoder::fused, device::decoder::staged}) {
    std::size_t dtemp = 0;
    cuda::check(device::decode(nullptr, dtemp, reinterpret_cast<const std::byte*>(in.data()), n,
                               out.data(), d_s.data(), error_policy::drop, true, variant),
                "size");
    cuda::device_buffer<std::uint8_t> dt(dtemp);
    cuda::check(device::decode(dt.data(), dtemp, reinterpret_cast<const std::byte*>(in.data()), n,
                               out.data(), d_s.data(), error_policy::drop, true, variant),
                "decode");
    cuda::check(cudaMemcpy(&s, d_s.data(), sizeof s, cudaMemcpyDeviceToHost), "summary");
    EXPECT_EQ(s.written, n - 3 - 1 - 2 - 1);
    EXPECT_EQ(s.errors, 3u);
    std::vector<char32_t> near(8);
    cuda::check(cudaMemcpy(near.data(), out.data() + (big - 4), 8 * sizeof(char32_t),
                           cudaMemcpyDeviceToHost),
                "near");
    EXPECT_EQ(near[1], U'a');
    EXPECT_EQ(near[2], U'\U0001F600');  // input offset 2^32 - 2 -> code point 2^32 - 2
    EXPECT_EQ(near[3], U'a');
    std::vector<char32_t> tail(2);
    cuda::check(cudaMemcpy(tail.data(), out.data() + (s.written - 2), 2 * sizeof(char32_t),
                           cudaMemcpyDeviceToHost),
                "tail");
    EXPECT_EQ(tail[0], U'a');
    EXPECT_EQ(tail[1], U'a');
  }
}

}  // namespace
}  // namespace gutf8::test::gpu
