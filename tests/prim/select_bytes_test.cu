// Byte compaction (prim::select_bytes) against std::copy_if: random bytes with pad runs at sizes
// around its tiles, all pad, no pad, the end bound before, inside and past the bytes, other pad
// values (every byte value beside them), unaligned input, the output at every 16-byte phase.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <vector>

#include "gutf8/prim/select.cuh"
#include "prim_gpu_util.cuh"
#include "support/gpu.hpp"
#include "support/random.hpp"

using namespace gutf8::test;

namespace {

constexpr std::size_t tile = gutf8::prim::detail::select_bytes_policy::tile;

// Runs of 1..9 bytes, pad_percent % of them pad, the others any byte but pad.
std::vector<std::uint8_t> padded_bytes(std::size_t n, unsigned pad_percent, std::uint8_t pad, std::uint64_t seed) {
  auto gen = rng(seed);
  std::vector<std::uint8_t> v;
  v.reserve(n);
  while (v.size() < n) {
    const bool is_pad = gen() % 100 < pad_percent;
    for (std::size_t run = 1 + gen() % 9; run > 0 && v.size() < n; --run) {
      auto b = static_cast<std::uint8_t>(gen());
      if (b == pad) b ^= 1u;
      v.push_back(is_pad ? pad : b);
    }
  }
  return v;
}

struct layout {
  std::size_t in_shift = 0;   // d_in starts this many bytes into its buffer (not 16-byte aligned)
  std::size_t out_shift = 0;  // and d_out
};

template <class NumT = std::uint64_t>
void check_select_bytes(const std::vector<std::uint8_t>& in, std::uint8_t pad, std::optional<std::uint64_t> end,
                        layout at = {}) {
  SCOPED_TRACE(::testing::Message() << "n=" << in.size() << " pad=" << unsigned{pad} << " end="
                                    << (end ? std::to_string(*end) : "none") << " in+" << at.in_shift << " out+"
                                    << at.out_shift);
  const std::size_t n = in.size();
  std::vector<std::uint8_t> expect;
  const auto stop = in.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(n, end.value_or(n)));
  std::copy_if(in.begin(), stop, std::back_inserter(expect), [pad](std::uint8_t b) { return b != pad; });

  std::vector<std::uint8_t> in_buf(at.in_shift, pad);
  in_buf.insert(in_buf.end(), in.begin(), in.end());
  const auto d_in = to_device(in_buf);
  const auto d_end = to_device(std::vector<std::uint64_t>{end.value_or(0)});
  cu::device_buffer<std::uint8_t> d_out(at.out_shift + n + 32);
  cu::device_buffer<NumT> d_num(1);
  cu::check(cudaMemset(d_out.data(), 0x5a, d_out.size()), "memset");
  cu::check(cudaMemset(d_num.data(), 0xff, sizeof(NumT)), "memset");
  run_with_temp([&](void* t, std::size_t& b) {
    return gutf8::prim::select_bytes(t, b, d_in.data() + at.in_shift, d_out.data() + at.out_shift, d_num.data(), n,
                                     pad, end ? d_end.data() : nullptr);
  });
  const auto num = static_cast<std::size_t>(to_host(d_num, 1)[0]);
  ASSERT_EQ(num, expect.size());
  const auto got = to_host(d_out, d_out.size());
  const auto first = got.begin() + static_cast<std::ptrdiff_t>(at.out_shift);
  EXPECT_EQ(first_mismatch(std::vector<std::uint8_t>(first, first + static_cast<std::ptrdiff_t>(num)), expect),
            SIZE_MAX);
  for (std::size_t i = 0; i < at.out_shift; ++i) ASSERT_EQ(got[i], 0x5a) << "before the output: " << i;
  for (std::size_t i = at.out_shift + num; i < got.size(); ++i) ASSERT_EQ(got[i], 0x5a) << "after the output: " << i;
}

std::vector<std::size_t> tile_sizes() {
  return {1, 2, 15, 16, 17, 511, 513, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1, 37 * tile + 13, 100003};
}

}  // namespace

