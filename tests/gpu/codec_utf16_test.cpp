// device::decode_utf16 against the CPU codec's decode_to (UTF-16LE/BE) byte for byte, summary
// included: every script, error rates, every size 0..300, sizes around tile boundaries, carries.
#include "gpu_harness.hpp"
#include "utf8/tuning.cuh"

namespace gutf8::test::gpu {
namespace {

constexpr std::size_t tile = kern::tile_bytes;

struct utf16_result {
  std::string out;  // UTF-16 bytes
  summary sum;
  std::uint64_t carry = 0;
};

// in_at: the input's offset in its buffer (bytes), out_at: the output's (UTF-16 units).
utf16_result run_gpu(const bytes& b, error_policy p, bool big_endian, bool is_last = true, std::size_t in_at = 0,
                     std::size_t out_at = 0) {
  const std::size_t n = b.size();
  cuda::device_buffer<std::uint8_t> in(std::max<std::size_t>(n, 1) + in_at),
      out(2 * (std::max<std::size_t>(n, 1) + out_at));
  cuda::device_buffer<device::device_summary> sum(1);
  if (n != 0) cuda::check(cudaMemcpy(in.data() + in_at, b.data(), n, cudaMemcpyHostToDevice), "upload");
  const auto* d_in = reinterpret_cast<const std::byte*>(in.data() + in_at);
  auto* d_out = reinterpret_cast<char16_t*>(out.data()) + out_at;
  std::size_t temp_bytes = 0;
  cuda::check(device::decode_utf16(nullptr, temp_bytes, d_in, n, d_out, sum.data(), p, is_last, big_endian),
              "size query");
  cuda::device_buffer<std::uint8_t> temp(temp_bytes);
  cuda::check(device::decode_utf16(temp.data(), temp_bytes, d_in, n, d_out, sum.data(), p, is_last, big_endian),
              "decode_utf16");
  device::device_summary d{};
  cuda::check(cudaMemcpy(&d, sum.data(), sizeof d, cudaMemcpyDeviceToHost), "summary");
  utf16_result r;
  r.out.resize(2 * d.written);
  if (d.written != 0) cuda::check(cudaMemcpy(r.out.data(), d_out, r.out.size(), cudaMemcpyDeviceToHost), "out");
  r.sum = device::to_summary(d);
  r.carry = d.carry;
  return r;
}

::testing::AssertionResult same_as_cpu(const bytes& b, error_policy p, bool big_endian, const std::string& what,
                                       std::size_t in_at = 0, std::size_t out_at = 0) {
  const std::string_view text(reinterpret_cast<const char*>(b.data()), b.size());
  summary want_sum;
  const std::string want =
      decode_to(text, big_endian ? text_form::utf16be : text_form::utf16le, p, &want_sum, options{backend::cpu});
  const utf16_result got = run_gpu(b, p, big_endian, true, in_at, out_at);
  if (got.out != want)
    return ::testing::AssertionFailure() << what << ": output differs (" << got.out.size() << " vs " << want.size()
                                         << " bytes)";
  if (got.sum != want_sum)
    return ::testing::AssertionFailure() << what << ": summary differs (errors " << got.sum.errors << " vs "
                                         << want_sum.errors << ", bytes " << got.sum.bytes << " vs " << want_sum.bytes
                                         << ")";
  return ::testing::AssertionSuccess();
}

TEST(GpuUtf16, ScriptsErrorRatesPoliciesAndByteOrders) {
  GUTF8_REQUIRE_GPU();
  std::uint64_t seed = 1600;
  for (script s : scripts) {
    for (double rate : {0.0, 0.001, 0.05, 0.5}) {
      auto g = rng(seed++);
      bytes b = random_text(g, 3 * tile + g() % tile, s);
      corrupt(g, b, rate);
      for (error_policy p : policies)
        for (bool big : {false, true})
          ASSERT_TRUE(same_as_cpu(b, p, big, "script " + std::to_string(int(s)) + " rate " + std::to_string(rate) +
                                                 ' ' + name(p) + (big ? " BE" : " LE")));
    }
  }
}

TEST(GpuUtf16, EverySizeUpTo300AndAroundTiles) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(1601);
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (std::size_t k : {1u, 2u, 7u})
    for (std::size_t d : {1u, 3u}) sizes.insert(sizes.end(), {k * tile - d, k * tile, k * tile + d});
  for (const std::size_t n : sizes) {
    bytes b = random_text(g, n, script::mixed);
    b.resize(n);  // may cut a sequence: an error at the end
    corrupt(g, b, 0.02);
    for (error_policy p : policies) ASSERT_TRUE(same_as_cpu(b, p, false, "size " + std::to_string(n) + ' ' + name(p)));
  }
}

TEST(GpuUtf16, AllFourByteTextIsAllSurrogatePairs) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(1602);
  const bytes b = random_text(g, 5 * tile + 77, script::emoji);
  ASSERT_TRUE(same_as_cpu(b, error_policy::strict, false, "emoji"));
  ASSERT_TRUE(same_as_cpu(b, error_policy::strict, true, "emoji BE"));
}

