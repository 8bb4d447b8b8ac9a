// nvCOMP's batched zstd decompression, device-resident, beside libzstd on the host's threads over the
// same frames (not a Google Benchmark: one batch a run, timed with events, median of --runs).
//
//   bench_nvcomp_zstd --input FILE [--size BYTES] [--frames 65536,1048576] [--level 3] [--runs 7]
//                     [--threads N] [--commit C] [--out TABLE.md]
//   bench_nvcomp_zstd --input FILE --write OUT.zst [--size BYTES] [--frames BYTES] [--level 3]
//                     [--checksum 0|1] [--shards N]
// The second form writes the text as zstd frames of --frames bytes of text (0: one frame a shard)
// to OUT.zst, or to N shards OUT-000.zst ... (the frames split evenly between them), each frame
// followed by its proof as gutf8's writer writes it (compress/proof.hpp): inputs for the engine's
// benchmark on a host without the zstd tool.
// The text (the first --size bytes of FILE) is cut into frames of each size, compressed by libzstd
// with checksums, checked by the CPU's structure check as a GPU lane would, then decompressed into
// one device buffer; every run's output is compared with the text. Prints a markdown table (GB/s of
// text) and writes it to --out.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compress/codecs.hpp"
#include "compress/proof.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace {

namespace nv = gutf8::cuda::nvcomp;
using bytes = std::vector<std::uint8_t>;

struct options {
  std::string input, out, commit = "unknown", write;
  bool checksum = true;
  std::size_t shards = 1;
  std::size_t size = std::size_t{512} << 20;
  std::vector<std::size_t> frames{65536, 1u << 20};
  int level = 3, runs = 7;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--input") o.input = v;
    else if (k == "--out") o.out = v;
    else if (k == "--commit") o.commit = v;
    else if (k == "--write") o.write = v;
    else if (k == "--checksum") o.checksum = v != "0";
    else if (k == "--shards") o.shards = std::max<std::size_t>(1, std::stoull(v));
    else if (k == "--size") o.size = std::stoull(v);
    else if (k == "--level") o.level = std::stoi(v);
    else if (k == "--runs") o.runs = std::max(1, std::stoi(v));
    else if (k == "--threads") o.threads = std::max(1u, unsigned(std::stoul(v)));
    else if (k == "--frames") {
      o.frames.clear();
      std::stringstream ss(v);
      for (std::string f; std::getline(ss, f, ',');) o.frames.push_back(std::stoull(f));
    } else throw std::invalid_argument("unknown option " + k);
  }
  if (o.input.empty()) throw std::invalid_argument("--input FILE is required");
  return o;
}

bytes read_text(const options& o) {
  std::ifstream f(o.input, std::ios::binary);
  bytes text(o.size);
  f.read(reinterpret_cast<char*>(text.data()), std::streamsize(text.size()));
  text.resize(std::size_t(f.gcount()));
  if (text.empty()) throw std::runtime_error("no text in " + o.input);
  return text;
}

// Runs f(i) for i in [0, n) on `threads` threads.
void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& f) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += threads) f(i);
    });
  for (auto& th : pool) th.join();
}

struct framed {
  std::vector<bytes> frames;
  std::vector<std::size_t> text_at, text_size;
};

framed compress(const bytes& text, std::size_t frame, const options& o) {
  framed f;
  for (std::size_t at = 0; at < text.size(); at += frame) {
    f.text_at.push_back(at);
    f.text_size.push_back(std::min(frame, text.size() - at));
  }
  f.frames.resize(f.text_at.size());
  parallel_for(f.frames.size(), o.threads, [&](std::size_t i) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, o.level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, o.checksum ? 1 : 0);
    bytes out(ZSTD_compressBound(f.text_size[i]));
    const std::size_t rc = ZSTD_compress2(c, out.data(), out.size(), text.data() + f.text_at[i], f.text_size[i]);
    ZSTD_freeCCtx(c);
    out.resize(ZSTD_isError(rc) ? 0 : rc);  // an empty frame fails the structure check below
    f.frames[i] = std::move(out);
  });
  return f;
}

