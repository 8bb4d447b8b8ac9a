// Host-side proof of the bit-plane classifier the kernels run (kernels/utf8/lane_planes.cuh is
// __host__ __device__): planes against the bytes, and start / well-formed / cover / sequence-end
// masks of every 32-byte slab (with its links to the neighbouring slabs, from their stage-1
// results as the kernels pass them between lanes and from the raw neighbour words as lane 0 / 31
// compute them) against the exact per-byte rule classify_reference. Exhaustive over all 1-, 2-
// and 3-byte sequences at every position of a slab boundary, plus random mixes of the bytes
// that matter; the scalar decoders and encoder (decode_unit, decode_four_bytes, decode_four_surrogates,
// utf16_of, utf8_pack) on every scalar value they take. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "utf8/utf8_rules.hpp"
#include "support/byte_words.hpp"
#include "utf8/lane_encode.cuh"
#include "utf8/lane_planes.cuh"

namespace {

using namespace gutf8;
using kern::u32;
using kern::u64;
using kern::u8;
using test::word_at;

void planes_at(const std::vector<u8>& b, std::int64_t o, u32 (&P)[8]) {
  u32 w[8];
  for (int k = 0; k < 8; ++k) w[k] = word_at(b, o + 4 * k);
  kern::to_planes(w, P);
}

// Compares every slab of `b` (slabs at offset `phase` + 32 k, covering all bytes). Returns the
// number of mismatching bytes (reports the first few).
int compare_slabs(const std::vector<u8>& b, int phase) {
  const auto n = static_cast<std::int64_t>(b.size());
  int bad = 0;
  for (std::int64_t o = phase - 32; o < n; o += 32) {
    if (o + 32 <= 0) continue;
    u32 P[8], Pn[8], Pp[8];
    planes_at(b, o, P);
    planes_at(b, o + 32, Pn);
    planes_at(b, o - 32, Pp);
    // Planes are the bytes.
    for (int i = 0; i < 32; ++i) {
      const std::int64_t q = o + i;
      const u32 v = q >= 0 && q < n ? b[static_cast<std::size_t>(q)] : 0u;
      for (int k = 0; k < 8; ++k)
        if (((P[k] >> i) & 1u) != ((v >> k) & 1u) && ++bad < 4) ADD_FAILURE() << "plane " << k << " byte " << q;
    }
    const u32 own_ahead = kern::ahead_link(P);
    const u32 ahead = kern::ahead_link(Pn);
    if (ahead != kern::ahead_link_word(word_at(b, o + 32)) && ++bad < 4) ADD_FAILURE() << "ahead word at " << o;
    const kern::slab_class c = kern::classify_slab(P, ahead);
    const kern::slab_class cp = kern::classify_slab(Pp, own_ahead);
    const u32 behind = kern::behind_link<true>(cp);
    if (behind != kern::behind_link_word<true>(word_at(b, o - 4), own_ahead) && ++bad < 4)
      ADD_FAILURE() << "behind word at " << o << ": " << std::hex << behind << " vs "
                    << kern::behind_link_word<true>(word_at(b, o - 4), own_ahead);
    if (kern::behind_link<false>(cp) != (behind & 0x7Fu) && ++bad < 4) ADD_FAILURE() << "short link";
    const u32 start = kern::starts(c, behind);
    const kern::slab_cover cv = kern::coverage(c, behind);
    const u32 lf = kern::lf_mask(P);
    for (int i = 0; i < 32; ++i) {
      const std::int64_t q = o + i;
      if (q < 0 || q >= n) continue;
      const auto r = kern::classify_reference(b.data(), static_cast<u64>(n), static_cast<u64>(q));
      bool cover = false;
      unsigned end_len = 0;
      for (std::int64_t j = q; j >= 0 && j >= q - 3; --j) {
        const auto rj = kern::classify_reference(b.data(), static_cast<u64>(n), static_cast<u64>(j));
        if (rj.start && rj.wf_length > q - j) {
          cover = true;
          if (rj.wf_length > 1 && rj.wf_length == q - j + 1) end_len = rj.wf_length;
          break;
        }
        if (rj.start) break;
      }
      const bool ok = ((start >> i) & 1u) == r.start && ((c.wf >> i) & 1u) == (r.wf_length > 0) &&
                      ((cv.cover >> i) & 1u) == cover && ((cv.end2 >> i) & 1u) == (end_len == 2) &&
                      ((cv.end3 >> i) & 1u) == (end_len == 3) && ((cv.end4 >> i) & 1u) == (end_len == 4) &&
                      ((lf >> i) & 1u) == (b[static_cast<std::size_t>(q)] == 0x0A);
      if (!ok && ++bad < 6) {
        ADD_FAILURE() << "byte " << q << " of " << n << " phase " << phase << ": start " << ((start >> i) & 1u)
                      << "/" << r.start << " wf " << ((c.wf >> i) & 1u) << "/" << r.wf_length << " cover "
                      << ((cv.cover >> i) & 1u) << "/" << cover;
      }
    }
  }
  return bad;
}

TEST(PlanesHost, DecodeUnitEveryScalarValue) {
  // Every scalar value, encoded, followed by every kind of trailing garbage the kernels may see.
  for (u32 c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    u8 b[4] = {0, 0, 0, 0};
    const unsigned len = detail::encode_scalar(static_cast<char32_t>(c), b);
    for (u32 tail : {0x00000000u, 0xFFFFFFFFu, 0x80808080u, 0x3F7FBFC1u}) {
      u32 x = tail;
      for (unsigned k = 0; k < len; ++k) x = (x & ~(0xFFu << (8 * k))) | (u32{b[k]} << (8 * k));
      ASSERT_EQ(kern::decode_unit(x), c) << std::hex << c << " tail " << tail;
    }
  }
}

TEST(PlanesHost, DecodeFourBytesEveryFourByteValue) {
  for (u32 c = 0x10000; c <= 0x10FFFF; ++c) {
    u8 b[4] = {0, 0, 0, 0};
    ASSERT_EQ(detail::encode_scalar(static_cast<char32_t>(c), b), 4u);
    const u32 x = u32{b[0]} | u32{b[1]} << 8 | u32{b[2]} << 16 | u32{b[3]} << 24;
    ASSERT_EQ(kern::decode_four_bytes(x), c) << std::hex << c;
  }
}

TEST(PlanesHost, Utf16OfEveryScalarValue) {
  for (u32 c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const u32 want = c < 0x10000 ? c : (0xD800u + ((c - 0x10000u) >> 10)) | (0xDC00u + (c & 0x3FFu)) << 16;
    ASSERT_EQ(kern::utf16_of(c), want) << std::hex << c;
  }
}

TEST(PlanesHost, DecodeFourSurrogatesEveryFourByteValue) {
  for (u32 c = 0x10000; c <= 0x10FFFF; ++c) {
    u8 b[4] = {0, 0, 0, 0};
    ASSERT_EQ(detail::encode_scalar(static_cast<char32_t>(c), b), 4u);
    const u32 x = u32{b[0]} | u32{b[1]} << 8 | u32{b[2]} << 16 | u32{b[3]} << 24;
    const u32 high = 0xD800u + ((c - 0x10000u) >> 10), low = 0xDC00u + (c & 0x3FFu);
    ASSERT_EQ(kern::decode_four_surrogates(x), high | low << 16) << std::hex << c;
  }
}

TEST(PlanesHost, EncodeUnitEveryScalarValue) {
  for (u32 c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    u8 b[4] = {0, 0, 0, 0};
    const unsigned len = detail::encode_scalar(static_cast<char32_t>(c), b);
    ASSERT_EQ(kern::utf8_length(c), len) << std::hex << c;
    const kern::utf8_form f = kern::utf8_form_of_top_bit(kern::top_bit(c));
    ASSERT_EQ(kern::utf8_form_bits(f), 8 * len) << std::hex << c;
    const u32 expect = b[0] | u32{b[1]} << 8 | u32{b[2]} << 16 | u32{b[3]} << 24;  // zero above len
    ASSERT_EQ(kern::utf8_pack(c, f), expect) << std::hex << c;
  }
}

TEST(PlanesHost, TransposeAllBytePatterns) {
  std::mt19937_64 g(7);
  for (int t = 0; t < 20000; ++t) {
    std::vector<u8> b(32);
    for (auto& v : b) v = static_cast<u8>(g());
    u32 P[8];
    planes_at(b, 0, P);
    for (int i = 0; i < 32; ++i)
      for (int k = 0; k < 8; ++k) ASSERT_EQ((P[k] >> i) & 1u, (b[static_cast<std::size_t>(i)] >> k) & 1u);
  }
}

TEST(PlanesHost, ExhaustiveTwoByteSequencesAcrossTheBoundary) {
  // Every byte pair, placed so that it straddles the slab boundary or sits next to it, with
  // an ASCII or continuation filler and an optional third byte.
  for (u32 v = 0; v < 65536; ++v) {
    for (int pad : {28, 29, 30, 31, 32, 33}) {
      for (u8 tail : {u8{'x'}, u8{0x80}, u8{0xA0}}) {
        std::vector<u8> buf(static_cast<std::size_t>(pad), 'a');
        buf.push_back(static_cast<u8>(v >> 8));
        buf.push_back(static_cast<u8>(v));
        buf.push_back(tail);
        ASSERT_EQ(compare_slabs(buf, 0), 0) << std::hex << v;
      }
    }
  }
}

TEST(PlanesHost, ExhaustiveThreeByteSequences) {
  // All 2^24 sequences in 4-byte slots padded with 'x'; 8 slots per slab, so over the run every
  // slot position and both slab phases are covered.
  std::vector<u8> buf;
  buf.reserve(1 << 16);
  int bad = 0;
  for (u32 v = 0; v < (1u << 24); ++v) {
    buf.push_back(static_cast<u8>(v >> 16));
    buf.push_back(static_cast<u8>(v >> 8));
    buf.push_back(static_cast<u8>(v));
    buf.push_back('x');
    if (buf.size() == (1u << 14) || v + 1 == (1u << 24)) {
      bad += compare_slabs(buf, static_cast<int>(v & 31));
      ASSERT_EQ(bad, 0);
      buf.clear();
    }
  }
}

TEST(PlanesHost, RandomMixesEveryPhase) {
  static constexpr u8 interesting[] = {'a',  '\n', 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                       0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0,
                                       0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFE, 0xFF};
  std::mt19937_64 g(99);
  for (int t = 0; t < 3000; ++t) {
    const std::size_t n = 1 + g() % 200;
    std::vector<u8> b(n);
    for (auto& v : b) {
      const u64 r = g() % 4;
      v = r == 0 ? static_cast<u8>(g()) : interesting[g() % sizeof interesting];
    }
    for (int phase = 0; phase < 32; phase += 1 + static_cast<int>(g() % 7))
      ASSERT_EQ(compare_slabs(b, phase), 0) << "trial " << t;
  }
}

}  // namespace
