// The CUDA backend behind the host API and gutf8::stream (src/cuda/cuda_block_*.cpp, dispatch.cpp):
// byte-identical to the CPU backend for every operation, policy, chunking and input, invalid
// inputs, stats and top included. Also the CUDA block processor on its own, with sub-blocks small
// enough that every block is split (carry across sub-blocks, strict stops in a later sub-block).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "codec/auto_model.hpp"
#include "codec/gpu_backend.hpp"
#include "cpu/cpu_block.hpp"
#include "gpu_harness.hpp"
#include "gutf8/error.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::test::gpu {
namespace {

options with(backend b) {
  options o;
  o.backend = b;
  return o;
}

constexpr operation all_ops[] = {operation::validate, operation::decode, operation::encode,
                                 operation::repair, operation::stats};

const char* op_name(operation o) {
  switch (o) {
    case operation::validate: return "validate";
    case operation::decode: return "decode";
    case operation::encode: return "encode";
    case operation::repair: return "repair";
    case operation::stats: return "stats";
  }
  return "?";
}

// The SPEC example, every kind of error, sequences cut at the end, empty and one-byte inputs.
std::vector<bytes> special_utf8() {
  const auto b = [](std::string_view s) { return bytes(s.begin(), s.end()); };
  return {b(""),
          b("A"),
          b("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"),
          b("\xC0\xAF\xC1\xBF\xF5\xFF\x80\xBF"),
          b("\xE0\x80\x80\xE0\x9F\xBF\xED\xA0\x80\xF0\x80\x80\x80\xF4\x90\x80\x80"),
          b("ok\n\xE2\x82"),
          b("ok\n\xF0\x9F\x98"),
          b("\xC3"),
          b("line 1\nline 2\n\xE2\x82\xAC\xF0\x9F\x98\x80\n\xED\x9F\xBF\xEE\x80\x80\xF4\x8F\xBF\xBF")};
}

struct stream_out {
  std::vector<std::byte> out;
  text_stats stats;
  bool stopped = false;
  std::vector<code_point_count> top;
  stream_timings timings;
};

// Feeds `in` through a stream in chunks of the sizes in `chunks` (cycled).
stream_out run_stream(operation oper, error_policy p, const bytes& in, const std::vector<std::size_t>& chunks,
                      const options& backend) {
  stream_config c;
  c.operation = oper;
  c.policy = p;
  c.histogram = oper == operation::stats;
  c.backend = backend;
  stream s(c);
  stream_out r;
  std::size_t at = 0, k = 0;
  while (at < in.size()) {
    const std::size_t n = std::min(chunks[k++ % chunks.size()], in.size() - at);
    if (!s.feed(std::as_bytes(std::span(in.data() + at, n)), r.out)) break;
    at += n;
  }
  if (!s.stopped()) s.finish(r.out);
  r.stats = s.stats();
  r.stopped = s.stopped();
  if (c.histogram) r.top = s.top(0x110000);
  r.timings = s.timings();
  return r;
}

void expect_same_stream(operation oper, error_policy p, const bytes& in, const std::vector<std::size_t>& chunks,
                        const std::string& what) {
  SCOPED_TRACE(what + " " + op_name(oper) + " " + name(p) + " chunk " + std::to_string(chunks.front()) +
               (chunks.size() > 1 ? " (random splits)" : "") + " size " + std::to_string(in.size()));
  const stream_out gpu = run_stream(oper, p, in, chunks, with(backend::cuda));
  const stream_out ref = run_stream(oper, p, in, chunks, with(backend::cpu));
  EXPECT_TRUE(gpu.out == ref.out) << "output differs: " << gpu.out.size() << " vs " << ref.out.size() << " bytes";
  EXPECT_EQ(gpu.stats, ref.stats) << describe(gpu.stats.input) << " vs " << describe(ref.stats.input);
  EXPECT_EQ(gpu.stopped, ref.stopped);
  EXPECT_TRUE(gpu.top == ref.top) << "histogram differs";
  if (chunks.size() == 1 && chunks.front() >= 64 && ref.stats.input.bytes >= 64) {
    EXPECT_GT(gpu.timings.gpu_bytes, 0u);
  }
  EXPECT_EQ(ref.timings.gpu_bytes, 0u);
}

std::vector<std::size_t> random_splits(std::mt19937_64& g, std::size_t count) {
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < count; ++i) {
    switch (g() % 4) {
      case 0: sizes.push_back(1 + g() % 4); break;
      case 1: sizes.push_back(1 + g() % 64); break;
      case 2: sizes.push_back(1 + g() % 5000); break;
      default: sizes.push_back(1 + g() % 300000);
    }
  }
  return sizes;
}

