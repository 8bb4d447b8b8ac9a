// Random GPU-vs-CPU comparisons: text of every script mix, error rates from 0.01% to 50%,
// all-ASCII and all-4-byte inputs, every size 0..300, sizes around tile boundaries and
// misaligned input pointers, through every kernel, variant and policy.
#include <algorithm>
#include <vector>

#include "gpu_harness.hpp"
#include "utf8/tuning.cuh"

namespace gutf8::test::gpu {
namespace {

constexpr std::size_t tile = kern::tile_bytes;  // bytes per tile of the UTF-8 kernels
// UTF-32 values per tile of the encoders, fused and compact (the fused tile is the larger: sizes
// in multiples of it span several tiles of both).
constexpr std::size_t fused_encode_tile = kern::encode_tile;
constexpr std::size_t compact_encode_tile = kern::expand_tile;

TEST(GpuRandom, ScriptsAndErrorRates) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  std::uint64_t seed = 1;
  for (script s : scripts) {
    for (double rate : {0.0, 0.0001, 0.001, 0.01, 0.05, 0.2, 0.5}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " script " + std::to_string(int(s)) +
                   " rate " + std::to_string(rate));
      auto g = rng(seed++);
      bytes b = random_text(g, 3 * tile + g() % tile, s);
      corrupt(g, b, rate);
      ASSERT_TRUE(check_all_utf8(ws, b, "random"));
      const bytes u = random_utf32(g, 2 * fused_encode_tile + g() % fused_encode_tile, s, rate, g() % 4);
      ASSERT_TRUE(check_all_encode(ws, u, "random utf32"));
    }
  }
}

// Repair fixes the lanes of a warp whose bytes change with the whole warp while there are at
// most kern::repair_few_lanes of them, else lane by lane: warp w here has w % (few + 4) such
// lanes (0 .. few + 3, around the threshold), each with one error of a varying kind in its
// 32 bytes, in mixed-width text so that the lanes' output offsets take every alignment.
TEST(GpuRandom, RepairChangedLanesAroundTheThreshold) {
  GUTF8_REQUIRE_GPU();
  constexpr std::size_t span = kern::repair_few_lanes + 4;
  static_assert(span <= 32 && span <= 4 * kern::tile_warps);
  workspace ws;
  auto g = rng(4242);
  static constexpr std::uint8_t bad[] = {0x80, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF};
  bytes b = random_text(g, 4 * tile + 77, script::mixed);
  const std::size_t warps = b.size() / kern::warp_bytes;
  for (std::size_t w = 0; w < warps; ++w) {
    std::vector<std::size_t> lanes(32);
    for (std::size_t i = 0; i < 32; ++i) lanes[i] = i;
    std::shuffle(lanes.begin(), lanes.end(), g);
    for (std::size_t i = 0; i < w % span; ++i)
      b[w * kern::warp_bytes + lanes[i] * kern::lane_bytes + g() % kern::lane_bytes] = bad[g() % sizeof bad];
  }
  for (std::size_t misalign : {std::size_t{0}, std::size_t{3}})
    for (error_policy p : policies)
      EXPECT_TRUE(check(ws, op::repair, b, p, "changed lanes", misalign));
}

TEST(GpuRandom, AllAsciiAndAllFourByte) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  auto g = rng(77);
  const bytes ascii = random_text(g, 5 * tile + 123, script::ascii);
  EXPECT_TRUE(check_all_utf8(ws, ascii, "all ASCII"));
  bytes four;
  while (four.size() < 5 * tile + 100) append_utf8(four, static_cast<char32_t>(0x10000 + g() % 0x100000));
  EXPECT_TRUE(check_all_utf8(ws, four, "all 4-byte"));
  bytes zeros(3 * tile, 0);
  EXPECT_TRUE(check_all_utf8(ws, zeros, "NUL bytes"));
  bytes ff(3 * tile + 5, 0xFF);
  EXPECT_TRUE(check_all_utf8(ws, ff, "all FF"));
  bytes conts(3 * tile + 7, 0x80);
  EXPECT_TRUE(check_all_utf8(ws, conts, "all continuation bytes"));
  EXPECT_TRUE(check_all_encode(ws, random_utf32(g, 3 * fused_encode_tile + 5, script::ascii, 0.0), "ascii utf32"));
  EXPECT_TRUE(check_all_encode(ws, random_utf32(g, 3 * fused_encode_tile + 5, script::emoji, 0.0), "emoji utf32"));
}

