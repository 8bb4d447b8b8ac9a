// nvCOMP's batched decompression, device-resident, beside the host library on the host's threads
// over the same frames or members (not a Google Benchmark: one batch a run, timed with events, median
// of --runs).
//
//   bench_nvcomp --input FILE [--format zstd|gzip] [--size BYTES] [--frames 65536,1048576]
//                [--level N] [--runs 7] [--threads N] [--commit C] [--out TABLE.md]
//   bench_nvcomp --input FILE --write OUT.zst [--size BYTES] [--frames BYTES] [--level 3]
//                [--checksum 0|1] [--shards N]
// The second form writes the text as zstd frames of --frames bytes of text (0: one frame a shard)
// to OUT.zst, or to N shards OUT-000.zst ... (the frames split evenly between them), each frame
// followed by its proof as gutf8's writer writes it (compress/proof.hpp): inputs for the engine's
// benchmark on a host without the zstd tool.
// The text (the first --size bytes of FILE) is cut into frames of each size: zstd frames by libzstd
// with checksums (level 3 by default), or gzip members by gutf8's gzip part encoder (libdeflate,
// level 6 by default, G8 header); each is checked by the CPU's structure check as a GPU lane would,
// then decompressed into one device buffer (gzip: nvCOMP's gzip API with its naive and look-ahead
// algorithms, and its raw deflate API on the members' payloads); every run's output is compared with
// the text. Prints a markdown table (GB/s of text) and writes it to --out.
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

#include <nvcomp/deflate.h>
#include <nvcomp/gzip.h>

#include "compress/codecs.hpp"
#include "compress/format.hpp"
#include "compress/proof.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace {

namespace nv = gutf8::cuda::nvcomp;
using bytes = std::vector<std::uint8_t>;

struct options {
  std::string input, out, commit = "unknown", write, format = "zstd";
  bool checksum = true;
  std::size_t shards = 1;
  std::size_t size = std::size_t{512} << 20;
  std::vector<std::size_t> frames{65536, 1u << 20};
  int level = 0, runs = 7;  // level 0: the format's default (zstd 3, gzip 6)
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
    else if (k == "--format") o.format = v;
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
  if (o.format != "zstd" && o.format != "gzip") throw std::invalid_argument("--format is zstd or gzip");
  if (o.level == 0) o.level = o.format == "gzip" ? 6 : 3;
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
  bool gzip = false;
};

framed compress(const bytes& text, std::size_t frame, const options& o) {
  framed f;
  f.gzip = o.format == "gzip";
  for (std::size_t at = 0; at < text.size(); at += frame) {
    f.text_at.push_back(at);
    f.text_size.push_back(std::min(frame, text.size() - at));
  }
  f.frames.resize(f.text_at.size());
  if (o.format == "gzip") {  // gutf8's members: what `-o X.gz` writes, a G8 header each
    parallel_for(f.frames.size(), o.threads, [&](std::size_t i) {
      const auto enc = gutf8::internal::compress::make_part_encoder(gutf8::internal::compress::format::gzip, o.level);
      bytes out(enc->bound(f.text_size[i]));
      out.resize(enc->encode(std::span(text).subspan(f.text_at[i], f.text_size[i]), out));
      f.frames[i] = std::move(out);
    });
    return f;
  }
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
    const auto e = f.gzip ? gutf8::internal::compress::gzip_member_extent(read, 0, fr.size())
                          : gutf8::internal::compress::zstd_frame_extent(read, 0, fr.size());
    if (!e || e->size != fr.size() || e->text_size != f.text_size[i])
      throw std::runtime_error("a frame fails the structure check");
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct row {
  std::string way;
  std::size_t frame, count, compressed, temp;
  double gpu_gbs, host_gbs;
};

// One launch() timed with events a run (run -1 warms up), its output checked after each: GB/s of
// text at the median run.
template <class Launch, class Check>
double timed_rate(std::size_t text_bytes, const options& o, gutf8::cuda::stream& s, Launch launch, Check check) {
  std::vector<double> seconds;
  for (int run = -1; run < o.runs; ++run) {
    gutf8::cuda::event start, stop;
    start.record(s);
    launch();
    stop.record(s);
    stop.synchronize();
    if (run >= 0) seconds.push_back(stop.elapsed_since(start) / 1e3);
    if (!check()) throw std::runtime_error("MISMATCH: device text");
  }
  return double(text_bytes) / median(seconds) / 1e9;
}

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
  bytes check(text.size());
  std::vector<nv::frame_result> results(f.frames.size());
  return timed_rate(text.size(), o, s, [&] { nv::decompress_zstd(d_temp.data(), temp_bytes, batch, out, d_results.data(), s); },
                    [&] {
                      d_out.download(check, s);
                      d_results.download(results, s);
                      s.synchronize();
                      return check == text && nv::failed_frames(results).empty();
                    });
}

