// Compressed inputs and outputs through the input engine (src/engine/compressed.*): every format, in
// one member or several (characters and errors cut across members, members made by the standard
// tools and by gutf8's own part compressor), as a file, in memory and through a pipe, for every
// operation and policy, give what the one-shot API gives for the decompressed text; outputs
// compressed by the run decompress with the standard tools to the one-shot output; a corrupt or
// truncated input fails alone.
#include <gtest/gtest.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, as src/compress/zstd.cpp uses it
#include <zstd.h>

#include <array>
#include <map>
#include <random>
#include <thread>

#include "check.hpp"
#include "compress/compressor.hpp"
#include "compress/parts.hpp"
#include "compress/proof.hpp"
#include "compress_support.hpp"
#include "cpu/cpu_block.hpp"
#include "engine/buffers.hpp"
#include "engine/gpu_parts.hpp"
#include "engine_support.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
namespace cz = gutf8::internal::compress;
using test::compress::all_formats;
using test::compress::tool_compress;

// The text in `members` members cut inside characters: by the format's tool, or by gutf8's part
// compressor (gzip members that record their size, zstd and lz4 frames with their content size).
std::string members(cz::format f, const std::string& text, std::size_t count, bool own) {
  const auto pieces = test::compress::cut(text, test::compress::inside_characters(text, count - 1));
  std::string all;
  cz::part_compressor pc(f);
  for (const std::string& p : pieces) {
    if (!own) {
      all += tool_compress(f, p);
      continue;
    }
    std::vector<std::uint8_t> out;
    pc.append(test::compress::ubytes(p), out);
    all.append(reinterpret_cast<const char*>(out.data()), out.size());
  }
  return all;
}

// A pipe whose write end a thread fills in uneven writes.
class fed_pipe {
 public:
  explicit fed_pipe(std::string bytes) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_ = fds[0];
    writer_ = std::jthread([bytes = std::move(bytes), fd = fds[1]] {
      for (std::size_t at = 0, step = 3; at < bytes.size(); step = step * 7 % 4001 + 1) {
        const ssize_t w = ::write(fd, bytes.data() + at, std::min(step, bytes.size() - at));
        if (w <= 0) break;
        at += static_cast<std::size_t>(w);
      }
      ::close(fd);
    });
  }
  fed_pipe(const fed_pipe&) = delete;
  fed_pipe& operator=(const fed_pipe&) = delete;
  ~fed_pipe() {
    ::close(read_);
    writer_.join();
  }
  [[nodiscard]] int fd() const { return read_; }

 private:
  int read_ = -1;
  std::jthread writer_;
};

run_config config_for(operation op, error_policy p, std::uint64_t chunk) {
  run_config c;
  c.stream.operation = op;
  c.stream.policy = p;
  c.stream.backend.backend = backend::cpu;
  c.piece_bytes = 1000;
  c.chunk_bytes = chunk;
  return c;
}

kept_run run_inputs(const std::vector<input>& inputs, const run_config& config) {
  internal::engine_tuning t;
  t.cpu_workers = 3;
  kept_run kept;
  internal::run_engine(inputs, config, kept, t);
  EXPECT_TRUE(kept.order_kept);
  return kept;
}

outcome got_of(const kept_run& k, std::size_t index) {
  const auto it = k.by_input.find(index);
  if (it == k.by_input.end() || !it->second.report) return {};
  return outcome{it->second.out, it->second.report->stats};
}

// Texts whose errors and characters fall on members' seams: UTF-8, or UTF-32 for encode.
std::vector<std::string> texts(std::mt19937_64& g, operation op) {
  if (op == operation::encode) return {random_utf32(g, 3001, 0.0), random_utf32(g, 2003, 0.02)};
  std::string late = random_text(g, 9007, 0.0) + "\xE2\x82" + random_text(g, 700, 0.0) + "\n";
  return {random_text(g, 13001, 0.0), random_text(g, 7013, 0.02), late, std::string(300, '\x80') + "\xF0\x9F"};
}

// Every input form of one compressed text gives the one-shot outcome of the text.
void expect_every_source(const std::string& compressed, cz::format f, const outcome& want, const run_config& c) {
  const temp_file file(compressed);
  const fed_pipe pipe(compressed);
  const std::vector<input> ins{input::file(file.path()), input::memory(std::as_bytes(std::span(compressed)), "mem"),
                               input::descriptor(pipe.fd(), "pipe")};
  const kept_run r = run_inputs(ins, c);
  for (std::size_t i = 0; i < ins.size(); ++i) {
    SCOPED_TRACE(ins[i].name());
    EXPECT_TRUE(same(got_of(r, i), want));
    ASSERT_TRUE(r.by_input.at(i).report);
    EXPECT_EQ(r.by_input.at(i).report->compressed, static_cast<compression>(f));
  }
}

class EngineCompressed : public testing::TestWithParam<cz::format> {};

TEST_P(EngineCompressed, EveryOperationEqualsOneShotOfTheText) {
  const cz::format f = GetParam();
  auto g = rng(71 + static_cast<int>(f));
  for (const operation op : {operation::validate, operation::decode, operation::encode, operation::repair}) {
    for (const std::string& text : texts(g, op)) {
      for (const auto& [count, own] : {std::pair{1, false}, {3, false}, {4, true}}) {
        const std::string compressed = members(f, text, count, own);
        for (const auto& [o, p] : operations_and_policies) {
          if (o != op && !(op == operation::validate && o == operation::stats)) continue;
          const outcome want = one_shot(o, p, text);
          for (const std::uint64_t chunk : {std::uint64_t{61}, std::uint64_t{4099}}) {
            SCOPED_TRACE(testing::Message() << name(o) << '/' << name(p) << ", " << text.size() << " bytes in "
                                            << count << (own ? " own" : " tool") << " members, chunks of " << chunk);
            expect_every_source(compressed, f, want, config_for(o, p, chunk));
          }
        }
      }
    }
  }
}

