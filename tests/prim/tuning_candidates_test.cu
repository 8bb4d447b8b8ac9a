// Every tuning candidate that the default scan or pair sort may run (scan_tuning.cuh,
// sort_tuning.cuh) against the CPU: sizes around each candidate's tile, grids long enough for the
// paced look-back (500 tiles and more), a non-commutative operator, in-place scans, skewed keys and
// a bit sub-range; the default calls on both sides of each band edge.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "gutf8/prim/cpu.hpp"
#include "gutf8/prim/radix_sort.cuh"
#include "gutf8/prim/scan.cuh"
#include "prim_gpu_util.cuh"
#include "prim_test_util.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

using namespace gutf8::test;
namespace detail = gutf8::prim::detail;

namespace {

// x -> a*x + b over Z/2^16, both in one 4-byte word: associative, not commutative.
struct affine16_compose {
  GUTF8_TEST_HD std::uint32_t operator()(std::uint32_t f, std::uint32_t g) const {
    const std::uint32_t fa = f >> 16, fb = f & 0xffffu, ga = g >> 16, gb = g & 0xffffu;
    return (((ga * fa) & 0xffffu) << 16) | ((ga * fb + gb) & 0xffffu);
  }
};

// Sizes around a tile: inside one, at its edges, a few tiles, and a grid past 500 tiles (paced).
std::vector<std::size_t> tile_sizes(std::size_t tile) {
  return {1, 1000, tile - 1, tile, tile + 1, 2 * tile + 3, 3 * tile - 1, 600 * tile + 7};
}

template <class Tuning, class Op>
void check_scan_candidate(const std::vector<std::uint32_t>& host, Op op, std::uint32_t init) {
  const std::size_t tile = Tuning::shape::tile;
  // The inclusive scan of a prefix is the prefix of the inclusive scan: one reference for all sizes.
  std::vector<std::uint32_t> incl(host.size());
  gutf8::prim::cpu::inclusive_scan(host.data(), incl.data(), host.size(), op);
  auto d_in = to_device(host);
  gutf8::cuda::device_buffer<std::uint32_t> d_out(host.size() + 1);
  for (std::size_t n : tile_sizes(tile)) {
    ASSERT_LE(n, host.size());
    for (bool exclusive : {false, true}) {
      SCOPED_TRACE(::testing::Message() << Tuning::name() << " n=" << n << (exclusive ? " exclusive" : " inclusive"));
      run_with_temp([&](void* t, std::size_t& b) {
        return detail::lookback_scan_tuned<Tuning>(t, b, detail::ptr_source<std::uint32_t>{d_in.data()}, d_out.data(),
                                                   n, op, exclusive, init, nullptr);
      });
      const auto got = to_host(d_out, n);
      std::size_t bad = SIZE_MAX;
      for (std::size_t i = 0; i < n && bad == SIZE_MAX; ++i) {
        const std::uint32_t want = !exclusive ? incl[i] : i == 0 ? init : op(init, incl[i - 1]);
        if (got[i] != want) bad = i;
      }
      ASSERT_EQ(bad, SIZE_MAX) << "first mismatch at " << bad;
    }
  }
}

TEST(PrimTuning, EveryScanCandidateNonCommutative) {
  GUTF8_REQUIRE_GPU();
  const auto host = random_values<std::uint32_t>(600 * 512 * 24 + 7, 45);
  detail::for_each_type<detail::scan_candidates_u32>([&](auto tag, std::size_t) {
    check_scan_candidate<typename decltype(tag)::type>(host, affine16_compose{}, 0x00030001u);
  });
}

TEST(PrimTuning, ScanCandidatesByIndexInPlace) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = 3 * 512 * 24 + 5;
  const auto host = random_values<std::uint32_t>(n, 46);
  std::vector<std::uint32_t> want(n);
  gutf8::prim::cpu::inclusive_scan(host.data(), want.data(), n, gutf8::prim::plus{});
  for (std::size_t i = 0; i < detail::scan_candidates_u32::size; ++i) {
    SCOPED_TRACE(::testing::Message() << "candidate " << i);
    auto d = to_device(host);
    run_with_temp([&](void* t, std::size_t& b) {
      return detail::lookback_scan_candidate(i, t, b, d.data(), d.data(), n, gutf8::prim::plus{}, false, 0u, nullptr);
    });
    ASSERT_EQ(first_mismatch(to_host(d, n), want), SIZE_MAX);
  }
  std::size_t b = 0;
  EXPECT_EQ(detail::lookback_scan_candidate(detail::scan_candidates_u32::size, nullptr, b,
                                            static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
                                            n, gutf8::prim::plus{}, false, 0u, nullptr),
            cudaErrorInvalidValue);
}