TEST(GpuRandom, EverySizeUpTo300) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  for (std::size_t n = 0; n <= 300; ++n) {
    auto g = rng(1000 + n);
    bytes b = random_text(g, n, script::mixed);
    corrupt(g, b, n % 3 == 0 ? 0.0 : 0.03);
    b.resize(n);  // exact size; may cut a sequence at the end
    ASSERT_TRUE(check_all_utf8(ws, b, "size " + std::to_string(n)));
    const bytes u = random_utf32(g, n / 4, script::mixed, n % 2 ? 0.05 : 0.0, n % 4);
    ASSERT_TRUE(check_all_encode(ws, u, "utf32 size " + std::to_string(n)));
  }
}

TEST(GpuRandom, TileBoundaries) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  std::uint64_t seed = 5000;
  for (std::size_t n : boundary_sizes(tile, 3)) {
    for (script s : {script::ascii, script::cjk, script::mixed}) {
      auto g = rng(seed++);
      bytes b = random_text(g, n, s);
      if (s == script::mixed) corrupt(g, b, 0.002);
      b.resize(n);
      ASSERT_TRUE(check_all_utf8(ws, b, "boundary"));
    }
  }
  // UTF-32: values around both encoders' tile boundaries, with and without a ragged tail, of
  // ASCII (the encoders' whole-warp fast path), CJK and mixed values with errors.
  for (std::size_t encode_tile : {fused_encode_tile, compact_encode_tile}) {
    for (std::size_t values : boundary_sizes(encode_tile, 3)) {
      for (script s : {script::ascii, script::cjk, script::mixed}) {
        auto g = rng(seed++);
        const double rate = s == script::mixed ? 0.001 : 0.0;
        ASSERT_TRUE(check_all_encode(ws, random_utf32(g, values, s, rate, values % 4), "boundary utf32"));
      }
    }
  }
  // Sequences straddling every thread (32 bytes) and tile boundary: a 4-byte sequence at
  // every phase of a long run.
  for (std::size_t phase = 0; phase < 4; ++phase) {
    bytes b(phase, 'a');
    while (b.size() < 2 * tile + 50) append_utf8(b, U'\U0001F600');
    ASSERT_TRUE(check_all_utf8(ws, b, "emoji phase " + std::to_string(phase)));
  }
}

// The fused decoder lists a warp whose every lane's units start 4 bytes apart without testing
// each byte position, and decodes them as 4-byte sequences where every lead is one (F0..F4). Here
// warp w holds 4-byte groups of one kind: a 4-byte sequence, or (units 4 bytes apart only where
// drop leaves the errors out) a 3-byte sequence and a stray byte, a 2-byte one and two, an ASCII
// byte and three continuation bytes; every eighth warp has one group broken in one lane. Each
// phase of the groups against the lanes, aligned and misaligned input.
TEST(GpuRandom, UnitsFourBytesApart) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  auto g = rng(2020);
  static constexpr std::uint8_t group[4][4] = {
      {0xF0, 0x9F, 0x98, 0x80}, {0xE4, 0xB8, 0x80, 0xFF}, {0xC3, 0xA9, 0xC0, 0xFE}, {'a', 0x80, 0xBF, 0x90}};
  for (std::size_t phase = 0; phase < 4; ++phase) {
    bytes b(phase, 'x');
    const std::size_t groups = (3 * tile + 2 * kern::warp_bytes + 5) / 4;
    for (std::size_t i = 0; i < groups; ++i) {
      const std::size_t warp = (phase + 4 * i) / kern::warp_bytes;
      const std::size_t kind = warp % 5 < 3 ? 0 : 1 + g() % 3;  // mostly 4-byte sequences
      b.insert(b.end(), group[kind], group[kind] + 4);
      if (warp % 8 == 7 && (4 * i) % kern::warp_bytes == 4 * 37) b.back() = 0x41;  // cut one sequence
    }
    for (std::size_t misalign : {std::size_t{0}, std::size_t{1}})
      EXPECT_TRUE(check_all_utf8(ws, b, "units 4 bytes apart, phase " + std::to_string(phase), misalign));
  }
}

