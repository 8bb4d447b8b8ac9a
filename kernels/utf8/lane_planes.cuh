// Bit-sliced ("bit plane") classification of 32 bytes at a time: the exact per-byte rule of
// byte_rule.cuh (which byte starts an output unit, which starts a well-formed sequence, which
// bytes a well-formed sequence covers) evaluated on 32-bit masks, one bit per byte.
//
//   to_planes(w, P)      8 little-endian words (bytes 0..31) -> P[k] bit i = bit k of byte i.
//                        An 8x8 bit transpose per 8 bytes (3 delta swaps) + 16 byte permutes.
//   classify_slab(P, a)  stage 1: everything that looks at the slab and the 3 bytes AFTER it.
//                        `a` = ahead_link() of the next slab (or ahead_link_word() of the 4
//                        bytes after it).
//   starts(c, b)         stage 2: unit starts, which also depend on the 3 bytes BEFORE the slab.
//                        `b` = behind_link() of the previous slab's stage 1 result (or
//                        behind_link_word() of the 4 bytes before it).
//   coverage(c, b)       stage 2 with Detail: bytes of well-formed sequences and sequence ends.
//
// A 32-byte slab thus needs 5 bits from its successor and 13 bits from its predecessor; the
// kernels pass them between lanes with one shuffle each way. Everything here is
// __host__ __device__ (tests/gpu/planes_host_test.cpp checks it against classify_reference).
//
// Definitions (bit i = byte i of the slab; lead = C2..F4):
//   C   continuation byte (80..BF)
//   S1  lead whose next byte is an acceptable SECOND byte (Table 3-7, second_byte_range)
//   T2  S1 and the lead starts a 3- or 4-byte sequence;  T3  S1 and a 4-byte sequence
//   wf  ASCII, or a lead followed by a complete well-formed sequence
// Byte i continues a unit iff S1(i-1) | T2(i-2) & C(i) | T3(i-3) & C(i-1) & C(i).
#pragma once

#include "utf8/byte_rule.cuh"

namespace gutf8::kern {

// ----------------------------------------------------------------- bit helpers ----
GUTF8_HD u32 byte_perm(u32 a, u32 b, u32 s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, s);
#else
  const u64 v = (u64{b} << 32) | a;
  u32 r = 0;
  for (int j = 0; j < 4; ++j) r |= static_cast<u32>((v >> (8 * ((s >> (4 * j)) & 7))) & 0xFF) << (8 * j);
  return r;
#endif
}
// (hi:lo) << k, high word (bit i = bit i-k of hi, the top k bits of lo below). k = 1..31.
GUTF8_HD u32 funnel_l(u32 lo, u32 hi, u32 k) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(lo, hi, k);
#else
  k &= 31;
  return k == 0 ? hi : (hi << k) | (lo >> (32 - k));
#endif
}
// (hi:lo) >> k, low word (bit i = bit i+k of lo, the low k bits of hi on top). k = 0..31.
GUTF8_HD u32 funnel_r(u32 lo, u32 hi, u32 k) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, k);
#else
  k &= 31;
  return k == 0 ? lo : (lo >> k) | (hi << (32 - k));
#endif
}
// Mask of the bits below bit p (p = 0..31).
GUTF8_HD u32 below_bit(u32 p) { return (1u << p) - 1u; }
// Own-byte mask (bit i = byte pos + i) of the positions below `limit`.
GUTF8_HD u32 range_mask(u64 pos, u64 limit) {
  if (pos >= limit) return 0;
  const u64 r = limit - pos;
  return r >= 32 ? ~0u : (1u << r) - 1;
}

// x >> k (k = 1..31) as the high word of x * 2^(32-k): on the GPU this runs on the FMA pipe,
// not on the integer ALU pipe, which the bit-plane code keeps the busier (each takes a warp
// instruction every other cycle).
GUTF8_HD u32 shr_fma(u32 x, int k) {
#if defined(__CUDA_ARCH__)
  return __umulhi(x, 1u << (32 - k));
#else
  return x >> k;
#endif
}

// Swaps the bits of a selected by m with those d places above them (m & (m << d) == 0): two
// LOP3s and two FMA-pipe multiplies (t | t << d = t * (1 + 2^d), the two halves being disjoint).
GUTF8_HD u32 swap_bits(u32 a, u32 m, int d) {
  const u32 t = (a ^ shr_fma(a, d)) & m;
  return a ^ (t * (1u + (1u << d)));
}