// -------------------------------------------------------------------- host API ----

// The one-shot host API with `cu` against the CPU backend on UTF-8 text: validate, stats, and
// decode and repair under every policy (output and summary).
void expect_one_shot_utf8_equal(std::string_view sv, const options& cu) {
  const options cp = with(backend::cpu);
  EXPECT_EQ(validate(as_bytes(sv), cu), validate(as_bytes(sv), cp));
  EXPECT_EQ(stats(as_bytes(sv), cu), stats(as_bytes(sv), cp));
  for (error_policy p : policies) {
    SCOPED_TRACE(name(p));
    summary a, b;
    EXPECT_TRUE(decode(sv, p, &a, cu) == decode(sv, p, &b, cp));
    EXPECT_EQ(a, b);
    EXPECT_TRUE(repair(sv, p, &a, cu) == repair(sv, p, &b, cp));
    EXPECT_EQ(a, b);
  }
}

TEST(CudaBackend, OneShotEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(71);
  std::vector<bytes> texts = special_utf8();
  for (script s : scripts) {
    bytes t = random_text(g, 200000 + g() % 1000, s);
    texts.push_back(t);
    corrupt(g, t, 0.001);
    texts.push_back(std::move(t));
  }
  bytes big = random_text(g, (5u << 20) + 3, script::mixed);  // several sub-blocks per block
  corrupt(g, big, 0.00001);
  texts.push_back(std::move(big));
  const options cu = with(backend::cuda), cp = with(backend::cpu);
  for (const bytes& t : texts) {
    SCOPED_TRACE("size " + std::to_string(t.size()));
    const std::string_view sv(reinterpret_cast<const char*>(t.data()), t.size());
    expect_one_shot_utf8_equal(sv, cu);
    for (error_policy p : policies) {
      SCOPED_TRACE(name(p));
      summary a, b;
      // The same bytes as UTF-32 input (ragged, surrogates, values above U+10FFFF included).
      const bytes u = t.size() % 4 == 0 ? t : bytes(t.begin(), t.end() - static_cast<std::ptrdiff_t>(t.size() % 4));
      std::u32string in32(u.size() / 4, U'\0');
      std::memcpy(in32.data(), u.data(), u.size());
      EXPECT_TRUE(encode(in32, p, &a, cu) == encode(in32, p, &b, cp));
      EXPECT_EQ(a, b);
    }
  }
}

TEST(CudaBackend, OneShotEncodeEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(72);
  for (std::size_t ragged : {0, 1, 2, 3}) {
    for (double rate : {0.0, 0.0001, 0.01}) {
      const bytes u = random_utf32(g, 100000 + g() % 100, script::mixed, rate, ragged);
      std::vector<char8_t> a(max_encoded_size(u.size())), b(a.size());
      for (error_policy p : policies) {
        SCOPED_TRACE(std::string(name(p)) + " ragged " + std::to_string(ragged) + " rate " + std::to_string(rate));
        const transcode_result x = encode(std::as_bytes(std::span(u)), std::span(a), p, with(backend::cuda));
        const transcode_result y = encode(std::as_bytes(std::span(u)), std::span(b), p, with(backend::cpu));
        EXPECT_EQ(x.input, y.input);
        ASSERT_EQ(x.written, y.written);
        EXPECT_TRUE(std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(x.written), b.begin()));
      }
    }
  }
}

