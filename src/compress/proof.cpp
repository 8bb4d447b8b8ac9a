#include "compress/proof.hpp"

#include <xxhash.h>

#include <algorithm>

namespace gutf8::internal::compress {
namespace {

constexpr std::array<std::uint8_t, 12> head{0x5B, 0x2A, 0x4D, 0x18, 12, 0, 0, 0, 'G', '8', 'X', 'H'};

}  // namespace

proof proof_of(std::span<const std::uint8_t> frame) noexcept {
  proof p{};
  std::copy(head.begin(), head.end(), p.begin());
  const XXH64_hash_t h = XXH64(frame.data(), frame.size(), 0);
  for (std::size_t k = 0; k < 8; ++k) p[head.size() + k] = static_cast<std::uint8_t>(h >> (8 * k));
  return p;
}

bool proven(std::span<const std::uint8_t> frame, std::span<const std::uint8_t> after) noexcept {
  if (after.size() < proof_size || !std::equal(head.begin(), head.end(), after.begin())) return false;
  const proof p = proof_of(frame);
  return std::equal(p.begin(), p.end(), after.begin());
}

}  // namespace gutf8::internal::compress