// ------------------------------------------------------------------ transpose ----
GUTF8_HD void to_planes(const u32 (&w)[8], u32 (&P)[8]) {
  u32 lo[4], hi[4];
GUTF8_UNROLL
  for (int g = 0; g < 4; ++g) {
    u32 a = swap_bits(swap_bits(w[2 * g], 0x00AA00AAu, 7), 0x0000CCCCu, 14);
    u32 b = swap_bits(swap_bits(w[2 * g + 1], 0x00AA00AAu, 7), 0x0000CCCCu, 14);
    const u32 t = (a ^ (b << 4)) & 0xF0F0F0F0u;
    a ^= t;
    b ^= shr_fma(t, 4);
    lo[g] = a;  // byte k = plane k (k < 4) of bytes 8g..8g+7
    hi[g] = b;  // byte k = plane k + 4
  }
  const u32 a01 = byte_perm(lo[0], lo[1], 0x5140u), a23 = byte_perm(lo[0], lo[1], 0x7362u);
  const u32 b01 = byte_perm(lo[2], lo[3], 0x5140u), b23 = byte_perm(lo[2], lo[3], 0x7362u);
  P[0] = byte_perm(a01, b01, 0x5410u);
  P[1] = byte_perm(a01, b01, 0x7632u);
  P[2] = byte_perm(a23, b23, 0x5410u);
  P[3] = byte_perm(a23, b23, 0x7632u);
  const u32 c01 = byte_perm(hi[0], hi[1], 0x5140u), c23 = byte_perm(hi[0], hi[1], 0x7362u);
  const u32 d01 = byte_perm(hi[2], hi[3], 0x5140u), d23 = byte_perm(hi[2], hi[3], 0x7362u);
  P[4] = byte_perm(c01, d01, 0x5410u);
  P[5] = byte_perm(c01, d01, 0x7632u);
  P[6] = byte_perm(c23, d23, 0x5410u);
  P[7] = byte_perm(c23, d23, 0x7632u);
}

// LF (0x0A) bytes.
GUTF8_HD u32 lf_mask(const u32 (&P)[8]) {
  return ~(P[7] | P[6] | P[5] | P[4] | P[2] | P[0]) & P[3] & P[1];
}
// Byte-lane flags -> one bit per byte for 8 words (SWAR masks such as lf_lanes of each word).
GUTF8_HD u32 lanes_to_mask8(const u32 (&lanes)[8]) {
  u32 r = 0;
GUTF8_UNROLL
  for (int k = 0; k < 8; ++k) r |= lanes_to_bits(lanes[k]) << (4 * k);
  return r;
}

// --------------------------------------------------------------------- links ----
// What the slab before needs from this one: bits 0..2 = C of bytes 0..2, bit 3 = bit 5 of
// byte 0, bit 4 = bit 5 | bit 4 of byte 0.
GUTF8_HD u32 ahead_link(const u32 (&P)[8]) {
  const u32 c = P[7] & ~P[6];
  return (c & 7u) | ((P[5] & 1u) << 3) | (((P[5] | P[4]) & 1u) << 4);
}
// The same from the raw 4 bytes (little-endian word) that follow a slab.
GUTF8_HD u32 ahead_link_word(u32 x) {
  const u32 c = x & ~(x << 1) & lane_hi;
  const u32 cb = ((c >> 7) & 1u) | ((c >> 14) & 2u) | ((c >> 21) & 4u);
  return cb | (((x >> 5) & 1u) << 3) | ((((x >> 5) | (x >> 4)) & 1u) << 4);
}

// Stage 1 of a slab.
struct slab_class {
  u32 C, S1, T2, T3, wf;
};