// The CPU's structure check, as a GPU lane would run it: every frame must pass with its text size.
void check_structure(const framed& f) {
  for (std::size_t i = 0; i < f.frames.size(); ++i) {
    const bytes& fr = f.frames[i];
    const gutf8::internal::compress::random_reader read = [&](std::span<std::uint8_t> b, std::uint64_t at) {
      std::memcpy(b.data(), fr.data() + at, b.size());
    };
    const auto e = gutf8::internal::compress::zstd_frame_extent(read, 0, fr.size());
    if (!e || e->size != fr.size() || e->text_size != f.text_size[i])
      throw std::runtime_error("a frame fails the structure check");
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct row {
  std::size_t frame, count, compressed, temp;
  double gpu_gbs, host_gbs;
};

// Device-resident runs: the frames uploaded once, one decompress_zstd call timed a run.
double device_rate(const bytes& text, const framed& f, const options& o, std::size_t& temp_bytes) {
  bytes packed;
  std::vector<std::size_t> in_at;
  for (const bytes& fr : f.frames) {
    in_at.push_back(packed.size());
    packed.insert(packed.end(), fr.begin(), fr.end());
  }
  gutf8::cuda::stream s;
  gutf8::cuda::device_buffer<std::uint8_t> d_in(packed.size()), d_out(text.size());
  gutf8::cuda::device_buffer<nv::frame_result> d_results(f.frames.size());
  d_in.upload(packed, s);
  std::vector<nv::zstd_frame> batch;
  for (std::size_t i = 0; i < f.frames.size(); ++i)
    batch.push_back({reinterpret_cast<const std::byte*>(d_in.data() + in_at[i]), f.frames[i].size(), f.text_size[i],
                     f.text_at[i], 0});  // libzstd's frames: their headers tell the truth
  auto* out = reinterpret_cast<std::byte*>(d_out.data());
  nv::decompress_zstd(nullptr, temp_bytes, batch, out, d_results.data(), s);
  gutf8::cuda::device_buffer<std::byte> d_temp(temp_bytes);
  std::vector<double> seconds;
  bytes check(text.size());
  std::vector<nv::frame_result> results(f.frames.size());
  for (int run = -1; run < o.runs; ++run) {  // run -1: warm-up
    gutf8::cuda::event start, stop;
    start.record(s);
    nv::decompress_zstd(d_temp.data(), temp_bytes, batch, out, d_results.data(), s);
    stop.record(s);
    stop.synchronize();
    if (run >= 0) seconds.push_back(stop.elapsed_since(start) / 1e3);
    d_out.download(check, s);
    d_results.download(results, s);
    s.synchronize();
    if (check != text || !nv::failed_frames(results).empty()) throw std::runtime_error("MISMATCH: device text");
  }
  return double(text.size()) / median(seconds) / 1e9;
}

// libzstd over the same frames on the host's threads, into one buffer.
double host_rate(const bytes& text, const framed& f, const options& o) {
  bytes out(text.size());
  std::vector<double> seconds;
  std::atomic<bool> failed = false;
  for (int run = 0; run < o.runs; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(f.frames.size(), o.threads, [&](std::size_t i) {
      const std::size_t rc = ZSTD_decompress(out.data() + f.text_at[i], f.text_size[i], f.frames[i].data(),
                                             f.frames[i].size());
      if (ZSTD_isError(rc) || rc != f.text_size[i]) failed = true;
    });
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (failed || out != text) throw std::runtime_error("MISMATCH: host text");
  return double(text.size()) / median(seconds) / 1e9;
}

std::string table(const options& o, const bytes& text, const std::vector<row>& rows) {
  cudaDeviceProp p{};
  gutf8::cuda::check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  std::ostringstream t;
  t << "nvCOMP zstd decompression on " << p.name << ", commit " << o.commit << ", input " << o.input << " ("
    << text.size() << " bytes), zstd -" << o.level << (o.checksum ? " with" : " without") << " checksums, median of " << o.runs << " runs\n\n"
    << "| frame | frames | ratio | nvCOMP GB/s of text | libzstd " << o.threads
    << " threads GB/s | nvCOMP / libzstd | nvCOMP temp MiB |\n|---|---|---|---|---|---|---|\n";
  for (const row& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "| %zu | %zu | %.2f | %.1f | %.1f | %.2fx | %.0f |\n", r.frame, r.count,
                  double(text.size()) / double(r.compressed), r.gpu_gbs, r.host_gbs, r.gpu_gbs / r.host_gbs,
                  double(r.temp) / (1 << 20));
    t << line;
  }
  return t.str();
}

// The --write form: the frames into one file or into shards of consecutive frames.
void write_frames(const bytes& text, options o) {
  std::size_t frame = o.frames.empty() ? 0 : o.frames.front();
  if (frame == 0) frame = (text.size() + o.shards - 1) / o.shards;
  const framed f = compress(text, frame, o);
  for (std::size_t s = 0; s < o.shards; ++s) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%03zu.zst", s);
    const std::string name =
        o.shards == 1 ? o.write : o.write.substr(0, o.write.rfind(".zst")) + suffix;
    std::ofstream out(name, std::ios::binary);
    for (std::size_t i = s * f.frames.size() / o.shards; i < (s + 1) * f.frames.size() / o.shards; ++i) {
      out.write(reinterpret_cast<const char*>(f.frames[i].data()), std::streamsize(f.frames[i].size()));
      const auto p = gutf8::internal::compress::proof_of(f.frames[i]);  // as gutf8's writer follows each frame
      out.write(reinterpret_cast<const char*>(p.data()), std::streamsize(p.size()));
    }
    if (!out) throw std::runtime_error("cannot write " + name);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  const options o = parse(argc, argv);
  const bytes text = read_text(o);
  if (!o.write.empty()) {
    write_frames(text, o);
    return 0;
  }
  std::vector<row> rows;
  for (std::size_t frame : o.frames) {
    const framed f = compress(text, frame, o);
    check_structure(f);
    row r{frame, f.frames.size(), 0, 0, 0, 0};
    for (const bytes& fr : f.frames) r.compressed += fr.size();
    r.gpu_gbs = device_rate(text, f, o, r.temp);
    r.host_gbs = host_rate(text, f, o);
    rows.push_back(r);
  }
  const std::string t = table(o, text, rows);
  std::fputs(t.c_str(), stdout);
  if (!o.out.empty()) std::ofstream(o.out) << t;
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_nvcomp_zstd: %s\n", e.what());
  return 1;
}
