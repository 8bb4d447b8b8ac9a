// Error marking: which byte starts an output unit (a well-formed sequence or an error unit =
// Unicode maximal subpart) and which continues one. Two formulations of the same rule:
//
//  * classify_reference(): the exact per-byte rule of SPEC §1, written directly on top of
//    gutf8::detail (utf8_rules.hpp). Byte i continues a unit iff some lead at i-k (k = 1..3) has
//    bytes i-k+1..i all accepted by detail::continues at positions 1..k and
//    k < detail::sequence_length(lead). Otherwise it starts a unit; the unit is well-formed iff
//    the lead's sequence_length - 1 following bytes are all accepted.
//  * classify_window(): the same rule evaluated for 4*NW consecutive bytes at once with SWAR
//    "byte-lane" masks (one flag in bit 7 of every byte of a 32-bit word). The byte predicates
//    it uses (continuation, lead lengths, the four leads with a restricted second byte and the
//    second-byte ranges) are checked against utf8_rules.hpp for all 256 / 65536 values by
//    tests/gpu/classify_host_test.cpp, and whole windows against classify_reference().
//
// Everything here is __host__ __device__ so the host tests exercise the exact code the kernels
// run.
#pragma once

#include <cstdint>

#include "utf8/utf8_rules.hpp"

#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#if defined(__CUDA_ARCH__)
#define GUTF8_UNROLL _Pragma("unroll")
#else
#define GUTF8_UNROLL
#endif

namespace gutf8::kern {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

inline constexpr u32 lane_hi = 0x80808080u;  // bit 7 of every byte

// ---------------------------------------------------------------- bit helpers ----

GUTF8_HD int popc(u32 x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return std::popcount(x);
#endif
}
GUTF8_HD int popc64(u64 x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return std::popcount(x);
#endif
}
// Index of the lowest set bit (x != 0).
GUTF8_HD int lowest_bit(u32 x) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}
// Index of the highest set bit (x != 0).
GUTF8_HD int highest_bit(u32 x) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(static_cast<int>(x));
#else
  return 31 - std::countl_zero(x);
#endif
}
GUTF8_HD u32 count_leading_zeros(u32 x) {
#if defined(__CUDA_ARCH__)
  return static_cast<u32>(__clz(static_cast<int>(x)));
#else
  return static_cast<u32>(std::countl_zero(x));
#endif
}
// The value of the byte `bytes` positions earlier (1..3), lanes taken from (prev, cur).
GUTF8_HD u32 lanes_back(u32 prev, u32 cur, int bytes) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(prev, cur, 8 * bytes);
#else
  return static_cast<u32>((((static_cast<u64>(cur) << 32) | prev) << (8 * bytes)) >> 32);
#endif
}
// The value of the byte `bytes` positions later (1..3), lanes taken from (cur, next).
GUTF8_HD u32 lanes_ahead(u32 cur, u32 next, int bytes) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(cur, next, 8 * bytes);
#else
  return static_cast<u32>(((static_cast<u64>(next) << 32) | cur) >> (8 * bytes));