// Dense text takes the decoder's listed paths (units listed at UTF-32 slots, placed at UTF-16 units
// by a ballot of the surrogate pairs where a warp has any; all 4-byte units: decoded as such),
// ASCII-heavy text the staged one (UTF-16 slots): each valid and with errors, every policy, both
// byte orders, input and output at offsets that are not 16-byte aligned.
TEST(GpuUtf16, EveryPathAlignmentAndByteOrder) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(1603);
  for (script s : {script::cjk, script::emoji, script::ascii, script::mixed}) {
    for (double rate : {0.0, 0.002, 0.03}) {
      bytes b = random_text(g, 6 * tile + 1 + g() % tile, s);
      corrupt(g, b, rate);
      for (error_policy p : policies) {
        for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
          const bool big = at == 7;
          ASSERT_TRUE(same_as_cpu(b, p, big,
                                  "script " + std::to_string(int(s)) + " rate " + std::to_string(rate) + ' ' + name(p) +
                                      " at " + std::to_string(at),
                                  (3 * at) % 16, at));
        }
      }
    }
  }
  // Warps whose lanes all hold 8 units 4 bytes apart: 4-byte sequences, one broken in a lane.
  for (std::size_t phase = 0; phase < 4; ++phase) {
    bytes b(phase, 'x');
    while (b.size() < 3 * tile + 100) append_utf8(b, static_cast<char32_t>(0x1F600 + g() % 64));
    bytes broken = b;
    broken[tile + 2 * kern::warp_bytes + 5] = 'q';
    for (error_policy p : policies) {
      ASSERT_TRUE(same_as_cpu(b, p, phase == 1, "4-byte units, phase " + std::to_string(phase)));
      ASSERT_TRUE(same_as_cpu(broken, p, phase == 2, "4-byte units, one broken, phase " + std::to_string(phase)));
    }
  }
}

// The byte at or after i that starts a character of valid UTF-8 b (or b's end).
std::size_t char_start(const bytes& b, std::size_t i) {
  while (i < b.size() && (b[i] & 0xC0u) == 0x80u) ++i;
  return i;
}

// A warp without surrogate pairs is decoded as in UTF-32 (a slot is a unit), one with pairs by the
// paths that place them: dense text (listed units) and ASCII-heavy text (staged units) in which a
// few warps hold a 4-byte sequence, at lane, warp and tile edges, valid or between a cut sequence
// and a stray continuation byte (error units beside the pair for replace and drop, the stop for
// strict); every policy, both byte orders, output at even and odd units.
TEST(GpuUtf16, WarpsWithAndWithoutSurrogatePairs) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(1605);
  constexpr std::size_t warp = kern::warp_bytes, lane = kern::lane_bytes;
  // From the last, so that the earlier places do not move.
  constexpr std::size_t places[] = {4 * tile + 7 * warp - 1, 2 * tile - 2, tile + 5 * warp + lane - 1,
                                    tile - 3, 3 * warp - 1, warp - 2};
  for (script s : {script::cjk, script::ascii, script::latin}) {
    for (const bool broken : {false, true}) {
      bytes b = random_text(g, 5 * tile + 333, s);
      for (const std::size_t at : places) {
        bytes ins;
        if (broken) ins = {0xF0, 0x9F};
        append_utf8(ins, static_cast<char32_t>(0x10000 + g() % 0x100000));
        if (broken) ins.push_back(0x80);
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(char_start(b, at)), ins.begin(), ins.end());
      }
      for (error_policy p : policies)
        for (const std::size_t out_at : {std::size_t{0}, std::size_t{1}})
          for (const bool big : {false, true})
            ASSERT_TRUE(same_as_cpu(b, p, big,
                                    "script " + std::to_string(int(s)) + (broken ? " broken " : " valid ") + name(p) +
                                        (big ? " BE" : " LE") + " out at " + std::to_string(out_at),
                                    0, out_at));
    }
  }
}

// For compute-sanitizer (memcheck, racecheck: the decoder stages in shared memory): a few shapes
// of every path.
TEST(GpuSanitizerSweep, Utf16FewShapes) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(1604);
  for (std::size_t n : {std::size_t{1}, std::size_t{299}, 3 * tile + 77}) {
    for (script s : {script::ascii, script::cjk, script::emoji, script::mixed}) {
      bytes b = random_text(g, n, s);
      if (s == script::mixed) corrupt(g, b, 0.01);
      b.resize(n);
      for (error_policy p : policies)
        ASSERT_TRUE(same_as_cpu(b, p, n == 299, "sweep " + std::to_string(n) + ' ' + name(p), n % 16, n % 8));
    }
  }
}

TEST(GpuUtf16, CarryLeavesTheCutSequence) {
  GUTF8_REQUIRE_GPU();
  bytes b = {'a', 0xF0, 0x9F, 0x98};  // a 4-byte sequence cut by the chunk's end
  const utf16_result r = run_gpu(b, error_policy::strict, false, /*is_last=*/false);
  EXPECT_EQ(r.carry, 3u);
  EXPECT_EQ(r.out, std::string("a\0", 2));
  EXPECT_EQ(r.sum.errors, 0u);
}

}  // namespace
}  // namespace gutf8::test::gpu
