// Device select / compact: flags and predicate, every algorithm, stability (items carry their
// index), sizes around tile boundaries, 8-byte items, and a 2^28 case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gutf8/prim/select.cuh"
#include "prim_gpu_util.cuh"
#include "prim_test_util.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

using namespace gutf8::test;
using gutf8::prim::select_algorithm;

namespace {

constexpr select_algorithm all_select_algorithms[] = {
    select_algorithm::hillis_steele, select_algorithm::blelloch, select_algorithm::blocked,
    select_algorithm::decoupled_lookback, select_algorithm::cub, select_algorithm::fused};

// Predicate on the payload's low byte: about `percent`% selected.
struct low_byte_below {
  unsigned threshold;
  template <class T>
  __host__ __device__ bool operator()(const T& x) const {
    return (static_cast<unsigned>(x >> 7) & 255u) < threshold;
  }
};

template <class T>
std::vector<T> payload(std::size_t n, std::uint64_t seed) {
  // index in the high part (stability check), random bits below
  auto gen = rng(seed);
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 8)
      v[i] = (static_cast<T>(i) << 32) | static_cast<T>(static_cast<std::uint32_t>(gen()) | 1u);
    else
      v[i] = static_cast<T>((i << 15) ^ (gen() & 0x7fffu)) | 1u;
  }
  return v;
}

// out_shift: the output starts that many items into its buffer (another 16-byte phase).
template <class T, class F>
void check_flagged(select_algorithm alg, const std::vector<T>& in, const std::vector<F>& flags,
                   std::size_t out_shift = 0) {
  SCOPED_TRACE(::testing::Message() << gutf8::prim::to_string(alg) << " flagged n=" << in.size() << " shift="
                                    << out_shift << " item bytes=" << sizeof(T));
  const std::size_t n = in.size();
  std::vector<T> expect;
  for (std::size_t i = 0; i < n; ++i)
    if (flags[i]) expect.push_back(in[i]);
  auto d_in = to_device(in);
  auto d_flags = to_device(flags);
  cu::device_buffer<T> d_out(n + 1 + out_shift);
  cu::device_buffer<std::size_t> d_num(1);
  cu::check(cudaMemset(d_num.data(), 0xff, sizeof(std::size_t)), "memset");
  cu::check(cudaMemset(d_out.data(), 0x5a, d_out.size() * sizeof(T)), "memset");
  run_with_temp([&](void* t, std::size_t& b) {
    return gutf8::prim::select_flagged(t, b, static_cast<const T*>(d_in.data()), static_cast<const F*>(d_flags.data()),
                                       d_out.data() + out_shift, d_num.data(), n, nullptr, alg);
  });
  const auto num = to_host(d_num, 1)[0];
  ASSERT_EQ(num, expect.size());
  const auto got = to_host(d_out, d_out.size());
  EXPECT_EQ(first_mismatch(std::vector<T>(got.begin() + static_cast<std::ptrdiff_t>(out_shift),
                                          got.begin() + static_cast<std::ptrdiff_t>(out_shift + num)),
                           expect),
            SIZE_MAX);
  std::vector<unsigned char> bytes(d_out.size() * sizeof(T));
  std::memcpy(bytes.data(), got.data(), bytes.size());
  for (std::size_t i = 0; i < out_shift * sizeof(T); ++i) ASSERT_EQ(bytes[i], 0x5a) << "before the output: " << i;
  for (std::size_t i = (out_shift + num) * sizeof(T); i < bytes.size(); ++i)
    ASSERT_EQ(bytes[i], 0x5a) << "after the output: " << i;
}

template <class T>
void check_if(select_algorithm alg, const std::vector<T>& in, unsigned threshold) {
  SCOPED_TRACE(::testing::Message() << gutf8::prim::to_string(alg) << " if n=" << in.size() << " t=" << threshold);
  const std::size_t n = in.size();
  const low_byte_below pred{threshold};
  std::vector<T> expect;
  for (const T& x : in)
    if (pred(x)) expect.push_back(x);
  auto d_in = to_device(in);
  cu::device_buffer<T> d_out(n + 1);
  cu::device_buffer<std::uint32_t> d_num(1);
  run_with_temp([&](void* t, std::size_t& b) {
    return gutf8::prim::select_if(t, b, static_cast<const T*>(d_in.data()), d_out.data(), d_num.data(), n, pred,
                                  nullptr, alg);
  });
  const auto num = to_host(d_num, 1)[0];
  ASSERT_EQ(num, expect.size());
  EXPECT_EQ(first_mismatch(to_host(d_out, num), expect), SIZE_MAX);
}

std::vector<std::uint8_t> random_flags(std::size_t n, unsigned percent, std::uint64_t seed) {
  auto gen = rng(seed);
  std::vector<std::uint8_t> f(n);
  for (auto& x : f) x = static_cast<std::uint8_t>(gen() % 100 < percent ? 1 + gen() % 255 : 0);
  return f;
}