// Error lists need every byte in one stream: a compressed input is then read in order.
TEST_P(EngineCompressed, ListedErrorsCountInTheText) {
  const cz::format f = GetParam();
  auto g = rng(91);
  const std::string text = random_text(g, 6007, 0.03);
  run_config c = config_for(operation::validate, error_policy::strict, 997);
  c.stream.max_listed_errors = 5;
  const temp_file file(members(f, text, 3, true));
  const kept_run r = run_inputs({input::file(file.path())}, c);
  ASSERT_TRUE(r.by_input.at(0).report);
  const auto& listed = r.by_input.at(0).report->listed_errors;
  const std::vector<error_unit> want = list_errors(bytes(text), 5);
  ASSERT_EQ(listed.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(listed[i], want[i]);
}

// A damaged input fails alone, naming the compressed position; the inputs after it go on.
TEST_P(EngineCompressed, CorruptAndTruncatedInputsFailAlone) {
  const cz::format f = GetParam();
  auto g = rng(93);
  const std::string text = random_text(g, 5003, 0.0);
  const std::string good = members(f, text, 2, false);
  const std::string truncated = good.substr(0, good.size() - 7);
  const temp_file a(truncated), b(good);
  for (const operation op : {operation::validate, operation::repair}) {
    const kept_run r = run_inputs({input::file(a.path()), input::file(b.path())}, config_for(op, error_policy::replace, 1021));
    ASSERT_TRUE(r.by_input.at(0).failure);
    EXPECT_EQ(r.by_input.at(0).code, errc::io_failure);
    EXPECT_NE(r.by_input.at(0).failure->find("compressed byte"), std::string::npos) << *r.by_input.at(0).failure;
    EXPECT_TRUE(same(got_of(r, 1), one_shot(op, error_policy::replace, text)));
  }
}

// Outputs compressed by the run decompress with the format's tool to the one-shot output; an input
// without output gives an empty file of the format.
TEST_P(EngineCompressed, CompressedOutputsDecompressWithTheTool) {
  const cz::format f = GetParam();
  auto g = rng(97);
  for (const std::string& text : {random_text(g, 20011, 0.01), std::string()}) {
    const std::string compressed = members(cz::format::gzip, text, text.empty() ? 1 : 3, true);
    for (const std::uint64_t chunk : {std::uint64_t{61}, std::uint64_t{65539}}) {
      run_config c = config_for(operation::repair, error_policy::replace, chunk);
      c.compress_output.format = static_cast<compression>(f);
      const temp_file plain(text), packed(compressed);
      const kept_run r = run_inputs({input::file(plain.path()), input::file(packed.path())}, c);
      const std::string want = one_shot(operation::repair, error_policy::replace, text).out;
      for (std::size_t i = 0; i < 2; ++i) {
        const auto verdict = test::compress::tool_decompress(f, r.by_input.at(i).out);
        EXPECT_TRUE(verdict.ok) << "input " << i << ", chunks of " << chunk;
        EXPECT_TRUE(same_bytes(verdict.text, want)) << "input " << i << ", chunks of " << chunk;
      }
    }
  }
}

// Members of 1 to 5 bytes: parts shorter than a character, continuations alone, errors that span
// several parts, in gutf8's own members of every format.
TEST_P(EngineCompressed, TinyMembersEqualOneShot) {
  const cz::format f = GetParam();
  auto g = rng(101);
  const std::string text = random_text(g, 397, 0.05) + "\xF0\x9F\x98" + std::string(7, '\x80') + "\xE2\x82\xAC\xF4";
  std::string compressed;
  cz::part_compressor pc(f);
  for (std::size_t at = 0, k = 0; at < text.size(); ++k) {
    const std::size_t n = std::min<std::size_t>(1 + k * 7 % 5, text.size() - at);
    std::vector<std::uint8_t> out;
    pc.append(test::compress::ubytes(text.substr(at, n)), out);
    compressed.append(reinterpret_cast<const char*>(out.data()), out.size());
    at += n;
  }
  for (const auto& [o, p] : operations_and_policies) {
    if (o == operation::encode) continue;
    // Small chunks group few parts into one task: most seams fall between tasks.
    for (const std::uint64_t chunk : {std::uint64_t{16}, std::uint64_t{61}}) {
      SCOPED_TRACE(testing::Message() << name(o) << '/' << name(p) << ", chunks of " << chunk);
      expect_every_source(compressed, f, one_shot(o, p, text), config_for(o, p, chunk));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, EngineCompressed, testing::ValuesIn(all_formats), test::compress::param_name);

// Bytes as they are: a compressed file validated as its bytes (decompress = false).
TEST(EngineCompressedOff, BytesAsTheyAre) {
  const std::string compressed = members(cz::format::zstd, "h\xC3\xA9llo w\xC3\xB6rld\n", 1, false);
  run_config c = config_for(operation::validate, error_policy::strict, 4099);
  c.decompress = false;
  const temp_file file(compressed);
  const kept_run r = run_inputs({input::file(file.path())}, c);
  EXPECT_TRUE(same(got_of(r, 0), one_shot(operation::validate, error_policy::strict, compressed)));
  EXPECT_EQ(r.by_input.at(0).report->compressed, compression::none);
}

TEST(EngineCompressedOff, TextAtCountsInTheText) {
  auto g = rng(99);
  const std::string text = random_text(g, 9001, 0.0);
  const std::string compressed = members(cz::format::xz, text, 2, false);
  const temp_file file(compressed);
  for (const std::uint64_t at : {std::uint64_t{0}, std::uint64_t{4507}, std::uint64_t{8995}}) {
    const auto got = text_at(input::file(file.path()), at, 10);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(got.data()), got.size()), text.substr(at, 10));
  }
  const auto raw = text_at(input::file(file.path()), 0, 6, false);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(raw.data()), raw.size()), compressed.substr(0, 6));
}

