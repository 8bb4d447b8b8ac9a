// One scalar value to its UTF-8 bytes without branches, for the encoders (the inverse of
// lane_planes.cuh's decode_unit). __host__ __device__: tests/gpu/planes_host_test.cpp checks every
// scalar value against detail::encode_scalar.
#pragma once

#include "utf8/lane_planes.cuh"

namespace gutf8::kern {

// Bytes of the UTF-8 form of scalar value c (1..4): 1 + how many of the bit positions 7, 11, 16
// (where the 2-, 3- and 4-byte forms begin) lie below c's highest set bit + 1. Shifting the
// marker mask left by clz(c) keeps exactly those (the others leave the word).
GUTF8_HD u32 utf8_length(u32 c) { return 1u + static_cast<u32>(popc(0x10880u << count_leading_zeros(c | 1u))); }

// The index of c's highest set bit (0 for c = 0).
GUTF8_HD u32 top_bit(u32 c) { return 31u - count_leading_zeros(c | 1u); }

// Everything about c's UTF-8 form that depends only on its highest set bit k = top_bit(c),
// so that the encoders look it up (a 32-entry table in shared memory) instead of computing it:
//   perm_len  byte_perm selector (bits 0..15) that puts the 6-bit fields of c (utf8_fields) in
//             UTF-8 order, or for ASCII c's own low byte, zeros above; 8 * length in bits 16..23
//   marker    the lead byte's prefix and the continuation bytes' 0x80, to OR in.
struct utf8_form {
  u32 perm_len;
  u32 marker;
};
GUTF8_HD utf8_form utf8_form_of_top_bit(u32 k) {
  // Selector nibbles 0..3 pick fields bytes, 4 c's low byte, 7 c's top byte (0 for any scalar).
  if (k < 7) return {0x7774u | 8u << 16, 0u};
  if (k < 11) return {0x7701u | 16u << 16, 0x80C0u};
  if (k < 16) return {0x7012u | 24u << 16, 0x8080E0u};
  return {0x0123u | 32u << 16, 0x808080F0u};
}
GUTF8_HD u32 utf8_form_bits(utf8_form f) { return f.perm_len >> 16; }

// c's 6-bit fields, field j (bits 6j..6j+5) in byte j: 12-bit halves into 16-bit lanes, then
// 6-bit quarters into bytes (bits above 21 are dropped: no scalar value has them).
GUTF8_HD u32 utf8_fields(u32 c) {
  const u32 halves = (c & 0xFFFu) | ((c << 4) & 0x3FF0000u);
  return (halves & 0x3F003Fu) | ((halves << 2) & 0x3F003F00u);
}

// The UTF-8 bytes of scalar value c of form f, packed little-endian (first byte lowest), zero
// above them.
GUTF8_HD u32 utf8_pack(u32 c, utf8_form f) { return byte_perm(utf8_fields(c), c, f.perm_len) | f.marker; }

}  // namespace gutf8::kern