// Keys of few distinct digits make long runs (stability, large look-back counts).
std::vector<std::uint32_t> sort_keys(std::size_t n, std::uint64_t seed, bool skewed) {
  auto k = random_values<std::uint32_t>(n, seed);
  if (skewed)
    for (auto& x : k) x = (x % 5) * 0x01010101u + ((x >> 8) & 0x0100u);
  return k;
}

template <class Shape>
void check_sort_candidate(std::size_t n, bool skewed, int begin_bit, int end_bit) {
  SCOPED_TRACE(::testing::Message() << Shape::name() << " n=" << n << (skewed ? " skewed" : "") << " bits ["
                                    << begin_bit << ", " << end_bit << ")");
  const auto keys = sort_keys(n, n * 7 + (skewed ? 1 : 0), skewed);
  std::vector<std::uint32_t> vals(n), want_k(n), want_v(n);
  std::iota(vals.begin(), vals.end(), 0u);
  gutf8::prim::cpu::radix_sort_pairs(keys.data(), want_k.data(), vals.data(), want_v.data(), n, begin_bit, end_bit, 0);
  auto dk = to_device(keys);
  auto dv = to_device(vals);
  gutf8::cuda::device_buffer<std::uint32_t> ok(n + 1), ov(n + 1);
  run_with_temp([&](void* t, std::size_t& b) {
    return detail::onesweep_sort<std::uint32_t, std::uint32_t, true, Shape>(
        t, b, dk.data(), ok.data(), dv.data(), ov.data(), n, begin_bit, end_bit, nullptr);
  });
  ASSERT_EQ(first_mismatch(to_host(ok, n), want_k), SIZE_MAX) << "keys";
  ASSERT_EQ(first_mismatch(to_host(ov, n), want_v), SIZE_MAX) << "values";
}

TEST(PrimTuning, EverySortPairsCandidate) {
  GUTF8_REQUIRE_GPU();
  detail::for_each_type<detail::sort_pairs_candidates_u32>([&](auto tag, std::size_t) {
    using shape = typename decltype(tag)::type;
    const std::size_t tile = shape::tile;
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, tile - 1, tile, tile + 1, 3 * tile + 5, 257 * tile + 11})
      check_sort_candidate<shape>(n, false, 0, 32);
    check_sort_candidate<shape>(5 * tile + 3, true, 0, 32);
    check_sort_candidate<shape>(2 * tile + 9, false, 5, 27);
  });
}

TEST(PrimTuning, SortPairsCandidatesByIndex) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = 100003;
  const auto keys = sort_keys(n, 9, false);
  std::vector<std::uint32_t> vals(n), want_k(n), want_v(n);
  std::iota(vals.begin(), vals.end(), 0u);
  gutf8::prim::cpu::radix_sort_pairs(keys.data(), want_k.data(), vals.data(), want_v.data(), n, 0, 32, 0);
  auto dk = to_device(keys);
  auto dv = to_device(vals);
  gutf8::cuda::device_buffer<std::uint32_t> ok(n + 1), ov(n + 1);
  for (std::size_t i = 0; i < detail::sort_pairs_candidates_u32::size; ++i) {
    SCOPED_TRACE(::testing::Message() << "candidate " << i);
    run_with_temp([&](void* t, std::size_t& b) {
      return detail::onesweep_pairs_candidate(i, t, b, dk.data(), ok.data(), dv.data(), ov.data(), n, 0, 32, nullptr);
    });
    ASSERT_EQ(first_mismatch(to_host(ok, n), want_k), SIZE_MAX);
    ASSERT_EQ(first_mismatch(to_host(ov, n), want_v), SIZE_MAX);
  }
}