// ---------------------------------------------------------------------- streams ----

TEST(CudaBackend, StreamSmallChunksEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(73);
  bytes text = random_text(g, 6000, script::mixed);
  corrupt(g, text, 0.01);
  const bytes u = random_utf32(g, 1500, script::mixed, 0.01, 3);
  for (std::size_t chunk : {16, 17, 31}) {
    for (operation oper : all_ops)
      for (error_policy p : policies) {
        if ((oper == operation::validate || oper == operation::stats) && p != error_policy::replace) continue;
        expect_same_stream(oper, p, oper == operation::encode ? u : text, {chunk}, "small chunks");
      }
  }
}

TEST(CudaBackend, StreamLargeChunksAndRandomSplitsEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(74);
  for (script s : {script::ascii, script::cjk, script::emoji, script::mixed}) {
    bytes text = random_text(g, (3u << 20) + g() % 100, s);
    corrupt(g, text, 0.0002);
    const bytes u = random_utf32(g, (600000) + g() % 100, s, 0.0002, g() % 4);
    const std::vector<std::vector<std::size_t>> chunkings{{4097}, {std::size_t{1} << 20}, random_splits(g, 200)};
    for (const auto& chunks : chunkings)
      for (operation oper : all_ops)
        for (error_policy p : policies) {
          if ((oper == operation::validate || oper == operation::stats) && p != error_policy::replace) continue;
          expect_same_stream(oper, p, oper == operation::encode ? u : text, chunks, "large");
        }
  }
}

TEST(CudaBackend, StreamSizesAroundChunkBoundaries) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(75);
  constexpr std::size_t chunk = 4096;
  for (std::size_t size : {chunk - 1, chunk, chunk + 1, 2 * chunk - 2, 2 * chunk - 1, 2 * chunk, 2 * chunk + 1,
                           2 * chunk + 3}) {
    for (script s : {script::cyrillic, script::emoji, script::mixed}) {
      bytes text = random_text(g, size, s);
      text.resize(size);  // may cut the last sequence: an error only at the real end
      bytes bad = text;
      corrupt(g, bad, 0.002);
      bytes u = random_utf32(g, size / 4, s, 0.001, size % 4);
      for (operation oper : all_ops)
        for (error_policy p : policies) {
          if ((oper == operation::validate || oper == operation::stats) && p != error_policy::replace) continue;
          expect_same_stream(oper, p, oper == operation::encode ? u : text, {chunk}, "boundary");
          if (oper != operation::encode) expect_same_stream(oper, p, bad, {chunk}, "boundary, invalid");
        }
    }
  }
}

TEST(CudaBackend, StreamInvalidInputs) {
  GUTF8_REQUIRE_GPU();
  for (const bytes& t : special_utf8())
    for (std::size_t chunk : {1, 2, 3, 16, 4096})
      for (operation oper : {operation::validate, operation::decode, operation::repair, operation::stats})
        for (error_policy p : policies) {
          if ((oper == operation::validate || oper == operation::stats) && p != error_policy::replace) continue;
          expect_same_stream(oper, p, t, {chunk}, "special");
        }
}