// Input at every misalignment. The UTF-8 tile kernels load the lanes of every tile but the first
// and the last from the aligned 16-byte groups around them (tile_classify.cuh): text of each
// path (ASCII-heavy staging, whose single units are read again from the input; CJK and emoji
// listing), valid and with errors, over a few tiles and over enough that most are such tiles.
TEST(GpuRandom, MisalignedInput) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  auto g = rng(4242);
  const bytes u = random_utf32(g, 2 * fused_encode_tile + 77, script::mixed, 0.01, 2);
  for (std::size_t m = 1; m < 16; ++m) ASSERT_TRUE(check_all_encode(ws, u, "misaligned utf32", m));
  for (std::size_t n : {2 * tile + 333, 9 * tile + 77}) {
    for (script s : {script::mixed, script::cjk, script::emoji}) {
      for (double rate : {0.0, 0.01}) {
        bytes b = random_text(g, n, s);
        corrupt(g, b, rate);
        for (std::size_t m = 1; m < 16; ++m) ASSERT_TRUE(check_all_utf8(ws, b, "misaligned", m));
      }
    }
  }
}

// Validate lays its warp tiles from the 16-byte aligned address at or below the input
// (kernels/utf8/kernel_validate_screen.cuh): the bytes before the input read as 0, its first warp tile and
// its last take the guarded path, the others 16-byte loads. Every misalignment, at sizes around a
// lane, a warp tile and a tile, and large enough that each warp walks several warp tiles; valid text
// with LFs from the first byte on, then an error unit at the first byte, at the edges of the
// warp tiles as the kernel lays them, a sequence cut by the end, and sparse random errors.
TEST(GpuRandom, ValidateAtEveryAlignment) {
  GUTF8_REQUIRE_GPU();
  constexpr std::size_t warp_tile = kern::validate_screen_warp_tile;
  workspace ws;
  auto g = rng(8800);
  for (std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{33}, warp_tile - 3, warp_tile + 5,
                        3 * tile + 77, (std::size_t{24} << 20) + 333}) {
    bytes text = random_text(g, n, script::mixed);
    text.resize(n);
    text[0] = '\n';
    if (n > 9) text[7] = '\n';
    for (std::size_t m = 0; m < 16; ++m) {
      const std::string what = "validate misaligned by " + std::to_string(m);
      ASSERT_TRUE(check(ws, op::validate, text, error_policy::replace, what + ", as generated", m));
      bytes b = text;
      b[0] = 0x80;
      for (std::size_t edge = warp_tile - m; edge + 1 < n; edge += 5 * warp_tile + 3 * warp_tile * (m % 2)) {
        b[edge - 1] = 0xE1;  // cut by the byte at the edge
        b[edge] = 'x';
        b[edge + 1] = 0xBF;  // a stray continuation
      }
      b[n - 1] = 0xF1;
      ASSERT_TRUE(check(ws, op::validate, b, error_policy::replace, what + ", errors at the edges", m));
      // The first error at a warp tile edge in the middle (a later warp's run), not at byte 0.
      if (const std::size_t edge = (n / warp_tile / 2 + 1) * warp_tile - m; edge + 1 < n) {
        bytes late = text;
        late[edge - 1] = 0xE1;
        late[edge] = 'x';
        ASSERT_TRUE(check(ws, op::validate, late, error_policy::replace, what + ", first error mid-input", m));
      }
      corrupt(g, b, 0.0003);
      ASSERT_TRUE(check(ws, op::validate, b, error_policy::replace, what + ", random errors", m));
    }
  }
}

