// CPU primitives (sequential and multithreaded) against straightforward references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gutf8/prim/cpu.hpp"
#include "prim_test_util.hpp"
#include "support/random.hpp"

using namespace gutf8::test;
namespace cpu = gutf8::prim::cpu;

namespace {

const std::vector<std::size_t> kSizes = {0, 1, 2, 3, 31, 1000, 65535, 65536, 65537, 300001, 1u << 20};
const unsigned kThreads[] = {1, 2, 3, 8, 0};

template <class T, class Op>
void check_scans(Op op, T init, std::uint64_t seed) {
  for (std::size_t n : kSizes) {
    const auto in = random_values<T>(n, seed + n);
    std::vector<T> inc(n), exc(n);
    if (n) {
      T acc = in[0];
      inc[0] = acc;
      for (std::size_t i = 1; i < n; ++i) inc[i] = acc = op(acc, in[i]);
      acc = init;
      for (std::size_t i = 0; i < n; ++i) {
        exc[i] = acc;
        acc = op(acc, in[i]);
      }
    }
    for (unsigned t : kThreads) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " threads=" << t);
      std::vector<T> out(n);
      cpu::inclusive_scan(in.data(), out.data(), n, op, t);
      ASSERT_TRUE(out == inc);
      cpu::exclusive_scan(in.data(), out.data(), n, init, op, t);
      ASSERT_TRUE(out == exc);
      auto inplace = in;
      cpu::inclusive_scan(inplace.data(), inplace.data(), n, op, t);
      ASSERT_TRUE(inplace == inc);
    }
  }
}

struct add {
  template <class T>
  T operator()(T a, T b) const {
    return a + b;
  }
};

}  // namespace

TEST(PrimCpu, ScanSums) {
  check_scans<std::uint32_t>(add{}, 3u, 1);
  check_scans<std::int64_t>(add{}, -5, 2);
  check_scans<float>(add{}, 0.5f, 3);
}

TEST(PrimCpu, ScanNonCommutative) { check_scans<affine>(affine_compose{}, affine{7u, 3u}, 4); }

TEST(PrimCpu, SelectStable) {
  for (std::size_t n : kSizes) {
    std::vector<std::uint64_t> in(n);
    std::iota(in.begin(), in.end(), std::uint64_t{1});
    auto gen = rng(n);
    std::vector<std::uint8_t> flags(n);
    for (auto& f : flags) f = static_cast<std::uint8_t>(gen() % 3 == 0 ? 0 : 1 + gen() % 9);
    std::vector<std::uint64_t> expect_f, expect_p;
    for (std::size_t i = 0; i < n; ++i) {
      if (flags[i]) expect_f.push_back(in[i]);
      if (in[i] % 7 < 3) expect_p.push_back(in[i]);
    }
    for (unsigned t : kThreads) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " threads=" << t);
      std::vector<std::uint64_t> out(n);
      const std::size_t k = cpu::select_flagged(in.data(), flags.data(), out.data(), n, t);
      out.resize(k);
      ASSERT_TRUE(out == expect_f);
      out.assign(n, 0);
      const std::size_t kp = cpu::select_if(in.data(), out.data(), n, [](std::uint64_t x) { return x % 7 < 3; }, t);
      out.resize(kp);
      ASSERT_TRUE(out == expect_p);
    }
  }
}

template <class K>
void check_cpu_sort(std::size_t n, int b, int e, std::uint64_t seed, int value_bits) {
  auto gen = rng(seed);
  std::vector<K> keys(n);
  for (auto& k : keys) k = static_cast<K>(gen() >> (64 - value_bits)) | 1u;
  auto sel = [&](K k) {
    const int w = e - b;
    if (w <= 0) return K(0);
    const K m = w >= static_cast<int>(8 * sizeof(K)) ? ~K(0) : ((K(1) << w) - 1);
    return (k >> b) & m;
  };
  std::vector<std::uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](std::uint32_t x, std::uint32_t y) { return sel(keys[x]) < sel(keys[y]); });
  std::vector<K> expect(n);
  for (std::size_t i = 0; i < n; ++i) expect[i] = keys[idx[i]];
  std::vector<std::uint32_t> vals(n);
  std::iota(vals.begin(), vals.end(), 0u);
  for (unsigned t : kThreads) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " bits [" << b << "," << e << ") threads=" << t);
    std::vector<K> out(n);
    std::vector<std::uint32_t> vout(n);
    cpu::radix_sort_pairs(keys.data(), out.data(), vals.data(), vout.data(), n, b, e, t);
    ASSERT_TRUE(out == expect);
    ASSERT_TRUE(vout == idx);
    cpu::radix_sort_keys(keys.data(), out.data(), n, b, e, t);
    ASSERT_TRUE(out == expect);
  }
}

TEST(PrimCpu, RadixSort) {
  for (std::size_t n : kSizes) {
    check_cpu_sort<std::uint32_t>(n, 0, 32, n, 32);
    check_cpu_sort<std::uint32_t>(n, 0, 32, n + 1, 9);  // duplicates
    check_cpu_sort<std::uint64_t>(n, 0, 64, n + 2, 64);
  }
  check_cpu_sort<std::uint32_t>(100000, 3, 19, 5, 32);
  check_cpu_sort<std::uint32_t>(100000, 7, 7, 6, 32);
  check_cpu_sort<std::uint64_t>(100000, 17, 50, 7, 64);
  std::vector<std::uint32_t> k = {5, 3, 9, 1}, o(4);
  cpu::radix_sort_keys_u32(k.data(), o.data(), 4, 0, 32, 2);
  EXPECT_TRUE((o == std::vector<std::uint32_t>{1, 3, 5, 9}));
}