// A worker's outputs come back for reuse: a buffer handed back serves the next request it holds, a
// request none holds gets a fresh one, the largest `keep` idle ones are kept, and a hand-back that
// outlives the recycler frees its buffer.
TEST(EngineRecycledOutputs, HandedBackBuffersServeTheNextRequests) {
  std::function<void()> late;
  {
    internal::recycled_outputs outputs(2);
    EXPECT_EQ(outputs.acquire(0).first, nullptr);
    auto [a, give_a] = outputs.acquire(1000);
    std::fill_n(a, 1000, std::uint8_t{0x5A});
    give_a();
    auto [b, give_b] = outputs.acquire(1100);  // within the eighth more that a was made with
    EXPECT_EQ(b, a);
    EXPECT_EQ(b[999], 0x5A) << "the same memory, not cleared";
    auto [c, give_c] = outputs.acquire(999);  // none idle: fresh (999 + 124 bytes)
    EXPECT_NE(c, a);
    give_c();
    give_b();
    auto [d, give_d] = outputs.acquire(17);  // the smallest idle one that holds it
    EXPECT_EQ(d, c);
    give_d();
    auto [x, give_x] = outputs.acquire(5003);
    auto [y, give_y] = outputs.acquire(6007);
    auto [z, give_z] = outputs.acquire(7001);
    for (std::uint8_t* p : {x, y, z}) EXPECT_TRUE(p != a && p != c);
    give_x();
    give_z();
    give_y();  // five idle: the two largest stay (x, the smallest that would hold 5003, is gone)
    auto [e, give_e] = outputs.acquire(5003);
    EXPECT_EQ(e, y);
    auto [f, give_f] = outputs.acquire(5003);
    EXPECT_EQ(f, z);
    auto [g, give_g] = outputs.acquire(1);  // none idle: fresh
    EXPECT_TRUE(g != y && g != z);
    give_e();
    give_f();
    late = std::move(give_g);
  }
  late();  // after the recycler: frees (ASan: no leak, no use after free)
}


// One zstd frame as libzstd writes it with these flags (window_log 0: libzstd's choice).
std::vector<std::uint8_t> zstd_frame(std::size_t text_bytes, bool content_size, bool checksum, int window_log = 0) {
  const std::string text = test::compress::text(text_bytes, text_bytes + 1);
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, window_log);
  std::vector<std::uint8_t> out(ZSTD_compressBound(text.size()));
  ZSTD_inBuffer in{text.data(), text.size(), 0};
  ZSTD_outBuffer to{out.data(), out.size(), 0};
  if (content_size) ZSTD_CCtx_setPledgedSrcSize(c, text.size());
  const std::size_t rc = ZSTD_compressStream2(c, &to, &in, ZSTD_e_end);
  ZSTD_freeCCtx(c);
  EXPECT_EQ(rc, 0u);
  out.resize(to.pos);
  return out;
}

