// XXH64 (seed 0), the hash whose low 4 bytes end a zstd frame with a content checksum, written as
// its four stripe accumulators apart so that four threads of a GPU hash one text together
// (xxh64.cu); the same functions on the host check them. Specification: xxHash's doc/xxhash_spec.md.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GUTF8_XXH_HD __host__ __device__
#else
#define GUTF8_XXH_HD
#endif

namespace gutf8::cuda::nvcomp::xxh64 {

inline constexpr std::uint64_t p1 = 0x9E3779B185EBCA87ull, p2 = 0xC2B2AE3D27D4EB4Full, p3 = 0x165667B19E3779F9ull,
                               p4 = 0x85EBCA77C2B2AE63ull, p5 = 0x27D4EB2F165667C5ull;
inline constexpr std::size_t stripe = 32;

GUTF8_XXH_HD inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian loads byte by byte: a frame's text starts at any offset of the batch's buffer.
GUTF8_XXH_HD inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
GUTF8_XXH_HD inline std::uint32_t load32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

GUTF8_XXH_HD inline std::uint64_t round(std::uint64_t acc, std::uint64_t input) {
  return rotl(acc + input * p2, 31) * p1;
}

// Accumulator `lane` (0..3) over the whole stripes of text[0, n): what one thread computes.
GUTF8_XXH_HD inline std::uint64_t lane(const std::uint8_t* text, std::size_t n, unsigned lane) {
  const std::uint64_t start[4] = {p1 + p2, p2, 0, 0 - p1};
  std::uint64_t acc = start[lane];
  const std::size_t whole = n - n % stripe;
  for (std::size_t at = 8 * lane; at < whole; at += stripe) acc = round(acc, load64(text + at));
  return acc;
}

// The hash from the four accumulators (used only where n >= 32) and the bytes after the stripes.
GUTF8_XXH_HD inline std::uint64_t finish(const std::uint64_t v[4], const std::uint8_t* text, std::size_t n) {
  std::uint64_t h = 0;
  if (n >= stripe) {
    h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
    for (int i = 0; i < 4; ++i) h = (h ^ round(0, v[i])) * p1 + p4;
  } else {
    h = p5;
  }
  h += n;
  std::size_t at = n - n % stripe;
  for (; at + 8 <= n; at += 8) h = rotl(h ^ round(0, load64(text + at)), 27) * p1 + p4;
  if (at + 4 <= n) {
    h = rotl(h ^ (std::uint64_t(load32(text + at)) * p1), 23) * p2 + p3;
    at += 4;
  }
  for (; at < n; ++at) h = rotl(h ^ (text[at] * p5), 11) * p1;
  h ^= h >> 33;
  h *= p2;
  h ^= h >> 29;
  h *= p3;
  return h ^ (h >> 32);
}

// The whole hash on one thread (the host's check of the device's).
GUTF8_XXH_HD inline std::uint64_t hash(const std::uint8_t* text, std::size_t n) {
  std::uint64_t v[4];
  for (unsigned l = 0; l < 4; ++l) v[l] = lane(text, n, l);
  return finish(v, text, n);
}

}  // namespace gutf8::cuda::nvcomp::xxh64