// Validate screens each warp tile and counts exactly only the flagged ones (and a run's first and
// last, and those after a warp tile with an error): one error unit in otherwise valid text, its
// first byte 5 bytes before to 3 bytes after a warp tile edge (a truncated sequence flags only the
// next warp tile; the stray continuations after an out-of-range second byte are flagged up to 2
// bytes before them), in CJK and emoji text whose warp tiles all take the screen. Every shape of the
// walk the benchmark measures (lanes of one or two 32-byte slabs), and the default.
void validate_errors_at_edges(workspace& ws, std::size_t warp_tile, std::size_t n, const std::vector<std::size_t>& ks,
                              int d_lo, int d_hi) {
  const std::vector<bytes> patterns = {
      {0xE1, 'x'},       {0xF0, 0x9F, 0x98, 'x'}, {0xF0, 0x9F, 'x'}, {0xC0, 0x80}, {0xF8, 0x80, 0x80},
      {0xE0, 0x80, 0x80}, {0xF0, 0x80, 0x80, 0x80}, {0xED, 0xA0, 0x80}, {0xF4, 0x90, 0x80, 0x80},
      {0x80},             {0xE4, 0xB8, '\n'},     {0xF4, 0x8F, 0xBF, 0xBF, 0xBF}};
  auto g = rng(9900 + warp_tile);
  for (script sc : {script::cjk, script::emoji}) {
    bytes text = random_text(g, n, sc);
    text.resize(n);
    for (std::size_t k : ks) {
      for (const bytes& pat : patterns) {
        for (int d = d_lo; d <= d_hi; ++d) {
          bytes b = text;
          const std::size_t pos = k * warp_tile + static_cast<std::size_t>(static_cast<std::ptrdiff_t>(d));
          std::size_t lo = pos - 8, hi = pos + 8;  // an ASCII window on character boundaries
          while (lo > 0 && (b[lo] & 0xC0) == 0x80) --lo;
          while (hi < n && (b[hi] & 0xC0) == 0x80) ++hi;
          std::fill(b.begin() + static_cast<std::ptrdiff_t>(lo), b.begin() + static_cast<std::ptrdiff_t>(hi), 'a');
          std::copy(pat.begin(), pat.end(), b.begin() + static_cast<std::ptrdiff_t>(pos));
          ASSERT_TRUE(check(ws, op::validate, b, error_policy::replace,
                            "pattern of " + std::to_string(pat.size()) + " bytes at warp tile " + std::to_string(k) +
                                " edge " + std::to_string(d)));
        }
      }
    }
  }
}

TEST(GpuRandom, ValidateScreenAtWarpTileEdges) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  // Large enough that warps walk runs of several warp tiles on any GPU of this class: the edges
  // below sit at different places in their runs.
  validate_errors_at_edges(ws, kern::validate_screen_warp_tile, (std::size_t{16} << 20) + 123, {3, 8, 3001}, -5, 3);
}

TEST(GpuRandom, ValidateEveryScreenShape) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  auto g = rng(9911);
  for (const device::detail::screen_shape shape : {device::detail::screen_shape{1, 3}, device::detail::screen_shape{1, 4},
                                                  device::detail::screen_shape{2, 2}, device::detail::screen_shape{2, 3}}) {
    SCOPED_TRACE("shape " + std::to_string(shape.lane_slabs) + "/" + std::to_string(shape.min_blocks));
    ws.screen = shape;
    const std::size_t warp_tile = kern::warp_bytes * static_cast<std::size_t>(shape.lane_slabs);
    validate_errors_at_edges(ws, warp_tile, (std::size_t{4} << 20) + 77, {5, 1001}, -3, 2);
    for (std::size_t n : {std::size_t{1}, std::size_t{33}, warp_tile - 3, warp_tile + 5, 3 * tile + 77}) {
      for (script sc : {script::mixed, script::cjk, script::ascii}) {
        for (double rate : {0.0, 0.001, 0.01, 0.05}) {
          bytes b = random_text(g, n, sc);
          b.resize(n);
          corrupt(g, b, rate);
          ASSERT_TRUE(check(ws, op::validate, b, error_policy::replace, "random"));
          if (n < 8) continue;
          const result chunked = ws.run_chunked(op::validate, b, error_policy::replace, {n / 3, n / 2});
          ASSERT_TRUE(same(chunked, cpu(op::validate, b, error_policy::replace), "chunked"));
        }
      }
    }
  }
  ws.screen.reset();
}