TEST(CudaBackend, FeedIntoPinnedBuffersEqualsFeed) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(76);
  bytes text = random_text(g, 3u << 20, script::mixed);
  corrupt(g, text, 0.0001);
  const options cu = with(backend::cuda);
  constexpr std::size_t chunk = std::size_t{1} << 20;
  host_buffer in(chunk, cu);
  EXPECT_TRUE(in.pinned());
  for (operation oper : {operation::decode, operation::repair, operation::validate})
    for (error_policy p : policies) {
      SCOPED_TRACE(std::string(op_name(oper)) + " " + name(p));
      stream_config c{oper, p, false, cu};
      stream s(c);
      host_buffer out(s.max_output(chunk + 4), cu);
      EXPECT_TRUE(out.pinned() || out.size() == 0);
      std::vector<std::byte> got;
      for (std::size_t at = 0; at < text.size() && !s.stopped(); at += chunk) {
        const std::size_t n = std::min(chunk, text.size() - at);
        std::memcpy(in.data(), text.data() + at, n);
        const std::size_t w = s.feed_into(in.span().first(n), out.span());
        got.insert(got.end(), out.data(), out.data() + w);
      }
      if (!s.stopped()) {
        const std::size_t w = s.finish_into(out.span());
        got.insert(got.end(), out.data(), out.data() + w);
      }
      const stream_out ref = run_stream(oper, p, text, {chunk}, with(backend::cpu));
      EXPECT_TRUE(got == ref.out);
      EXPECT_EQ(s.stats(), ref.stats);
      EXPECT_GT(s.timings().gpu_bytes, 0u);
    }
}

// ------------------------------------------------------------ backend selection ----

TEST(CudaBackend, AutoSelectFollowsSizeHint) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(77);
  const bytes text = random_text(g, 2u << 20, script::cjk);
  options big = with(backend::auto_select);
  big.threads = 2;  // the threshold depends on the CPU threads it is weighed against
  big.size_hint = internal::auto_gpu_threshold(2);
  options small = with(backend::auto_select);
  small.size_hint = 1000;
  options unknown = with(backend::auto_select);
  const std::vector<std::size_t> chunks{std::size_t{1} << 20};
  EXPECT_GT(run_stream(operation::decode, error_policy::replace, text, chunks, big).timings.gpu_bytes, 0u);
  EXPECT_EQ(run_stream(operation::decode, error_policy::replace, text, chunks, small).timings.gpu_bytes, 0u);
  EXPECT_EQ(run_stream(operation::decode, error_policy::replace, text, chunks, unknown).timings.gpu_bytes, 0u);
  EXPECT_TRUE(host_buffer(64, big).pinned());
  EXPECT_FALSE(host_buffer(64, small).pinned());
}

TEST(CudaBackend, MissingDeviceIsNoDevice) {
  GUTF8_REQUIRE_GPU();
  options o = with(backend::cuda);
  o.device = 4096;
  try {
    stream s(stream_config{operation::validate, error_policy::replace, false, o});
    FAIL() << "no error for GPU 4096";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::no_device) << e.what();
  }
}

// ------------------------------------------------------- options::device_memory_limit ----

options limited(backend b, std::uint64_t limit) {
  options o = with(b);
  o.device_memory_limit = limit;
  return o;
}

// 8 MiB of mixed text with errors: blocks of it are planned in sub-blocks of 2 MiB, whose buffers
// (decode: 2 x (2 + 8) MiB) are far over the limits below.
bytes limit_text() {
  auto g = rng(79);
  bytes text = random_text(g, std::size_t{8} << 20, script::mixed);
  corrupt(g, text, 0.0001);
  return text;
}

constexpr std::uint64_t small_limit = std::uint64_t{3} << 20;  // fits sub-blocks of 256 KiB (decode)
constexpr std::uint64_t tiny_limit = std::uint64_t{64} << 10;  // fits no sub-block, not even 64 KiB

