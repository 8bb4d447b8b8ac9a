// The input engine's GPU lanes on zstd files of many frames (engine/gpu_parts.hpp): frames with a
// content size are decompressed by nvCOMP on the GPU (their checksums verified there) and validated
// there; every report is the CPU backend's, for frames around the frame, run and piece sizes,
// characters split across frames, invalid text, corrupt frames and checksums (back to the CPU, which
// names the same position), and frames that stay on the CPU (no content size, too large). report.gpu says which way
// the text went, so that a test of the GPU path cannot pass through the CPU alone.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <string>

#include "engine/run.hpp"
#include "gpu/gpu_harness.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/error.hpp"
#include "compress/proof.hpp"
#include "zstd_frames.hpp"

namespace gutf8::test::nvcomp {
namespace {

struct frame_options {
  bool content_size = true;
  bool checksum = false;
  bool proof = true;  // followed by its proof, as gutf8's writer writes frames (the GPU takes no other)
};

bytes frame_of(std::span<const std::uint8_t> text, frame_options o) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, o.checksum ? 1 : 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, o.content_size ? 1 : 0);
  bytes out(ZSTD_compressBound(text.size()));
  std::size_t rc = 0;
  if (o.content_size) {
    rc = ZSTD_compress2(c, out.data(), out.size(), text.data(), text.size());
  } else {  // streamed: libzstd records no size where it is not told one
    ZSTD_inBuffer in{text.data(), text.size(), 0};
    ZSTD_outBuffer to{out.data(), out.size(), 0};
    rc = ZSTD_compressStream2(c, &to, &in, ZSTD_e_end);
    if (rc == 0) rc = to.pos;
  }
  ZSTD_freeCCtx(c);
  if (ZSTD_isError(rc)) throw std::runtime_error(ZSTD_getErrorName(rc));
  out.resize(rc);
  if (o.proof) {
    const internal::compress::proof p = internal::compress::proof_of(out);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

// The text cut at `sizes` (repeated to its end), each frame as `option_of(frame index)` says.
bytes frames_of(const bytes& text, const std::vector<std::size_t>& sizes,
                const std::function<frame_options(std::size_t)>& option_of = [](std::size_t) { return frame_options{}; }) {
  bytes out;
  for (std::size_t at = 0, i = 0; at < text.size() || i == 0; ++i) {
    const std::size_t n = std::min(sizes[i % sizes.size()], text.size() - at);
    const bytes f = frame_of(std::span(text).subspan(at, n), option_of(i));
    out.insert(out.end(), f.begin(), f.end());
    at += n;
  }
  return out;
}

class temp_file {
 public:
  explicit temp_file(const bytes& content) {
    char name[] = "/tmp/gutf8_nvcomp_engine_XXXXXX";
    const int fd = ::mkstemp(name);
    path_ = name;
    EXPECT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::close(fd);
  }
  ~temp_file() { ::unlink(path_.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct one {
  std::optional<input_report> report;
  std::optional<std::string> failure;
};

struct result : run_observer {
  std::map<std::size_t, one> inputs;
  run_report report;
  void done(std::size_t i, const input_report& r) override { inputs[i].report = r; }
  void failed(std::size_t i, const error& e) override { inputs[i].failure = e.what(); }
};

result run_on(const std::vector<input>& inputs, operation op, backend b) {
  run_config config;
  config.stream.operation = op;
  config.stream.policy = error_policy::strict;
  config.stream.histogram = op == operation::stats;
  config.stream.backend.backend = b;
  config.piece_bytes = std::size_t{256} << 10;
  config.top = op == operation::stats ? 40 : 0;
  internal::engine_tuning tuning;
  run_plan plan = plan_run(config);
  plan.gpu_run_bytes = std::uint64_t{4} << 20;  // runs of a few frames: many runs, seams between them
  tuning.plan = plan;
  if (b == backend::cpu) tuning.cpu_workers = 4;
  result r;
  r.report = internal::run_engine(inputs, config, r, tuning);
  return r;
}

void expect_same(const result& got, const result& want, const std::string& what) {
  ASSERT_EQ(got.inputs.size(), want.inputs.size()) << what;
  for (const auto& [i, w] : want.inputs) {
    const one& g = got.inputs.at(i);
    const std::string which = what + ", input " + std::to_string(i);
    EXPECT_EQ(g.failure, w.failure) << which;
    ASSERT_EQ(g.report.has_value(), w.report.has_value()) << which << (g.failure ? ": " + *g.failure : "");
    if (!w.report) continue;
    EXPECT_EQ(g.report->stats, w.report->stats) << which;
    EXPECT_EQ(g.report->top, w.report->top) << which;
    EXPECT_EQ(g.report->stopped, w.report->stopped) << which;
    EXPECT_EQ(g.report->compressed, compression::zstd) << which;
  }
}

// The compressed file through both backends (as a file and from memory); what the GPU decompressed.
std::uint64_t expect_cpu_reports(const bytes& compressed, operation op, const std::string& what) {
  const temp_file f(compressed);
  const auto inputs = [&] {
    return std::vector<input>{input::file(f.path()), input::memory(std::as_bytes(std::span(compressed)), "memory")};
  };
  const result want = run_on(inputs(), op, backend::cpu);
  const result got = run_on(inputs(), op, backend::cuda);
  expect_same(got, want, what);
  EXPECT_EQ(want.report.gpu.gpu_decompressed_bytes, 0u) << what;
  return got.report.gpu.gpu_decompressed_bytes;
}

bytes text_of(std::size_t size, std::uint64_t seed, double invalid_rate) {
  bytes t = random_text(size, seed);
  auto g = rng(seed);
  gpu::corrupt(g, t, invalid_rate);
  return t;
}

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr operation ops[] = {operation::validate, operation::stats};

TEST(NvcompEngine, FramesAroundBoundariesEqualCpu) {
  GUTF8_REQUIRE_GPU();
  const std::vector<std::vector<std::size_t>> frame_sizes{
      {mib}, {mib - 1}, {mib + 3}, {65537, 131071}, {4 * mib}, {777, mib + 1, 3 * mib - 5}, {(256u << 10) + 1}};
  std::uint64_t seed = 11;
  for (const auto& sizes : frame_sizes)
    for (const double rate : {0.0, 0.000002, 0.0005})
      for (const operation op : ops) {
        const bytes text = text_of((13 * mib) + 17, ++seed, rate);
        const std::string what = "frames " + std::to_string(sizes[0]) + "... rate " + std::to_string(rate) + " op " +
                                 std::to_string(int(op));
        // Two inputs (file and memory), each all on the GPU.
        EXPECT_EQ(expect_cpu_reports(frames_of(text, sizes), op, what), 2 * text.size()) << what;
      }
}

TEST(NvcompEngine, SmallFilesAndCharactersAcrossFrames) {
  GUTF8_REQUIRE_GPU();
  const bytes euro{0xE2, 0x82, 0xAC};  // cut after 1 and 2 bytes by frames of 1, 2 and 4 bytes
  for (const std::size_t total : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{17},
                                  std::size_t{4099}}) {
    bytes text;
    while (text.size() < total) text.insert(text.end(), euro.begin(), euro.end());
    text.resize(total);
    for (const std::size_t frame : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{1000}})
      for (const operation op : ops)
        expect_cpu_reports(frames_of(text, {frame}), op,
                           "text " + std::to_string(total) + " frames " + std::to_string(frame));
  }
}

TEST(NvcompEngine, InvalidTextAtSeamsEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  // A lone lead byte at the end of a frame, continuations at the start of the next, a truncated
  // 4-byte character across three frames, newlines around them (line and column of the first error).
  bytes text = random_text(3 * mib, 5);
  const std::vector<std::size_t> sizes{mib - 1, mib + 2, 5, mib};
  text[mib - 2] = 0xF0;
  text[mib - 1] = 0x9F;
  text[mib] = 0x98;
  text[mib + 1] = '\n';
  text[2 * mib + 1] = 0x80;
  text[2 * mib + 6] = 0xC3;
  for (const operation op : ops) EXPECT_GT(expect_cpu_reports(frames_of(text, sizes), op, "seams"), 0u);
}

TEST(NvcompEngine, FramesTheGpuDoesNotTakeStayOnTheCpu) {
  GUTF8_REQUIRE_GPU();
  const bytes text = text_of(9 * mib + 5, 21, 0.000002);
  // Checksums are verified on the device: such frames go there too.
  EXPECT_EQ(expect_cpu_reports(frames_of(text, {mib}, [](std::size_t) { return frame_options{true, true}; }),
                               operation::validate, "checksums"),
            2 * text.size());
  // No content size, or frames too large: the file goes in order, as before.
  EXPECT_EQ(expect_cpu_reports(frames_of(text, {mib}, [](std::size_t) { return frame_options{false, false}; }),
                               operation::validate, "no content size"),
            0u);
  EXPECT_EQ(expect_cpu_reports(frames_of(text, {5 * mib}), operation::validate, "frames too large"), 0u);
  // Without proofs (frames another writer made, or damaged ones), in parts to the lanes' CPU decoder.
  EXPECT_EQ(expect_cpu_reports(frames_of(text, {mib}, [](std::size_t) { return frame_options{true, true, false}; }),
                               operation::validate, "no proofs"),
            0u);
  // Mixed: the runs with a frame the GPU does not take go through the CPU decoder on the lane.
  for (const operation op : ops) {
    const std::uint64_t gpu = expect_cpu_reports(
        frames_of(text, {mib}, [](std::size_t i) { return frame_options{i % 4 != 2, i % 3 == 1, i % 5 != 3}; }), op,
        "mixed");
    EXPECT_GT(gpu, 0u);
    EXPECT_LT(gpu, 2 * text.size());
  }
}

TEST(NvcompEngine, SkippableFramesBetweenFrames) {
  GUTF8_REQUIRE_GPU();
  const bytes text = text_of(5 * mib + 3, 31, 0.0);
  bytes compressed;
  const bytes skippable{0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'};
  compressed.insert(compressed.end(), skippable.begin(), skippable.end());
  const bytes frames = frames_of(text, {mib - 7});
  compressed.insert(compressed.end(), frames.begin(), frames.end());
  compressed.insert(compressed.end(), skippable.begin(), skippable.end());
  EXPECT_EQ(expect_cpu_reports(compressed, operation::validate, "skippable first"), 2 * text.size());
  bytes between;  // one after each frame but the last
  for (std::size_t at = 0; at < text.size(); at += mib - 7) {
    if (at != 0) between.insert(between.end(), skippable.begin(), skippable.end());
    const bytes f = frame_of(std::span(text).subspan(at, std::min(mib - 7, text.size() - at)), {});
    between.insert(between.end(), f.begin(), f.end());
  }
  EXPECT_EQ(expect_cpu_reports(between, operation::validate, "skippable between"), 2 * text.size());
  bytes after = frames_of(text, {mib - 7});
  after.insert(after.end(), skippable.begin(), skippable.end());
  EXPECT_EQ(expect_cpu_reports(after, operation::validate, "skippable last"), 2 * text.size());
  // Not at a frame start: corrupt. The first frame's block walk then ends inside it, on a last RLE
  // block larger than a block may be, which the CPU's check refuses: the file goes to the CPU.
  bytes inside = frames_of(text, {mib - 7});
  inside.insert(inside.begin() + 40000, skippable.begin(), skippable.end());
  EXPECT_EQ(expect_cpu_reports(inside, operation::validate, "skippable bytes inside a frame"), 0u);
}

// A frame's content size field changed by one: the frame decompresses to another size than its
// header says, which nvCOMP or the size check reports; the CPU names the error.
bytes wrong_content_size(bytes frame) {
  ZSTD_frameHeader h{};
  if (ZSTD_getFrameHeader(&h, frame.data(), frame.size()) != 0) throw std::runtime_error("frame header");
  const std::uint8_t fhd = frame[4];
  const std::size_t fcs_bytes = std::array<std::size_t, 4>{(fhd & 0x20) ? 1u : 0u, 2, 4, 8}[fhd >> 6];
  frame[h.headerSize - fcs_bytes] ^= 1;
  return frame;
}

// Frames of 1 MiB with checksums: damage that no decoder notices is caught by the checksum on both
// sides (without one, nvCOMP's text of a frame damaged that way need not be libzstd's).
std::vector<bytes> checked_frames(const bytes& text) {
  std::vector<bytes> frames;
  for (std::size_t at = 0; at < text.size(); at += mib)
    frames.push_back(frame_of(std::span(text).subspan(at, std::min(mib, text.size() - at)), {true, true, false}));
  return frames;
}

// The frames, each followed by the proof of the intact frame it was (`written`): damage breaks it.
bytes joined(const std::vector<bytes>& frames, const std::vector<bytes>& written) {
  bytes out;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    out.insert(out.end(), frames[i].begin(), frames[i].end());
    const internal::compress::proof p = internal::compress::proof_of(written[i]);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

const std::size_t bad_frames[] = {0, 3, 6};  // the first, one inside, the last (of 7)

// Sizes that lie, stored checksums not the text's, a file cut inside its last frame, each after the
// proof of the intact frame: the proof no longer holds, so the frame stays off the GPU, and every
// report is the CPU backend's. A frame of 1 MiB recorded as 1 MiB + 1 is more than its 8 blocks make:
// the structure check refuses it, and as the first frame the file still goes in parts, to the lanes'
// CPU decoder.
TEST(NvcompEngine, CorruptFramesFallBackToTheCpuReport) {
  GUTF8_REQUIRE_GPU();
  const bytes text = text_of(6 * mib + 11, 41, 0.0);
  const std::vector<bytes> frames = checked_frames(text);
  ASSERT_EQ(frames.size(), 7u);
  for (const std::size_t bad : bad_frames) {
    std::vector<bytes> sized = frames;
    sized[bad] = wrong_content_size(sized[bad]);
    EXPECT_LT(expect_cpu_reports(joined(sized, frames), operation::validate, "size of frame " + std::to_string(bad)),
              2 * text.size());
    std::vector<bytes> summed = frames;  // a stored checksum that is not the text's
    summed[bad][summed[bad].size() - 3] ^= 0x10;
    EXPECT_LT(expect_cpu_reports(joined(summed, frames), operation::validate, "checksum of frame " + std::to_string(bad)),
              2 * text.size());
  }
  std::vector<bytes> cut = frames;  // a truncated file: its last frame ends early
  cut.back().resize(cut.back().size() / 2);
  expect_cpu_reports(joined(cut, frames), operation::validate, "truncated");
}

// Bytes of a compressed block changed (the structure check passes, and nvCOMP may write out of
// bounds or never finish on them): the frame's proof no longer holds, so it never reaches the GPU and
// every report is the CPU backend's, the damaged frame's slot decoded by the lanes' CPU decoder.
TEST(NvcompEngine, FlippedPayloadBytesEndAsTheCpuReport) {
  GUTF8_REQUIRE_GPU();
  const bytes text = text_of(6 * mib + 11, 43, 0.0);
  const std::vector<bytes> frames = checked_frames(text);
  for (const std::size_t bad : bad_frames)
    for (const std::size_t where : {std::size_t{9}, frames[bad].size() / 2, frames[bad].size() - 2}) {
      std::vector<bytes> flipped = frames;
      flipped[bad][where] ^= 0x5A;
      const std::string what = "byte " + std::to_string(where) + " of frame " + std::to_string(bad);
      EXPECT_LT(expect_cpu_reports(joined(flipped, frames), operation::validate, what), 2 * text.size()) << what;
    }
}

// The corrupt-file fuzz (run under memcheck by the device part nvcomp_memcheck_corrupt): files of
// proven frames of random sizes with random bytes changed anywhere (frames, proofs, between); every
// report is the CPU backend's, whatever reaches the GPU.
TEST(NvcompEngine, FuzzedFilesEqualCpu) {
  GUTF8_REQUIRE_GPU();
  auto r = rng(67);
  for (int round = 0; round < 16; ++round) {
    std::vector<std::size_t> sizes(6);
    for (auto& n : sizes) n = 1 + r() % 300001;
    const bytes text = text_of(std::accumulate(sizes.begin(), sizes.end(), std::size_t{0}), 100 + std::uint64_t(round),
                               round % 3 == 0 ? 0.00001 : 0.0);
    bytes file = frames_of(text, sizes, [&](std::size_t) { return frame_options{true, r() % 2 == 0, true}; });
    for (int k = 0, flips = 1 + int(r() % 4); k < flips; ++k) file[r() % file.size()] ^= std::uint8_t(1 + r() % 255);
    expect_cpu_reports(file, operation::validate, "round " + std::to_string(round));
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace gutf8::test::nvcomp