GUTF8_HD slab_class classify_slab(const u32 (&P)[8], u32 ahead) {
  const u32 p7 = P[7], p6 = P[6], p5 = P[5], p4 = P[4], p3 = P[3], p2 = P[2], p1 = P[1], p0 = P[0];
  slab_class r;
  r.C = p7 & ~p6;
  const u32 h2 = p7 & p6;  // C0..FF
  const u32 h3 = h2 & p5;  // E0..FF
  const u32 h4 = h3 & p4;  // F0..FF
  const u32 o10 = p1 | p0;
  const u32 l2 = h2 & ~p5 & (p4 | p3 | p2 | p1);  // C2..DF
  const u32 l3 = h3 & ~p4;                        // E0..EF
  const u32 l4 = h4 & ~p3 & ~(p2 & o10);          // F0..F4
  const u32 z4 = ~(p3 | p2 | o10);                // low nibble 0
  const u32 e0 = l3 & z4, ed = l3 & p3 & p2 & ~p1 & p0;
  const u32 f0 = l4 & z4, f4 = l4 & p2;
  // The next byte's continuation flag and bits 5 / 5|4 (second-byte ranges).
  const u32 a_c = funnel_r(r.C, ahead, 1);
  const u32 a5 = funnel_r(p5, ahead >> 3, 1);
  const u32 a45 = funnel_r(p5 | p4, ahead >> 4, 1);
  const u32 bad = (e0 & ~a5) | (ed & a5) | (f0 & ~a45) | (f4 & a45);
  r.S1 = (l2 | l3 | l4) & a_c & ~bad;
  r.T2 = r.S1 & h3;
  r.T3 = r.S1 & h4;
  const u32 a_c2 = funnel_r(r.C, ahead, 2), a_c3 = funnel_r(r.C, ahead, 3);
  r.wf = ~p7 | (r.S1 & (~h3 | (a_c2 & (~h4 | a_c3))));
  return r;
}

// What the slab after needs from this one (bits): 0 = S1(31); 1..2 = T2(30..31);
// 3..5 = T3(29..31); 6 = C(31); with Detail also 7 = W2(31), 8..9 = W3(30..31),
// 10..12 = W4(29..31) where Wk = wf & leads of k-byte sequences.
template <bool Detail = false>
GUTF8_HD u32 behind_link(const slab_class& c) {
  u32 b = (c.S1 >> 31) | ((c.T2 >> 30) << 1) | ((c.T3 >> 29) << 3) | ((c.C >> 31) << 6);
  if constexpr (Detail) {
    const u32 w2 = c.wf & c.S1 & ~c.T2, w3 = c.wf & c.T2 & ~c.T3, w4 = c.wf & c.T3;
    b |= ((w2 >> 31) << 7) | ((w3 >> 30) << 8) | ((w4 >> 29) << 10);
  }
  return b;
}

// Mini planes of the 4 bytes before a slab: bits 28..31 of Q[k] = bit k of bytes 0..3 of y
// (the low 28 bits are garbage, which stage 1 never moves upwards).
GUTF8_HD void word_planes_top(u32 y, u32 (&Q)[8]) {
GUTF8_UNROLL
  for (int k = 0; k < 8; ++k) Q[k] = ((y >> k) & 0x01010101u) * 0x10204080u;
}
// behind_link of the 4 bytes y before a slab whose own ahead_link is `own_ahead`.
template <bool Detail = false>
GUTF8_HD u32 behind_link_word(u32 y, u32 own_ahead) {
  u32 Q[8];
  word_planes_top(y, Q);
  return behind_link<Detail>(classify_slab(Q, own_ahead));
}

// Stage 2: unit starts.
GUTF8_HD u32 starts(const slab_class& c, u32 behind) {
  const u32 cu1 = funnel_l(behind << 31, c.S1, 1);
  const u32 cu2 = funnel_l((behind >> 1) << 30, c.T2, 2) & c.C;
  const u32 cu3 = funnel_l((behind >> 3) << 29, c.T3, 3) & c.C & funnel_l((behind >> 6) << 31, c.C, 1);
  return ~(cu1 | cu2 | cu3);
}

struct slab_cover {
  u32 cover;  // byte of a well-formed sequence
  u32 end2, end3, end4;  // last byte of a well-formed 2- / 3- / 4-byte sequence
};
GUTF8_HD slab_cover coverage(const slab_class& c, u32 behind) {
  const u32 w2 = c.wf & c.S1 & ~c.T2, w3 = c.wf & c.T2 & ~c.T3, w4 = c.wf & c.T3;
  slab_cover r;
  r.end2 = funnel_l((behind >> 7) << 31, w2, 1);
  const u32 w3_1 = funnel_l((behind >> 8) << 30, w3, 1);
  r.end3 = funnel_l((behind >> 8) << 30, w3, 2);
  const u32 w4_1 = funnel_l((behind >> 10) << 29, w4, 1);
  const u32 w4_2 = funnel_l((behind >> 10) << 29, w4, 2);
  r.end4 = funnel_l((behind >> 10) << 29, w4, 3);
  r.cover = c.wf | r.end2 | w3_1 | r.end3 | w4_1 | w4_2 | r.end4;
  return r;
}

