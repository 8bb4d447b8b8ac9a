// Host-side run of validate's screening walk (kernels/utf8/warp_screen_walk.cuh is __host__
// __device__ and takes its shuffles, vote and loads from a warp policy): here a warp is 32
// threads that meet at a barrier for every shuffle and vote, so the code the kernel runs walks
// runs of warp tiles on the CPU. Each input is cut into runs of a few warp tiles as the kernel's
// warps would own them, and the summed counts (error units, the first one, LFs, the last one)
// must equal classify_reference's over the counted bytes. Every fast load must lie inside the
// input and be aligned. Inputs: valid text of every sequence length, error units of every kind at
// every offset around warp tile edges (the screen's blind spots are there), random errors at
// several rates (so that warp tiles go ASCII, screened, flagged and exact after one another),
// misaligned input and a chunk whose end cuts a sequence. No GPU needed.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "utf8/utf8_rules.hpp"
#include "support/random.hpp"
#include "utf8/warp_screen_walk.cuh"

namespace {

using namespace gutf8;
using kern::u32;
using kern::u64;
using kern::u8;
using bytes = std::vector<u8>;

// What the 32 lanes of an emulated warp share.
struct warp_room {
  std::barrier<> meet{32};
  std::array<u32, 32> slot{};
  const u8* lo = nullptr;  // fast loads must lie in [lo, hi)
  const u8* hi = nullptr;
  std::atomic<int> bad_loads{0};
};

// warp_screen_walk.cuh's warp policy on 32 host threads.
struct emulated_warp {
  u32 l;
  warp_room* room;

