// Random test inputs: mixed-script UTF-8 with every kind of defect, and UTF-32LE with bad
// values. Built from the oracle's encoder, never from library code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>

#include "support/random.hpp"
#include "support/reference.hpp"

namespace gutf8::test {

inline std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}
inline std::span<const std::uint8_t> ubytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The distribution's GoogleTest was built without char8_t printers: compare as std::string.
inline std::string str(std::u8string_view s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

inline std::uint32_t pick(std::mt19937_64& g, std::uint32_t lo, std::uint32_t hi) {
  return std::uniform_int_distribution<std::uint32_t>(lo, hi)(g);
}

// A scalar value from a script chosen at random, edge values included.
inline char32_t random_scalar(std::mt19937_64& g) {
  static constexpr char32_t edges[] = {0x00,    0x7F,    0x80,    0xFF,     0x7FF,    0x800,  0xFFF,
                                       0x1000,  0xD7FF,  0xE000,  0xFEFF,   0xFFFD,   0xFFFF, 0x10000,
                                       0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF, 0x0A};
  switch (pick(g, 0, 9)) {
    case 0:
      return edges[pick(g, 0, std::size(edges) - 1)];
    case 1:
      return pick(g, 0x20, 0x7E);  // ASCII
    case 2:
      return pick(g, 0xC0, 0x24F);  // Latin
    case 3:
      return pick(g, 0x391, 0x3C9);  // Greek
    case 4:
      return pick(g, 0x410, 0x44F);  // Cyrillic
    case 5:
      return pick(g, 0x5D0, 0x6FF);  // Hebrew, Arabic
    case 6:
      return pick(g, 0x4E00, 0x9FFF);  // CJK
    case 7:
      return pick(g, 0xAC00, 0xD7A3);  // Hangul
    case 8:
      return pick(g, 0x1F300, 0x1FAFF);  // emoji
    default: {
      const char32_t c = pick(g, 0x80, 0x10FFFF);
      return c >= 0xD800 && c <= 0xDFFF ? c - 0x800 : c;
    }
  }
}

// One defect: a maximal subpart, a byte that is never UTF-8, or an ill-formed sequence.
inline std::string random_defect(std::mt19937_64& g) {
  const auto byte = [&](std::uint32_t lo, std::uint32_t hi) { return char(pick(g, lo, hi)); };
  std::string s;
  switch (pick(g, 0, 8)) {
    case 0:
      s += byte(0x80, 0xBF);
      break;  // stray
    case 1:
      s += byte(0xC0, 0xC1);
      s += byte(0x80, 0xBF);
      break;  // overlong 2
    case 2:
      s += '\xE0';
      s += byte(0x80, 0x9F);
      s += byte(0x80, 0xBF);
      break;  // overlong 3
    case 3:
      s += '\xED';
      s += byte(0xA0, 0xBF);
      s += byte(0x80, 0xBF);
      break;  // surrogate
    case 4:
      s += '\xF4';
      s += byte(0x90, 0xBF);
      break;  // too large
    case 5:
      s += byte(0xF5, 0xFF);
      break;   // never UTF-8
    case 6: {  // truncated
      char32_t c;
      do c = random_scalar(g);
      while (c < 0x80);
      const std::string full = ref::utf8_of(c);
      s = full.substr(0, pick(g, 1, std::uint32_t(full.size() - 1)));
      break;
    }
    case 7:
      s += '\xF0';
      s += byte(0x80, 0x8F);
      break;  // overlong 4
    default:
      s += byte(0x80, 0xFF);
      s += byte(0x80, 0xFF);
      break;  // anything
  }
  return s;
}

// Exactly `size` bytes of mixed text; `defects` is the chance that a fragment is ill-formed.
// With defects == 0 the result is well-formed.
inline std::string random_text(std::mt19937_64& g, std::size_t size, double defects = 0.05) {
  std::bernoulli_distribution bad(defects), newline(0.03), run(0.15);
  std::string s;
  s.reserve(size + 8);
  while (s.size() < size) {
    std::string fragment;
    if (defects > 0 && bad(g))
      fragment = random_defect(g);
    else if (newline(g))
      fragment.assign(1, '\n');  // not = "\n": GCC 12 -Wrestrict false positive
    else if (run(g))
      fragment.assign(pick(g, 1, 40), char(pick(g, 'a', 'z')));
    else
      fragment = ref::utf8_of(random_scalar(g));
    if (s.size() + fragment.size() > size) {
      if (defects == 0)
        fragment.assign(size - s.size(), 'x');  // never cut a sequence
      else
        fragment.resize(size - s.size());
    }
    s += fragment;
  }
  return s;
}

// UTF-32LE bytes: `count` values, some of them surrogates or above U+10FFFF.
inline std::string random_utf32(std::mt19937_64& g, std::size_t count, double defects = 0.05) {
  std::bernoulli_distribution bad(defects);
  std::string s;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t v = random_scalar(g);
    if (defects > 0 && bad(g)) {
      switch (pick(g, 0, 2)) {
        case 0:
          v = pick(g, 0xD800, 0xDFFF);
          break;
        case 1:
          v = pick(g, 0x110000, 0x1FFFFF);
          break;
        default:
          v = pick(g, 0x110000, 0xFFFFFFFF);
          break;
      }
    }
    for (int k = 0; k < 4; ++k) s += char(v >> (8 * k) & 0xFF);
  }
  return s;
}

}  // namespace gutf8::test
