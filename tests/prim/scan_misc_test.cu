// Device scans: float, a non-commutative operator, max, in-place, 2^24 + 1 (three blocked
// levels) and one 2^28 case per algorithm.
#include "scan_test_common.cuh"

using namespace gutf8::test;

TEST(PrimScan, FloatSum) {
  GUTF8_REQUIRE_GPU();
  // small integer values: every partial sum is exact, so any association gives the same bits
  check_scan_all<float>(gutf8::prim::plus{}, 0.5f, 5);
}

TEST(PrimScan, NonCommutativeAffineCompose) {
  GUTF8_REQUIRE_GPU();
  check_scan_all<affine>(affine_compose{}, affine{3u, 1u}, 6);
}

TEST(PrimScan, Uint32Max) {
  GUTF8_REQUIRE_GPU();
  check_scan_all<std::uint32_t>(gutf8::prim::maximum{}, 0u, 7);
}

TEST(PrimScan, InPlace) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{4095}, std::size_t{4097}, std::size_t{65537},
                        std::size_t{1} << 20}) {
    const auto u = random_values<std::uint32_t>(n, n);
    const auto a = random_values<affine>(n, n + 1);
    for (auto alg : all_scan_algorithms) {
      check_scan(alg, u, gutf8::prim::plus{}, false, 0u, true);
      check_scan(alg, u, gutf8::prim::plus{}, true, 9u, true);
      check_scan(alg, a, affine_compose{}, false, affine{1u, 0u}, true);
      check_scan(alg, a, affine_compose{}, true, affine{5u, 2u}, true);
    }
  }
}

TEST(PrimScan, ThreeLevelsNonCommutative) {
  GUTF8_REQUIRE_GPU();
  // blocked: n > tile^2 needs a third level; look-back: long chains of 8-byte (non-packed) states
  const std::size_t n = (std::size_t{1} << 24) + 12345;
  const auto a = random_values<affine>(n, 77);
  for (auto alg : {scan_algorithm::blocked, scan_algorithm::decoupled_lookback, scan_algorithm::blelloch})
    check_scan(alg, a, affine_compose{}, false, affine{1u, 0u});
}

TEST(PrimScan, Huge2Pow28) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = std::size_t{1} << 28;
  const auto u = random_values<std::uint32_t>(n, 28);
  for (auto alg : all_scan_algorithms) check_scan(alg, u, gutf8::prim::plus{}, false, 0u);
  check_scan(scan_algorithm::decoupled_lookback, u, gutf8::prim::plus{}, true, 1u);
}

TEST(PrimScan, TempQueryAndEmpty) {
  GUTF8_REQUIRE_GPU();
  for (auto alg : all_scan_algorithms) {
    std::size_t bytes = 0;
    ASSERT_EQ(gutf8::prim::inclusive_sum<std::uint32_t>(nullptr, bytes, nullptr, nullptr, 0, nullptr, alg),
              cudaSuccess);
    EXPECT_GE(bytes, 1u);
  }
}

namespace {
struct nonzero {
  __host__ __device__ std::uint32_t operator()(std::uint8_t f) const { return f != 0; }
};
}  // namespace

TEST(PrimScan, TransformScanCountsFlags) {
  GUTF8_REQUIRE_GPU();
  const std::size_t n = 100003;
  auto gen = rng(3);
  std::vector<std::uint8_t> flags(n);
  for (auto& f : flags) f = static_cast<std::uint8_t>(gen() % 3 == 0 ? 0 : 1 + gen() % 200);
  std::vector<std::uint32_t> expect(n);
  std::uint32_t acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    expect[i] = acc;
    acc += flags[i] != 0;
  }
  auto d_flags = to_device(flags);
  gutf8::cuda::device_buffer<std::uint32_t> d_out(n);
  run_with_temp([&](void* t, std::size_t& b) {
    return gutf8::prim::transform_exclusive_scan(t, b, static_cast<const std::uint8_t*>(d_flags.data()), d_out.data(),
                                                 n, 0u, nonzero{}, gutf8::prim::plus{});
  });
  EXPECT_EQ(first_mismatch(to_host(d_out, n), expect), SIZE_MAX);
}

// A few shapes that still launch every scan algorithm over several tiles: small enough for
// compute-sanitizer racecheck and initcheck (scripts/gpu/devrun/tests.py), which the full sweeps
// above exceed.
TEST(PrimSanitizerSweep, Scan) {
  GUTF8_REQUIRE_GPU();
  const std::size_t tile = gutf8::prim::detail::lookback_scan_policy<std::uint32_t>::tile;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, 3 * tile + 5}) {
    const auto host = random_values<std::uint32_t>(n, n);
    for (auto alg : all_scan_algorithms) {
      check_scan(alg, host, gutf8::prim::plus{}, false, 0u);
      check_scan(alg, host, gutf8::prim::plus{}, true, 7u);
    }
  }
}