// The public calls switch shapes at each band's max_n: both sides of every edge.
template <class Bands>
std::vector<std::size_t> band_edges() {
  std::vector<std::size_t> v;
  detail::for_each_type<Bands>([&](auto tag, std::size_t i) {
    if (i + 1 == Bands::size) return;
    const std::size_t m = decltype(tag)::type::max_n;
    v.push_back(m);
    v.push_back(m + 1);
  });
  return v;
}

// How many of List's types are T.
template <class T, class List>
std::size_t count_in() {
  std::size_t c = 0;
  detail::for_each_type<List>([&](auto tag, std::size_t) { c += std::is_same_v<typename decltype(tag)::type, T>; });
  return c;
}

// bench_prim --sweep sets each default beside its band's candidate: every band runs exactly one.
TEST(PrimTuning, EveryBandIsOneCandidate) {
  detail::for_each_type<detail::scan_default_bands_u32>([&](auto tag, std::size_t i) {
    using tuning = typename decltype(tag)::type::tuning;
    EXPECT_EQ((count_in<tuning, detail::scan_candidates_u32>()), 1u) << "scan band " << i << ": " << tuning::name();
  });
  detail::for_each_type<detail::sort_pairs_default_bands_u32>([&](auto tag, std::size_t i) {
    using shape = typename decltype(tag)::type::shape;
    EXPECT_EQ((count_in<shape, detail::sort_pairs_candidates_u32>()), 1u) << "sort band " << i << ": " << shape::name();
  });
}

struct small_band {
  static constexpr std::size_t max_n = 100;
};
struct large_band {
  static constexpr std::size_t max_n = 1000;
};

// The defaults' dispatch: n goes to the first band that holds it, on both sides of every edge.
TEST(PrimTuning, WithBandPicksTheFirstBandThatHoldsN) {
  using bands = detail::type_list<small_band, large_band>;
  const auto picked = [](std::size_t n) {
    int which = -1;
    const bool found = detail::with_band<bands>(
        n, [&](auto band) { which = std::is_same_v<typename decltype(band)::type, small_band> ? 0 : 1; });
    return found ? which : -1;
  };
  EXPECT_EQ(picked(0), 0);
  EXPECT_EQ(picked(100), 0);
  EXPECT_EQ(picked(101), 1);
  EXPECT_EQ(picked(1000), 1);
  EXPECT_EQ(picked(1001), -1);
}

TEST(PrimTuning, DefaultScanAroundBandEdges) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : band_edges<detail::scan_default_bands_u32>()) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    const auto host = random_values<std::uint32_t>(n, n);
    std::vector<std::uint32_t> want(n);
    gutf8::prim::cpu::inclusive_scan(host.data(), want.data(), n, gutf8::prim::plus{});
    auto d_in = to_device(host);
    gutf8::cuda::device_buffer<std::uint32_t> d_out(n);
    run_with_temp([&](void* t, std::size_t& b) {
      return gutf8::prim::inclusive_sum(t, b, d_in.data(), d_out.data(), n, nullptr);
    });
    ASSERT_EQ(first_mismatch(to_host(d_out, n), want), SIZE_MAX);
  }
}

TEST(PrimTuning, DefaultSortPairsAroundBandEdges) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : band_edges<detail::sort_pairs_default_bands_u32>()) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    const auto keys = sort_keys(n, n, false);
    std::vector<std::uint32_t> vals(n), want_k(n), want_v(n);
    std::iota(vals.begin(), vals.end(), 0u);
    gutf8::prim::cpu::radix_sort_pairs(keys.data(), want_k.data(), vals.data(), want_v.data(), n, 0, 32, 0);
    auto dk = to_device(keys);
    auto dv = to_device(vals);
    gutf8::cuda::device_buffer<std::uint32_t> ok(n), ov(n);
    run_with_temp([&](void* t, std::size_t& b) {
      return gutf8::prim::radix_sort_pairs(t, b, dk.data(), ok.data(), dv.data(), ov.data(), n);
    });
    ASSERT_EQ(first_mismatch(to_host(ok, n), want_k), SIZE_MAX) << "keys";
    ASSERT_EQ(first_mismatch(to_host(ov, n), want_v), SIZE_MAX) << "values";
  }
}

}  // namespace