  u32 lane() const { return l; }
  u32 exchange(u32 v, u32 src) const {
    room->slot[l] = v;
    room->meet.arrive_and_wait();
    const u32 r = room->slot[src & 31u];
    room->meet.arrive_and_wait();
    return r;
  }
  u32 up(u32 v) const { return exchange(v, l == 0 ? 0 : l - 1); }
  u32 down(u32 v) const { return exchange(v, l == 31 ? 31 : l + 1); }
  u32 idx(u32 v, u32 src) const { return exchange(v, src); }
  bool any(bool p) const {
    room->slot[l] = p ? 1u : 0u;
    room->meet.arrive_and_wait();
    bool r = false;
    for (u32 v : room->slot) r = r || v != 0;
    room->meet.arrive_and_wait();
    return r;
  }
  void check(const u8* p, std::size_t size, std::uintptr_t align) const {
    if (p < room->lo || p + size > room->hi || (reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0)
      ++room->bad_loads;
  }
  void load32(const u8* p, u32 (&x)[8]) const {
    check(p, 32, 16);
    std::memcpy(x, p, 32);
  }
  u32 word(const u8* p) const {
    check(p, 4, 4);
    u32 v;
    std::memcpy(&v, p, 4);
    return v;
  }
};

struct counts {
  u64 errors = 0, first = ~u64{0}, lf = 0, last_lf_p1 = 0;
  bool operator==(const counts&) const = default;
};

std::string show(const counts& c) {
  return "errors " + std::to_string(c.errors) + ", first " + std::to_string(static_cast<std::int64_t>(c.first)) +
         ", lf " + std::to_string(c.lf) + ", last_lf_p1 " + std::to_string(c.last_lf_p1);
}

counts expected(const bytes& b, u64 counted) {
  counts c;
  for (u64 q = 0; q < counted; ++q) {
    if (kern::classify_reference(b.data(), b.size(), q).error_start()) {
      ++c.errors;
      if (c.first == ~u64{0}) c.first = q;
    }
    if (b[q] == '\n') {
      ++c.lf;
      c.last_lf_p1 = q + 1;
    }
  }
  return c;
}

// The walk over text (at `misalign` bytes past a 16-byte boundary), its runs `per_warp` warp tiles
// long, as the kernel's warps would take them; is_last = false counts the bytes before a cut
// sequence at the end only.
template <u32 B>
counts walk(const bytes& text, std::size_t misalign, u64 per_warp, bool is_last, int& bad_loads) {
  constexpr u64 warp_tile = kern::screen_walk<B>::warp_tile;
  std::vector<u8> store(text.size() + 64, 0xA5);  // bytes around the input: continuations, never read
  const auto base = reinterpret_cast<std::uintptr_t>(store.data());
  u8* in = store.data() + ((16 - base % 16) % 16) + misalign;
  if (!text.empty()) std::memcpy(in, text.data(), text.size());
  const u64 n = text.size();
  const u32 head = static_cast<u32>(reinterpret_cast<std::uintptr_t>(in) & 15u);
  const u64 counted = n - kern::utf8_carry(in, n, is_last);
  const u64 total = n == 0 ? 0 : (head + n + warp_tile - 1) / warp_tile;
  const auto guarded = [&](u64 p) {  // the kernel's load_word: bytes outside the input read as 0
    u32 w = 0;
    for (int k = 0; k < 4; ++k) {
      const std::int64_t q = static_cast<std::int64_t>(p) - head + k;
      if (q >= 0 && static_cast<u64>(q) < n) w |= u32{in[q]} << (8 * k);
    }
    return w;
  };
  warp_room room;
  room.lo = in;
  room.hi = in + n;
  std::array<counts, 32> lanes;
  std::vector<std::thread> threads;
  for (u32 l = 0; l < 32; ++l) {
    threads.emplace_back([&, l] {
      counts& c = lanes[l];
      for (u64 warp_tile0 = 0; warp_tile0 < total; warp_tile0 += per_warp) {
        const u64 warp_tile_end = warp_tile0 + per_warp < total ? warp_tile0 + per_warp : total;
        const kern::screen_run r = kern::screen_run_of<B>(in, head, counted, warp_tile0, warp_tile_end);
        const kern::screen_totals t = kern::screen_walk_run<B>(emulated_warp{l, &room}, r, guarded);
        c.errors += t.errors;
        if (t.first != ~0u) c.first = std::min(c.first, r.run + t.first - head);
        c.lf += t.lf;
        if (t.last_lf_p1) c.last_lf_p1 = std::max(c.last_lf_p1, r.run + t.last_lf_p1 - head);
      }
    });
  }
  for (auto& t : threads) t.join();
  counts sum;
  for (const counts& c : lanes) {
    sum.errors += c.errors;
    sum.first = std::min(sum.first, c.first);
    sum.lf += c.lf;
    sum.last_lf_p1 = std::max(sum.last_lf_p1, c.last_lf_p1);
  }
  bad_loads = room.bad_loads.load();
  return sum;
}

template <u32 B>
::testing::AssertionResult walks_right(const bytes& text, const std::string& what, std::size_t misalign = 0,
                                       u64 per_warp = 3, bool is_last = true) {
  int bad_loads = 0;
  const counts got = walk<B>(text, misalign, per_warp, is_last, bad_loads);
  const counts want = expected(text, text.size() - kern::utf8_carry(text.data(), text.size(), is_last));
  if (got == want && bad_loads == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << " (B " << B << ", " << text.size() << " bytes, misaligned by "
                                       << misalign << ", " << per_warp << " warp tiles a warp): got " << show(got)
                                       << ", want " << show(want) << ", bad loads " << bad_loads;
}

// Valid text of scalar values of each length in the given shares (1..4 bytes), LFs among them.
bytes valid_text(std::mt19937_64& g, std::size_t n, const std::array<int, 4>& share) {
  bytes b;
  const int total = share[0] + share[1] + share[2] + share[3];
  while (b.size() < n) {
    int pick = static_cast<int>(g() % static_cast<u64>(total)), len = 0;
    while (pick >= share[static_cast<std::size_t>(len)]) pick -= share[static_cast<std::size_t>(len++)];
    char32_t c = 0;
    switch (len) {
      case 0: c = g() % 23 == 0 ? U'\n' : static_cast<char32_t>(0x20 + g() % 0x5F); break;
      case 1: c = static_cast<char32_t>(0x80 + g() % 0x780); break;
      case 2: c = static_cast<char32_t>(0x800 + g() % 0xF800); break;
      default: c = static_cast<char32_t>(0x10000 + g() % 0x100000); break;
    }
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    u8 e[4];
    const unsigned l = detail::encode_scalar(c, e);
    b.insert(b.end(), e, e + l);
  }
  b.resize(n);  // may cut the last sequence: an error unit at the end
  return b;
}

constexpr std::array<int, 4> mixed{6, 1, 3, 1}, cjk{1, 0, 8, 0}, emoji{1, 0, 0, 8};

void corrupt(std::mt19937_64& g, bytes& b, double rate) {
  static constexpr u8 bad[] = {0x80, 0xBF, 0xC0, 0xC1, 0xC3, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, '\n'};
  for (auto& v : b)
    if (std::uniform_real_distribution<double>(0, 1)(g) < rate) v = bad[g() % sizeof bad];
}

template <u32 B>
void valid_and_random_errors() {
  auto g = test::rng(31 + B);
  constexpr std::size_t warp_tile = kern::screen_walk<B>::warp_tile;
  for (const auto& share : {mixed, cjk, emoji, std::array<int, 4>{1, 0, 0, 0}}) {
    for (std::size_t n :
         {std::size_t{1}, std::size_t{45}, warp_tile - 1, warp_tile + 3, 7 * warp_tile + 333, 13 * warp_tile}) {
      const bytes text = valid_text(g, n, share);
      ASSERT_TRUE(walks_right<B>(text, "valid"));
      for (double rate : {0.0002, 0.001, 0.01, 0.05}) {
        bytes b = text;
        corrupt(g, b, rate);
        ASSERT_TRUE(walks_right<B>(b, "errors at " + std::to_string(rate), 0, 1 + g() % 5));
      }
    }
  }
}

TEST(ScreenWalkHost, ValidAndRandomErrorsOneSlabALane) { valid_and_random_errors<1>(); }
TEST(ScreenWalkHost, ValidAndRandomErrorsTwoSlabsALane) { valid_and_random_errors<2>(); }

// One error unit in valid CJK or emoji text (whose warp tiles are all screened), its first byte 5
// before to 3 after a warp tile edge or a lane's slab edge; the edges sit first, in the middle and
// last in their runs of 3 or 4 warp tiles.
template <u32 B>
void errors_at_edges() {
  constexpr std::size_t warp_tile = kern::screen_walk<B>::warp_tile;
  const std::vector<bytes> patterns = {
      {0xE1, 'x'},        {0xF0, 0x9F, 0x98, 'x'}, {0xF0, 0x9F, 'x'}, {0xC0, 0x80}, {0xF8, 0x80, 0x80},
      {0xE0, 0x80, 0x80}, {0xF0, 0x80, 0x80, 0x80}, {0xED, 0xA0, 0x80}, {0xF4, 0x90, 0x80, 0x80},
      {0x80},             {0xE4, 0xB8, '\n'},      {0xF4, 0x8F, 0xBF, 0xBF, 0xBF}, {0xF5, 0x80, 0x80, 0x80}};
  auto g = test::rng(77 + B);
  for (const auto& share : {cjk, emoji}) {
    const std::size_t n = 9 * warp_tile + 40;
    const bytes text = valid_text(g, n, share);
    for (std::size_t edge : {warp_tile, 4 * warp_tile + 32 * 11, 5 * warp_tile + 64, 8 * warp_tile}) {
      for (const bytes& pat : patterns) {
        for (int d = -5; d <= 3; ++d) {
          bytes b = text;
          const std::size_t pos = edge + static_cast<std::size_t>(static_cast<std::ptrdiff_t>(d));
          std::size_t lo = pos - 8, hi = pos + 8;  // an ASCII window on character boundaries
          while (lo > 0 && (b[lo] & 0xC0) == 0x80) --lo;
          while (hi < n && (b[hi] & 0xC0) == 0x80) ++hi;
          std::fill(b.begin() + static_cast<std::ptrdiff_t>(lo), b.begin() + static_cast<std::ptrdiff_t>(hi), 'a');
          std::copy(pat.begin(), pat.end(), b.begin() + static_cast<std::ptrdiff_t>(pos));
          const std::string what = "pattern of " + std::to_string(pat.size()) + " bytes at " + std::to_string(pos);
          ASSERT_TRUE(walks_right<B>(b, what, 0, 3 + static_cast<u64>(d & 1)));
        }
      }
    }
  }
}

TEST(ScreenWalkHost, ErrorsAtEdgesOneSlabALane) { errors_at_edges<1>(); }
TEST(ScreenWalkHost, ErrorsAtEdgesTwoSlabsALane) { errors_at_edges<2>(); }

// Input at every misalignment (the first warp tile guarded), sizes around a warp tile, a chunk whose
// end cuts a sequence (counted up to it), a lead cut by a warp tile edge after a screened warp tile
// followed by an all-ASCII one, and a warp tile with errors between clean ones.
template <u32 B>
void alignment_chunks_and_ascii() {
  constexpr std::size_t warp_tile = kern::screen_walk<B>::warp_tile;
  auto g = test::rng(5 + B);
  for (std::size_t m = 0; m < 16; m += 1 + m / 4) {
    for (std::size_t n : {warp_tile - 3, 3 * warp_tile + 5, 6 * warp_tile + 77}) {
      bytes b = valid_text(g, n, mixed);
      b[0] = '\n';
      ASSERT_TRUE(walks_right<B>(b, "valid", m, 2));
      b[0] = 0x80;
      b[n / 2] = 0xFF;
      ASSERT_TRUE(walks_right<B>(b, "errors", m, 2));
    }
  }
  bytes cut = valid_text(g, 5 * warp_tile, cjk);
  cut.resize(5 * warp_tile - 1);
  cut.push_back(0xE4);
  ASSERT_TRUE(walks_right<B>(cut, "chunk cut", 0, 3, false));
  ASSERT_TRUE(walks_right<B>(cut, "last chunk cut", 0, 3, true));
  // Warp tiles: CJK, then ASCII whose first bytes follow a lead cut by the edge, then CJK.
  for (u8 lead : {u8{0xC3}, u8{0xE4}, u8{0xF0}}) {
    for (std::size_t back : {1u, 2u, 3u}) {
      bytes b = valid_text(g, 2 * warp_tile, cjk);
      bytes ascii(warp_tile, 'q');
      ascii[warp_tile / 2] = '\n';
      b.insert(b.end(), ascii.begin(), ascii.end());
      const bytes more = valid_text(g, 2 * warp_tile, cjk);
      b.insert(b.end(), more.begin(), more.end());
      std::size_t k = 2 * warp_tile - 4;
      while ((b[k] & 0xC0) == 0x80) --k;
      for (; k < 2 * warp_tile; ++k) b[k] = 'a';
      b[2 * warp_tile - back] = lead;
      ASSERT_TRUE(walks_right<B>(b, "lead cut before ASCII", 0, 5));
    }
  }
  // A warp tile with an error that ends with a lead continued in the next (clean, counted exactly
  // after the error), then a stray continuation first in the warp tile after: the screen's link into
  // that one comes from the raw bytes, not from the warp tile with the error.
  {
    bytes b = valid_text(g, 6 * warp_tile, cjk);
    auto ascii_at = [&](std::size_t from, std::size_t to) {
      while ((b[from] & 0xC0) == 0x80) --from;
      while ((b[to] & 0xC0) == 0x80) ++to;
      std::fill(b.begin() + static_cast<std::ptrdiff_t>(from), b.begin() + static_cast<std::ptrdiff_t>(to), 'a');
    };
    b[warp_tile + warp_tile / 2] = 0xFF;
    ascii_at(2 * warp_tile - 8, 2 * warp_tile + 8);
    b[2 * warp_tile - 1] = 0xC3, b[2 * warp_tile] = 0xA9;
    ascii_at(3 * warp_tile - 8, 3 * warp_tile + 8);
    b[3 * warp_tile] = 0x80;
    ASSERT_TRUE(walks_right<B>(b, "stray after a clean exact warp tile", 0, 6));
  }
  // A dense run of errors (exact warp tiles) between clean ones, so the walk returns to screening.
  bytes d = valid_text(g, 10 * warp_tile, emoji);
  for (std::size_t k = 3 * warp_tile + 100; k < 5 * warp_tile; k += 37) d[k] = 0xC0;
  ASSERT_TRUE(walks_right<B>(d, "dense errors then clean", 0, 10));
}

TEST(ScreenWalkHost, AlignmentChunksAndAsciiOneSlabALane) { alignment_chunks_and_ascii<1>(); }
TEST(ScreenWalkHost, AlignmentChunksAndAsciiTwoSlabsALane) { alignment_chunks_and_ascii<2>(); }

}  // namespace
