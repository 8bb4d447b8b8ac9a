// Compressed input on one core: each format's decompressor over 512 KiB parts (independent frames or
// members, as the engine decodes them in parallel) and over one stream of all the text, each part
// compressor and the streaming compressor; beside them, on the same parts, libdeflate's whole-member gzip decoder and
// libzstd's one-shot decoder (what a fast path for parts of known size would use).
// Input: corpus/sample/*.txt concatenated (590 KB), cut into 512 KiB parts at cyclic offsets, so
// that no part repeats itself (a 512 KiB part compresses as real text would); 16 MiB in all. The
// stream is those parts one after another: zstd's and xz's windows see repeats there.
// Rates are text bytes per CPU second. GUTF8_BENCH_DUMP=DIR writes the text and the compressed
// stream and parts there (bench/compress_dev.sh times the standard tools on them).
// Reproduce: bench_cpu_compress --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <libdeflate.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "compress/compressor.hpp"
#include "compress/decompressor.hpp"

namespace {

namespace cz = gutf8::internal::compress;
namespace fs = std::filesystem;

constexpr std::size_t part_bytes = 512 * 1024;
constexpr std::size_t part_count = 32;
constexpr std::size_t encode_parts = 4;  // xz and bzip2 compress at a few MB/s
constexpr cz::format formats[] = {cz::format::gzip, cz::format::zstd, cz::format::xz, cz::format::bzip2,
                                  cz::format::lz4};

// corpus/sample of the source tree, or GUTF8_CORPUS_DIR (a binary carried to another host).
std::string sample() {
  const char* env = std::getenv("GUTF8_CORPUS_DIR");
  const fs::path dir = env ? fs::path(env) : fs::path(GUTF8_SOURCE_DIR) / "corpus" / "sample";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string s;
  for (const fs::path& p : files) {
    std::ifstream in(p, std::ios::binary);
    s.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return s;
}

// The parts' text, one after another.
const std::string& text() {
  static const std::string t = [] {
    const std::string s = sample();
    std::string all;
    for (std::size_t k = 0; k < part_count; ++k)
      for (std::size_t at = k * 104729 % s.size(), n = 0; n < part_bytes;) {
        const std::size_t take = std::min(part_bytes - n, s.size() - at);
        all.append(s, at, take);
        n += take;
        at = 0;
      }
    return all;
  }();
  return t;
}

std::span<const std::uint8_t> text_part(std::size_t k) {
  return std::span(reinterpret_cast<const std::uint8_t*>(text().data()), text().size())
      .subspan(k * part_bytes, part_bytes);
}

struct compressed {
  std::vector<std::vector<std::uint8_t>> parts;
  std::vector<std::uint8_t> stream;
  std::size_t part_total = 0;
};

const compressed& data(cz::format f) {
  static std::map<cz::format, compressed> cache;
  auto [it, fresh] = cache.try_emplace(f);
  if (!fresh) return it->second;
  compressed& c = it->second;
  cz::part_compressor pc(f);
  for (std::size_t k = 0; k < part_count; ++k) {
    pc.append(text_part(k), c.parts.emplace_back());
    c.part_total += c.parts.back().size();
  }
  cz::compressor s(f, [&](std::span<const std::uint8_t> b) { c.stream.insert(c.stream.end(), b.begin(), b.end()); });
  s.write(std::span(reinterpret_cast<const std::uint8_t*>(text().data()), text().size()));
  s.finish();
  if (const char* dir = std::getenv("GUTF8_BENCH_DUMP")) {
    const std::string suffix(cz::suffix(f));
    std::ofstream(fs::path(dir) / ("stream" + suffix), std::ios::binary)
        .write(reinterpret_cast<const char*>(c.stream.data()), static_cast<std::streamsize>(c.stream.size()));
    std::ofstream parts(fs::path(dir) / ("parts" + suffix), std::ios::binary);
    for (const auto& p : c.parts)
      parts.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
    std::ofstream(fs::path(dir) / "text.txt", std::ios::binary)
        .write(text().data(), static_cast<std::streamsize>(text().size()));
  }
  return c;
}

cz::part whole(std::size_t size, std::optional<std::uint64_t> text_size) {
  cz::part p;
  p.size = size;
  p.text_size = text_size;
  return p;
}

void set_rates(benchmark::State& state, std::size_t text_bytes, std::size_t compressed_bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text_bytes));
  state.counters["ratio"] = static_cast<double>(text_bytes) / static_cast<double>(compressed_bytes);
}