// Only sub-blocks well below the planned size fit under small_limit, so results equal to the CPU's
// (and no out_of_memory) mean the backend retried with smaller sub-blocks as on a real allocation
// failure.
TEST(CudaBackend, MemoryLimitForcesSmallerSubBlocksEqualsCpu) {
  GUTF8_REQUIRE_GPU();
  const bytes text = limit_text();
  auto g = rng(80);
  const bytes u = random_utf32(g, std::size_t{2} << 20, script::mixed, 0.0001, 1);
  const std::string_view sv(reinterpret_cast<const char*>(text.data()), text.size());
  const options cu = limited(backend::cuda, small_limit), cp = with(backend::cpu);
  expect_one_shot_utf8_equal(sv, cu);
  for (std::size_t chunk : {std::size_t{2} << 20, std::size_t{8} << 20}) {
    for (operation oper : {operation::validate, operation::decode, operation::repair, operation::encode}) {
      SCOPED_TRACE(std::string(op_name(oper)) + " chunk " + std::to_string(chunk));
      const bytes& in = oper == operation::encode ? u : text;
      const stream_out gpu = run_stream(oper, error_policy::replace, in, {chunk}, cu);
      const stream_out ref = run_stream(oper, error_policy::replace, in, {chunk}, cp);
      EXPECT_TRUE(gpu.out == ref.out) << "output differs: " << gpu.out.size() << " vs " << ref.out.size();
      EXPECT_EQ(gpu.stats, ref.stats) << describe(gpu.stats.input) << " vs " << describe(ref.stats.input);
      EXPECT_GT(gpu.timings.gpu_bytes, 0u);
      EXPECT_FALSE(gpu.timings.gpu_memory_fallback);
    }
  }
}

