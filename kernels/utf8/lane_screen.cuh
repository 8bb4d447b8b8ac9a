// The validity screen of a 32-byte slab: which of its bytes break UTF-8, in about half the
// instructions of the exact classification (lane_planes.cuh), which only slabs the screen flags
// then need. A slab is the bit planes of its bytes plus the lead flags of the 4 bytes before it;
// nothing is needed from the bytes after it.
//
//   to_planes_mux(w, P)     the planes of lane_planes.cuh's to_planes, by a different route: two
//                           4x4 byte transposes (16 byte permutes), then three exchanges of a row
//                           bit with a bit-in-byte between word pairs, each a pair of selects of
//                           one word and the other shifted (4 instructions a pair, 2 of them
//                           multiplies on the FMA pipe).
//   lead_flags_of(P)        the leads as masks: C0..FF, E0..FF, F0..FF and the four leads whose
//                           second byte is restricted (E0 / F0 want a high one, ED / F4 a low one).
//   screen_slab(P, own, before)
//                           bit i set where byte i is a continuation no lead asks for, or is not
//                           one where a lead asks for it, or is C0, C1 or F5..FF, or is the second
//                           byte of E0 / ED / F0 / F4 out of its range.
//
// An error unit starting at byte u flags a byte in [u - 2, u + 3] (before it only where a lead's
// second byte is out of range: the stray continuations after it); a flagged byte has an error
// unit starting at most 3 bytes before it or 2 after it, so valid text flags nothing.
// tests/gpu/screen_host_test.cpp checks both against classify_reference.
#pragma once

#include "utf8/lane_planes.cuh"

namespace gutf8::kern {

// (a & m) | (b & ~m): one LOP3 (the compiler splits the two masks of one immediate into two).
GUTF8_HD u32 select_bits(u32 m, u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  u32 r;
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(r) : "r"(a), "r"(b), "r"(m));
  return r;
#else
  return (a & m) | (b & ~m);
#endif
}

// Rows a, b (row bit r = 0 / 1) exchange their bits at column bit r (shift s = 2^r, m = the
// columns with that bit clear): a keeps its m columns and takes b's below them, b the reverse.
GUTF8_HD void exchange_rows(u32& a, u32& b, int s, u32 m) {
  const u32 na = select_bits(m, a, b * (1u << s));
  b = select_bits(m, shr_fma(a, s), b);
  a = na;
}

// 4x4 byte transpose: r[j] byte q = w[q] byte j.
GUTF8_HD void transpose_bytes(u32 w0, u32 w1, u32 w2, u32 w3, u32& r0, u32& r1, u32& r2, u32& r3) {
  const u32 t0 = byte_perm(w0, w1, 0x5140u), t1 = byte_perm(w0, w1, 0x7362u);
  const u32 t2 = byte_perm(w2, w3, 0x5140u), t3 = byte_perm(w2, w3, 0x7362u);
  r0 = byte_perm(t0, t2, 0x5410u);
  r1 = byte_perm(t0, t2, 0x7632u);
  r2 = byte_perm(t1, t3, 0x5410u);
  r3 = byte_perm(t1, t3, 0x7632u);
}

GUTF8_HD void to_planes_mux(const u32 (&w)[8], u32 (&P)[8]) {
  // A[r] byte q = byte 8q + r of the slab, so A[r] bit 8q + k = bit k of byte 8q + r.
  u32 A[8];
  transpose_bytes(w[0], w[2], w[4], w[6], A[0], A[1], A[2], A[3]);
  transpose_bytes(w[1], w[3], w[5], w[7], A[4], A[5], A[6], A[7]);
  // Exchanging the row index r with k bit by bit leaves P[k] bit 8q + r = bit k of byte 8q + r.
GUTF8_UNROLL
  for (int i = 0; i < 8; i += 2) exchange_rows(A[i], A[i + 1], 1, 0x55555555u);
GUTF8_UNROLL
  for (int i = 0; i < 8; i += 4) {
    exchange_rows(A[i], A[i + 2], 2, 0x33333333u);
    exchange_rows(A[i + 1], A[i + 3], 2, 0x33333333u);
  }
GUTF8_UNROLL
  for (int i = 0; i < 4; ++i) exchange_rows(A[i], A[i + 4], 4, 0x0F0F0F0Fu);
GUTF8_UNROLL
  for (int k = 0; k < 8; ++k) P[k] = A[k];
}

