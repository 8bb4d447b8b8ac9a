// Host-side proof of the validity screen the validate kernel runs (kernels/utf8/lane_screen.cuh is
// __host__ __device__), against the exact per-byte rule classify_reference:
//   * to_planes_mux gives to_planes' planes;
//   * every error unit starting at byte u flags a byte in [u - 2, u + 3], and every flagged byte
//     has an error unit starting at most 3 bytes before it or 2 after it (valid text flags
//     nothing);
//   * tail_error_starts, for a slab whose own bytes are all unflagged, finds exactly the error
//     units starting in its last 4 bytes.
// Exhaustive over all byte pairs across a slab boundary and all 2^24 three-byte sequences; random
// mixes of the bytes that matter at every phase; long valid texts. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "utf8/utf8_rules.hpp"
#include "support/byte_words.hpp"
#include "utf8/lane_screen.cuh"

namespace {

using namespace gutf8;
using kern::u32;
using kern::u64;
using kern::u8;
using test::word_at;

void words_at(const std::vector<u8>& b, std::int64_t o, u32 (&w)[8]) {
  for (int k = 0; k < 8; ++k) w[k] = word_at(b, o + 4 * k);
}

// Flags of the slab at o, as the kernel computes them (bytes before the text read as 0): with
// the previous slab's link as lanes pass it, which must agree with the flags of the raw 4 bytes
// before the slab (the link into a run's first slab).
u32 screen_at(const std::vector<u8>& b, std::int64_t o, u32 (&P)[8]) {
  u32 w[8], Pp[8];
  words_at(b, o, w);
  kern::to_planes_mux(w, P);
  words_at(b, o - 32, w);
  kern::to_planes_mux(w, Pp);
  const kern::lead_flags own = kern::lead_flags_of(P);
  const u32 f = kern::screen_slab(P, own, kern::flags_of(kern::link_of(kern::lead_flags_of(Pp))));
  const u32 g = kern::screen_slab(P, own, kern::flags_of(kern::link_of(kern::lead_flags_of_word(word_at(b, o - 4)))));
  EXPECT_EQ(f, g) << "slab " << o;
  return f;
}

// Checks the slabs at phase + 32 k covering b; returns the number of failures (reports a few).
int check_screen(const std::vector<u8>& b, int phase) {
  const auto n = static_cast<std::int64_t>(b.size());
  std::vector<char> flagged(b.size() + 64, 0), error_start(b.size() + 64, 0);
  for (std::int64_t q = 0; q < n; ++q)
    error_start[static_cast<std::size_t>(q)] =
        kern::classify_reference(b.data(), static_cast<u64>(n), static_cast<u64>(q)).error_start();
  int bad = 0;
  std::vector<std::pair<std::int64_t, u32>> slabs;
  for (std::int64_t o = phase - 32; o < n + 3; o += 32) {  // the slabs and the 3 bytes after
    if (o + 32 <= 0) continue;
    u32 P[8], R[8], w[8];
    u32 f = screen_at(b, o, P);
    words_at(b, o, w);
    kern::to_planes(w, R);
    for (int k = 0; k < 8; ++k)
      if (P[k] != R[k] && ++bad < 4) ADD_FAILURE() << "plane " << k << " of slab " << o;
    // Bytes outside the text are zeros the kernel never counts.
    // Bytes before the text are zeros the kernel never counts; flags past its end stand for the
    // truncation the kernel's guarded end warp tiles count exactly.
    for (int i = 0; i < 32; ++i)
      if (o + i < 0) f &= ~(1u << i);
    for (int i = 0; i < 32; ++i)
      if ((f >> i) & 1u) flagged[static_cast<std::size_t>(o + i)] = 1;
    for (int i = 0; i < 32; ++i)
      if (o + i >= n) f &= ~(1u << i);
    slabs.emplace_back(o, f);
  }
  for (std::int64_t q = 0; q < n; ++q) {
    bool near_start = false, near_flag = false;
    for (std::int64_t d = -2; d <= 3; ++d) {
      if (q - d >= 0 && q - d < n && error_start[static_cast<std::size_t>(q - d)]) near_start = true;
      if (q + d >= 0 && flagged[static_cast<std::size_t>(q + d)]) near_flag = true;
    }
    if (error_start[static_cast<std::size_t>(q)] && !near_flag && ++bad < 6)
      ADD_FAILURE() << "error unit at " << q << " of " << n << " not flagged (phase " << phase << ")";
    if (flagged[static_cast<std::size_t>(q)] && !near_start && ++bad < 6)
      ADD_FAILURE() << "byte " << q << " of " << n << " flagged without an error unit (phase " << phase << ")";
  }
  // Slabs whose own bytes passed: their last 4 bytes' error units from the raw word.
  for (const auto& [o, f] : slabs) {
    if (f != 0 || o + 32 > n) continue;
    u32 Pn[8], w[8];
    words_at(b, o + 32, w);
    kern::to_planes(w, Pn);
    const u32 tail = kern::tail_error_starts(word_at(b, o + 28), kern::ahead_link(Pn));
    for (int j = 0; j < 4; ++j) {
      const std::int64_t q = o + 28 + j;
      const bool expect = q >= 0 && error_start[static_cast<std::size_t>(q)];
      if (((tail >> (28 + j)) & 1u) != static_cast<u32>(expect) && ++bad < 8)
        ADD_FAILURE() << "tail byte " << q << " of " << n << ": " << ((tail >> (28 + j)) & 1u) << " vs " << expect;
    }
  }
  return bad;
}

TEST(ScreenHost, TransposeAllBytePatterns) {
  std::mt19937_64 g(11);
  for (int t = 0; t < 20000; ++t) {
    u32 w[8], P[8], R[8];
    for (auto& v : w) v = static_cast<u32>(g());
    kern::to_planes_mux(w, P);
    kern::to_planes(w, R);
    for (int k = 0; k < 8; ++k) ASSERT_EQ(P[k], R[k]) << "plane " << k;
  }
}

TEST(ScreenHost, ExhaustiveTwoByteSequencesAcrossTheBoundary) {
  for (u32 v = 0; v < 65536; ++v) {
    for (int pad : {27, 28, 29, 30, 31, 32, 33}) {
      for (u8 tail : {u8{'x'}, u8{0x80}, u8{0xA0}, u8{0x90}}) {
        std::vector<u8> buf(static_cast<std::size_t>(pad), 'a');
        buf.push_back(static_cast<u8>(v >> 8));
        buf.push_back(static_cast<u8>(v));
        buf.push_back(tail);
        buf.push_back(tail);
        ASSERT_EQ(check_screen(buf, 0), 0) << std::hex << v << " pad " << std::dec << pad;
      }
    }
  }
}

TEST(ScreenHost, ExhaustiveThreeByteSequences) {
  // All 2^24 sequences in 4-byte slots padded with 'x'; the phase moves with v so every slot
  // position meets the slab boundary.
  std::vector<u8> buf;
  buf.reserve(1 << 14);
  int bad = 0;
  for (u32 v = 0; v < (1u << 24); ++v) {
    buf.push_back(static_cast<u8>(v >> 16));
    buf.push_back(static_cast<u8>(v >> 8));
    buf.push_back(static_cast<u8>(v));
    buf.push_back('x');
    if (buf.size() == (1u << 12) || v + 1 == (1u << 24)) {
      bad += check_screen(buf, static_cast<int>(v & 31));
      ASSERT_EQ(bad, 0);
      buf.clear();
    }
  }
}

TEST(ScreenHost, RandomMixesEveryPhase) {
  static constexpr u8 interesting[] = {'a',  '\n', 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                       0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0,
                                       0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFE, 0xFF};
  std::mt19937_64 g(123);
  for (int t = 0; t < 4000; ++t) {
    const std::size_t n = 1 + g() % 200;
    std::vector<u8> b(n);
    for (auto& v : b) v = g() % 4 == 0 ? static_cast<u8>(g()) : interesting[g() % sizeof interesting];
    for (int phase = 0; phase < 32; phase += 1 + static_cast<int>(g() % 5))
      ASSERT_EQ(check_screen(b, phase), 0) << "trial " << t;
  }
}

TEST(ScreenHost, ValidTextFlagsNothing) {
  // Random scalar values of every length (and the edges of each range), at every phase.
  std::mt19937_64 g(5);
  for (int t = 0; t < 300; ++t) {
    std::vector<u8> b;
    while (b.size() < 700) {
      u32 c;
      switch (g() % 6) {
        case 0: c = static_cast<u32>(g() % 0x80); break;
        case 1: c = 0x80 + static_cast<u32>(g() % 0x780); break;
        case 2: c = 0x800 + static_cast<u32>(g() % 0xF800); break;
        case 3: c = 0x10000 + static_cast<u32>(g() % 0x100000); break;
        case 4: {
          static constexpr u32 edges[] = {0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000,
                                          0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF};
          c = edges[g() % (sizeof edges / sizeof edges[0])];
          break;
        }
        default: c = '\n';
      }
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      u8 e[4];
      const unsigned len = detail::encode_scalar(static_cast<char32_t>(c), e);
      b.insert(b.end(), e, e + len);
    }
    for (int phase = 0; phase < 32; ++phase) {
      for (std::int64_t o = phase - 32; o < static_cast<std::int64_t>(b.size()); o += 32) {
        u32 P[8];
        u32 f = screen_at(b, o, P);
        for (int i = 0; i < 32; ++i)
          if (o + i < 0 || o + i >= static_cast<std::int64_t>(b.size())) f &= ~(1u << i);
        ASSERT_EQ(f, 0u) << "trial " << t << " slab " << o;
      }
    }
  }
}

}  // namespace
