// gutf8_gpu_fuzz: a GPU-vs-CPU differential fuzzer (random, not coverage-guided). Each
// iteration draws an operation and policy, an input (mixed-script UTF-8 with an error rate
// between 0 and 50%, raw random bytes, or UTF-32 with bad values and a ragged tail), a size and
// chunk sizes, then checks byte for byte, summary field for field, against the CPU codec (which
// the libFuzzer targets check against the independent oracle):
//   * gutf8::stream with backend::cuda, fed random chunk sizes (sometimes from pinned
//     host_buffers with feed_into);
//   * the one-shot host API with backend::cuda;
//   * the device API (include/gutf8/device.hpp) one-shot, and in random chunks with carry and
//     device::chunk_tracker, with a random decoder / encoder variant; decode also to UTF-16
//     (device::decode_utf16, a random byte order) against the CPU codec's decode_to.
//
//   gutf8_gpu_fuzz [--iterations N] [--seed S] [--max-size BYTES] [--device N] [--save DIR]
//                  [--backend cpu]
// --backend cpu is a dry run of the harness itself where there is no GPU: the "GPU" runs use the
// CPU backend and the device API is not called.
//
// Prints how many inputs and bytes were tried. Exit status 0: no mismatch (or no usable GPU:
// the reason is printed); 1: mismatches (each input saved to DIR as gpu_fuzz_<seed>_<i>.bin,
// with the parameters on stdout); 2: usage; 3: a CUDA or library failure.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/generators.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device.hpp"
#include "gutf8/gutf8.hpp"

