// Device radix sorts: keys and pairs (stable: values are the original index), 32- and 64-bit
// keys, bit sub-ranges, every algorithm, tile boundaries, skewed digits, and a 2^28 case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gutf8/prim/radix_sort.cuh"
#include "prim_gpu_util.cuh"
#include "prim_test_util.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

using namespace gutf8::test;
using gutf8::prim::sort_algorithm;

namespace {

constexpr sort_algorithm all_sort_algorithms[] = {sort_algorithm::split_bit, sort_algorithm::digit,
                                                  sort_algorithm::onesweep, sort_algorithm::cub};

template <class K>
K bits_of(K k, int b, int e) {
  const int w = e - b;
  if (w <= 0) return 0;
  const K m = w >= static_cast<int>(8 * sizeof(K)) ? ~K(0) : ((K(1) << w) - 1);
  return (k >> b) & m;
}

// Reference: stable sort of indices by the selected bits.
template <class K>
std::vector<std::uint32_t> reference_order(const std::vector<K>& keys, int b, int e) {
  std::vector<std::uint32_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return bits_of(keys[x], b, e) < bits_of(keys[y], b, e); });
  return idx;
}

// Large pairs sorts are verified in O(n) instead of against std::stable_sort: output keys ordered
// by the selected bits, values a permutation, keys_out[i] == keys_in[vals_out[i]] (bits outside
// the range travel with their key), and equal digits keep increasing values (stability).
template <class K>
void verify_pairs_linear(const std::vector<K>& keys, const std::vector<K>& got, const std::vector<std::uint32_t>& vals,
                         int b, int e) {
  const std::size_t n = keys.size();
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LT(vals[i], n) << i;
    ASSERT_FALSE(seen[vals[i]]) << "duplicate value at " << i;
    seen[vals[i]] = true;
    ASSERT_EQ(got[i], keys[vals[i]]) << i;
    if (i > 0) {
      const K p = bits_of(got[i - 1], b, e), c = bits_of(got[i], b, e);
      ASSERT_LE(p, c) << "order at " << i;
      if (p == c) ASSERT_LT(vals[i - 1], vals[i]) << "stability at " << i;
    }
  }
}

template <class K>
void check_sort(sort_algorithm alg, const std::vector<K>& keys, int b, int e, bool pairs, bool in_place = false) {
  SCOPED_TRACE(::testing::Message() << gutf8::prim::to_string(alg) << " n=" << keys.size() << " bits [" << b << ","
                                    << e << ") " << (pairs ? "pairs" : "keys") << (in_place ? " in-place" : ""));
  const std::size_t n = keys.size();
  const bool linear = pairs && n > (std::size_t{1} << 21);
  std::vector<std::uint32_t> order;
  std::vector<K> expect_keys;
  if (!linear) {
    order = reference_order(keys, b, e);
    expect_keys.resize(n);
    for (std::size_t i = 0; i < n; ++i) expect_keys[i] = keys[order[i]];
  }
  auto d_keys = to_device(keys);
  cu::device_buffer<K> d_keys_out_own(n + 1);
  K* d_keys_out = in_place ? d_keys.data() : d_keys_out_own.data();
  std::vector<std::uint32_t> vals(n);
  std::iota(vals.begin(), vals.end(), 0u);
  auto d_vals = to_device(vals);
  cu::device_buffer<std::uint32_t> d_vals_out_own(n + 1);
  std::uint32_t* d_vals_out = in_place ? d_vals.data() : d_vals_out_own.data();
  run_with_temp([&](void* t, std::size_t& bytes) {
    if (pairs)
      return gutf8::prim::radix_sort_pairs(t, bytes, static_cast<const K*>(d_keys.data()), d_keys_out,
                                           static_cast<const std::uint32_t*>(d_vals.data()), d_vals_out, n, b, e,
                                           nullptr, alg);
    return gutf8::prim::radix_sort_keys(t, bytes, static_cast<const K*>(d_keys.data()), d_keys_out, n, b, e, nullptr,
                                        alg);
  });
  std::vector<K> got(n);
  if (n) cu::check(cudaMemcpy(got.data(), d_keys_out, n * sizeof(K), cudaMemcpyDeviceToHost), "D2H");
  std::vector<std::uint32_t> got_vals(pairs ? n : 0);
  if (pairs && n) cu::check(cudaMemcpy(got_vals.data(), d_vals_out, n * 4, cudaMemcpyDeviceToHost), "D2H");
  if (linear) {
    verify_pairs_linear(keys, got, got_vals, b, e);
    return;
  }
  ASSERT_EQ(first_mismatch(got, expect_keys), SIZE_MAX) << "keys differ at " << first_mismatch(got, expect_keys);
  if (pairs)
    ASSERT_EQ(first_mismatch(got_vals, order), SIZE_MAX) << "values (stability) differ at "
                                                         << first_mismatch(got_vals, order);
}