// Repair first copies aligned input while it validates it (warps walking runs of 1 KiB
// warp tiles, several a warp at these sizes) and its tile kernel works only where that pass found an
// error unit. One workspace, so each call reuses the temporary storage of a call that did or did
// not flag an error: valid text, then a single error at the first byte, in the middle, in the last
// warp tile and in the input's last byte (the last warp tiles are guarded), valid text again after
// them, an incomplete sequence at the end (strict: an error; chunked: carried), and LFs.
TEST(GpuRandom, RepairAfterCopyingPass) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  auto g = rng(7100);
  for (std::size_t n : {std::size_t{20} << 20 | 613, std::size_t{3} << 20 | 1021, std::size_t{70001}}) {
    for (script s : {script::ascii, script::mixed}) {
      bytes b = random_text(g, n, s);
      b.resize(n);
      while (!b.empty() && (b.back() & 0xC0) == 0x80) b.pop_back();  // whole sequences only:
      if (!b.empty() && b.back() >= 0xC0) b.pop_back();               // the text stays valid
      const std::size_t m = b.size();
      const std::vector<std::pair<std::size_t, std::uint8_t>> breaks = {
          {m, 0}, {0, 0xFF}, {m / 2, 0xFF}, {m - 700, 0xC0}, {m - 1, 0xF5}, {m, 0}};
      for (const auto& [at, byte] : breaks) {
        bytes c = b;
        if (at < m) c[at] = byte;
        const std::string what = "copy pass, error at " + std::to_string(at);
        for (error_policy p : policies) ASSERT_TRUE(check(ws, op::repair, c, p, what));
      }
      bytes cut = b;
      cut.push_back(0xE4);
      cut.push_back(0xB8);
      for (error_policy p : policies) ASSERT_TRUE(check(ws, op::repair, cut, p, "copy pass, cut sequence"));
      const result chunked = ws.run_chunked(op::repair, cut, error_policy::replace, {m / 3, m + 1});
      ASSERT_TRUE(same(chunked, cpu(op::repair, cut, error_policy::replace), "copy pass, chunked"));
    }
  }
}

TEST(GpuRandom, ErrorKindsAndLines) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  // The first error at every kind, after a few lines, with the error near tile edges.
  const std::vector<std::vector<std::uint8_t>> bad = {
      {0x80}, {0xC0, 0x80}, {0xE0, 0x80}, {0xED, 0xA0}, {0xF4, 0x90}, {0xF5},
      {0xE1, 0x41}, {0xF0, 0x90, 0x80, 0x41}, {0xE1, 0x80}, {0xF1}};
  for (std::size_t at : {std::size_t{0}, std::size_t{5}, tile - 1, tile, 3 * tile + 31}) {
    for (const auto& e : bad) {
      bytes b;
      while (b.size() < at) b.push_back(b.size() % 17 == 3 ? '\n' : 'z');
      b.insert(b.end(), e.begin(), e.end());
      ASSERT_TRUE(check_all_utf8(ws, b, "kind at end " + std::to_string(at)));
      b.insert(b.end(), {'q', '\n', 'r'});
      ASSERT_TRUE(check_all_utf8(ws, b, "kind " + std::to_string(at)));
    }
  }
}

