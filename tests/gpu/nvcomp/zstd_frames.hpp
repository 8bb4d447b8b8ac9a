// Test frames for the nvCOMP lane: text (ASCII words with 2-, 3- and 4-byte characters, so it
// compresses as text does), zstd frames of it written by libzstd, the CPU's structure check, and
// a batch run on the device with its texts and verdicts read back.
#pragma once

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, as src/compress/zstd.cpp uses it
#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "compress/codecs.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/zstd.hpp"
#include "support/random.hpp"

namespace gutf8::test::nvcomp {

using bytes = std::vector<std::uint8_t>;
namespace nv = gutf8::cuda::nvcomp;

inline bytes random_text(std::size_t n, std::uint64_t seed) {
  static const std::vector<std::string> words{"the ",  "of ",     "data ", "text\n", "\xC3\xA9t\xC3\xA9 ",
                                              "na\xC3\xAFve ", "\xE6\x96\x87\xE5\xAD\x97 ", "\xF0\x9F\x98\x80 ",
                                              "compress ", "frame, ", "\xD0\xBC\xD0\xB8\xD1\x80 ", "1234 "};
  auto r = rng(seed);
  bytes out;
  out.reserve(n + 8);
  while (out.size() < n) {
    const std::string& w = words[r() % words.size()];
    out.insert(out.end(), w.begin(), w.end());
  }
  out.resize(n);  // may cut a character: the lane moves bytes, the codec judges them
  return out;
}

// One zstd frame of `text` with its content size in the header (and a checksum unless told).
inline bytes zstd_frame(std::span<const std::uint8_t> text, int level = 3, bool checksum = true) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  bytes out(ZSTD_compressBound(text.size()));
  const std::size_t rc = ZSTD_compress2(c, out.data(), out.size(), text.data(), text.size());
  ZSTD_freeCCtx(c);
  if (ZSTD_isError(rc)) throw std::runtime_error(ZSTD_getErrorName(rc));
  out.resize(rc);
  return out;
}

// The CPU's structure check of a frame: its text size when it would go to a GPU lane.
inline std::optional<std::uint64_t> checked_text_size(const bytes& frame) {
  const internal::compress::random_reader read = [&](std::span<std::uint8_t> buf, std::uint64_t at) {
    std::memcpy(buf.data(), frame.data() + at, buf.size());
  };
  const auto e = internal::compress::zstd_frame_extent(read, 0, frame.size());
  if (!e || e->skippable || e->size != frame.size()) return std::nullopt;
  return e->text_size;
}

// The byte offsets of a frame's block headers (from the header's end), and whether each is last.
struct block_header {
  std::size_t at;
  std::size_t content;
  bool last;
};
inline std::vector<block_header> block_headers(const bytes& frame) {
  ZSTD_frameHeader h{};
  if (ZSTD_getFrameHeader(&h, frame.data(), frame.size()) != 0) return {};
  std::vector<block_header> out;
  for (std::size_t at = h.headerSize; at + 3 <= frame.size();) {
    const std::uint32_t v = frame[at] | std::uint32_t(frame[at + 1]) << 8 | std::uint32_t(frame[at + 2]) << 16;
    const std::size_t content = ((v >> 1) & 3) == 1 ? 1 : v >> 3;
    out.push_back({at, content, (v & 1) != 0});
    if (v & 1) break;
    at += 3 + content;
  }
  return out;
}

// The most text a frame's blocks can hold (the room a GPU lane gives it), at least `told`.
inline std::size_t block_room(const bytes& frame, std::size_t told) {
  const internal::compress::random_reader read = [&](std::span<std::uint8_t> buf, std::uint64_t at) {
    std::memcpy(buf.data(), frame.data() + at, buf.size());
  };
  const auto e = internal::compress::zstd_frame_extent(read, 0, frame.size());
  return std::max<std::size_t>(told, e ? static_cast<std::size_t>(e->room) : 0);
}