// (1 << h) - 1 for h = 0..31: one BMSK.
GUTF8_HD u32 bits_below(u32 h) {
#if defined(__CUDA_ARCH__)
  u32 r;
  asm("bmsk.clamp.b32 %0, 0, %1;" : "=r"(r) : "r"(h));
  return r;
#else
  return (1u << h) - 1u;
#endif
}

// Sum of the products of the four unsigned bytes of a and b: one IDP4A, which runs on the FMA
// pipe (the ALU pipe is the busier one in the decoder).
GUTF8_HD u32 byte_dot(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __dp4a(a, b, 0u);
#else
  u32 r = 0;
  for (int i = 0; i < 4; ++i) r += ((a >> (8 * i)) & 0xFFu) * ((b >> (8 * i)) & 0xFFu);
  return r;
#endif
}

// Decodes the WELL-FORMED unit whose bytes are x's lanes 0.. (lane 0 = lead; the bytes after the
// unit are ignored), in 10 instructions, 6 of them on the ALU pipe. In big-endian order the lead's
// highest zero bit h (31 ASCII, 29, 28, 27) gives its payload mask and the length; the
// continuation bytes lose their top two bits to the 0xFF3F3F3F mask; two byte dot products pack
// the four 6-bit fields (lead * 64 + next, then the last two; the first pair goes 12 bits up); a
// final shift of 6 * (h - 27), 18 for ASCII, drops the fields of the bytes after the unit.
GUTF8_HD u32 decode_unit(u32 x) {
  const u32 y = byte_perm(x, 0, 0x0123u);                  // lead in bits 24..31
  const u32 h = static_cast<u32>(highest_bit(~y));
  const u32 z = y & bits_below(h) & 0xFF3F3F3Fu;           // fields at bits 24, 16, 8, 0
  const u32 v = 4096u * byte_dot(z, 0x40010000u) + byte_dot(z, 0x00004001u);  // at bits 18, 12, 6, 0
  const u32 shift = 6 * h - 162;                           // 0 / 6 / 12 for h 27 / 28 / 29
  return v >> (shift < 18u ? shift : 18u);
}

// decode_unit for a WELL-FORMED 4-byte sequence (lead in x's lowest byte), 4 instructions: the
// fields under the 0x3F3F3F07 mask, lead * 64 + second and third * 64 + fourth by two byte dot
// products, the first pair 12 bits up.
GUTF8_HD u32 decode_four_bytes(u32 x) {
  const u32 z = x & 0x3F3F3F07u;
  return 4096u * byte_dot(z, 0x00000140u) + byte_dot(z, 0x01400000u);
}

// UTF-16: the unit, or the surrogate pair (high | low << 16) of a code point above U+FFFF, whose
// high half 0xD800 + ((cp - 0x10000) >> 10) is 0xD7C0 + (cp >> 10).
GUTF8_HD u32 utf16_of(u32 cp) {
  return cp < 0x10000u ? cp : (0xDC00D7C0u + (cp >> 10)) | ((cp << 16) & 0x03FF0000u);
}

// The UTF-16 surrogate pair (high | low << 16) of a WELL-FORMED 4-byte sequence (lead in x's
// lowest byte), without the code point: with decode_four_bytes' a = lead * 64 + second and
// b = third * 64 + fourth (code point = 4096 a + b), high = 0xD7C0 + 4a + (b >> 10) and
// low = 0xDC00 + (b & 0x3FF), neither carrying into the other.
GUTF8_HD u32 decode_four_surrogates(u32 x) {
  const u32 z = x & 0x3F3F3F07u;
  const u32 a = byte_dot(z, 0x00000140u), b = byte_dot(z, 0x01400000u);
  return 0xDC00D7C0u + 4u * a + (b >> 10) + ((b & 0x3FFu) << 16);
}

}  // namespace gutf8::kern
