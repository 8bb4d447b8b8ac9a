// Deterministic random inputs for tests: never zeros, never only powers of two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace gutf8::test {

// The seed is printed by failing assertions through SCOPED_TRACE at call sites.
inline std::mt19937_64 rng(std::uint64_t seed) { return std::mt19937_64(seed * 0x9E3779B97F4A7C15ull + 1); }

// Sizes worth testing for a kernel with the given tile: 0, 1, small primes, and each
// multiple of the tile from 1 to `tiles` with -1, 0, +1 around it.
inline std::vector<std::size_t> boundary_sizes(std::size_t tile, std::size_t tiles) {
  std::vector<std::size_t> sizes{0, 1, 2, 3, 5, 7, 31, 33, 127, 255, 257, 1000, 4099};
  for (std::size_t k = 1; k <= tiles; ++k)
    for (std::size_t d : {tile * k - 1, tile * k, tile * k + 1}) sizes.push_back(d);
  return sizes;
}

}  // namespace gutf8::test
