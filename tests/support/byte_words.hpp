// Little-endian 32-bit words of a byte vector, as the kernels load them (bytes outside it read
// as 0): the host tests of the bit-plane classifiers build their blocks from these.
#pragma once

#include <cstdint>
#include <vector>

namespace gutf8::test {

inline std::uint32_t word_at(const std::vector<std::uint8_t>& b, std::int64_t p) {
  std::uint32_t w = 0;
  for (int k = 0; k < 4; ++k) {
    const std::int64_t q = p + k;
    if (q >= 0 && q < static_cast<std::int64_t>(b.size())) w |= std::uint32_t{b[static_cast<std::size_t>(q)]} << (8 * k);
  }
  return w;
}

}  // namespace gutf8::test