// nvCOMP's gzip and raw deflate APIs share one shape; `way` picks the API and the algorithm.
enum class gzip_way { gzip_naive, gzip_lookahead, deflate_payloads };

nvcompStatus_t gzip_call(gzip_way way, bool temp_only, std::size_t n, std::size_t max_text, std::size_t total_text,
                         std::size_t& temp_bytes, const void* const* in, const std::size_t* in_bytes,
                         const std::size_t* room, std::size_t* written, void* temp, void* const* out,
                         nvcompStatus_t* statuses, cudaStream_t s) {
  if (way == gzip_way::deflate_payloads) {
    const nvcompBatchedDeflateDecompressOpts_t opts = nvcompBatchedDeflateDecompressDefaultOpts;
    return temp_only ? nvcompBatchedDeflateDecompressGetTempSize(n, max_text, opts, &temp_bytes, total_text, s)
                     : nvcompBatchedDeflateDecompressAsync(in, in_bytes, room, written, n, temp, temp_bytes, out, opts,
                                                           statuses, s);
  }
  nvcompBatchedGzipDecompressOpts_t opts = nvcompBatchedGzipDecompressDefaultOpts;
  opts.algorithm = way == gzip_way::gzip_naive ? NVCOMP_GZIP_DECOMPRESS_ALGORITHM_NAIVE
                                               : NVCOMP_GZIP_DECOMPRESS_ALGORITHM_LOOKAHEAD;
  return temp_only ? nvcompBatchedGzipDecompressGetTempSize(n, max_text, opts, &temp_bytes, total_text, s)
                   : nvcompBatchedGzipDecompressAsync(in, in_bytes, room, written, n, temp, temp_bytes, out, opts,
                                                      statuses, s);
}

// gutf8's members decompressed device-resident by nvCOMP, whole (gzip API) or their deflate payloads
// (the bytes between the header and the 8-byte trailer); 256-byte aligned inputs.
double gzip_device_rate(const bytes& text, const framed& f, const options& o, gzip_way way, std::size_t& temp_bytes) {
  constexpr std::size_t align = 256;
  bytes packed;
  std::vector<std::size_t> in_at, in_bytes, max_text{0};
  for (const bytes& m : f.frames) {
    std::size_t from = 0, size = m.size();
    if (way == gzip_way::deflate_payloads) {  // past the header (RFC 1952): FEXTRA, FNAME, FCOMMENT, FHCRC
      const std::uint8_t flags = m[3];
      from = 10;
      if (flags & 0x04) from += 2 + (std::size_t(m[10]) | std::size_t(m[11]) << 8);
      for (const std::uint8_t zero_ended : {std::uint8_t{0x08}, std::uint8_t{0x10}})
        if (flags & zero_ended) from = std::size_t(std::find(m.begin() + std::ptrdiff_t(from), m.end(), 0) - m.begin()) + 1;
      if (flags & 0x02) from += 2;
      if (from + 8 > m.size()) throw std::runtime_error("a gzip header past its member");
      size = m.size() - 8 - from;
    }
    packed.resize((packed.size() + align - 1) / align * align);
    in_at.push_back(packed.size());
    in_bytes.push_back(size);
    packed.insert(packed.end(), m.begin() + std::ptrdiff_t(from), m.begin() + std::ptrdiff_t(from + size));
  }
  gutf8::cuda::stream s;
  gutf8::cuda::device_buffer<std::uint8_t> d_in(packed.size()), d_out(text.size());
  d_in.upload(packed, s);
  const std::size_t n = f.frames.size();
  std::vector<const void*> ins(n);
  std::vector<void*> outs(n);
  for (std::size_t i = 0; i < n; ++i) {
    ins[i] = d_in.data() + in_at[i];
    outs[i] = d_out.data() + f.text_at[i];
    max_text[0] = std::max(max_text[0], f.text_size[i]);
  }
  gutf8::cuda::device_buffer<const void*> d_ins(n);
  gutf8::cuda::device_buffer<void*> d_outs(n);
  gutf8::cuda::device_buffer<std::size_t> d_in_bytes(n), d_room(n), d_written(n);
  gutf8::cuda::device_buffer<nvcompStatus_t> d_status(n);
  d_ins.upload(ins, s);
  d_outs.upload(outs, s);
  d_in_bytes.upload(in_bytes, s);
  d_room.upload(f.text_size, s);
  if (gzip_call(way, true, n, max_text[0], text.size(), temp_bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, s) != nvcompSuccess)
    throw std::runtime_error("nvCOMP: temp size");
  gutf8::cuda::device_buffer<std::byte> d_temp(std::max<std::size_t>(temp_bytes, 1));
  bytes check(text.size());
  std::vector<nvcompStatus_t> status(n);
  const auto launch = [&] {
    if (gzip_call(way, false, n, max_text[0], text.size(), temp_bytes, d_ins.data(), d_in_bytes.data(), d_room.data(),
                  d_written.data(), d_temp.data(), d_outs.data(), d_status.data(), s) != nvcompSuccess)
      throw std::runtime_error("nvCOMP: launch");
  };
  return timed_rate(text.size(), o, s, launch, [&] {
    d_out.download(check, s);
    d_status.download(status, s);
    s.synchronize();
    return check == text && std::all_of(status.begin(), status.end(), [](nvcompStatus_t st) { return st == nvcompSuccess; });
  });
}