#endif
}
// Four byte-lane flags (bits 7, 15, 23, 31 only) -> bits 0..3. The multiply puts bit 8j+7 at
// bit 28+j; every cross product lands on a distinct bit below 28, so nothing carries.
GUTF8_HD u32 lanes_to_bits(u32 lanes) { return (lanes * 0x00204081u) >> 28; }
// Byte-lane mask of the first r lanes (r clamped to 0..4).
GUTF8_HD u32 first_lanes(std::int64_t r) {
  return r >= 4 ? lane_hi : r <= 0 ? 0u : lane_hi >> (8 * (4 - static_cast<int>(r)));
}
// Byte-lane flags of the bytes of x that continue a sequence (10xxxxxx).
GUTF8_HD u32 cont_lanes(u32 x) { return x & ~(x << 1) & lane_hi; }
// Byte-lane flags of the LF (0x0A) bytes of x (exact, no carries across lanes).
GUTF8_HD u32 lf_lanes(u32 x) {
  const u32 y = x ^ 0x0A0A0A0Au;
  return ~(((y & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | y) & lane_hi;
}

// ------------------------------------------------------------- byte predicates ----

// SWAR byte predicates of one word; every field holds flags in bit 7 of each byte except
// `special`, which packs four flags per byte (bit 7 E0, bit 6 ED, bit 5 F0, bit 4 F4: the leads
// whose second byte is restricted, detail::second_byte_range).
struct word_class {
  u32 ascii;    // 00..7F
  u32 cont;     // 80..BF
  u32 l2;       // C2..DF
  u32 l3;       // E0..EF
  u32 l4;       // F0..F4
  u32 special;  // E0 / ED / F0 / F4 packed as above
  u32 b5;       // bit 5 of the byte (continuations: A0..BF vs 80..9F)
  u32 b4;       // bit 4 of the byte (continuations: 90..9F/B0..BF)
};

GUTF8_HD word_class classify_word(u32 x) {
  const u32 s1 = x << 1, s2 = x << 2, s3 = x << 3, s4 = x << 4;
  const u32 s5 = x << 5, s6 = x << 6, s7 = x << 7;
  word_class c{};
  c.ascii = ~x & lane_hi;
  c.cont = cont_lanes(x);
  const u32 lead = x & s1 & lane_hi;                      // C0..FF
  c.l2 = lead & ~s2 & (s3 | s4 | s5 | s6);                // 110xxxxx but not C0, C1
  c.l3 = lead & s2 & ~s3;                                 // 1110xxxx
  const u32 l4_any = lead & s2 & s3 & ~s4;                // F0..F7
  c.l4 = l4_any & ~(s5 & (s6 | s7));                      // F0..F4
  const u32 e0 = c.l3 & ~(s4 | s5 | s6 | s7);
  const u32 ed = c.l3 & s4 & s5 & ~s6 & s7;
  const u32 f0 = l4_any & ~(s5 | s6 | s7);
  const u32 f4 = l4_any & s5 & ~s6 & ~s7;
  c.special = e0 | (ed >> 1) | (f0 >> 2) | (f4 >> 3);
  c.b5 = s2 & lane_hi;
  c.b4 = s3 & lane_hi;
  return c;
}

// Continuation bytes of `cur` that are acceptable as the SECOND byte of a sequence led by the
// byte before them (lanes of prev's special flags shifted by one byte). For a byte whose
// predecessor is not a lead the value is simply cur.cont; it is only ever used together with a
// lead flag one position earlier.
GUTF8_HD u32 second_ok(const word_class& prev, const word_class& cur) {
  const u32 sp = lanes_back(prev.special, cur.special, 1);
  const u32 e0 = sp & lane_hi, ed = (sp << 1) & lane_hi;
  const u32 f0 = (sp << 2) & lane_hi, f4 = (sp << 3) & lane_hi;
  const u32 hi = cur.b5 | cur.b4;
  const u32 bad = (e0 & ~cur.b5) | (ed & cur.b5) | (f0 & ~hi) | (f4 & hi);
  return cur.cont & ~bad;
}

// ------------------------------------------------------------ window classify ----

// Optional extra outputs of classify_window (byte-lane flags per own word).
template <int NW>
struct window_detail {
  u32 cover[NW];  // byte belongs to a well-formed sequence (its lead or a continuation byte)
  u32 end2[NW];   // byte is the last byte of a well-formed 2-byte sequence
  u32 end3[NW];   // ... 3-byte sequence
  u32 end4[NW];   // ... 4-byte sequence
};

// w[0] = the 4 bytes before the own bytes, w[1..NW] = own bytes, w[NW+1] = the 4 bytes after.
// Bytes outside the input must be passed as 0 (an ASCII byte: claims nothing, continues
// nothing, so a sequence cut by the end of the input is an error unit as required).
// Outputs per own word k (window word k+1): start / wf byte-lane flags; with Cover also the
// window_detail fields.
// Well-formed starts of word i given word i+1 (v1 = second_ok of each word).
GUTF8_HD u32 wf_starts(const word_class& c, u32 v1, const word_class& next, u32 v1_next) {
  const u32 n1 = lanes_ahead(v1, v1_next, 1);
  const u32 n2 = lanes_ahead(c.cont, next.cont, 2);
  const u32 n3 = lanes_ahead(c.cont, next.cont, 3);
  return c.ascii | (c.l2 & n1) | (c.l3 & n1 & n2) | (c.l4 & n1 & n2 & n3);
}

// Sliding over the window keeps only three words' predicates live (no register spills).
template <int NW, bool Cover = false>
GUTF8_HD void classify_window(const u32 (&w)[NW + 2], u32 (&start)[NW], u32 (&wf)[NW],
                              window_detail<NW>* detail_out = nullptr) {
  // p = window word k, q = k + 1 (own word k), r = k + 2. v1 = acceptable second bytes
  // (second_ok); the first word's v1 is exact for lanes 1..3, which is all that is used.
  word_class p = classify_word(w[0]);
  u32 v1p = second_ok(word_class{}, p);
  word_class q = classify_word(w[1]);
  u32 v1q = second_ok(p, q);
  u32 wfp = Cover ? wf_starts(p, v1p, q, v1q) : 0u;
GUTF8_UNROLL
  for (int k = 0; k < NW; ++k) {
    const word_class r = classify_word(w[k + 2]);
    const u32 v1r = second_ok(q, r);
    const u32 wfq = wf_starts(q, v1q, r, v1r);
    const u32 lead_p = p.l2 | p.l3 | p.l4, lead_q = q.l2 | q.l3 | q.l4;
    const u32 cu1 = lanes_back(lead_p, lead_q, 1) & v1q;
    const u32 cu2 = lanes_back(p.l3 | p.l4, q.l3 | q.l4, 2) & lanes_back(v1p, v1q, 1) & q.cont;
    const u32 cu3 = lanes_back(p.l4, q.l4, 3) & lanes_back(v1p, v1q, 2) &
                    lanes_back(p.cont, q.cont, 1) & q.cont;
    start[k] = lane_hi & ~(cu1 | cu2 | cu3);
    wf[k] = wfq;
    if constexpr (Cover) {
      // A byte is covered when a well-formed sequence starting 0..3 bytes earlier reaches it.
      const u32 c1 = lanes_back(wfp & lead_p, wfq & lead_q, 1);
      const u32 c2 = lanes_back(wfp & (p.l3 | p.l4), wfq & (q.l3 | q.l4), 2);
      const u32 c3 = lanes_back(wfp & p.l4, wfq & q.l4, 3);
      detail_out->cover[k] = wfq | c1 | c2 | c3;
      detail_out->end2[k] = lanes_back(wfp & p.l2, wfq & q.l2, 1);
      detail_out->end3[k] = lanes_back(wfp & p.l3, wfq & q.l3, 2);
      detail_out->end4[k] = c3;
    }
    p = q;
    q = r;
    v1p = v1q;
    v1q = v1r;
    wfp = wfq;
  }
}

// ------------------------------------------------------------- scalar helpers ----

// The exact rule on plain memory (host or device, any pointer). Out-of-range bytes do not exist.
struct reference_class {
  bool start = false;      // starts an output unit
  unsigned wf_length = 0;  // > 0: starts a well-formed sequence of this length
  [[nodiscard]] GUTF8_HD bool error_start() const { return start && wf_length == 0; }
};

GUTF8_HD reference_class classify_reference(const u8* s, u64 n, u64 i) {
  reference_class r;
  for (unsigned k = 1; k <= 3 && k <= i; ++k) {
    const u8 lead = s[i - k];
    if (detail::sequence_length(lead) <= k) continue;
    bool ok = true;
    for (unsigned m = 1; m <= k; ++m) ok = ok && detail::continues(lead, m, s[i - k + m]);
    if (ok) return r;  // continues the unit of that lead
  }
  r.start = true;
  const unsigned len = detail::sequence_length(s[i]);
  if (len == 0 || i + len > n) return r;
  for (unsigned m = 1; m < len; ++m)
    if (!detail::continues(s[i], m, s[i + m])) return r;
  r.wf_length = len;
  return r;
}

// Why the error unit starting at j (an error start per classify_reference) is one.
GUTF8_HD error_kind error_kind_at(const u8* s, u64 n, u64 j) {
  const u8 lead = s[j];
  const unsigned len = detail::sequence_length(lead);
  if (len == 0) return detail::reason_for(lead, 0, 0);
  for (unsigned m = 1; m < len; ++m) {
    if (j + m >= n) return error_kind::truncated_at_end;
    if (!detail::continues(lead, m, s[j + m])) return detail::reason_for(lead, m, s[j + m]);
  }
  return error_kind::none;  // well-formed: not an error start
}

// Trailing bytes to carry into the next chunk (detail::incomplete_tail); 0 when is_last.
GUTF8_HD u64 utf8_carry(const u8* s, u64 n, bool is_last) {
  return is_last ? 0 : detail::incomplete_tail(s, n);
}

// Decodes the well-formed sequence whose bytes are x's lanes 0.. (lane 0 = lead, the bytes after
// the sequence are ignored). Branch-free; any other input gives an unspecified value (no UB).
GUTF8_HD u32 decode_lanes(u32 x) {
  const u32 b0 = x & 0xFFu;
  const u32 ones = count_leading_zeros(~(b0 << 24));  // 0 (ASCII), 2, 3, 4; > 4 never valid
  const u32 len = ones == 0 ? 1u : ones > 4 ? 4u : ones;
  const u32 v = ((b0 & (0x7Fu >> (len - 1))) << 18) | (((x >> 8) & 0x3Fu) << 12) |
                (((x >> 16) & 0x3Fu) << 6) | ((x >> 24) & 0x3Fu);
  return v >> (6 * (4 - len));
}

}  // namespace gutf8::kern
