// nvCOMP's batched zstd decompression behind gutf8::cuda::nvcomp::decompress_zstd, against libzstd's
// frames of known text: sizes around nvCOMP's 64 KiB chunks and zstd's 128 KiB blocks, an empty
// frame, corrupt frames the CPU's structure check lets through (reported, or at least kept to their
// own bytes, never spilling into a neighbour's text), and frames the check rejects.
// compute-sanitizer's memcheck runs all but NvcompZstdUnchecked.*, a probe run apart
// (scripts/gpu/devrun/nvcomp.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "support/gpu.hpp"
#include "zstd_frames.hpp"

namespace gutf8::test::nvcomp {
namespace {

struct case_frames {
  std::vector<bytes> texts, frames;
  std::vector<std::size_t> sizes;
};

case_frames make_frames(const std::vector<std::size_t>& sizes, std::uint64_t seed, int level = 3) {
  case_frames c;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    c.texts.push_back(random_text(sizes[i], seed + i));
    c.frames.push_back(zstd_frame(c.texts.back(), level, i % 3 != 2));
    const auto checked = checked_text_size(c.frames.back());
    if (!checked) throw std::runtime_error("libzstd's frame fails the structure check");
    c.sizes.push_back(static_cast<std::size_t>(*checked));
  }
  return c;
}

// run_batch, or nothing where nvCOMP did not finish by the deadline (frames with flipped payload
// bytes: what a GPU lane turns into a GPU failure); the GPU is given up then, so the test ends.
std::optional<batch_outcome> finished_batch(const std::vector<bytes>& frames, const std::vector<std::size_t>& sizes) {
  try {
    return run_batch(frames, sizes);
  } catch (const std::runtime_error& e) {
    if (!cuda::device_abandoned().load()) throw;
    return std::nullopt;
  }
}

void expect_exact(const case_frames& c, const batch_outcome& o, const std::vector<std::size_t>& skip = {}) {
  EXPECT_EQ(o.spilled, 0u) << "bytes written past the room of a frame's blocks";
  for (std::size_t i = 0; i < c.texts.size(); ++i) {
    if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
    SCOPED_TRACE("frame " + std::to_string(i) + " of " + std::to_string(c.texts[i].size()) + " bytes");
    EXPECT_EQ(o.results[i].verdict, nv::frame_verdict::ok) << "nvCOMP status " << o.results[i].status;
    EXPECT_EQ(o.results[i].written, c.texts[i].size());
    EXPECT_TRUE(o.texts[i] == c.texts[i]);
  }
}

TEST(NvcompZstd, FramesAroundChunkAndBlockSizes) {
  GUTF8_REQUIRE_GPU();
  const std::vector<std::size_t> sizes{1,         2,         0,          1000,       65535,  65536, 65537,
                                       131071,    131072,    131073,     196613,     999983, 1u << 20,
                                       (1u << 20) + 17, (1u << 20) - 3, 3 * 1000003};
  const case_frames c = make_frames(sizes, 1);
  expect_exact(c, run_batch(c.frames, c.sizes));
}

TEST(NvcompZstd, OneFrameAlone) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{0}, std::size_t{65541}}) {
    SCOPED_TRACE(n);
    const case_frames c = make_frames({n}, 7);
    expect_exact(c, run_batch(c.frames, c.sizes));
  }
}

TEST(NvcompZstd, ManySmallFrames) {
  GUTF8_REQUIRE_GPU();
  auto r = rng(11);
  std::vector<std::size_t> sizes(777);
  for (auto& s : sizes) s = r() % 9001;
  const case_frames c = make_frames(sizes, 11);
  expect_exact(c, run_batch(c.frames, c.sizes));
}

TEST(NvcompZstd, Levels) {
  GUTF8_REQUIRE_GPU();
  for (int level : {1, 3, 9, 19, -5}) {
    SCOPED_TRACE(level);
    const case_frames c = make_frames({65536 + 333, 250001, 77}, 20 + std::uint64_t(level + 5), level);
    expect_exact(c, run_batch(c.frames, c.sizes));
  }
}

TEST(NvcompZstd, EmptyBatchAndTempQuery) {
  GUTF8_REQUIRE_GPU();
  std::size_t temp = 0;
  cuda::device_buffer<nv::frame_result> d_results(1);
  cuda::device_buffer<std::byte> d_out(1);
  nv::decompress_zstd(nullptr, temp, {}, d_out.data(), d_results.data(), nullptr);
  EXPECT_GE(temp, 1u);
  cuda::device_buffer<std::byte> d_temp(temp);
  nv::decompress_zstd(d_temp.data(), temp, {}, d_out.data(), d_results.data(), nullptr);
  std::size_t too_small = 0;
  EXPECT_THROW(nv::decompress_zstd(d_temp.data(), too_small, {}, d_out.data(), d_results.data(), nullptr), error);
}