// Tile boundaries of the flagged and of the predicate policy (they may differ).
template <class T>
std::vector<std::size_t> select_tile_sizes(std::size_t tiles) {
  auto s = boundary_sizes(gutf8::prim::detail::select_policy<T, true>::tile, tiles);
  const auto p = boundary_sizes(gutf8::prim::detail::select_policy<T, false>::tile, tiles);
  for (std::size_t n : p)
    if (std::find(s.begin(), s.end(), n) == s.end()) s.push_back(n);
  return s;
}

std::vector<std::size_t> select_sizes() {
  auto s = select_tile_sizes<std::uint32_t>(3);
  s.insert(s.end(), {100000, 1000003});
  return s;
}

}  // namespace

TEST(PrimSelect, FlaggedU32) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : select_sizes()) {
    const auto in = payload<std::uint32_t>(n, n);
    for (unsigned pct : {0u, 3u, 50u, 100u}) {
      const auto flags = random_flags(n, pct, n + pct);
      for (auto alg : all_select_algorithms) check_flagged(alg, in, flags);
    }
  }
}

TEST(PrimSelect, IfU32) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : select_sizes()) {
    const auto in = payload<std::uint32_t>(n, n + 1);
    for (unsigned t : {0u, 128u, 256u})
      for (auto alg : all_select_algorithms) check_if(alg, in, t);
  }
}

TEST(PrimSelect, U64ItemsAndIntFlags) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : select_tile_sizes<std::uint64_t>(2)) {
    const auto in = payload<std::uint64_t>(n, n + 2);
    const auto f8 = random_flags(n, 40, n);
    std::vector<std::int32_t> flags(f8.begin(), f8.end());
    for (auto alg : all_select_algorithms) {
      check_flagged(alg, in, flags);
      check_if(alg, in, 77u);
    }
  }
}

// Items of 1, 2, 4 and 8 bytes written at every 16-byte phase of the output (the fused select
// stores whole 16-byte groups and the edges one item a thread).
TEST(PrimSelect, SmallItemsAtEveryOutputPhase) {
  GUTF8_REQUIRE_GPU();
  const auto run = [](auto item) {
    using T = decltype(item);
    for (std::size_t n : select_tile_sizes<T>(2)) {
      const auto in = payload<T>(n, n + 3);
      for (unsigned pct : {1u, 50u, 97u}) {
        const auto flags = random_flags(n, pct, n + pct);
        for (std::size_t shift = 0; shift < 16 / sizeof(T) + 1; shift += 16 / sizeof(T) > 4 ? 3 : 1) {
          check_flagged(select_algorithm::fused, in, flags, shift);
          if (shift == 1) check_flagged(select_algorithm::cub, in, flags, shift);
        }
      }
    }
  };
  run(std::uint8_t{});
  run(std::uint16_t{});
  run(std::uint32_t{});
  run(std::uint64_t{});
}

TEST(PrimSelect, UnalignedInput) {
  GUTF8_REQUIRE_GPU();
  // d_in + 1 and flags + 1 are not 16-byte aligned: the fused kernel takes its scalar path
  const std::size_t n = 50001;
  const auto in = payload<std::uint32_t>(n + 1, 9);
  const auto flags = random_flags(n + 1, 50, 9);
  auto d_in = to_device(in);
  auto d_flags = to_device(flags);
  cu::device_buffer<std::uint32_t> d_out(n + 1);
  cu::device_buffer<std::size_t> d_num(1);
  run_with_temp([&](void* t, std::size_t& b) {
    return gutf8::prim::select_flagged(t, b, static_cast<const std::uint32_t*>(d_in.data()) + 1,
                                       static_cast<const std::uint8_t*>(d_flags.data()) + 1, d_out.data(), d_num.data(),
                                       n, nullptr, select_algorithm::fused);
  });
  std::vector<std::uint32_t> expect;
  for (std::size_t i = 1; i <= n; ++i)
    if (flags[i]) expect.push_back(in[i]);
  const auto num = to_host(d_num, 1)[0];
  ASSERT_EQ(num, expect.size());
  EXPECT_EQ(first_mismatch(to_host(d_out, num), expect), SIZE_MAX);
}

TEST(PrimSelect, Huge2Pow28) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = std::size_t{1} << 28;
  const auto in = payload<std::uint32_t>(n, 28);
  const auto flags = random_flags(n, 50, 28);
  for (auto alg : {select_algorithm::fused, select_algorithm::decoupled_lookback, select_algorithm::cub})
    check_flagged(alg, in, flags);
  check_if(select_algorithm::fused, in, 100u);
}

// Every select algorithm over several tiles, small enough for racecheck and initcheck.
TEST(PrimSanitizerSweep, Select) {
  GUTF8_REQUIRE_GPU();
  const std::size_t tile = gutf8::prim::detail::select_policy<std::uint32_t, false>::tile;
  for (std::size_t n : {std::size_t{1}, 3 * tile + 7}) {
    const auto in = payload<std::uint32_t>(n, n);
    const auto flags = random_flags(n, 30, n + 1);
    for (auto alg : all_select_algorithms) {
      check_flagged(alg, in, flags);
      check_if(alg, in, 100u);
    }
  }
}
