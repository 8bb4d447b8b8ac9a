// Exhaustive GPU-vs-CPU comparisons: every 1-, 2- and 3-byte sequence and every 4-byte sequence
// with a lead F0..F4, each as an independent item (padded with 'x' to its own slot, so no unit
// spans two items), through every UTF-8 kernel, variant and policy; every UTF-32 value class
// through both encoders.
#include "gpu_harness.hpp"

namespace gutf8::test::gpu {
namespace {

bytes slots(unsigned width, std::uint64_t count, auto&& fill) {
  bytes b;
  b.reserve(count * (width + 1));
  std::uint8_t item[4];
  for (std::uint64_t v = 0; v < count; ++v) {
    fill(v, item);
    b.insert(b.end(), item, item + width);
    b.push_back('x');
  }
  return b;
}

TEST(GpuExhaustive, OneAndTwoByteSequences) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  const bytes one = slots(1, 256, [](std::uint64_t v, std::uint8_t* o) { o[0] = std::uint8_t(v); });
  EXPECT_TRUE(check_all_utf8(ws, one, "all 1-byte"));
  const bytes two = slots(2, 65536, [](std::uint64_t v, std::uint8_t* o) {
    o[0] = std::uint8_t(v >> 8);
    o[1] = std::uint8_t(v);
  });
  EXPECT_TRUE(check_all_utf8(ws, two, "all 2-byte"));
  EXPECT_TRUE(check_all_utf8(ws, two, "all 2-byte, misaligned", 3));
}

TEST(GpuExhaustive, ThreeByteSequences) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  const bytes three = slots(3, std::uint64_t{1} << 24, [](std::uint64_t v, std::uint8_t* o) {
    o[0] = std::uint8_t(v >> 16);
    o[1] = std::uint8_t(v >> 8);
    o[2] = std::uint8_t(v);
  });
  EXPECT_TRUE(check_all_utf8(ws, three, "all 3-byte"));
  // Without the padding, so units straddle items, tiles and threads at every phase.
  bytes packed;
  packed.reserve(3u << 22);
  for (std::uint32_t v = 0x800000; v < 0xC00000; ++v) {
    packed.push_back(std::uint8_t(v >> 16));
    packed.push_back(std::uint8_t(v >> 8));
    packed.push_back(std::uint8_t(v));
  }
  EXPECT_TRUE(check_all_utf8(ws, packed, "3-byte 80..BF leads, packed"));
}

TEST(GpuExhaustive, FourByteSequences) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  // Leads F0..F4 with every second/third/fourth byte in 80..BF, plus the out-of-range bytes
  // 7F and C0 in each position (5 x 66^3 items).
  const std::uint8_t alt[66] = {0x7F, 0xC0};
  auto byte_of = [&](std::uint64_t k) -> std::uint8_t {
    return k < 64 ? std::uint8_t(0x80 + k) : alt[k - 64];
  };
  const std::uint64_t per = 66 * 66 * 66;
  const bytes four = slots(4, 5 * per, [&](std::uint64_t v, std::uint8_t* o) {
    o[0] = std::uint8_t(0xF0 + v / per);
    const std::uint64_t r = v % per;
    o[1] = byte_of(r / (66 * 66));
    o[2] = byte_of(r / 66 % 66);
    o[3] = byte_of(r % 66);
  });
  EXPECT_TRUE(check_all_utf8(ws, four, "4-byte F0..F4"));
}

TEST(GpuExhaustive, EncodeValueClasses) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  // Every scalar value and the invalid ones around them, as one UTF-32 stream (a value is one
  // unit, so concatenation does not change meaning).
  bytes in;
  in.reserve(4 * 0x118000);
  auto put = [&](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) in.push_back(std::uint8_t(v >> (8 * k)));
  };
  for (std::uint32_t v = 0; v < 0x118000; ++v) put(v);
  for (std::uint32_t v : {0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0x00110000u, 0x0000DFFFu}) put(v);
  // Strict stops at U+D800; replace and drop see every class.
  EXPECT_TRUE(check_all_encode(ws, in, "all values"));
  for (std::size_t ragged = 1; ragged <= 3; ++ragged) {
    bytes r(in.begin(), in.begin() + 4 * 0xD000);  // valid prefix, then a ragged tail
    for (std::size_t k = 0; k < ragged; ++k) r.push_back(0x41);
    EXPECT_TRUE(check_all_encode(ws, r, "ragged tail " + std::to_string(ragged)));
  }
}

}  // namespace
}  // namespace gutf8::test::gpu
