// Appends a code point as UTF-8 for the benchmarks' text generators: written out here because a
// benchmark must not lean on the library it measures.
#pragma once

#include <cstdint>
#include <string>

namespace gutf8::bench {

inline void append_utf8(std::string& s, std::uint32_t v) {
  if (v < 0x80) {
    s += char(v);
  } else if (v < 0x800) {
    s += char(0xC0 | v >> 6), s += char(0x80 | (v & 0x3F));
  } else if (v < 0x10000) {
    s += char(0xE0 | v >> 12), s += char(0x80 | (v >> 6 & 0x3F)), s += char(0x80 | (v & 0x3F));
  } else {
    s += char(0xF0 | v >> 18), s += char(0x80 | (v >> 12 & 0x3F));
    s += char(0x80 | (v >> 6 & 0x3F)), s += char(0x80 | (v & 0x3F));
  }
}

}  // namespace gutf8::bench