namespace {

using namespace gutf8;

struct settings {
  std::uint64_t iterations = 200;
  std::uint64_t seed = 1;
  std::size_t max_size = std::size_t{8} << 20;
  int device = 0;
  std::string save_dir = ".";
  bool dry_run = false;  // --backend cpu
};

struct outcome {
  std::string out;
  text_stats stats;  // stats.input is the summary of every operation
};

const char* name(operation op) {
  constexpr const char* names[] = {"validate", "decode", "encode", "repair", "stats"};
  return names[static_cast<int>(op)];
}
const char* name(error_policy p) {
  constexpr const char* names[] = {"strict", "replace", "drop"};
  return names[static_cast<int>(p)];
}

std::span<const std::byte> as_span(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// ------------------------------------------------------------- host API runs ----

outcome one_shot(operation op, error_policy p, const std::string& in, const options& opt) {
  outcome o;
  const auto b = as_span(in);
  switch (op) {
    case operation::validate:
      o.stats.input = validate(b, opt);
      break;
    case operation::stats:
      o.stats = stats(b, opt);
      break;
    case operation::decode: {
      std::vector<char32_t> buf(max_decoded_size(in.size()));
      const transcode_result r = decode(b, std::span(buf), p, opt);
      o.out.assign(reinterpret_cast<const char*>(buf.data()), 4 * r.written);
      o.stats.input = r.input;
      break;
    }
    case operation::repair:
    case operation::encode: {
      std::vector<char8_t> buf(op == operation::encode ? max_encoded_size(in.size()) : max_repaired_size(in.size()));
      const transcode_result r =
          op == operation::encode ? encode(b, std::span(buf), p, opt) : repair(b, std::span(buf), p, opt);
      o.out.assign(reinterpret_cast<const char*>(buf.data()), r.written);
      o.stats.input = r.input;
      break;
    }
  }
  return o;
}

outcome streamed(operation op, error_policy p, const std::string& in, const options& opt, std::mt19937_64& g,
                 std::size_t max_chunk, bool pinned) {
  gutf8::stream st(stream_config{op, p, false, opt});
  std::string out;
  std::vector<std::byte> v;
  host_buffer chunk_buf, out_buf;
  if (pinned) {
    chunk_buf = host_buffer(max_chunk, opt);
    out_buf = host_buffer(std::max<std::size_t>(st.max_output(max_chunk), 1), opt);
  }
  for (std::size_t i = 0; i < in.size();) {
    const std::size_t n = std::min<std::size_t>(1 + g() % max_chunk, in.size() - i);
    if (pinned) {
      std::memcpy(chunk_buf.data(), in.data() + i, n);
      // The worst case grows with the carried partial sequence: ask each time.
      if (out_buf.size() < st.max_output(n)) out_buf = host_buffer(st.max_output(n) + 64, opt);
      const std::size_t w = st.feed_into(chunk_buf.span().first(n), out_buf.span());
      out.append(reinterpret_cast<const char*>(out_buf.data()), w);
    } else {
      v.clear();
      st.feed(as_span(in).subspan(i, n), v);
      out.append(reinterpret_cast<const char*>(v.data()), v.size());
    }
    i += n;
  }
  v.clear();
  st.finish(v);
  out.append(reinterpret_cast<const char*>(v.data()), v.size());
  return {out, st.stats()};
}

// UTF-16LE or BE from the CPU codec: what device::decode_utf16 is checked against.
outcome cpu_utf16(error_policy p, const std::string& in, bool big_endian) {
  outcome o;
  o.out = decode_to(in, big_endian ? text_form::utf16be : text_form::utf16le, p, &o.stats.input,
                    options{backend::cpu});
  return o;
}

// ------------------------------------------------------------- device API runs ----

// Decode's variants: the UTF-32 decoders, then UTF-16LE and UTF-16BE.
enum decode_variant : unsigned { fused32, staged32, utf16le, utf16be };

struct device_workspace {
  cuda::device_buffer<std::byte> in, out, temp;
  cuda::device_buffer<device::device_summary> summary{1};
  std::vector<char> host_out;

  template <class T>
  static void grow(cuda::device_buffer<T>& b, std::size_t n) {
    n = std::max<std::size_t>(n, 256);
    if (b.size() < n) {
      b = cuda::device_buffer<T>();
      b = cuda::device_buffer<T>(n + n / 4);
    }
  }
};

cudaError_t call(operation op, error_policy p, void* temp, std::size_t& temp_bytes, const std::byte* in,
                 std::uint64_t n, void* out, device::device_summary* s, bool last, unsigned variant) {
  switch (op) {
    case operation::validate:
      return device::validate(temp, temp_bytes, in, n, s, last);
    case operation::decode:
      if (variant >= utf16le)
        return device::decode_utf16(temp, temp_bytes, in, n, static_cast<char16_t*>(out), s, p, last,
                                    variant == utf16be);
      return device::decode(temp, temp_bytes, in, n, static_cast<char32_t*>(out), s, p, last,
                            variant == staged32 ? device::decoder::staged : device::decoder::fused);
    case operation::repair:
      return device::repair(temp, temp_bytes, in, n, static_cast<char8_t*>(out), s, p, last);
    case operation::encode:
      return device::encode(temp, temp_bytes, in, n, static_cast<char8_t*>(out), s, p, last,
                            variant ? device::encoder::compact : device::encoder::fused);
    case operation::stats:
      break;
  }
  return cudaErrorInvalidValue;
}

// The input in chunks of at most `chunk` bytes (chunk >= size: one call), carrying what each
// call reports into the next, as the device API's comment describes.
outcome device_run(device_workspace& ws, operation op, error_policy p, const std::string& in, std::size_t chunk,
                   unsigned variant) {
  const unsigned unit = op == operation::encode ? 4 : 1;
  const std::size_t out_unit = op == operation::decode ? (variant >= utf16le ? 2 : 4) : 1;
  device::chunk_tracker tracker(unit);
  outcome o;
  std::string carry;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t take = std::min(chunk, in.size() - pos);
    const bool last = pos + take == in.size();
    const std::string call_input = carry + in.substr(pos, take);
    pos += take;
    const std::size_t m = call_input.size();
    const std::size_t out_bytes = op == operation::decode     ? 4 * m
                                  : op == operation::repair ? 3 * m
                                  : op == operation::encode   ? m + 3
                                                              : 0;
    device_workspace::grow(ws.in, m);
    device_workspace::grow(ws.out, out_bytes);
    if (m > 0) cuda::check(cudaMemcpy(ws.in.data(), call_input.data(), m, cudaMemcpyHostToDevice), "upload");
    std::size_t temp_bytes = 0;
    cuda::check(call(op, p, nullptr, temp_bytes, ws.in.data(), m, ws.out.data(), ws.summary.data(), last, variant),
                "temp size query");
    device_workspace::grow(ws.temp, temp_bytes);
    temp_bytes = ws.temp.size();
    cuda::check(call(op, p, ws.temp.data(), temp_bytes, ws.in.data(), m, ws.out.data(), ws.summary.data(), last,
                     variant),
                "device call");
    device::device_summary d;
    cuda::check(cudaMemcpy(&d, ws.summary.data(), sizeof d, cudaMemcpyDeviceToHost), "download summary");
    const std::size_t written = static_cast<std::size_t>(d.written) * out_unit;
    if (written > out_bytes) throw std::runtime_error("device summary says it wrote more than the worst case");
    if (written > 0) {
      ws.host_out.resize(written);
      cuda::check(cudaMemcpy(ws.host_out.data(), ws.out.data(), written, cudaMemcpyDeviceToHost), "download output");
      o.out.append(ws.host_out.data(), written);
    }
    tracker.add(d);
    if (p == error_policy::strict && op != operation::validate && d.errors > 0) break;
    if (d.carry > m) throw std::runtime_error("device summary carries more bytes than the chunk has");
    carry = call_input.substr(m - static_cast<std::size_t>(d.carry));
    if (last) break;
  }
  o.stats.input = tracker.result();
  return o;
}

// ------------------------------------------------------------------ compare ----

std::string show(const summary& s) {
  std::string t = "{bytes " + std::to_string(s.bytes) + ", errors " + std::to_string(s.errors);
  if (s.first_error)
    t += ", first at " + std::to_string(s.first_error->offset) + " line " + std::to_string(s.first_error->line) +
         " column " + std::to_string(s.first_error->column) + " kind " +
         std::to_string(static_cast<int>(s.first_error->kind));
  return t + "}";
}

// Empty when equal; else what differs. Stats fields beyond the summary only for stats.
std::string differ(const outcome& gpu, const outcome& cpu, bool all_stats) {
  std::string why;
  if (gpu.out != cpu.out) {
    std::size_t k = 0;
    while (k < gpu.out.size() && k < cpu.out.size() && gpu.out[k] == cpu.out[k]) ++k;
    why += "output: " + std::to_string(gpu.out.size()) + " bytes vs " + std::to_string(cpu.out.size()) +
           " on the CPU, first difference at byte " + std::to_string(k) + "; ";
  }
  if (!(gpu.stats.input == cpu.stats.input))
    why += "summary " + show(gpu.stats.input) + " vs " + show(cpu.stats.input) + " on the CPU; ";
  if (all_stats && !(gpu.stats == cpu.stats))
    why += "stats: code points " + std::to_string(gpu.stats.code_points) + " vs " +
           std::to_string(cpu.stats.code_points) + ", lines " + std::to_string(gpu.stats.lines) + " vs " +
           std::to_string(cpu.stats.lines) + ", by length differ or not; ";
  return why;
}

// ------------------------------------------------------------------- inputs ----

std::size_t log_uniform(std::mt19937_64& g, std::size_t max) {
  const double x = std::uniform_real_distribution<double>(0.0, std::log(static_cast<double>(max) + 1))(g);
  return std::min(max, static_cast<std::size_t>(std::exp(x)) - 1);
}

std::string make_input(std::mt19937_64& g, operation op, std::size_t size, double rate, std::string& kind) {
  if (op == operation::encode) {
    std::string s = test::random_utf32(g, size / 4, rate);
    const std::size_t ragged = g() % 4 == 0 ? g() % 4 : 0;
    for (std::size_t k = 0; k < ragged; ++k) s += static_cast<char>(g());
    kind = "utf32 rate " + std::to_string(rate) + " ragged " + std::to_string(ragged);
    return s;
  }
  if (g() % 10 == 0) {  // raw random bytes: about 50% of positions start an error unit
    std::string s(size, '\0');
    for (char& c : s) c = static_cast<char>(g());
    kind = "random bytes";
    return s;
  }
  kind = "utf8 rate " + std::to_string(rate);
  std::string s = test::random_text(g, size, rate);
  if (s.size() > size) s.resize(size);  // may end inside a sequence
  return s;
}

int usage() {
  std::fputs("usage: gutf8_gpu_fuzz [--iterations N] [--seed S] [--max-size BYTES] [--device N] [--save DIR]\n"
             "                      [--backend cuda|cpu]\n",
             stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  settings cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const char* v = argv[++i];
    if (a == "--iterations") cfg.iterations = std::strtoull(v, nullptr, 10);
    else if (a == "--seed") cfg.seed = std::strtoull(v, nullptr, 10);
    else if (a == "--max-size") cfg.max_size = std::max<std::size_t>(std::strtoull(v, nullptr, 10), 1);
    else if (a == "--device") cfg.device = std::atoi(v);
    else if (a == "--save") cfg.save_dir = v;
    else if (a == "--backend" && std::string(v) == "cpu") cfg.dry_run = true;
    else if (a == "--backend" && std::string(v) == "cuda") cfg.dry_run = false;
    else return usage();
  }
  const std::string why = cfg.dry_run ? std::string() : cuda::gpu_unavailable_reason();
  if (!why.empty()) {
    std::printf("gutf8_gpu_fuzz: skipped, no usable GPU: %s\n", why.c_str());
    return 0;
  }
  try {
    cudaDeviceProp prop{};
    if (cfg.dry_run) {
      std::snprintf(prop.name, sizeof prop.name, "none: dry run on the CPU backend");
    } else {
      cuda::check(cudaSetDevice(cfg.device), "cudaSetDevice");
      cuda::check(cudaGetDeviceProperties(&prop, cfg.device), "cudaGetDeviceProperties");
    }
    std::printf("gutf8_gpu_fuzz: device %d (%s), seed %llu, %llu iterations, inputs up to %zu bytes\n",
                cfg.device, prop.name, static_cast<unsigned long long>(cfg.seed),
                static_cast<unsigned long long>(cfg.iterations), cfg.max_size);
    std::fflush(stdout);

    options cpu_opt;
    cpu_opt.backend = backend::cpu;
    options gpu_opt;
    gpu_opt.backend = cfg.dry_run ? backend::cpu : backend::cuda;
    gpu_opt.device = cfg.device;
    std::optional<device_workspace> ws;
    if (!cfg.dry_run) ws.emplace();
    constexpr operation ops[] = {operation::validate, operation::stats, operation::decode, operation::repair,
                                 operation::encode};
    constexpr error_policy policies[] = {error_policy::strict, error_policy::replace, error_policy::drop};
    constexpr double rates[] = {0.0, 0.0001, 0.001, 0.01, 0.1, 0.5};
    std::mt19937_64 g = test::rng(cfg.seed);
    std::uint64_t inputs = 0, bytes = 0, checks = 0, mismatches = 0;
    const auto start = std::chrono::steady_clock::now();

    for (std::uint64_t it = 0; it < cfg.iterations && mismatches < 10; ++it) {
      const operation op = ops[g() % std::size(ops)];
      const error_policy p = policies[g() % 3];
      const double rate = g() % 3 == 0 ? std::uniform_real_distribution<double>(0.0, 0.5)(g) : rates[g() % std::size(rates)];
      const std::size_t size = g() % 20 == 0 ? g() % 17 : log_uniform(g, cfg.max_size);
      std::string kind;
      const std::string in = make_input(g, op, size, rate, kind);
      constexpr std::size_t chunk_limits[] = {16, 100, 4096, 65536, std::size_t{1} << 20, std::size_t{16} << 20};
      const std::size_t max_chunk = chunk_limits[g() % std::size(chunk_limits)];
      const bool pinned = g() % 3 == 0;
      const std::size_t device_chunk = std::max<std::size_t>(1, g() % std::max<std::size_t>(in.size() + 1, 2));
      const unsigned variant = static_cast<unsigned>(g() % 2);
      const std::uint64_t stream_seed = g();
      ++inputs;
      bytes += in.size();

      const outcome cpu = one_shot(op, p, in, cpu_opt);
      const bool all_stats = op == operation::stats;
      const bool big_endian = g() % 2 == 0;
      std::vector<std::tuple<std::string, outcome, const outcome*>> runs;  // what ran, its outcome, the CPU's
      std::mt19937_64 sg(stream_seed);
      runs.emplace_back("stream(cuda) chunks<=" + std::to_string(max_chunk) + (pinned ? " pinned" : ""),
                        streamed(op, p, in, gpu_opt, sg, max_chunk, pinned), &cpu);
      runs.emplace_back("one-shot(cuda)", one_shot(op, p, in, gpu_opt), &cpu);
      if (op != operation::stats && ws) {
        runs.emplace_back("device one-shot variant " + std::to_string(variant),
                          device_run(*ws, op, p, in, std::max<std::size_t>(in.size(), 1), variant), &cpu);
        runs.emplace_back("device chunks of " + std::to_string(device_chunk) + " variant " + std::to_string(variant),
                          device_run(*ws, op, p, in, device_chunk, variant), &cpu);
      }
      std::optional<outcome> cpu16;
      if (op == operation::decode && ws) {
        cpu16 = cpu_utf16(p, in, big_endian);
        const unsigned v16 = big_endian ? utf16be : utf16le;
        const std::string form = big_endian ? "UTF-16BE" : "UTF-16LE";
        runs.emplace_back("device one-shot " + form,
                          device_run(*ws, op, p, in, std::max<std::size_t>(in.size(), 1), v16), &*cpu16);
        runs.emplace_back("device chunks of " + std::to_string(device_chunk) + ' ' + form,
                          device_run(*ws, op, p, in, device_chunk, v16), &*cpu16);
      }
      for (const auto& [path, got, want] : runs) {
        ++checks;
        const std::string d = differ(got, *want, all_stats);
        if (d.empty()) continue;
        ++mismatches;
        const std::string file = cfg.save_dir + "/gpu_fuzz_" + std::to_string(cfg.seed) + "_" + std::to_string(it) + ".bin";
        std::ofstream(file, std::ios::binary).write(in.data(), static_cast<std::streamsize>(in.size()));
        std::printf("MISMATCH iteration %llu: %s %s, %zu bytes (%s), %s: %s\n  input saved to %s\n",
                    static_cast<unsigned long long>(it), name(op), name(p), in.size(), kind.c_str(), path.c_str(),
                    d.c_str(), file.c_str());
        std::fflush(stdout);
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("gutf8_gpu_fuzz: %llu inputs, %llu bytes, %llu GPU-vs-CPU comparisons, %llu mismatches, %.1f s\n",
                static_cast<unsigned long long>(inputs), static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(checks), static_cast<unsigned long long>(mismatches), seconds);
    return mismatches == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("gutf8_gpu_fuzz: failure: %s\n", e.what());
    return 3;
  }
}