// What a GPU lane takes of a zstd file (engine/gpu_parts.hpp): frames with their content size (and
// their checksum flag, which the device verifies), of at most 4 MiB of text; skippable frames are
// passed over; anything else leaves the run to the CPU decoder.
TEST(EngineGpuParts, FramesALaneTakes) {
  namespace in = gutf8::internal;
  const std::vector<std::uint8_t> skip{0x5F, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 7, 7};
  std::vector<std::uint8_t> file;
  std::vector<std::size_t> sizes{1, 65537, (std::size_t{4} << 20), 0, 1000003};
  std::vector<in::gpu_frame> want;
  for (const std::size_t n : sizes) {
    const bool checksum = n % 2 == 1;
    const auto f = zstd_frame(n, true, checksum);
    want.push_back({file.size(), f.size(), n, checksum, 0});
    file.insert(file.end(), f.begin(), f.end());
    file.insert(file.end(), skip.begin(), skip.end());
  }
  std::vector<in::gpu_frame> got;
  ASSERT_TRUE(in::gpu_frames(file, got));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].offset, want[i].offset) << i;
    EXPECT_EQ(got[i].bytes, want[i].bytes) << i;
    EXPECT_EQ(got[i].text_bytes, want[i].text_bytes) << i;
    EXPECT_EQ(got[i].checksum, want[i].checksum) << i;
    EXPECT_GE(got[i].room, want[i].text_bytes) << i;  // its blocks' room, at least its text
    EXPECT_LE(got[i].room, 2 * want[i].text_bytes + (std::size_t{128} << 10)) << i;  // blocks of 128 KiB
  }
  const auto reader = [](const std::vector<std::uint8_t>& bytes) {
    return [&bytes](std::span<std::uint8_t> b, std::uint64_t at) { std::copy_n(bytes.begin() + std::ptrdiff_t(at), b.size(), b.begin()); };
  };
  EXPECT_TRUE(in::lanes_take_in_parts(reader(file), file.size()));
  const std::pair<std::vector<std::uint8_t>, const char*> refused[] = {
      {zstd_frame(4099, false, false), "no content size"},
      {zstd_frame((std::size_t{4} << 20) + 1, true, false), "more than 4 MiB"},
      {skip, "a skippable frame"},
  };
  const auto joined = [](std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    std::vector<std::uint8_t> v(a.size() + b.size());
    std::copy(b.begin(), b.end(), std::copy(a.begin(), a.end(), v.begin()));
    return v;
  };
  for (const auto& [frame, why] : refused) {
    EXPECT_EQ(in::gpu_frames(joined(file, frame), got), frame == skip) << why;
    EXPECT_EQ(in::lanes_take_in_parts(reader(frame), frame.size()), false) << why;
    const std::vector<std::uint8_t> after_skip = joined(skip, frame);  // what follows skippable frames decides
    EXPECT_EQ(in::lanes_take_in_parts(reader(after_skip), after_skip.size()), false) << why;
  }
  const std::vector<std::uint8_t> skip_first = joined(skip, file);
  EXPECT_TRUE(in::lanes_take_in_parts(reader(skip_first), skip_first.size()));
  // A header whose content size lies (1000 for 300007 bytes) under a window of its own (128 KiB:
  // not the content size, which would hold every block to 1000 bytes): the room its blocks make
  // stays the truth's.
  std::vector<std::uint8_t> lying = zstd_frame(300007, true, false, 17);
  ASSERT_EQ(lying[4] >> 6, 2) << "a 4-byte content size";
  ASSERT_EQ(lying[4] & 0x20, 0) << "a window descriptor";
  const std::size_t fcs = (lying[4] & 0x20) != 0 ? 5 : 6;  // past the window descriptor where there is one
  for (int k = 0; k < 4; ++k) lying[fcs + std::size_t(k)] = std::uint8_t(1000u >> (8 * k));
  ASSERT_TRUE(in::gpu_frames(lying, got));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].text_bytes, 1000u);
  EXPECT_GE(got[0].room, 300007u);
  // Compressed blocks of one byte, each of which may make 128 KiB, under a header that says 300 bytes
  // (2-byte content size, a 128 KiB window): 64 make a room of 8 MiB (taken, the room its slot
  // gets), 65 more than 8 MiB (refused).
  for (const std::size_t blocks : {std::size_t{64}, std::size_t{65}}) {
    std::vector<std::uint8_t> wide{0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x38, 300 - 256, 0};
    for (std::size_t b = 0; b < blocks; ++b) wide.insert(wide.end(), {std::uint8_t(b + 1 == blocks ? 0x0D : 0x0C), 0, 0, 'a'});
    EXPECT_EQ(in::gpu_frames(wide, got), blocks == 64) << blocks << " blocks";
    if (blocks == 64) {
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].text_bytes, 300u);
      EXPECT_EQ(got[0].room, std::size_t{8} << 20);
    }
  }
  // Blocks larger than the frame's block size (its window, at most 128 KiB) break RFC 8878, and a
  // content size its blocks cannot make means bytes inside the frame were read as a block header:
  // refused (header bytes, then a block's header and its content's size).
  struct hand_frame {
    std::vector<std::uint8_t> head;
    std::size_t content;
    const char* why;
  };
  const hand_frame refused_frames[] = {
      {{0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x38, 0, 1, 0x0B, 0, 0x10}, 1, "RLE block of 128 KiB + 1"},
      {{0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x00, 0, 3, 0x09, 0x20, 0}, 1025, "raw block of 1025 under a 1 KiB window"},
      {{0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x00, 0, 3, 0x0D, 0x20, 0}, 1025, "compressed block of 1025, 1 KiB window"},
      {{0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x38, 300 - 256, 0, 0x51, 0, 0}, 10, "300 bytes from a raw block of 10"},
  };
  for (const hand_frame& h : refused_frames) {
    std::vector<std::uint8_t> f = h.head;
    for (std::size_t k = 0; k < h.content; ++k) f.push_back(std::uint8_t('a' + k % 7));
    EXPECT_FALSE(in::gpu_frames(f, got)) << h.why;
    EXPECT_FALSE(cz::zstd_frame_extent(cz::memory_reader(f), 0, f.size()).has_value()) << h.why;
    EXPECT_TRUE(in::lanes_take_in_parts(reader(f), f.size())) << h.why << ": in parts, as on the CPU";
  }
  std::vector<std::uint8_t> cut = file;
  cut.resize(cut.size() - 12);  // the last frame ends early: the CPU's structure check refuses it
  EXPECT_FALSE(in::gpu_frames(cut, got));
}