// Each part into one buffer of its text size (gzip: libdeflate at once), or streamed 64 KiB at a time.
void decode_parts(benchmark::State& state, cz::format f, std::size_t out_bytes) {
  const compressed& c = data(f);
  cz::decompressor d;
  std::vector<std::uint8_t> out(out_bytes);
  for (auto _ : state)
    for (const auto& p : c.parts) {
      d.open(f, whole(p.size(), part_bytes), p);
      while (d.read(out) > 0) {
      }
      benchmark::DoNotOptimize(out.data());
    }
  set_rates(state, text().size(), c.part_total);
}

void decode_stream(benchmark::State& state, cz::format f) {
  const compressed& c = data(f);
  cz::decompressor d;
  std::vector<std::uint8_t> out(1 << 20);
  for (auto _ : state) {
    d.open(f, whole(c.stream.size(), std::nullopt), c.stream);
    while (d.read(out) > 0) {
    }
    benchmark::DoNotOptimize(out.data());
  }
  set_rates(state, text().size(), c.stream.size());
}

void encode(benchmark::State& state, cz::format f) {
  cz::part_compressor pc(f);
  std::vector<std::uint8_t> out(pc.bound(part_bytes));
  std::size_t total = 0;
  for (auto _ : state) {
    total = 0;
    for (std::size_t k = 0; k < encode_parts; ++k) total += pc.compress(text_part(k), out);
  }
  set_rates(state, encode_parts * part_bytes, total);
}

// The streaming compressor over all the text (what the tools' -c does with the same bytes).
void encode_stream(benchmark::State& state, cz::format f) {
  const auto in = std::span(reinterpret_cast<const std::uint8_t*>(text().data()), text().size());
  std::size_t total = 0;
  for (auto _ : state) {
    total = 0;
    cz::compressor c(f, [&](std::span<const std::uint8_t> b) { total += b.size(); });
    c.write(in);
    c.finish();
  }
  set_rates(state, in.size(), total);
}

// Peers on the same gzip parts: libdeflate decodes a whole member into a buffer of its text size.
void libdeflate_gzip_parts(benchmark::State& state) {
  const compressed& c = data(cz::format::gzip);
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::vector<std::uint8_t> out(part_bytes);
  for (auto _ : state)
    for (const auto& p : c.parts)
      if (libdeflate_gzip_decompress(d, p.data(), p.size(), out.data(), out.size(), nullptr) != LIBDEFLATE_SUCCESS)
        state.SkipWithError("libdeflate failed");
  libdeflate_free_decompressor(d);
  set_rates(state, text().size(), c.part_total);
}

void zstd_one_shot_parts(benchmark::State& state) {
  const compressed& c = data(cz::format::zstd);
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::vector<std::uint8_t> out(part_bytes);
  for (auto _ : state)
    for (const auto& p : c.parts)
      if (ZSTD_isError(ZSTD_decompressDCtx(d, out.data(), out.size(), p.data(), p.size())))
        state.SkipWithError("libzstd failed");
  ZSTD_freeDCtx(d);
  set_rates(state, text().size(), c.part_total);
}

const bool registered = [] {
  for (const cz::format f : formats) {
    const std::string name(cz::name(f));
    benchmark::RegisterBenchmark(("decode_parts/" + name).c_str(), decode_parts, f, part_bytes)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("decode_parts_64k/" + name).c_str(), decode_parts, f, 65536)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("decode_stream/" + name).c_str(), decode_stream, f)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("encode_parts/" + name).c_str(), encode, f)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("encode_stream/" + name).c_str(), encode_stream, f)->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("peer_libdeflate_gzip_parts", libdeflate_gzip_parts)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("peer_zstd_one_shot_parts", zstd_one_shot_parts)->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