// The frame header's content size lies (a corruption the structure check cannot see): larger, the
// frame decompresses short; smaller, its text overflows the room it was given. Both are reported.
TEST(NvcompZstdCorrupt, ContentSizeLies) {
  GUTF8_REQUIRE_GPU();
  case_frames c = make_frames({70001, 5003, 300007, 4099}, 31);
  std::vector<std::size_t> sizes = c.sizes;
  sizes[0] += 13;  // what a header that lies would tell the CPU
  sizes[2] -= 1001;
  const batch_outcome o = run_batch(c.frames, sizes);
  EXPECT_NE(o.results[0].verdict, nv::frame_verdict::ok);
  EXPECT_NE(o.results[2].verdict, nv::frame_verdict::ok);
  EXPECT_EQ(nv::failed_frames(o.results), (std::vector<std::size_t>{0, 2}));
  expect_exact(c, o, {0, 2});
}

// Probe, outside the memcheck filter (memcheck saw nvCOMP write out of bounds on these): bytes
// flipped inside blocks' payloads pass the structure check, so a GPU lane takes only frames whose
// proof holds (compress/proof.hpp), which such damage breaks. nvCOMP reports the frame or not (it
// does not check the content checksum); its text differs from the original either way, and every
// other frame of the batch is exact.
TEST(NvcompZstdUnchecked, FlippedPayloadBytes) {
  case_frames c = make_frames({65536 + 7, 200003, 12345, 1u << 20}, 41);
  for (std::size_t victim : {std::size_t{1}, std::size_t{3}}) {
    bytes& f = c.frames[victim];
    std::set<std::size_t> at;  // distinct bytes, so no flip undoes another
    for (const block_header& b : block_headers(f))
      for (std::size_t k = 1; k <= 4; ++k) at.insert(b.at + 3 + (b.content - 1) * k / 4);
    for (std::size_t i : at) f[i] ^= 0x5A;
    ASSERT_EQ(checked_text_size(f), c.sizes[victim]) << "the flips must pass the structure check";
  }
  GUTF8_REQUIRE_GPU();
  std::optional<batch_outcome> finished = finished_batch(c.frames, c.sizes);
  if (!finished) GTEST_SKIP() << "nvCOMP did not finish the batch by its deadline (a GPU lane gives the GPU up)";
  const batch_outcome& o = *finished;
  for (std::size_t victim : {std::size_t{1}, std::size_t{3}}) {
    const bool reported = o.results[victim].verdict != nv::frame_verdict::ok;
    std::printf("frame %zu with flipped bytes: %s (nvCOMP status %d)\n", victim,
                reported ? "reported" : "not reported", o.results[victim].status);
    EXPECT_TRUE(reported || o.texts[victim] != c.texts[victim]);
  }
  expect_exact(c, o, {1, 3});
}

// A wrong stored content checksum, the blocks intact: whether nvCOMP reports it is printed (its
// documentation does not say it checks); the text is the original either way.
TEST(NvcompZstdCorrupt, WrongContentChecksum) {
  case_frames c = make_frames({65536 + 9, 3001}, 91);
  c.frames[0].back() ^= 0x21;
  ASSERT_EQ(checked_text_size(c.frames[0]), c.sizes[0]);
  GUTF8_REQUIRE_GPU();
  const batch_outcome o = run_batch(c.frames, c.sizes);
  std::printf("wrong content checksum: %s (nvCOMP status %d)\n",
              o.results[0].verdict == nv::frame_verdict::ok ? "not reported" : "reported", o.results[0].status);
  EXPECT_EQ(o.results[0].written, c.texts[0].size());
  EXPECT_TRUE(o.texts[0] == c.texts[0]);
  expect_exact(c, o, {0});
}

// A frame cut after a block, its last block header marked last, its checksum kept: the structure
// check refuses it (its blocks cannot make its header's content size), so a lane keeps it on the CPU;
// given to nvCOMP all the same, the verdict says it did not decompress to that size.
TEST(NvcompZstdCorrupt, TruncatedAtBlockBoundary) {
  case_frames c = make_frames({4099, 700001, 65537}, 51);
  bytes& f = c.frames[1];
  const std::vector<block_header> blocks = block_headers(f);
  ASSERT_GE(blocks.size(), 3u);
  const block_header keep = blocks[blocks.size() - 3];
  const bytes checksum(f.end() - 4, f.end());  // the frame has one: its header says so
  f.resize(keep.at + 3 + keep.content);
  f.insert(f.end(), checksum.begin(), checksum.end());
  f[keep.at] |= 1;  // Last_Block
  ASSERT_FALSE(checked_text_size(f).has_value()) << "blocks that cannot make the content size";
  GUTF8_REQUIRE_GPU();
  const batch_outcome o = run_batch(c.frames, c.sizes);
  EXPECT_EQ(nv::failed_frames(o.results), (std::vector<std::size_t>{1}));
  expect_exact(c, o, {1});
}