// gutf8's zstd writer cuts a part's text into frames of at most 1 MiB, each followed by its proof
// (compress/proof.hpp); a GPU lane takes only frames so proven. Every split of such a file keeps
// each proof with its frame, and any damage to a frame or its proof, or a proof elsewhere, is refused.
TEST(EngineGpuParts, ProvenFramesFromTheWriter) {
  namespace in = gutf8::internal;
  const std::string text = test::compress::text((3u << 20) + 4097, 17);
  const auto as_bytes = [](const std::string& t) { return std::span(reinterpret_cast<const std::uint8_t*>(t.data()), t.size()); };
  const auto encoder = cz::make_part_encoder(cz::format::zstd, 3);
  std::vector<std::uint8_t> file(encoder->bound(text.size()));
  file.resize(encoder->encode(as_bytes(text), file));
  std::vector<in::gpu_frame> frames;
  ASSERT_TRUE(in::gpu_frames(file, frames));
  ASSERT_EQ(frames.size(), 4u);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].text_bytes, i < 3 ? std::size_t{1} << 20 : 4097u) << i;
    const std::size_t next = i + 1 < frames.size() ? frames[i + 1].offset : file.size();
    EXPECT_EQ(frames[i].offset + frames[i].bytes + cz::proof_size, next) << i << ": its proof right after it";
  }
  for (const unsigned threads : {1u, 3u}) EXPECT_TRUE(in::frames_proven(file, frames, threads));
  std::string back(text.size() + 1, '\0');
  EXPECT_EQ(ZSTD_decompress(back.data(), back.size(), file.data(), file.size()), text.size()) << "libzstd skips proofs";
  back.resize(text.size());
  EXPECT_EQ(back, text);
  // Split at every target around the frames' and proofs' sizes: every part's frames are proven.
  for (const std::uint64_t target : {std::uint64_t{1}, std::uint64_t{frames[0].bytes}, std::uint64_t{frames[0].bytes} + 1,
                                     std::uint64_t{frames[0].bytes} + cz::proof_size, std::uint64_t{frames[0].bytes} * 2}) {
    for (const cz::part& p : cz::split(cz::format::zstd, cz::memory_reader(file), file.size(), target)) {
      const auto bytes = std::span(file).subspan(p.offset, p.size);
      std::vector<in::gpu_frame> got;
      ASSERT_TRUE(in::gpu_frames(bytes, got)) << target;
      EXPECT_TRUE(in::frames_proven(bytes, got, 2)) << "target " << target << ", part at " << p.offset;
    }
  }
  // Each frame's headers are read once, though a part looks past its target for a proof.
  std::map<std::uint64_t, int> reads_at;
  const cz::random_reader counting = [&](std::span<std::uint8_t> b, std::uint64_t at) {
    ++reads_at[at];
    cz::memory_reader(file)(b, at);
  };
  EXPECT_EQ(cz::split(cz::format::zstd, counting, file.size(), 1).size(), frames.size());
  for (const in::gpu_frame& f : frames) EXPECT_EQ(reads_at[f.offset], 1) << "frame at " << f.offset;
  // A small file: every byte of its frame, and of its proof, flipped in turn.
  const std::string small = test::compress::text(3001, 5);
  std::vector<std::uint8_t> one(encoder->bound(small.size()));
  one.resize(encoder->encode(as_bytes(small), one));
  ASSERT_TRUE(in::gpu_frames(one, frames));
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0].bytes + cz::proof_size, one.size());
  for (std::size_t at = 0; at < one.size(); ++at) {
    std::vector<std::uint8_t> bad = one;
    bad[at] ^= std::uint8_t(1u << (at % 8));
    std::vector<in::gpu_frame> got;
    if (in::gpu_frames(bad, got) && got.size() == 1) {  // a refused structure keeps it from the GPU already
      EXPECT_FALSE(in::frames_proven(bad, got, 1)) << "byte " << at << " flipped";
    }
  }
  // No proof, a proof cut short, another frame's proof, a skippable frame between frame and proof.
  const std::span<const std::uint8_t> frame = std::span(one).first(frames[0].bytes);
  const cz::proof right = cz::proof_of(frame);
  const cz::proof other = cz::proof_of(std::span(file).first(frames[0].bytes));
  const std::vector<std::uint8_t> skip{0x50, 0x2A, 0x4D, 0x18, 1, 0, 0, 0, 9};
  const auto with = [&](std::initializer_list<std::span<const std::uint8_t>> after) {
    std::vector<std::uint8_t> v(frame.begin(), frame.end());
    for (const auto& a : after) v.insert(v.end(), a.begin(), a.end());
    return v;
  };
  const std::pair<std::vector<std::uint8_t>, const char*> refused[] = {
      {with({}), "no proof"},
      {with({std::span(right).first(cz::proof_size - 1)}), "a proof cut short"},
      {with({other}), "another frame's proof"},
      {with({skip, right}), "a skippable frame between"},
  };
  for (const auto& [bytes, why] : refused) {
    std::vector<in::gpu_frame> got;
    if (in::gpu_frames(bytes, got)) {
      EXPECT_FALSE(in::frames_proven(bytes, got, 1)) << why;
    }
  }
  EXPECT_TRUE(in::frames_proven(with({right}), frames, 1));
}

// The (offset, size) list a GPU batch gets (compressed_input's runs, then gpu_frames) for files with
// skippable frames before, between and after zstd frames: every item starts at a frame's magic and
// ends where the next frame or skippable frame starts, each frame is an item once, and each decodes
// with libzstd to its content size. A frame whose block walk ends inside it (a last-block header
// read from its payload, as 11 bytes put into a frame make) is no item: nvCOMP may spin on it.
struct laid_frame {
  std::uint64_t offset;
  std::uint64_t size;
  bool skippable;
};