TEST(PrimSelectBytes, SizesAroundTiles) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : tile_sizes())
    for (unsigned pct : {0u, 30u, 70u, 100u})  // no pad, some, most, all
      check_select_bytes(padded_bytes(n, pct, 0xFF, n + pct), 0xFF, std::nullopt);
}

TEST(PrimSelectBytes, EmptyInput) {
  GUTF8_REQUIRE_GPU();
  check_select_bytes({}, 0xFF, std::nullopt);
  check_select_bytes({}, 0xFF, 5);
}

// The strict encoder's bound: at 0, inside the first tile, on and around tile and row edges, in
// the middle, at and past the end.
TEST(PrimSelectBytes, EndBound) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = 37 * tile + 13;
  const auto in = padded_bytes(n, 40, 0xFF, 7);
  for (std::uint64_t end : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{15}, std::uint64_t{16},
                            std::uint64_t{17}, std::uint64_t{511}, std::uint64_t{512}, std::uint64_t{tile - 1},
                            std::uint64_t{tile}, std::uint64_t{tile + 1}, std::uint64_t{n / 2 + 7},
                            std::uint64_t{n - 1}, std::uint64_t{n}, std::uint64_t{n + 100},
                            std::numeric_limits<std::uint64_t>::max()})
    check_select_bytes(in, 0xFF, end);
  for (std::size_t m : {std::size_t{1}, tile + 1})
    for (std::uint64_t end : {std::uint64_t{0}, std::uint64_t{m - 1}, std::uint64_t{m}})
      check_select_bytes(padded_bytes(m, 30, 0xFF, m), 0xFF, end);
}

// The SWAR compare beside every byte value: each pad value among all 256, high bit set or not.
TEST(PrimSelectBytes, EveryByteValueBesideOtherPads) {
  GUTF8_REQUIRE_GPU();
  std::vector<std::uint8_t> in(64 * 256 + 7);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 7 + i / 256);
  for (unsigned p : {0x00u, 0x01u, 0x7Fu, 0x80u, 0xFEu, 0xFFu}) {
    const auto pad = static_cast<std::uint8_t>(p);
    check_select_bytes(in, pad, std::nullopt);
    check_select_bytes(padded_bytes(3 * tile + 5, 50, pad, p), pad, std::nullopt);
  }
}

// An input that is not 16-byte aligned takes the kernel's byte-wise loads; the output is written at
// every 16-byte phase.
TEST(PrimSelectBytes, UnalignedInputEveryOutputPhase) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = 3 * tile + 77;
  const auto in = padded_bytes(n, 50, 0xFF, 11);
  for (std::size_t out_shift = 0; out_shift <= 16; ++out_shift)
    check_select_bytes(in, 0xFF, std::nullopt, {0, out_shift});
  for (std::size_t in_shift : {1, 3, 8}) {
    check_select_bytes(in, 0xFF, std::nullopt, {in_shift, 5});
    check_select_bytes(in, 0xFF, n / 3, {in_shift, 0});
  }
}

TEST(PrimSelectBytes, CountTypes) {
  GUTF8_REQUIRE_GPU();
  const auto in = padded_bytes(5 * tile + 3, 50, 0xFF, 12);
  check_select_bytes<std::uint32_t>(in, 0xFF, std::nullopt);
  check_select_bytes<std::int64_t>(in, 0xFF, 4 * tile);
}

// Many tiles: look-backs that cross several windows of 32 tiles, prefixes far past one tile.
TEST(PrimSelectBytes, ManyTilesOddSize) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 27) + 4099;
  const auto in = padded_bytes(n, 40, 0xFF, 27);
  check_select_bytes(in, 0xFF, std::nullopt);
  check_select_bytes(in, 0xFF, n - 12345);
}

// Small enough for racecheck and initcheck: several tiles, bounded and not, unaligned input.
TEST(PrimSanitizerSweep, SelectBytes) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, 3 * tile + 7}) {
    const auto in = padded_bytes(n, 40, 0xFF, n);
    check_select_bytes(in, 0xFF, std::nullopt);
    check_select_bytes(in, 0xFF, n / 2);
    check_select_bytes(in, 0xFF, std::nullopt, {1, 3});
  }
}