// Probe, outside the memcheck filter: random flips in random frames, kept where the structure check
// passes (frames a lane would take but for their proofs: NvcompEngine.FuzzedFilesEqualCpu is the
// corrupt-file fuzz run under memcheck); the untouched frames stay exact.
TEST(NvcompZstdUnchecked, FuzzFlipsThatPassTheCheck) {
  GUTF8_REQUIRE_GPU();
  auto r = rng(61);
  int reported = 0, corrupted = 0;
  for (int round = 0; round < 24; ++round) {
    std::vector<std::size_t> sizes(12);
    for (auto& s : sizes) s = 1 + r() % 90001;
    case_frames c = make_frames(sizes, 1000 + std::uint64_t(round) * 16);
    std::vector<std::size_t> victims;
    for (std::size_t i = 0; i < c.frames.size(); i += 1 + r() % 3) {
      bytes f = c.frames[i];
      for (int k = 0, flips = 1 + int(r() % 6); k < flips; ++k) f[r() % f.size()] ^= std::uint8_t(1 + r() % 255);
      if (checked_text_size(f) != c.sizes[i]) continue;  // the CPU keeps that one
      c.frames[i] = std::move(f);
      victims.push_back(i);
    }
    const std::optional<batch_outcome> finished = finished_batch(c.frames, c.sizes);
    if (!finished) GTEST_SKIP() << "round " << round << ": nvCOMP did not finish the batch by its deadline";
    const batch_outcome& o = *finished;
    for (std::size_t v : victims) reported += o.results[v].verdict != nv::frame_verdict::ok;
    corrupted += int(victims.size());
    expect_exact(c, o, victims);
    if (HasFailure()) break;
  }
  std::printf("%d corrupt frames passed the structure check, nvCOMP reported %d\n", corrupted, reported);
  EXPECT_GT(corrupted, 0);
}

// The host side alone (no GPU needed): bad frames are refused before anything is queued, and the
// temporary storage holds the per-frame arrays and nvCOMP's scratch.
TEST(NvcompZstdHost, ArgumentsAndTempQuery) {
  std::vector<std::byte> fake(64);
  const std::byte* d = fake.data();  // never dereferenced: only sizes are read before the launch
  std::size_t one = 0, many = 0;
  std::vector<nv::zstd_frame> frames{{d, 40, 65536, 0, 0}};
  nv::decompress_zstd(nullptr, one, frames, nullptr, nullptr, nullptr);
  frames.assign(1000, nv::zstd_frame{d, 40, 65536, 0, 0});
  nv::decompress_zstd(nullptr, many, frames, nullptr, nullptr, nullptr);
  EXPECT_GE(many, 1000 * (5 * sizeof(std::uint64_t) + sizeof(std::int32_t)));
  EXPECT_GT(many, one);
  std::size_t temp = 0;
  for (const nv::zstd_frame bad : {nv::zstd_frame{nullptr, 40, 7, 0, 0}, nv::zstd_frame{d, 0, 7, 0, 0},
                                   nv::zstd_frame{d, 40, std::size_t{1} << 31, 0, 0},
                                   nv::zstd_frame{d, 40, 7, 0, std::size_t{1} << 31}}) {  // a room too large
    frames[500] = bad;
    try {
      nv::decompress_zstd(nullptr, temp, frames, nullptr, nullptr, nullptr);
      ADD_FAILURE() << "a bad frame was taken";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
    }
  }
}

// What the structure check keeps from the GPU: a frame cut inside a block, and one cut before its
// checksum.
TEST(NvcompZstdChecked, TruncatedFramesFailTheStructureCheck) {
  const case_frames c = make_frames({300007}, 71);
  const bytes& f = c.frames[0];
  for (std::size_t cut : {f.size() - 1, f.size() - 4, f.size() / 2, std::size_t{7}}) {
    SCOPED_TRACE(cut);
    EXPECT_FALSE(checked_text_size(bytes(f.begin(), f.begin() + std::ptrdiff_t(cut))).has_value());
  }
}

// Probe, outside the memcheck filter: a frame the CPU would not hand over (cut inside a block) given
// to nvCOMP anyway, to learn what its undefined behaviour is; only the neighbours are asserted.
TEST(NvcompZstdUnchecked, TruncatedMidBlock) {
  GUTF8_REQUIRE_GPU();
  case_frames c = make_frames({4099, 300007, 65537}, 81);
  c.frames[1].resize(c.frames[1].size() / 2);
  const batch_outcome o = run_batch(c.frames, c.sizes);
  std::printf("frame cut mid-block: verdict %u, nvCOMP status %d, %llu bytes\n",
              unsigned(o.results[1].verdict), o.results[1].status,
              static_cast<unsigned long long>(o.results[1].written));
  EXPECT_NE(o.results[1].verdict, nv::frame_verdict::ok);
  expect_exact(c, o, {1});
}

}  // namespace
}  // namespace gutf8::test::nvcomp