std::vector<std::pair<std::uint64_t, cz::part>> gpu_batch_items(const std::vector<std::uint8_t>& file,
                                                                 std::vector<gutf8::internal::gpu_frame>& items) {
  namespace in = gutf8::internal;
  in::compressed_input input(cz::format::zstd, {}, file);
  std::vector<std::pair<std::uint64_t, cz::part>> parts;
  items.clear();
  while (const std::optional<cz::part> p = input.next_part(std::uint64_t{4} << 20, false, std::uint64_t{4} << 20)) {
    parts.emplace_back(items.size(), *p);
    std::vector<in::gpu_frame> got;
    if (!p->text_size || !in::gpu_frames(std::span(file).subspan(p->offset, p->size), got)) continue;
    for (in::gpu_frame& f : got) {
      f.offset += static_cast<std::size_t>(p->offset);  // in the file
      items.push_back(f);
    }
  }
  return parts;
}

TEST(EngineGpuParts, BatchItemsAroundSkippableFrames) {
  namespace in = gutf8::internal;
  const std::vector<std::vector<std::uint8_t>> skips{
      {0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}, {0x5F, 0x2A, 0x4D, 0x18, 0, 0, 0, 0}, {0x57, 0x2A, 0x4D, 0x18, 1, 0, 0, 0, 0x28}};
  const std::size_t sizes[] = {65537, 1, (std::size_t{1} << 20) - 7, 131071, 4099, 1000003, 38};
  for (const int shape : {0, 1, 2, 3}) {  // skippable first, between each, last, all three
    std::vector<std::uint8_t> file;
    std::vector<laid_frame> laid;
    const auto put = [&](const std::vector<std::uint8_t>& b, bool skip) {
      laid.push_back({file.size(), b.size(), skip});
      file.insert(file.end(), b.begin(), b.end());
    };
    if (shape == 0 || shape == 3) put(skips[0], true);
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      put(zstd_frame(sizes[i], true, i % 2 == 0), false);
      if ((shape == 1 || shape == 3) && i + 1 < std::size(sizes)) put(skips[i % skips.size()], true);
    }
    if (shape == 2 || shape == 3) put(skips[1], true), put(skips[2], true);
    std::vector<in::gpu_frame> items;
    gpu_batch_items(file, items);
    std::vector<laid_frame> frames;
    std::ranges::copy_if(laid, std::back_inserter(frames), [](const laid_frame& l) { return !l.skippable; });
    ASSERT_EQ(items.size(), frames.size()) << "shape " << shape << ": every frame on the GPU, once";
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string what = "shape " + std::to_string(shape) + ", item " + std::to_string(i);
      EXPECT_EQ(items[i].offset, frames[i].offset) << what;
      EXPECT_EQ(items[i].bytes, frames[i].size) << what;
      EXPECT_TRUE(std::equal(file.begin() + std::ptrdiff_t(items[i].offset), file.begin() + std::ptrdiff_t(items[i].offset) + 4,
                             std::begin({0x28, 0xB5, 0x2F, 0xFD}))) << what << ": a zstd frame's magic";
      const std::uint64_t end = items[i].offset + items[i].bytes;
      EXPECT_TRUE(end == file.size() || std::ranges::any_of(laid, [&](const laid_frame& l) { return l.offset == end; }))
          << what << ": ends where the next frame or skippable frame starts";
      std::vector<std::uint8_t> text(items[i].text_bytes + 1);
      EXPECT_EQ(ZSTD_decompress(text.data(), text.size(), file.data() + items[i].offset, items[i].bytes),
                items[i].text_bytes) << what;
    }
  }
}

TEST(EngineGpuParts, FrameWhoseBlockWalkEndsInsideIsNoBatchItem) {
  namespace in = gutf8::internal;
  // A frame of 1 MiB - 7 cut after its second block, where a last RLE block's header of 1083777
  // bytes is read (what 11 bytes put into its third block made of it), then a whole frame.
  const std::vector<std::uint8_t> whole = zstd_frame((std::size_t{1} << 20) - 7, true, false);
  ZSTD_frameHeader h{};
  ASSERT_EQ(ZSTD_getFrameHeader(&h, whole.data(), whole.size()), 0u);
  std::size_t at = h.headerSize;
  for (int block = 0; block < 2; ++block) {
    const std::uint32_t v = whole[at] | std::uint32_t(whole[at + 1]) << 8 | std::uint32_t(whole[at + 2]) << 16;
    ASSERT_EQ(v & 1, 0u) << "more than two blocks";
    at += 3 + (((v >> 1) & 3) == 1 ? 1 : v >> 3);
  }
  std::vector<std::uint8_t> file(whole.begin(), whole.begin() + std::ptrdiff_t(at));
  const std::uint32_t rle_last = (1083777u << 3) | (1u << 1) | 1u;
  file.insert(file.end(), {std::uint8_t(rle_last), std::uint8_t(rle_last >> 8), std::uint8_t(rle_last >> 16), 'x'});
  const std::vector<std::uint8_t> next = zstd_frame(4099, true, true);
  file.insert(file.end(), next.begin(), next.end());
  std::vector<in::gpu_frame> items;
  gpu_batch_items(file, items);
  for (const in::gpu_frame& f : items) {
    std::vector<std::uint8_t> text(f.text_bytes + 1);
    EXPECT_EQ(ZSTD_decompress(text.data(), text.size(), file.data() + f.offset, f.bytes), f.text_bytes)
        << "the item at " << f.offset << " (" << f.bytes << " bytes) is not a frame libzstd decodes";
  }
}