// Strict decoding ranks its tiles by speculative counts (kernels/utf8/kernel_decode_fused.cuh): the
// well-formed starts of every tile before, valid or not. Exact output where it matters: one or two errors
// in the first, a middle and the last tile, and at the start of a tile whose predecessor ends in a
// sequence that the error cuts off, among valid text of each kind. Safe where it does not: the
// tiles after the first error write past the output's end (accum::cut) but never past n units,
// which a guard after an n-unit output buffer shows.
TEST(GpuRandom, StrictSpeculativeCounts) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  constexpr std::size_t tiles = 90;
  std::uint64_t seed = 9100;
  for (script s : {script::ascii, script::cjk, script::emoji, script::mixed}) {
    auto g = rng(seed++);
    const bytes text = random_text(g, tiles * tile + 1234, s);
    for (std::size_t first : {std::size_t{17}, 41 * tile + 5, (tiles - 1) * tile + 99, 7 * tile}) {
      for (bool second : {false, true}) {
        bytes b = text;
        if (first == 7 * tile) {  // a 4-byte lead that ends tile 6, cut off by tile 7's first byte
          b[first - 1] = 0xF0;
          b[first] = 'x';
        } else {
          b[first] = 0xFF;
        }
        if (second && first + 3 * tile + 11 < b.size()) b[first + 3 * tile + 11] = 0x80;
        const std::string what = "strict speculative script " + std::to_string(int(s)) + " at " +
                                 std::to_string(first) + (second ? " and later" : "");
        ASSERT_TRUE(same(ws.run(op::decode_fused, b, error_policy::strict),
                         cpu(op::decode_fused, b, error_policy::strict), what));

        constexpr std::size_t guard = 256;
        const std::size_t n = b.size();
        cuda::device_buffer<std::uint8_t> in(n), out(4 * n + guard);
        cuda::device_buffer<device::device_summary> sum(1);
        cuda::check(cudaMemcpy(in.data(), b.data(), n, cudaMemcpyHostToDevice), "upload");
        cuda::check(cudaMemset(out.data(), 0xA5, 4 * n + guard), "fill");
        std::size_t temp_bytes = 0;
        const auto* d_in = reinterpret_cast<const std::byte*>(in.data());
        auto* d_out = reinterpret_cast<char32_t*>(out.data());
        cuda::check(device::decode(nullptr, temp_bytes, d_in, n, d_out, sum.data(), error_policy::strict), "query");
        cuda::device_buffer<std::uint8_t> temp(temp_bytes);
        cuda::check(device::decode(temp.data(), temp_bytes, d_in, n, d_out, sum.data(), error_policy::strict),
                    "decode");
        bytes tail(guard);
        cuda::check(cudaMemcpy(tail.data(), out.data() + 4 * n, guard, cudaMemcpyDeviceToHost), "guard");
        ASSERT_TRUE(std::all_of(tail.begin(), tail.end(), [](std::uint8_t v) { return v == 0xA5; })) << what;
      }
    }
  }
}

// Every kernel, variant and policy on a few shapes that span several tiles, with errors, carries
// and ragged tails: small enough for compute-sanitizer racecheck and initcheck
// (scripts/gpu/devrun/tests.py), which the sweeps above exceed.
TEST(GpuSanitizerSweep, EveryKernelFewShapes) {
  GUTF8_REQUIRE_GPU();
  workspace ws;
  auto g = rng(31337);
  for (std::size_t n : {std::size_t{1}, std::size_t{299}, 3 * tile + 77}) {
    for (script s : {script::ascii, script::emoji, script::mixed}) {
      bytes b = random_text(g, n, s);
      if (s == script::mixed) corrupt(g, b, 0.01);
      b.resize(n);
      ASSERT_TRUE(check_all_utf8(ws, b, "sweep"));
      ASSERT_TRUE(check(ws, op::validate, b, error_policy::replace, "sweep misaligned", 1 + n % 15));
    }
    ASSERT_TRUE(check_all_encode(ws, random_utf32(g, n / 4 + 1, script::mixed, 0.01, n % 4), "sweep utf32"));
  }
}

}  // namespace
}  // namespace gutf8::test::gpu
