// The walks of checked pairs in repair and stats, scanner against scanner: every ISA path's
// result (every field) and output against the portable scanner's, with room for the output
// to spare and with exactly the room it needs (as the sized repair of several threads gives),
// at every size around the steps and with a defect at every offset of a pair.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "check.hpp"
#include "cpu/scan.hpp"
#include "scan_support.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
using cpu::mode;

template <mode M, error_policy P>
void expect_as_portable(const std::string& in, std::size_t end) {
  const scanned want = scan_on<M, P>(in, end, cpu::isa::portable);
  for (const cpu::isa level : isa_levels()) {
    EXPECT_TRUE(same(scan_on<M, P>(in, end, level), want)) << name(level) << ", mode " << int(M) << ", " << name(P);
    if constexpr (M == mode::repair) {  // exactly the room the output needs
      EXPECT_TRUE(same(scan_on<M, P>(in, end, level, std::max<std::size_t>(want.r.written, 1)), want))
          << name(level) << ", exact room, " << name(P);
    }
  }
}

// Repair under every policy and stats, over the whole input and as a segment that ends
// before it (its last unit may run past end).
void expect_every_mode_as_portable(const std::string& in) {
  for (const std::size_t end : {in.size(), in.size() - std::min<std::size_t>(in.size(), 37)}) {
    expect_as_portable<mode::repair, error_policy::strict>(in, end);
    expect_as_portable<mode::repair, error_policy::replace>(in, end);
    expect_as_portable<mode::repair, error_policy::drop>(in, end);
    expect_as_portable<mode::stats, error_policy::replace>(in, end);
  }
}

// Text with sequences of every length and the edge leads (C2, DF, E0, ED, EF, F0, F4).
std::string every_lead_class(std::mt19937_64& g, std::size_t size) {
  static const char* const edges[] = {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF",
                                      "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "a"};
  std::string s;
  while (s.size() < size) {
    if (pick(g, 0, 3) == 0)
      s += edges[pick(g, 0, std::size(edges) - 1)];
    else
      s += random_text(g, pick(g, 1, 9), 0.0);
  }
  return s;
}

// The sequences of well-formed text by length, from its lead bytes.
std::array<std::uint64_t, 4> by_lead(const std::string& s) {
  std::array<std::uint64_t, 4> n{};
  for (const char c : s) {
    const auto b = static_cast<std::uint8_t>(c);
    if (b < 0x80 || b >= 0xC0) ++n[b < 0x80 ? 0 : b < 0xE0 ? 1 : b < 0xF0 ? 2 : 3];
  }
  return n;
}

// Every size up to 300 (the AVX2 walk steps 64 bytes, the AVX-512 one 128), cut anywhere,
// without and with a defect in the last bytes.
TEST(ScanWalk, EverySizeAroundTheSteps) {
  auto g = rng(21);
  const std::string text = every_lead_class(g, 400);
  for (std::size_t size = 1; size <= 300; ++size) {
    std::string in = text.substr(0, size);
    expect_every_mode_as_portable(in);
    in[size - 1 - std::min(size - 1, size % 7)] = '\xC0';
    expect_every_mode_as_portable(in);
    if (HasFailure()) return;
  }
}

// A defect at every offset of the first pairs: in a pair's first or second vector, cutting
// the sequence a clean pair ends with, and a bad lead at a clean pair's end.
TEST(ScanWalk, DefectAtEveryOffsetOfAPair) {
  auto g = rng(22);
  const std::string base = every_lead_class(g, 330) + std::string(70, 'x') + every_lead_class(g, 200);
  for (const std::string_view defect : {"\x80", "\xC0\x80", "\xF5", "\xE2\x82", "\xF0\x9F\x98", "\xED\xA0\x80", "\xC3"}) {
    for (std::size_t at = 0; at + defect.size() <= 420; ++at) {
      std::string in = base;
      in.replace(at, defect.size(), defect);
      SCOPED_TRACE(testing::Message() << "defect at " << at);
      expect_every_mode_as_portable(in);
      if (HasFailure()) return;
    }
  }
}

// Stats' counts over long valid text (beyond the AVX2 walk's 127-pair legs) are the leads'
// counts, with and without the histogram, and repair's output is the input.
TEST(ScanWalk, ValidTextCountsEveryLeadClass) {
  auto g = rng(23);
  for (const std::size_t size : {8127, 8128, 8191, 16383, 40001}) {
    const std::string in = every_lead_class(g, size);
    const std::array<std::uint64_t, 4> want = by_lead(in);
    for (const cpu::isa level : isa_levels()) {
      SCOPED_TRACE(testing::Message() << name(level) << ", " << in.size() << " bytes");
      EXPECT_EQ((scan_on<mode::stats, error_policy::replace>(in, in.size(), level).r.by_length), want);
      const scanned repaired = scan_on<mode::repair, error_policy::strict>(in, in.size(), level, in.size());
      EXPECT_TRUE(repaired.out == in && !repaired.past_room);
      std::vector<std::uint64_t> histogram(0x110000);
      cpu::scan_request j;
      j.in = reinterpret_cast<const std::uint8_t*>(in.data());
      j.end = j.limit = in.size();
      j.at_end = true;
      j.histogram = histogram.data();
      j.level = level;
      EXPECT_EQ((cpu::scan_utf8<mode::stats, error_policy::replace, true>(j).by_length), want);
      EXPECT_EQ(std::accumulate(histogram.begin(), histogram.end(), std::uint64_t{0}),
                want[0] + want[1] + want[2] + want[3]);
    }
    expect_every_mode_as_portable(in);
  }
}

// Defects between clean stretches of every length, so the walk hands over and resumes at
// every phase.
TEST(ScanWalk, CleanStretchesBetweenDefects) {
  auto g = rng(24);
  for (int round = 0; round < 8; ++round) {
    std::string in;
    while (in.size() < 30000) {
      in += every_lead_class(g, pick(g, 0, 1200));
      in += random_defect(g);
    }
    SCOPED_TRACE(testing::Message() << "round " << round);
    expect_every_mode_as_portable(in);
    if (HasFailure()) return;
  }
}

}  // namespace