// A GPU lane's runs group frames of known text only: in a file mixing frames with and without a
// content size, every frame with one lies in a run of known text (which the lane decompresses on
// the GPU), and a frame without one never joins it (that run goes to the CPU decoder).
TEST(EngineGpuParts, RunsOfKnownTextStayApart) {
  namespace in = gutf8::internal;
  std::vector<std::uint8_t> file;
  std::vector<std::pair<std::uint64_t, bool>> frames;  // offset, content size recorded
  for (std::size_t i = 0; i < 23; ++i) {
    const bool sized = i % 4 != 2 && i != 11;  // not: 2, 6, 10, 11 (two in a row), 14, 18, 22
    const auto f = zstd_frame(1000 + 4099 * (i % 5), sized, i % 3 == 1);
    frames.emplace_back(file.size(), sized);
    file.insert(file.end(), f.begin(), f.end());
  }
  for (const std::uint64_t gpu_run_bytes : {std::uint64_t{0}, std::uint64_t{12000}, std::uint64_t{64} << 20}) {
    in::compressed_input input(cz::format::zstd, {}, file);
    std::uint64_t end = 0, known = 0;
    while (const std::optional<cz::part> p = input.next_part(std::uint64_t{4} << 20, false, gpu_run_bytes)) {
      EXPECT_EQ(p->offset, end);
      end = p->offset + p->size;
      std::size_t sized = 0, all = 0;
      for (const auto& [at, s] : frames)
        if (at >= p->offset && at < end) {
          ++all;
          sized += s ? 1 : 0;
        }
      if (gpu_run_bytes == 0) continue;  // the CPU's grouping: by compressed bytes alone
      EXPECT_TRUE(sized == 0 || sized == all) << "part at " << p->offset;
      EXPECT_EQ(p->text_size.has_value(), sized == all) << "part at " << p->offset;
      if (all > 1) {
        EXPECT_LE(p->text_size.value_or(0), gpu_run_bytes);
      }
      known += sized;
    }
    EXPECT_EQ(end, file.size());
    if (gpu_run_bytes != 0) {
      EXPECT_EQ(known, 16u);
    }
  }
}

// The first error a part worker meets in each part of `file` grouped as the CPU workers group it
// (gpu_run_bytes 0) or as a GPU lane does (its CPU decoder then decodes the lane's parts).
std::string first_error(const std::vector<std::uint8_t>& file, std::uint64_t gpu_run_bytes) {
  namespace in = gutf8::internal;
  constexpr std::uint64_t chunk = std::uint64_t{4} << 20;
  in::compressed_input input(cz::format::zstd, {}, file);
  while (const std::optional<cz::part> p = input.next_part(chunk, false, gpu_run_bytes)) {
    in::part_text t;
    t.open(cz::format::zstd, *p, std::span(file).subspan(p->offset, p->size));
    std::vector<std::uint8_t> buffer;
    in::part_block b;
    try {
      for (buffer.resize(t.room(chunk)); t.next(buffer, b); buffer.resize(t.room(chunk))) {
      }
    } catch (const gutf8::error& e) {
      return e.what();
    }
  }
  return {};
}

// Damage in the first, an inner and the last of 7 frames (a content size changed by one, a stored
// checksum not the text's): a zstd file goes in parts to the GPU lanes as to the CPU workers, also
// where the structure check refuses its first frame (1 MiB recorded as 1 MiB + 1, more than its 8
// blocks make), and the lanes' CPU decoder names the position the workers name. In order, through
// one reader's slices of 128 KiB, libzstd named another (the start of the slice it failed in).
TEST(EngineGpuParts, CorruptFramesReportAsOnTheCpuWorkers) {
  namespace in = gutf8::internal;
  const std::size_t block = std::size_t{128} << 10;
  for (const std::size_t frame_text : {8 * block, 8 * block - 7, 3 * block + 1}) {
    std::vector<std::vector<std::uint8_t>> frames;
    for (std::size_t i = 0; i < 7; ++i) frames.push_back(zstd_frame(i == 6 ? 11 : frame_text + i, true, true));
    for (const std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{6}})
      for (const bool sized : {true, false}) {
        std::vector<std::vector<std::uint8_t>> damaged = frames;
        std::vector<std::uint8_t>& f = damaged[bad];
        ZSTD_frameHeader h{};
        ASSERT_EQ(ZSTD_getFrameHeader(&h, f.data(), f.size()), 0u);
        const std::size_t fcs_bytes = std::array<std::size_t, 4>{(f[4] & 0x20) ? 1u : 0u, 2, 4, 8}[f[4] >> 6];
        if (sized) f[h.headerSize - fcs_bytes] ^= 1;  // the content size's low byte
        else f[f.size() - 3] ^= 0x10;                 // the stored checksum
        std::vector<std::uint8_t> file;
        for (const auto& d : damaged) file.insert(file.end(), d.begin(), d.end());
        const std::string what = std::to_string(frame_text) + " bytes a frame, frame " + std::to_string(bad) +
                                 (sized ? " sized wrong" : " summed wrong");
        const bool refused = !cz::zstd_frame_extent(cz::memory_reader(file), 0, file.size());
        EXPECT_EQ(refused, sized && bad == 0 && frame_text == 8 * block) << what;
        EXPECT_TRUE(in::lanes_take_in_parts(cz::memory_reader(file), file.size())) << what;
        const std::string want = first_error(file, 0);
        EXPECT_TRUE(want.starts_with("corrupt zstd data at compressed byte ")) << what << ": " << want;
        EXPECT_EQ(first_error(file, std::uint64_t{4} << 20), want) << what;
      }
  }
}