TEST(CudaBackend, MemoryLimitBelowSmallestSubBlockIsOutOfMemory) {
  GUTF8_REQUIRE_GPU();
  const bytes text = limit_text();
  const std::string_view sv(reinterpret_cast<const char*>(text.data()), text.size());
  const options cu = limited(backend::cuda, tiny_limit);
  const auto expect_out_of_memory = [](const char* what, const auto& call) {
    SCOPED_TRACE(what);
    try {
      call();
      ADD_FAILURE() << "no error under a device memory limit of " << tiny_limit << " bytes";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
      EXPECT_NE(std::string(e.what()).find("GPU memory"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("device memory limit of 65536 bytes"), std::string::npos) << e.what();
    }
  };
  expect_out_of_memory("validate", [&] { validate(as_bytes(sv), cu); });
  expect_out_of_memory("decode", [&] { decode(sv, error_policy::replace, nullptr, cu); });
  expect_out_of_memory("repair", [&] { repair(sv, error_policy::drop, nullptr, cu); });
  expect_out_of_memory("stream decode", [&] {
    stream s(stream_config{operation::decode, error_policy::replace, false, cu});
    std::vector<std::byte> out;
    s.feed(std::as_bytes(std::span(text)), out);
    s.finish(out);
  });
}

// auto_select with an input known to be large goes to the GPU; with a limit no sub-block fits under, it
// must give the CPU's results instead of failing (as on a real out-of-memory).
TEST(CudaBackend, AutoSelectFallsBackToCpuUnderMemoryLimit) {
  GUTF8_REQUIRE_GPU();
  const bytes text = limit_text();
  const std::string_view sv(reinterpret_cast<const char*>(text.data()), text.size());
  options au = limited(backend::auto_select, tiny_limit);
  au.threads = 2;
  au.size_hint = internal::auto_gpu_threshold(2);
  const options cp = with(backend::cpu);
  EXPECT_EQ(validate(as_bytes(sv), au), validate(as_bytes(sv), cp));
  summary a, b;
  EXPECT_TRUE(decode(sv, error_policy::replace, &a, au) == decode(sv, error_policy::replace, &b, cp));
  EXPECT_EQ(a, b);
  const std::vector<std::size_t> chunks{std::size_t{1} << 20};
  for (operation oper : {operation::validate, operation::decode, operation::stats}) {
    SCOPED_TRACE(op_name(oper));
    const stream_out got = run_stream(oper, error_policy::replace, text, chunks, au);
    const stream_out ref = run_stream(oper, error_policy::replace, text, chunks, cp);
    EXPECT_TRUE(got.out == ref.out);
    EXPECT_EQ(got.stats, ref.stats);
    EXPECT_TRUE(got.top == ref.top);
    EXPECT_EQ(got.timings.gpu_bytes, 0u);
    EXPECT_TRUE(got.timings.gpu_memory_fallback);
  }
  // A limit that sub-blocks fit under keeps auto_select on the GPU.
  options fits = limited(backend::auto_select, small_limit);
  fits.threads = 2;
  fits.size_hint = internal::auto_gpu_threshold(2);
  const stream_out gpu = run_stream(operation::decode, error_policy::replace, text, chunks, fits);
  EXPECT_TRUE(gpu.out == run_stream(operation::decode, error_policy::replace, text, chunks, cp).out);
  EXPECT_GT(gpu.timings.gpu_bytes, 0u);
  EXPECT_FALSE(gpu.timings.gpu_memory_fallback);
}

// ------------------------------------------------------------ the block processor ----

struct block_out {
  internal::block_result r;
  bytes out;
  std::vector<std::uint64_t> histogram;
};

block_out run_block(internal::block_processor& proc, operation oper, error_policy p, const bytes& in, bool at_end,
                    bool count_lines) {
  block_out b;
  b.out.assign(internal::output_width(oper) * in.size() + 16, 0xEE);
  if (oper == operation::stats) b.histogram.assign(0x110000, 0);
  internal::block_request rq;
  rq.op = oper;
  rq.policy = p;
  rq.data = in.data();
  rq.size = rq.end = in.size();
  rq.at_end = at_end;
  rq.count_lines = count_lines;
  rq.histogram = b.histogram.empty() ? nullptr : b.histogram.data();
  rq.out = internal::output_width(oper) ? b.out.data() : nullptr;
  b.r = proc.process(rq);
  b.out.resize(b.r.written);
  return b;
}

TEST(CudaBlockProcessor, SmallSubBlocksEqualCpuForEveryRequest) {
  GUTF8_REQUIRE_GPU();
  internal::gpu_tuning tuning;
  tuning.max_sub_block = tuning.min_sub_block = tuning.min_retry_block = 4096;  // many sub-blocks
  auto gpu = internal::make_gpu_processor(with(backend::cuda), internal::make_cpu_processor(1), tuning);
  auto cpu = internal::make_cpu_processor(0);
  auto g = rng(78);
  for (std::size_t size : {std::size_t{4095}, std::size_t{4097}, std::size_t{3 * 4096 + 1}, std::size_t{100000}}) {
    for (double rate : {0.0, 0.0005, 0.01}) {
      bytes text = random_text(g, size, script::mixed);
      corrupt(g, text, rate);
      const bytes u = random_utf32(g, size / 4, script::emoji, rate, size % 4);
      for (operation oper : all_ops)
        for (error_policy p : policies)
          for (bool at_end : {false, true})
            for (bool lines : {false, true}) {
              SCOPED_TRACE(std::string(op_name(oper)) + " " + name(p) + " size " + std::to_string(size) + " rate " +
                           std::to_string(rate) + (at_end ? " at end" : "") + (lines ? " lines" : ""));
              const bytes& in = oper == operation::encode ? u : text;
              const block_out a = run_block(*gpu, oper, p, in, at_end, lines);
              const block_out b = run_block(*cpu, oper, p, in, at_end, lines);
              EXPECT_EQ(a.r.consumed, b.r.consumed);
              EXPECT_EQ(a.r.written, b.r.written);
              EXPECT_EQ(a.r.errors, b.r.errors);
              EXPECT_EQ(a.r.first_error, b.r.first_error);
              EXPECT_EQ(a.r.first_kind, b.r.first_kind);
              EXPECT_EQ(a.r.stopped, b.r.stopped);
              EXPECT_EQ(a.r.lines, b.r.lines);
              EXPECT_EQ(a.r.by_length, b.r.by_length);
              EXPECT_TRUE(a.out == b.out);
              EXPECT_TRUE(a.histogram == b.histogram);
            }
    }
  }
}

}  // namespace
}  // namespace gutf8::test::gpu
