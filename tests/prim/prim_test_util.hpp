// Shared helpers for the primitive tests: a small non-commutative associative operator and
// deterministic random inputs (never all zeros).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "support/random.hpp"

#if defined(__CUDACC__)
#define GUTF8_TEST_HD __host__ __device__
#else
#define GUTF8_TEST_HD
#endif

namespace gutf8::test {

// Affine map x -> a*x + b over Z/2^32. affine_compose(f, g) = "f then g" = g o f:
// associative, not commutative.
struct affine {
  std::uint32_t a;
  std::uint32_t b;
  friend GUTF8_TEST_HD bool operator==(const affine& x, const affine& y) {
    return x.a == y.a && x.b == y.b;
  }
};
struct affine_compose {
  GUTF8_TEST_HD affine operator()(const affine& f, const affine& g) const {
    return affine{g.a * f.a, g.a * f.b + g.b};
  }
};

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  auto gen = rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, affine>) {
    for (auto& x : v) x = affine{static_cast<std::uint32_t>(gen()) | 1u, static_cast<std::uint32_t>(gen())};
  } else if constexpr (std::is_floating_point_v<T>) {
    // small integers: float sums are exact (up to 2^24), so any association gives the same result
    std::uniform_int_distribution<int> d(1, 4);
    for (auto& x : v) x = static_cast<T>(d(gen));
  } else if constexpr (std::is_signed_v<T>) {
    // small magnitudes of both signs: sums never overflow (signed overflow is undefined)
    for (auto& x : v) {
      const auto r = gen();
      x = static_cast<T>(static_cast<T>(1 + r % 1000) * ((r >> 32) & 1 ? T(-1) : T(1)));
    }
  } else {
    for (auto& x : v) x = static_cast<T>(gen() | 1u);
  }
  return v;
}

}  // namespace gutf8::test