// Bytes that can never occur (C0, C1, F5..FF) are no leads: the bytes after them start units.
struct lead_flags {
  u32 L;      // C2..F4
  u32 E;      // E0..F4
  u32 F;      // F0..F4
  u32 G1;     // E0, F0: the second byte must be A0..BF / 90..BF
  u32 G2;     // ED, F4: the second byte must be 80..9F / 80..8F
  u32 never;  // C0, C1, F5..FF
};

GUTF8_HD lead_flags lead_flags_of(const u32 (&P)[8]) {
  lead_flags f;
  const u32 c0_ff = P[7] & P[6], e0_ff = c0_ff & P[5], f0_ff = e0_ff & P[4];
  const u32 f5_ff = f0_ff & (P[3] | (P[2] & (P[1] | P[0])));
  f.never = (c0_ff & ~(P[5] | P[4] | P[3] | P[2] | P[1])) | f5_ff;
  f.L = c0_ff & ~f.never;
  f.E = e0_ff & ~f5_ff;
  f.F = f0_ff & ~f5_ff;
  f.G1 = e0_ff & ~(P[3] | P[2] | P[1] | P[0]);
  // low nibble D under E (ED) or 4 under F (F4).
  const u32 d_or_4 = (~P[4] & P[3] & P[0]) | (P[4] & ~P[3] & ~P[0]);
  f.G2 = e0_ff & P[2] & ~P[1] & d_or_4;
  return f;
}

// `before`: the lead flags of the 4 bytes before the slab in bits 28..31 (lead_flags_of the
// planes word_planes_top gives; the bits below are not used).
GUTF8_HD u32 screen_slab(const u32 (&P)[8], const lead_flags& own, const lead_flags& before) {
  const u32 C = P[7] & ~P[6];
  const u32 need = funnel_l(before.L, own.L, 1) | funnel_l(before.E, own.E, 2) | funnel_l(before.F, own.F, 3);
  // The byte after E0 / ED needs bit 5 set / clear, after F0 / F4 bit 5 or 4 set / neither.
  const u32 after_f = funnel_l(before.F, own.F, 1);
  const u32 high = P[5] | (after_f & P[4]);
  const u32 range = (funnel_l(before.G1, own.G1, 1) & ~high) | (funnel_l(before.G2, own.G2, 1) & high);
  return (need ^ C) | own.never | range;
}

// The lead flags of the 4 bytes y before a slab, in bits 28..31.
GUTF8_HD lead_flags lead_flags_of_word(u32 y) {
  u32 Q[8];
  word_planes_top(y, Q);
  return lead_flags_of(Q);
}

// What the next slab needs of a slab's lead flags (screen_slab's `before`), in two words: the
// top bytes of L, E, F and G1 (bytes 0..3 of the first), G2 (the second).
struct lead_link {
  u32 lefg = 0, g2 = 0;
};
GUTF8_HD lead_link link_of(const lead_flags& f) {
  return {byte_perm(byte_perm(f.L, f.E, 0x7373u), byte_perm(f.F, f.G1, 0x7373u), 0x5410u), f.G2};
}
// The flags again, valid in their top byte (all screen_slab uses).
GUTF8_HD lead_flags flags_of(const lead_link& k) {
  lead_flags f;
  f.L = k.lefg << 24;
  f.E = k.lefg << 16;
  f.F = k.lefg << 8;
  f.G1 = k.lefg;
  f.G2 = k.g2;
  f.never = 0;
  return f;
}

// A slab the screen passed ends with the 4 bytes y (positions 28..31 of a 32-bit mask): the
// error units starting among them, given own_ahead = ahead_link of the slab after y. Only for a
// slab whose bytes all passed the screen (their units all start at non-continuation bytes).
GUTF8_HD u32 tail_error_starts(u32 y, u32 own_ahead) {
  u32 Q[8];
  word_planes_top(y, Q);
  const slab_class c = classify_slab(Q, own_ahead);
  return ~c.C & ~c.wf & 0xF0000000u;
}

}  // namespace gutf8::kern