struct batch_outcome {
  std::vector<bytes> texts;                 // each frame's expected_text bytes of the output
  std::vector<nv::frame_result> results;
  std::size_t spilled = 0;                  // bytes written past the slots' rooms (must stay 0)
};

inline constexpr std::uint8_t unwritten = 0xA7;  // what the slots hold before the batch

// Uploads the frames back to back and decompresses each into a slot of the most text its blocks
// hold, that slot its output room (as a GPU lane lays them out), then reads everything back: the
// texts, the verdicts, and how many bytes past each slot's room changed (a canary after each slot).
// A batch that does not finish by nvcomp::batch_deadline fails the test (the GPU is given up).
inline batch_outcome batch_on_device(const std::vector<bytes>& frames, const std::vector<std::size_t>& text_sizes) {
  constexpr std::size_t canary = 4096;
  bytes packed;
  std::vector<std::size_t> in_at, out_at, room;
  std::size_t out_total = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    in_at.push_back(packed.size());
    packed.insert(packed.end(), frames[i].begin(), frames[i].end());
    out_at.push_back(out_total);
    room.push_back(block_room(frames[i], text_sizes[i]));
    out_total += room.back() + canary;
  }
  cuda::stream s;
  cuda::event done;
  cuda::device_buffer<std::uint8_t> d_in(std::max<std::size_t>(packed.size(), 1)), d_out(out_total + 1);
  cuda::device_buffer<nv::frame_result> d_results(frames.size() + 1);
  d_in.upload(packed, s);
  cuda::check(cudaMemsetAsync(d_out.data(), unwritten, out_total + 1, s), "cudaMemsetAsync (slots)");
  std::vector<nv::zstd_frame> batch;
  for (std::size_t i = 0; i < frames.size(); ++i)
    batch.push_back({reinterpret_cast<const std::byte*>(d_in.data() + in_at[i]), frames[i].size(), text_sizes[i],
                     out_at[i], room[i]});
  std::size_t temp_bytes = 0;
  auto* out = reinterpret_cast<std::byte*>(d_out.data());
  nv::decompress_zstd(nullptr, temp_bytes, batch, out, d_results.data(), s);
  cuda::device_buffer<std::uint8_t> d_temp(std::max<std::size_t>(temp_bytes, 1));
  nv::decompress_zstd(d_temp.data(), temp_bytes, batch, out, d_results.data(), s);
  done.record(s);
  if (!nv::completes_by(done.get(), nv::batch_deadline(packed.size()))) {
    cuda::device_abandoned().store(true);
    throw std::runtime_error("nvCOMP did not finish the batch by its deadline");
  }
  bytes text(out_total);
  batch_outcome o{{}, std::vector<nv::frame_result>(frames.size())};
  d_out.download(text, s);
  d_results.download(o.results, s);
  s.synchronize();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    o.texts.emplace_back(text.begin() + std::ptrdiff_t(out_at[i]), text.begin() + std::ptrdiff_t(out_at[i] + text_sizes[i]));
    const auto after = text.begin() + std::ptrdiff_t(out_at[i] + room[i]);
    o.spilled += static_cast<std::size_t>(std::count_if(after, after + canary, [](std::uint8_t b) { return b != unwritten; }));
  }
  return o;
}

// CUDA loads a kernel at its first launch (lazy loading), which may wait for the whole device: in a
// process whose first batch spins on a corrupt frame, the launch of fold_verdicts behind nvCOMP's
// kernel would wait for ever, before the deadline is polled. One valid batch first loads them.
inline void load_batch_kernels() {
  static const bool loaded = [] {
    const bytes text = random_text(300007, 3);
    batch_on_device({zstd_frame(text)}, {text.size()});
    return true;
  }();
  (void)loaded;
}

// batch_on_device after the kernels are loaded: a corrupt frame's batch then ends by its deadline.
inline batch_outcome run_batch(const std::vector<bytes>& frames, const std::vector<std::size_t>& text_sizes) {
  load_batch_kernels();
  return batch_on_device(frames, text_sizes);
}

}  // namespace gutf8::test::nvcomp