// libzstd over the same frames on the host's threads, into one buffer.
double host_rate(const bytes& text, const framed& f, const options& o) {
  bytes out(text.size());
  std::vector<double> seconds;
  std::atomic<bool> failed = false;
  for (int run = 0; run < o.runs; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(f.frames.size(), o.threads, [&](std::size_t i) {
      const std::span<std::uint8_t> to(out.data() + f.text_at[i], f.text_size[i]);
      if (f.gzip) {  // gutf8's decoder of a whole member: libdeflate at once
        const auto d = gutf8::internal::compress::make_decoder(gutf8::internal::compress::format::gzip);
        if (d->decode_whole(f.frames[i], to) != f.text_size[i]) failed = true;
        return;
      }
      const std::size_t rc = ZSTD_decompress(to.data(), to.size(), f.frames[i].data(), f.frames[i].size());
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
  const bool gz = o.format == "gzip";
  t << "nvCOMP " << o.format << " decompression on " << p.name << ", commit " << o.commit << ", input " << o.input
    << " (" << text.size() << " bytes), " << (gz ? "gutf8's gzip members (libdeflate -" : "zstd -") << o.level
    << (gz ? ")" : o.checksum ? " with checksums" : " without checksums") << ", median of " << o.runs << " runs\n\n"
    << "| nvCOMP way | frame | frames | ratio | nvCOMP GB/s of text | " << (gz ? "libdeflate " : "libzstd ") << o.threads
    << " threads GB/s | nvCOMP / host | nvCOMP temp MiB |\n|---|---|---|---|---|---|---|---|\n";
  for (const row& r : rows) {
    char line[320];
    std::snprintf(line, sizeof line, "| %s | %zu | %zu | %.2f | %.1f | %.1f | %.2fx | %.0f |\n", r.way.c_str(), r.frame, r.count,
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
    row r{"zstd", frame, f.frames.size(), 0, 0, 0, 0};
    for (const bytes& fr : f.frames) r.compressed += fr.size();
    r.host_gbs = host_rate(text, f, o);
    if (!f.gzip) {
      r.gpu_gbs = device_rate(text, f, o, r.temp);
      rows.push_back(r);
      continue;
    }
    for (const auto& [way, name] : {std::pair{gzip_way::gzip_naive, "gzip, naive"},
                                    std::pair{gzip_way::gzip_lookahead, "gzip, look-ahead"},
                                    std::pair{gzip_way::deflate_payloads, "deflate, payloads"}}) {
      r.way = name;
      r.gpu_gbs = gzip_device_rate(text, f, o, way, r.temp);
      rows.push_back(r);
    }
  }
  const std::string t = table(o, text, rows);
  std::fputs(t.c_str(), stdout);
  if (!o.out.empty()) std::ofstream(o.out) << t;
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_nvcomp: %s\n", e.what());
  return 1;
}