// Under the CUDA backend, compressed files go in parts only where the GPU decompresses them.
TEST(EngineGpuParts, PlanInParts) {
  run_config c;
  c.stream.backend.backend = backend::cuda;
  EXPECT_EQ(plan_run(c).compressed_parts, gutf8::internal::gpu_zstd_built());
  c.stream.operation = operation::repair;  // output: the text is needed on the host
  EXPECT_FALSE(plan_run(c).compressed_parts);
  c.stream.backend.backend = backend::cpu;
  EXPECT_TRUE(plan_run(c).compressed_parts);
}


// A stand-in for the device's text: the host's bytes, processed by a CPU block processor.
class host_text final : public gutf8::internal::gpu_zstd {
 public:
  host_text(std::string text, gutf8::internal::block_processor& cpu) : text_(std::move(text)), cpu_(cpu) {}
  bool decompress(std::span<const std::uint8_t>, std::span<const gutf8::internal::gpu_frame>) override { return true; }
  gutf8::internal::block_result process(std::size_t at, const gutf8::internal::block_request& rq) override {
    EXPECT_LE(at + rq.size, text_.size());
    gutf8::internal::block_request r = rq;
    r.data = reinterpret_cast<const std::uint8_t*>(text_.data()) + at;
    return cpu_.process(r);
  }
  void copy_text(std::size_t at, std::span<std::uint8_t> to) override {
    ASSERT_LE(at + to.size(), text_.size());
    copied_ += to.size();
    std::copy_n(text_.begin() + std::ptrdiff_t(at), to.size(), to.begin());
  }
  [[nodiscard]] std::uint64_t decompressed_bytes() const noexcept override { return text_.size(); }
  std::size_t copied_ = 0;

 private:
  std::string text_;
  gutf8::internal::block_processor& cpu_;
};

// A GPU lane's part (its text on the device, only its edges and what precedes an error copied back)
// gives what a CPU worker's whole part gives: outcome, line facts and edges, for parts that start
// and end inside characters, with errors and newlines anywhere, and parts of continuations only.
TEST(EngineGpuParts, DevicePartEqualsCpuPart) {
  namespace in = gutf8::internal;
  const auto cpu = in::make_cpu_processor(1);
  std::mt19937_64 g(97);
  const std::string pieces[] = {"a", "\n", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\x80", "\xBF\xBF", "\xF0", "\xE2\x82", "\xFF"};
  for (int round = 0; round < 1500; ++round) {
    const std::size_t size = round < 64 ? std::size_t(round) : std::size_t(g() % (round % 50 == 0 ? 300000 : 200));
    std::string text;
    const bool clean = round % 3 == 0;
    while (text.size() < size) text += pieces[g() % (clean ? 5 : std::size(pieces))];
    text.resize(size);
    for (const operation op : {operation::validate, operation::stats}) {
      run_config c;
      c.stream.operation = op;
      const bool histogram = op == operation::stats && round % 16 == 0;  // 0x110000 counters: now and then
      std::vector<std::uint64_t> want_hist(histogram ? 0x110000 : 0), got_hist(want_hist.size());
      in::text_edges want_edges, got_edges;
      const in::part_block b{reinterpret_cast<const std::uint8_t*>(text.data()), text.size(), text.size(), true, true};
      const in::piece_outcome want =
          in::process_part_block(*cpu, c, b, nullptr, want_hist.empty() ? nullptr : want_hist.data(), want_edges);
      host_text z(text, *cpu);
      const in::piece_outcome got =
          in::process_device_part(z, text.size(), c, got_hist.empty() ? nullptr : got_hist.data(), got_edges);
      const std::string what = "round " + std::to_string(round) + ", " + std::to_string(size) + " bytes";
      EXPECT_EQ(got.result.consumed, want.result.consumed) << what;
      EXPECT_EQ(got.result.errors, want.result.errors) << what;
      EXPECT_EQ(got.result.first_error, want.result.first_error) << what;
      EXPECT_EQ(got.result.first_kind, want.result.first_kind) << what;
      EXPECT_EQ(got.result.lines, want.result.lines) << what;
      EXPECT_EQ(got.result.by_length, want.result.by_length) << what;
      EXPECT_EQ(got.lines.last, want.lines.last) << what;
      EXPECT_EQ(got.lines.before_error, want.lines.before_error) << what;
      EXPECT_EQ(got.lines.last_before_error, want.lines.last_before_error) << what;
      EXPECT_EQ(got.counted_lines, want.counted_lines) << what;
      EXPECT_EQ(got_edges.head, want_edges.head) << what;
      EXPECT_EQ(got_edges.head_size, want_edges.head_size) << what;
      EXPECT_EQ(got_edges.lead, want_edges.lead) << what;
      EXPECT_EQ(got_edges.tail, want_edges.tail) << what;
      EXPECT_EQ(got_edges.tail_size, want_edges.tail_size) << what;
      EXPECT_EQ(got_edges.no_start, want_edges.no_start) << what;
      EXPECT_TRUE(got_hist == want_hist) << what;
      if (want.result.errors == 0 && size > 200000) {
        EXPECT_LT(z.copied_, size / 2) << what << ": the text came back";
      }
      if (HasFailure()) return;
    }
  }
}

}  // namespace
