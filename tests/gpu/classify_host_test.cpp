// Host-side proof of the error-marking code the kernels run (kernels/utf8/byte_rule.cuh is
// __host__ __device__): the SWAR byte predicates against utf8_rules.hpp for every byte and byte
// pair, whole windows against the exact per-byte rule (exhaustively for all 1-, 2- and 3-byte
// sequences at every alignment, and on random mixes), the branch-free decoder against
// detail::decode_sequence for every scalar value, and the chunk carry rule.
// No GPU needed: these run everywhere.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "utf8/utf8_rules.hpp"
#include "utf8/byte_rule.cuh"

namespace {

using namespace gutf8;
using kern::u32;
using kern::u64;
using kern::u8;

u32 lane(u32 lanes, int b) { return (lanes >> (8 * b + 7)) & 1u; }

TEST(ClassifyHost, BytePredicatesMatchRules) {
  for (u32 v = 0; v < 256; ++v) {
    for (int pos = 0; pos < 4; ++pos) {
      const u32 filler = 0x5AC3F1E0u;  // other lanes hold leads: predicates must stay per lane
      const u32 x = (filler & ~(0xFFu << (8 * pos))) | (v << (8 * pos));
      const kern::word_class c = kern::classify_word(x);
      const u8 b = static_cast<u8>(v);
      const unsigned len = detail::sequence_length(b);
      EXPECT_EQ(lane(c.ascii, pos), len == 1) << v;
      EXPECT_EQ(lane(c.cont, pos), detail::is_continuation(b)) << v;
      EXPECT_EQ(lane(c.l2, pos), len == 2) << v;
      EXPECT_EQ(lane(c.l3, pos), len == 3) << v;
      EXPECT_EQ(lane(c.l4, pos), len == 4) << v;
    }
  }
}

TEST(ClassifyHost, SecondByteMatchesRules) {
  for (u32 lead = 0; lead < 256; ++lead) {
    if (detail::sequence_length(static_cast<u8>(lead)) < 2) continue;
    for (u32 b = 0; b < 256; ++b) {
      for (int pos = 0; pos < 4; ++pos) {
        // lead in the byte before `b`: same word (pos > 0) or the previous word's lane 3.
        u32 prev = 0x41414141u, cur = 0x41414141u;
        cur = (cur & ~(0xFFu << (8 * pos))) | (b << (8 * pos));
        if (pos == 0) prev = (prev & 0x00FFFFFFu) | (lead << 24);
        else cur = (cur & ~(0xFFu << (8 * (pos - 1)))) | (lead << (8 * (pos - 1)));
        const u32 ok = kern::second_ok(kern::classify_word(prev), kern::classify_word(cur));
        EXPECT_EQ(lane(ok, pos), detail::continues(static_cast<u8>(lead), 1, static_cast<u8>(b)))
            << std::hex << lead << " " << b << " pos " << pos;
      }
    }
  }
}

// Classifies buf with classify_window<NW> thread by thread (threads of 4*NW bytes from 0), and
// compares every byte with the exact rule. Returns the number of mismatching bytes.
template <int NW>
int compare_windows(const std::vector<u8>& buf) {
  const std::int64_t n = static_cast<std::int64_t>(buf.size());
  auto byte_at = [&](std::int64_t p) -> u32 { return p >= 0 && p < n ? buf[p] : 0u; };
  auto word_at = [&](std::int64_t p) -> u32 {
    return byte_at(p) | byte_at(p + 1) << 8 | byte_at(p + 2) << 16 | byte_at(p + 3) << 24;
  };
  int bad = 0;
  for (std::int64_t pos0 = 0; pos0 < n; pos0 += 4 * NW) {
    u32 w[NW + 2];
    for (int i = 0; i < NW + 2; ++i) w[i] = word_at(pos0 + 4 * (i - 1));
    u32 start[NW], wf[NW];
    kern::window_detail<NW> d{};
    kern::classify_window<NW, true>(w, start, wf, &d);
    u32 start2[NW], wf2[NW];
    kern::classify_window<NW, false>(w, start2, wf2);
    for (int k = 0; k < NW; ++k) {
      for (int b = 0; b < 4; ++b) {
        const std::int64_t i = pos0 + 4 * k + b;
        if (i >= n) break;
        const auto r = kern::classify_reference(buf.data(), static_cast<u64>(n), static_cast<u64>(i));
        // cover / ends: the unit containing i (scan back for its start).
        bool cover = false;
        unsigned end_len = 0;
        for (std::int64_t j = i; j >= 0 && j >= i - 3; --j) {
          const auto rj = kern::classify_reference(buf.data(), static_cast<u64>(n), static_cast<u64>(j));
          if (!rj.start) continue;
          if (rj.wf_length > 0 && j + rj.wf_length > i) {
            cover = true;
            if (j + rj.wf_length - 1 == i) end_len = rj.wf_length;
          }
          break;
        }
        const bool ok = lane(start[k], b) == r.start && lane(wf[k], b) == (r.wf_length > 0) &&
                        lane(start2[k], b) == r.start && lane(wf2[k], b) == (r.wf_length > 0) &&
                        lane(d.cover[k], b) == cover && lane(d.end2[k], b) == (end_len == 2) &&
                        lane(d.end3[k], b) == (end_len == 3) && lane(d.end4[k], b) == (end_len == 4);
        if (!ok && ++bad < 5) {
          ADD_FAILURE() << "byte " << i << " of " << n << " (NW " << NW << ")";
        }
      }
    }
  }
  return bad;
}

TEST(ClassifyHost, ExhaustiveShortSequencesAtEveryAlignment) {
  // Every 1- and 2-byte sequence, preceded by `pad` ASCII bytes so it sits at each lane and
  // straddles word and thread boundaries, followed by nothing (end of input) or by 'x'.
  for (int pad = 0; pad < 8; ++pad) {
    for (u32 v = 0; v < 65536; ++v) {
      for (int tail = 0; tail < 2; ++tail) {
        std::vector<u8> buf(static_cast<std::size_t>(pad), 'a');
        buf.push_back(static_cast<u8>(v >> 8));
        buf.push_back(static_cast<u8>(v));
        if (tail) buf.push_back('x');
        ASSERT_EQ(compare_windows<4>(buf), 0);
        if (v < 256) {
          std::vector<u8> one(static_cast<std::size_t>(pad), 'a');
          one.push_back(static_cast<u8>(v));
          ASSERT_EQ(compare_windows<4>(one), 0);
        }
      }
    }
  }
}

TEST(ClassifyHost, ExhaustiveThreeByteSequences) {
  // All 2^24 sequences, 4-byte slots padded with 'x' (units cannot span slots), 16 slots per
  // buffer so both window sizes see every lane/word/thread position over the run.
  std::vector<u8> buf;
  buf.reserve(64 * 1024);
  int bad = 0;
  for (u32 v = 0; v < (1u << 24); ++v) {
    buf.push_back(static_cast<u8>(v >> 16));
    buf.push_back(static_cast<u8>(v >> 8));
    buf.push_back(static_cast<u8>(v));
    buf.push_back('x');
    if (buf.size() == 64 * 1024 || v + 1 == (1u << 24)) {
      bad += compare_windows<8>(buf);
      buf.erase(buf.begin());  // shift by one byte: other alignments for NW = 4
      bad += compare_windows<4>(buf);
      buf.clear();
      ASSERT_EQ(bad, 0);
    }
  }
}

std::vector<u8> random_mix(std::mt19937_64& g, std::size_t n) {
  static constexpr u8 interesting[] = {0x00, 0x0A, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                       0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                                       0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::vector<u8> v;
  while (v.size() < n) {
    const auto r = g() % 8;
    if (r < 3) {
      v.push_back(interesting[g() % sizeof(interesting)]);
    } else {
      // a well-formed sequence, sometimes truncated
      char32_t c = static_cast<char32_t>(g() % 0x110000);
      if (c >= 0xD800 && c <= 0xDFFF) c = 0x41;
      u8 tmp[4];
      unsigned len = detail::encode_scalar(c, tmp);
      if (g() % 4 == 0 && len > 1) len = 1 + static_cast<unsigned>(g() % (len - 1));
      v.insert(v.end(), tmp, tmp + len);
    }
  }
  v.resize(n);
  return v;
}

TEST(ClassifyHost, RandomMixes) {
  std::mt19937_64 g(12345);
  for (int it = 0; it < 20000; ++it) {
    const auto buf = random_mix(g, 1 + g() % 200);
    ASSERT_EQ(compare_windows<8>(buf), 0) << "iteration " << it;
    ASSERT_EQ(compare_windows<4>(buf), 0) << "iteration " << it;
  }
}

TEST(ClassifyHost, DecodeLanesMatchesRules) {
  for (u32 c = 0; c <= 0x10FFFF; ++c) {
    if (!detail::is_scalar_value(c)) continue;
    u8 tmp[4] = {0xAA, 0xAA, 0xAA, 0xAA};  // bytes after the sequence must be ignored
    detail::encode_scalar(static_cast<char32_t>(c), tmp);
    const u32 x = tmp[0] | u32{tmp[1]} << 8 | u32{tmp[2]} << 16 | u32{tmp[3]} << 24;
    ASSERT_EQ(kern::decode_lanes(x), c);
  }
}

TEST(ClassifyHost, CarryIsTheUnitTruncatedByTheEnd) {
  std::mt19937_64 g(7);
  for (int it = 0; it < 200000; ++it) {
    const auto buf = random_mix(g, g() % 9);
    const u64 n = buf.size();
    u64 expect = 0;
    for (u64 j = 0; j < n; ++j) {
      const auto r = kern::classify_reference(buf.data(), n, j);
      if (r.error_start() && kern::error_kind_at(buf.data(), n, j) == error_kind::truncated_at_end)
        expect = n - j;
    }
    ASSERT_EQ(kern::utf8_carry(buf.data(), n, false), expect);
    ASSERT_EQ(kern::utf8_carry(buf.data(), n, true), 0u);
  }
}

}  // namespace
