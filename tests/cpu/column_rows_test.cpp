// The bit-plane row classification of the GPU column kernels (kernels/utf8/lane_row_links.cuh), run on
// the host: a column's rows laid end to end and cut into 32-byte slabs at every phase, each slab
// classified with the row starts as link breaks and linked to its neighbours as the kernels link
// lanes, must give every byte the unit start / well-formed / cover flags that the exact per-byte
// rule gives it on its row alone; and the kept-byte masks must follow the rows' kept states.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "support/byte_words.hpp"
#include "utf8/lane_row_links.cuh"

namespace gutf8::test {
namespace {

using kern::u32;
using kern::u64;
using kern::u8;

struct laid_out {
  std::vector<u8> bytes;
  std::vector<std::int64_t> row_of;  // -1: junk before the first row
  std::vector<u64> row_start;
};

laid_out lay_out(const std::vector<std::string>& rows, std::size_t junk) {
  laid_out l;
  for (std::size_t k = 0; k < junk; ++k) {
    l.bytes.push_back(static_cast<u8>(0xE1 + k % 3));  // leads: would link into row 0
    l.row_of.push_back(-1);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    l.row_start.push_back(l.bytes.size());
    for (char c : rows[i]) {
      l.bytes.push_back(static_cast<u8>(c));
      l.row_of.push_back(static_cast<std::int64_t>(i));
    }
  }
  return l;
}

// Bit i = a row starts at byte o + i (the end of the bytes counts as one, as in the kernels).
u32 starts_at(const laid_out& l, std::int64_t o) {
  u32 m = 0;
  for (u64 s : l.row_start)
    if (static_cast<std::int64_t>(s) >= o && static_cast<std::int64_t>(s) < o + 32) m |= 1u << (s - o);
  const auto n = static_cast<std::int64_t>(l.bytes.size());
  if (n >= o && n < o + 32) m |= 1u << (n - o);
  return m;
}

struct slab {
  u32 P[8];
  u32 rs;
  slab(const laid_out& l, std::int64_t o) : rs(starts_at(l, o)) {
    u32 w[8];
    for (int k = 0; k < 8; ++k) w[k] = word_at(l.bytes, o + 4 * k);
    kern::to_planes(w, P);
  }
};

kern::slab_class classify_at(const laid_out& l, std::int64_t o) {
  const slab b(l, o), next(l, o + 32);
  return kern::classify_rows(b.P, kern::ahead_link(next.P), b.rs, next.rs & 7u);
}

int compare(const std::vector<std::string>& rows, std::size_t junk, int phase) {
  const laid_out l = lay_out(rows, junk);
  const auto n = static_cast<std::int64_t>(l.bytes.size());
  int bad = 0;
  for (std::int64_t o = phase - 32; o < n; o += 32) {
    const slab b(l, o);
    const kern::slab_class c = classify_at(l, o);
    const u32 behind = kern::behind_link<true>(classify_at(l, o - 32));
    const slab before(l, o - 32);
    const u32 word_link =
        kern::behind_link_word_rows<true>(word_at(l.bytes, o - 4), kern::ahead_link_word(word_at(l.bytes, o)), before.rs, b.rs);
    if (word_link != behind && ++bad < 4) ADD_FAILURE() << "behind word link at " << o;
    const u32 start = kern::starts(c, behind), cover = kern::coverage(c, behind).cover;
    for (int i = 0; i < 32; ++i) {
      const std::int64_t q = o + i;
      if (q < 0 || q >= n || l.row_of[static_cast<std::size_t>(q)] < 0) continue;
      const auto row = static_cast<std::size_t>(l.row_of[static_cast<std::size_t>(q)]);
      const std::string& text = rows[row];
      const auto* s = reinterpret_cast<const u8*>(text.data());
      const u64 at = static_cast<u64>(q) - l.row_start[row];
      const auto r = kern::classify_reference(s, text.size(), at);
      bool covered = false;
      for (u64 j = at + 1; j-- > 0 && j + 3 >= at;) {
        const auto rj = kern::classify_reference(s, text.size(), j);
        if (rj.start) {
          covered = rj.wf_length > at - j;
          break;
        }
      }
      const bool got_start = (start >> i) & 1u, got_wf = (c.wf >> i) & 1u, got_cover = (cover >> i) & 1u;
      if ((got_start != r.start || got_wf != (r.wf_length > 0) || got_cover != covered) && ++bad < 6)
        ADD_FAILURE() << "row " << row << " byte " << at << " (phase " << phase << "): start " << got_start << "/"
                      << r.start << " wf " << got_wf << "/" << (r.wf_length > 0) << " cover " << got_cover << "/"
                      << covered;
    }
  }
  return bad;
}

std::string random_row(std::mt19937_64& g, std::size_t max_len) {
  static constexpr u8 pool[] = {0x41, 0x0A, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0,
                                0xE1, 0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF, 0xBD, 0x85};
  std::string r(g() % (max_len + 1), '\0');
  for (char& c : r) c = static_cast<char>(pool[g() % std::size(pool)]);
  return r;
}

TEST(ColumnRows, EdgeRowsAtEveryPhase) {
  // Sequences cut by a row's end, rows starting with continuation bytes, empty and 1-byte rows.
  const std::vector<std::string> rows = {"", "\xE2\x82", "\xAC", "a", "\xF0\x9F\x98", "\x80\xE2\x82\xAC", "",
                                         "\xC3", "\xA9", "\xED\xA0\x80", "\xF4\x8F\xBF\xBF", "\xE0\xA0",
                                         std::string(40, 'x') + "\xF0\x90\x80", "\x80", "", "\xE2\x82\xAC"};
  for (std::size_t junk : {0u, 1u, 3u, 17u})
    for (int phase = 0; phase < 32; ++phase) ASSERT_EQ(compare(rows, junk, phase), 0) << "junk " << junk;
}

TEST(ColumnRows, RandomRowsOfManySizes) {
  std::mt19937_64 g(2111);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> rows;
    const std::size_t max_len = round % 3 == 0 ? 3 : round % 3 == 1 ? 9 : 70;
    for (int k = 0; k < 24; ++k) rows.push_back(random_row(g, max_len));
    ASSERT_EQ(compare(rows, round % 5, static_cast<int>(g() % 32)), 0) << "round " << round;
  }
}

TEST(ColumnRows, KeptBytesFollowTheRows) {
  std::mt19937_64 g(77);
  for (int round = 0; round < 2000; ++round) {
    const u32 rs = static_cast<u32>(g()) & static_cast<u32>(g());  // sparse starts
    const u32 drop = static_cast<u32>(g()) & rs;
    const bool before = g() & 1;
    u32 want = 0;
    bool dropped = before;
    for (int i = 0; i < 32; ++i) {
      if ((rs >> i) & 1u) dropped = (drop >> i) & 1u;
      want |= dropped ? 0u : 1u << i;
    }
    ASSERT_EQ(kern::kept_bytes(rs, drop, before), want) << std::hex << rs << " " << drop;
    ASSERT_EQ(kern::dropped_after(rs, drop, before), dropped);
  }
}

}  // namespace
}  // namespace gutf8::test