template <class K>
std::vector<K> random_keys(std::size_t n, std::uint64_t seed, int distinct_bits = 64) {
  auto gen = rng(seed);
  std::vector<K> v(n);
  for (auto& k : v) {
    const std::uint64_t r = gen();
    k = static_cast<K>(distinct_bits >= 64 ? r : (r & ((std::uint64_t{1} << distinct_bits) - 1))) | K(1) << 0;
  }
  return v;
}

std::vector<std::size_t> sort_sizes() {
  auto s = boundary_sizes(gutf8::prim::detail::onesweep_policy<std::uint32_t>::tile, 2);
  for (std::size_t k : {1, 2}) {
    const std::size_t t = gutf8::prim::detail::digit_sort_policy<std::uint32_t>::tile * k;
    s.insert(s.end(), {t - 1, t + 1});
    const std::size_t t64 = gutf8::prim::detail::onesweep_policy<std::uint64_t>::tile * k;
    s.insert(s.end(), {t64 - 1, t64 + 1});
  }
  s.push_back(300007);
  return s;
}

}  // namespace

TEST(PrimSort, KeysU32AllAlgorithms) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : sort_sizes()) {
    const auto keys = random_keys<std::uint32_t>(n, n);
    for (auto alg : all_sort_algorithms) check_sort(alg, keys, 0, 32, false);
  }
}

TEST(PrimSort, PairsU32StableWithDuplicates) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : sort_sizes()) {
    const auto keys = random_keys<std::uint32_t>(n, n + 1, 10);  // many equal keys
    for (auto alg : all_sort_algorithms) check_sort(alg, keys, 0, 32, true);
  }
}

TEST(PrimSort, BitRanges) {
  GUTF8_REQUIRE_GPU();
  const auto keys = random_keys<std::uint32_t>(70001, 5);
  const auto keys64 = random_keys<std::uint64_t>(40001, 6);
  const int ranges[][2] = {{0, 0}, {0, 1}, {3, 17}, {8, 16}, {5, 32}, {31, 32}, {0, 13}, {12, 12}};
  for (auto alg : all_sort_algorithms)
    for (auto& r : ranges) {
      if (alg == sort_algorithm::cub && r[0] == r[1]) continue;  // not part of CUB's contract
      check_sort(alg, keys, r[0], r[1], true);
      check_sort(alg, keys, r[0], r[1], false);
    }
  const int ranges64[][2] = {{0, 64}, {20, 45}, {32, 64}, {60, 64}, {1, 63}};
  for (auto alg : all_sort_algorithms)
    for (auto& r : ranges64) check_sort(alg, keys64, r[0], r[1], true);
}

TEST(PrimSort, U64Keys) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : sort_sizes()) {
    const auto keys = random_keys<std::uint64_t>(n, n + 7);
    for (auto alg : {sort_algorithm::digit, sort_algorithm::onesweep, sort_algorithm::cub}) {
      check_sort(alg, keys, 0, 64, false);
      check_sort(alg, keys, 0, 64, true);
    }
  }
  const auto keys = random_keys<std::uint64_t>(20011, 3);
  check_sort(sort_algorithm::split_bit, keys, 0, 64, true);
}

TEST(PrimSort, SkewedDigitsAndInPlace) {
  GUTF8_REQUIRE_GPU();
  // code-point-like keys: most values below 128, all high digits zero
  auto gen = rng(11);
  std::vector<std::uint32_t> keys(200003);
  for (auto& k : keys) k = gen() % 10 ? static_cast<std::uint32_t>(32 + gen() % 95) : static_cast<std::uint32_t>(gen() % 0x10FFFF) | 1u;
  for (auto alg : all_sort_algorithms) {
    check_sort(alg, keys, 0, 21, true);
    if (alg == sort_algorithm::cub) continue;  // CUB does not allow overlapping in/out
    check_sort(alg, keys, 0, 32, true, true);
    check_sort(alg, keys, 0, 24, false, true);
  }
  std::vector<std::uint32_t> same(100000, 42u);
  for (auto alg : all_sort_algorithms) check_sort(alg, same, 0, 32, true);
}

TEST(PrimSort, Huge2Pow28) {
  GUTF8_REQUIRE_GPU();
  const auto keys = random_keys<std::uint32_t>(std::size_t{1} << 28, 28);
  for (auto alg : {sort_algorithm::onesweep, sort_algorithm::digit, sort_algorithm::cub}) check_sort(alg, keys, 0, 32, true);
}

// Every sort algorithm, keys and pairs, over a few tiles: small enough for racecheck and
// initcheck.
TEST(PrimSanitizerSweep, Sort) {
  GUTF8_REQUIRE_GPU();
  const std::size_t tile = gutf8::prim::detail::onesweep_policy<std::uint32_t>::tile;
  for (std::size_t n : {std::size_t{1000}, 2 * tile + 1}) {
    const auto keys = random_keys<std::uint32_t>(n, n, 12);
    for (auto alg : all_sort_algorithms) {
      check_sort(alg, keys, 0, 32, false);
      check_sort(alg, keys, 0, 32, true);
    }
  }
}
