// Device-resident throughput of the gutf8 device API (include/gutf8/device.hpp) on an H100-class
// GPU: GB/s of UTF-8 input (median of --runs timed runs after warm-up, CUDA events) for validate
// (also of input one byte past an aligned address: validate_unaligned; the former walk:
// validate_planes; other shapes of its walk: validate_s1b3 ...), decode (fused
// strict/replace/drop, replace on that unaligned input: decode_fused_unaligned_replace, staged;
// UTF-16 output: decode_utf16, LE and BE, and its former three passes), repair, encode (fused, compact;
// input = the decoded UTF-32) and a CUB-composed baseline decoder (flag kernel +
// cub::DeviceSelect::Flagged + gather-decode kernel). Each result is also given as a fraction of
// its roofline: the bytes it must move at the measured device copy rate (cudaMemcpy D2D, read +
// write bytes / time); for validate, which only reads, at the rate of a read kernel measured in
// the same run.
//
// Inputs: --size MiB (default 256) tiled from corpus/sample/{ascii,cjk,emoji,mixed}.txt (or
// synthesized when absent) and from synthesized dense text (cjk_dense: CJK with a newline every
// ~48 characters; emoji_only: 4-byte sequences only), valid and with 0.1%, 1% and 5% of the bytes
// overwritten by bytes that can never occur in UTF-8 (seeded RNG).
//
//   bench_codec [--out DIR] [--commit SHA] [--size MiB] [--runs N] [--corpus DIR] [--quick] [--profile]
//               [--budget SECONDS] [--ops op1,op2,...] [--inputs ascii,cjk,...]
// writes DIR/codec.csv and DIR/codec.md and prints the table.
#include <cub/device/device_select.cuh>
#include <cuda_profiler_api.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/device_variants.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device.hpp"
#include "utf8/byte_rule.cuh"

namespace {

using gutf8::cuda::check;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;

// ------------------------------------------------------------ CUB baseline ----
// The straightforward composition: one thread per 4 bytes marks unit starts (the library's exact
// per-word rule, byte_rule.cuh: 1 = error unit, 2 = well-formed), cub::DeviceSelect::Flagged
// compacts their positions (32-bit indices and item count when the input allows), and one thread
// per selected position decodes its unit.

__device__ uint32_t baseline_word(const uint8_t* in, uint64_t n, int64_t p) {
  uint32_t w = 0;
  if (p >= 0 && static_cast<uint64_t>(p) + 4 <= n) return *reinterpret_cast<const uint32_t*>(in + p);
  for (int b = 0; b < 4; ++b)
    if (p + b >= 0 && static_cast<uint64_t>(p + b) < n) w |= uint32_t{in[p + b]} << (8 * b);
  return w;
}

__global__ void baseline_flags(const uint8_t* in, uint64_t n, uint8_t* flags) {
  const uint64_t i = 4 * (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const auto p = static_cast<int64_t>(i);
  const uint32_t w[3] = {baseline_word(in, n, p - 4), baseline_word(in, n, p), baseline_word(in, n, p + 4)};
  uint32_t start[1], wf[1];
  gutf8::kern::classify_window<1>(w, start, wf);
  uint32_t f = 0;
  for (int b = 0; b < 4; ++b) {
    const uint32_t bit = 8 * b + 7;
    f |= (((start[0] >> bit) & 1u) * (1u + ((wf[0] >> bit) & 1u))) << (8 * b);
  }
  if (i + 4 <= n) {
    *reinterpret_cast<uint32_t*>(flags + i) = f;
  } else {
    for (uint64_t b = 0; i + b < n; ++b) flags[i + b] = static_cast<uint8_t>(f >> (8 * b));
  }
}

template <class Index>
__global__ void baseline_decode(const uint8_t* in, uint64_t n, const uint8_t* flags, const Index* starts,
                                const Index* count, char32_t* out) {
  const uint64_t k = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (k >= static_cast<uint64_t>(*count)) return;
  const uint64_t p = starts[k];
  const auto lo = static_cast<int64_t>(p & ~uint64_t{3});
  const uint32_t x = gutf8::kern::lanes_ahead(baseline_word(in, n, lo), baseline_word(in, n, lo + 4),
                                              static_cast<int>(p & 3));
  out[k] = flags[p] == 2 ? gutf8::kern::decode_lanes(x) : 0xFFFDu;
}

struct cub_baseline {
  uint8_t* flags = nullptr;
  void* starts = nullptr;
  void* count = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  uint64_t n = 0;
  bool narrow = true;  // 32-bit positions and item count
  explicit cub_baseline(uint64_t bytes) : n(bytes), narrow(bytes < (uint64_t{1} << 31)) {
    check(cudaMalloc(&flags, n), "baseline flags");
    check(cudaMalloc(&starts, (narrow ? 4 : 8) * n), "baseline starts");
    check(cudaMalloc(&count, 8), "baseline count");
    if (narrow)
      check(cub::DeviceSelect::Flagged(nullptr, temp_bytes, thrust::counting_iterator<uint32_t>(0), flags,
                                       static_cast<uint32_t*>(starts), static_cast<int*>(count),
                                       static_cast<int>(n)),
            "DeviceSelect size");
    else
      check(cub::DeviceSelect::Flagged(nullptr, temp_bytes, thrust::counting_iterator<uint64_t>(0), flags,
                                       static_cast<uint64_t*>(starts), static_cast<int64_t*>(count),
                                       static_cast<int64_t>(n)),
            "DeviceSelect size");
    check(cudaMalloc(&temp, temp_bytes), "baseline temp");
  }
  ~cub_baseline() {
    cudaFree(flags);
    cudaFree(starts);
    cudaFree(count);
    cudaFree(temp);
  }
  cudaError_t run(const uint8_t* in, char32_t* out, cudaStream_t s) {
    const auto grid = static_cast<unsigned>((n + 255) / 256);
    baseline_flags<<<static_cast<unsigned>((n + 1023) / 1024), 256, 0, s>>>(in, n, flags);
    std::size_t tb = temp_bytes;
    cudaError_t e;
    if (narrow) {
      e = cub::DeviceSelect::Flagged(temp, tb, thrust::counting_iterator<uint32_t>(0), flags,
                                     static_cast<uint32_t*>(starts), static_cast<int*>(count),
                                     static_cast<int>(n), s);
      if (e != cudaSuccess) return e;
      baseline_decode<uint32_t><<<grid, 256, 0, s>>>(in, n, flags, static_cast<const uint32_t*>(starts),
                                                    static_cast<const uint32_t*>(count), out);
    } else {
      e = cub::DeviceSelect::Flagged(temp, tb, thrust::counting_iterator<uint64_t>(0), flags,
                                     static_cast<uint64_t*>(starts), static_cast<int64_t*>(count),
                                     static_cast<int64_t>(n), s);
      if (e != cudaSuccess) return e;
      baseline_decode<uint64_t><<<grid, 256, 0, s>>>(in, n, flags, static_cast<const uint64_t*>(starts),
                                                    static_cast<const uint64_t*>(count), out);
    }
    return cudaGetLastError();
  }
};

// The read roofline: every byte read once with 16-byte loads, grid-stride, four loads in flight a
// thread; the XOR of everything is stored only if it equals `never`, so no load can be dropped.
__global__ void read_kernel(const uint4* p, uint64_t n16, uint32_t never, uint32_t* sink) {
  uint32_t acc = 0;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    const uint4 a = __ldg(p + i), b = __ldg(p + i + stride), c = __ldg(p + i + 2 * stride), d = __ldg(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n16; i += stride) {
    const uint4 a = __ldg(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == never) *sink = acc;
}

__global__ void count_mismatches(const char32_t* a, const char32_t* b, uint64_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(bad, local);
}

// ------------------------------------------------------------------ inputs ----

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return {};
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The corpus kinds when their sample is missing, and the dense kinds, which are always made here:
// cjk_dense (3-byte CJK, a newline every ~48 characters) and emoji_only (4-byte sequences only).
std::vector<uint8_t> synthesize(const std::string& kind, std::mt19937_64& g) {
  std::vector<uint8_t> out;
  while (out.size() < (1u << 20)) {
    char32_t c;
    if (kind == "cjk_dense") c = g() % 48 == 0 ? U'\n' : static_cast<char32_t>(0x4E00 + g() % 0x5000);
    else if (kind == "emoji_only") c = static_cast<char32_t>(0x1F300 + g() % 0x700);
    else if (g() % 12 == 0) c = U'\n';
    else if (kind == "ascii") c = static_cast<char32_t>(0x20 + g() % 95);
    else if (kind == "cjk") c = static_cast<char32_t>(0x4E00 + g() % 0x5000);
    else if (kind == "emoji") c = static_cast<char32_t>(0x1F300 + g() % 0x700);
    else c = g() % 2 ? static_cast<char32_t>(0x20 + g() % 95) : static_cast<char32_t>(0x400 + g() % 0x9000);
    uint8_t b[4];
    const unsigned n = gutf8::detail::encode_scalar(c, b);
    out.insert(out.end(), b, b + n);
  }
  return out;
}

// `size` bytes by tiling the sample, cut at a sequence boundary and padded with spaces.
std::vector<uint8_t> tiled(const std::vector<uint8_t>& sample, std::size_t size) {
  std::vector<uint8_t> out(size);
  for (std::size_t i = 0; i < size; i += sample.size())
    std::memcpy(out.data() + i, sample.data(), std::min(sample.size(), size - i));
  std::size_t end = size;
  while (end > 0 && gutf8::detail::is_continuation(out[end - 1])) --end;
  if (end > 0 && gutf8::detail::sequence_length(out[end - 1]) > 1) --end;
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(end), out.end(), uint8_t{' '});
  return out;
}

void inject(std::vector<uint8_t>& b, double rate, uint64_t seed) {
  if (rate <= 0) return;
  static constexpr uint8_t never[] = {0xC0, 0xC1, 0xF5, 0xF6, 0xF7, 0xF8, 0xFE, 0xFF};
  std::mt19937_64 g(seed);
  std::geometric_distribution<std::size_t> gap(rate);
  for (std::size_t i = gap(g); i < b.size(); i += 1 + gap(g)) b[i] = never[g() % 8];
}

// --------------------------------------------------------------- measuring ----

struct timing {
  double median_ms = 0;
  double min_ms = 0;
};

// profile: one warm-up, then one run between cudaProfilerStart and Stop, so that
// `ncu --profile-from-start off` sees exactly that call's launches.
timing measure(int runs, cudaStream_t s, const std::function<cudaError_t()>& body, bool profile = false) {
  gutf8::cuda::event a, b;
  for (int i = 0; i < (profile ? 1 : 3); ++i) check(body(), "warm-up");
  check(cudaStreamSynchronize(s), "warm-up sync");
  if (profile) check(cudaProfilerStart(), "cudaProfilerStart");
  std::vector<double> ms;
  for (int i = 0; i < (profile ? 1 : runs); ++i) {
    a.record(s);
    check(body(), "timed run");
    b.record(s);
    b.synchronize();
    ms.push_back(b.elapsed_since(a));
  }
  if (profile) check(cudaProfilerStop(), "cudaProfilerStop");
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

struct row {
  std::string input;
  double invalid = 0;
  std::string op;
  double ms = 0;
  double gbps = 0;        // UTF-8 input bytes / time
  double text = 0;        // bytes GB/s counts (UTF-8 text: the input, or the encoders' output)
  double moved = 0;       // bytes the op must read + write
  double roofline = 0;    // input GB/s at the copy rate (read-only ops: at the read rate)
  double fraction = 0;
};

// Read-only operations: their roofline is the read kernel's rate, not the copy's.
bool read_only(const std::string& op) { return op.rfind("validate", 0) == 0; }

std::string fmt(double v, int prec = 1) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(prec);
  o << v;
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir = "bench/results", commit = "unknown", corpus = "corpus/sample";
  std::size_t size_mib = 256;
  int runs = 15;
  double budget_s = 170;
  bool quick = false;
  bool profile = false;  // each op once inside a profiler range (see measure)
  std::string ops_filter;  // comma-separated op names (empty: all)
  std::string inputs_filter;  // comma-separated corpus kinds (empty: all)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value for " << a << "\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out") out_dir = next();
    else if (a == "--commit") commit = next();
    else if (a == "--size") size_mib = std::stoul(next());
    else if (a == "--runs") runs = std::max(10, std::stoi(next()));
    else if (a == "--corpus") corpus = next();
    else if (a == "--budget") budget_s = std::stod(next());
    else if (a == "--quick") quick = true;
    else if (a == "--profile") profile = true;
    else if (a == "--ops") ops_filter = "," + next() + ",";
    else if (a == "--inputs") inputs_filter = "," + next() + ",";
    else {
      std::cerr << "usage: bench_codec [--out DIR] [--commit SHA] [--size MiB] [--runs N] "
                   "[--corpus DIR] [--quick] [--profile] [--budget SECONDS] [--ops op1,op2] [--inputs k1,k2]\n";
      return 2;
    }
  }
  const std::string reason = gutf8::cuda::gpu_unavailable_reason();
  if (!reason.empty()) {
    std::cerr << "bench_codec: no usable GPU: " << reason << "\n";
    return 3;
  }
  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  try {
    cudaDeviceProp prop{};
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    gutf8::cuda::stream stream;
    cudaStream_t s = stream.get();

    // Device copy rate: 1 GiB D2D, read + write bytes / time; read rate: read_kernel over it.
    double copy_gbps = 0, read_gbps = 0;
    {
      const std::size_t cb = std::size_t{1} << 30;
      gutf8::cuda::device_buffer<uint8_t> a(cb), b(cb);
      check(cudaMemsetAsync(a.data(), 1, cb, s), "memset");
      const timing t = measure(runs, s, [&] {
        return cudaMemcpyAsync(b.data(), a.data(), cb, cudaMemcpyDeviceToDevice, s);
      });
      copy_gbps = 2.0 * static_cast<double>(cb) / (t.median_ms * 1e6);
      gutf8::cuda::device_buffer<uint32_t> sink(1);
      const unsigned grid = static_cast<unsigned>(prop.multiProcessorCount) * 8;
      const timing r = measure(runs, s, [&] {
        read_kernel<<<grid, 256, 0, s>>>(reinterpret_cast<const uint4*>(a.data()), cb / 16, 0x9E3779B9u, sink.data());
        return cudaGetLastError();
      });
      read_gbps = static_cast<double>(cb) / (r.median_ms * 1e6);
    }
    std::cout << "GPU: " << prop.name << "  copy rate (read+write): " << fmt(copy_gbps)
              << " GB/s  read rate: " << fmt(read_gbps) << " GB/s\n";

    const uint64_t n = static_cast<uint64_t>(size_mib) << 20;
    gutf8::cuda::device_buffer<uint8_t> d_in(n), d_san(3 * n + 16), d_enc(3 * n + 16);
    gutf8::cuda::device_buffer<char32_t> d_out(n), d_u32(n);
    gutf8::cuda::device_buffer<gutf8::device::device_summary> d_sum(1);
    gutf8::cuda::device_buffer<uint8_t> d_temp;
    cub_baseline baseline(n);
    auto temp_for = [&](std::size_t bytes) -> void* {
      if (d_temp.size() < bytes) d_temp = gutf8::cuda::device_buffer<uint8_t>(bytes);
      return d_temp.data();
    };

    std::vector<row> rows;
    const std::vector<std::string> kinds = {"ascii", "cjk", "emoji", "mixed", "cjk_dense", "emoji_only"};
    const std::vector<double> rates = quick ? std::vector<double>{0.0, 0.01}
                                            : std::vector<double>{0.0, 0.001, 0.01, 0.05};
    std::mt19937_64 g(20240531);
    for (const std::string& kind : kinds) {
      if (!inputs_filter.empty() && inputs_filter.find("," + kind + ",") == std::string::npos) continue;
      const bool dense = kind == "cjk_dense" || kind == "emoji_only";
      std::vector<uint8_t> sample = dense ? std::vector<uint8_t>{} : read_file(std::filesystem::path(corpus) / (kind + ".txt"));
      if (dense) {
        sample = synthesize(kind, g);
      } else if (sample.empty()) {
        std::cout << "(no " << corpus << "/" << kind << ".txt: synthesized)\n";
        sample = synthesize(kind, g);
      }
      const std::vector<uint8_t> base = tiled(sample, n);
      for (double rate : rates) {
        if (elapsed() > budget_s) {
          std::cout << "time budget reached: skipping the remaining inputs\n";
          break;
        }
        std::vector<uint8_t> host = base;
        inject(host, rate, 7 + static_cast<uint64_t>(rate * 1e6));
        check(cudaMemcpy(d_in.data(), host.data(), n, cudaMemcpyHostToDevice), "upload");
        const auto* in = reinterpret_cast<const std::byte*>(d_in.data());

        // The UTF-32 text for the encoders and the code point count for the rooflines.
        gutf8::device::device_summary sum{};
        std::size_t tb = 0;
        check(gutf8::device::decode(nullptr, tb, in, n, d_u32.data(), d_sum.data(),
                                    gutf8::error_policy::replace),
              "decode size");
        check(gutf8::device::decode(temp_for(tb), tb, in, n, d_u32.data(), d_sum.data(),
                                    gutf8::error_policy::replace, true, gutf8::device::decoder::fused, s),
              "decode");
        check(cudaMemcpyAsync(&sum, d_sum.data(), sizeof sum, cudaMemcpyDeviceToHost, s), "summary");
        check(cudaStreamSynchronize(s), "sync");
        const double cps = static_cast<double>(sum.written);
        const double errors = static_cast<double>(sum.errors);
        const double nn = static_cast<double>(n);
        const double u32_bytes = 4 * cps;
        // Output sizes under each policy (valid units keep their bytes).
        const double replaced_bytes = [&] {
          std::size_t t2 = 0;
          check(gutf8::device::repair(nullptr, t2, in, n, reinterpret_cast<char8_t*>(d_san.data()),
                                        d_sum.data(), gutf8::error_policy::replace),
                "repair size");
          check(gutf8::device::repair(temp_for(t2), t2, in, n, reinterpret_cast<char8_t*>(d_san.data()),
                                        d_sum.data(), gutf8::error_policy::replace, true, s),
                "repair");
          gutf8::device::device_summary s2{};
          check(cudaMemcpyAsync(&s2, d_sum.data(), sizeof s2, cudaMemcpyDeviceToHost, s), "summary");
          check(cudaStreamSynchronize(s), "sync");
          return static_cast<double>(s2.written);
        }();

        auto add = [&](const std::string& op, double moved, const std::function<cudaError_t()>& body) {
          if (!ops_filter.empty() && ops_filter.find("," + op + ",") == std::string::npos) return;
          // A marker before the profiled launches: ncu's "==PROF== Profiling" lines follow it in stdout.
          if (profile) std::cout << "profile: " << kind << ' ' << fmt(rate * 100, 1) << ' ' << op << std::endl;
          const timing t = measure(runs, s, body, profile);
          row r;
          r.input = kind;
          r.invalid = rate;
          r.op = op;
          r.ms = t.median_ms;
          r.gbps = nn / (t.median_ms * 1e6);
          r.moved = moved;
          r.text = nn;
          r.roofline = nn / (moved / (read_only(op) ? read_gbps : copy_gbps));
          r.fraction = r.gbps / r.roofline;
          rows.push_back(r);
          std::cout << "  " << kind << " " << fmt(rate * 100, 1) << "% " << op << ": " << fmt(r.gbps)
                    << " GB/s (" << fmt(100 * r.fraction, 0) << "% of " << fmt(r.roofline) << ")\n";
        };
        auto api = [&](auto&& call) {
          std::size_t bytes = 0;
          check(call(nullptr, bytes), "size query");
          void* t = temp_for(bytes);
          return [call, t, bytes]() mutable { return call(t, bytes); };
        };
        using gutf8::error_policy;
        namespace dv = gutf8::device;
        auto* out32 = d_out.data();
        auto* san = reinterpret_cast<char8_t*>(d_san.data());
        auto* enc = reinterpret_cast<char8_t*>(d_enc.data());
        auto* sm = d_sum.data();
        const auto* u32in = reinterpret_cast<const std::byte*>(d_u32.data());
        const uint64_t u32n = static_cast<uint64_t>(u32_bytes);
        const double valid_cps = cps - errors;

        add("validate", nn, api([=](void* t, std::size_t& b) {
              return dv::validate(t, b, in, n, sm, true, s);
            }));
        // The former walk (every warp tile classified exactly), for the A/B in the same run.
        add("validate_planes", nn, api([=](void* t, std::size_t& b) {
              return dv::detail::validate_planes(t, b, in, n, sm, true, s);
            }));
        // Other shapes of the screening walk (32-byte blocks a lane, blocks an SM): validate_sLbM.
        for (const dv::detail::screen_shape shape : {dv::detail::screen_shape{1, 3}, dv::detail::screen_shape{1, 4},
                                                    dv::detail::screen_shape{2, 2}, dv::detail::screen_shape{2, 3}}) {
          add("validate_s" + std::to_string(shape.lane_slabs) + "b" + std::to_string(shape.min_blocks), nn,
              api([=](void* t, std::size_t& b) { return dv::detail::validate_screen(shape, t, b, in, n, sm, true, s); }));
        }
        // The same text from its second byte, n - 1 bytes: input not 16-byte aligned (validate's
        // warp tiles start 15 bytes before it). Text that starts with a multibyte character has one
        // error more.
        add("validate_unaligned", nn, api([=](void* t, std::size_t& b) {
              return dv::validate(t, b, in + 1, n - 1, sm, true, s);
            }));
        if (rate == 0) {  // strict stops at the first error: only meaningful on valid text
          add("decode_fused", nn + u32_bytes, api([=](void* t, std::size_t& b) {
                return dv::decode(t, b, in, n, out32, sm, error_policy::strict, true, dv::decoder::fused, s);
              }));
        }
        add("decode_fused_replace", nn + u32_bytes, api([=](void* t, std::size_t& b) {
              return dv::decode(t, b, in, n, out32, sm, error_policy::replace, true, dv::decoder::fused, s);
            }));
        // Replace on the unaligned input of validate_unaligned: the tile kernels' guarded loads.
        add("decode_fused_unaligned_replace", nn + u32_bytes, api([=](void* t, std::size_t& b) {
              return dv::decode(t, b, in + 1, n - 1, out32, sm, error_policy::replace, true, dv::decoder::fused, s);
            }));
        add("decode_fused_drop", nn + 4 * valid_cps, api([=](void* t, std::size_t& b) {
              return dv::decode(t, b, in, n, out32, sm, error_policy::drop, true, dv::decoder::fused, s);
            }));
        // UTF-16 output beside the UTF-32 rows: moved = the input + 2 bytes a UTF-16 unit.
        auto* out16 = reinterpret_cast<char16_t*>(d_out.data());  // 4n bytes hold the n units
        const double u16_bytes = [&] {
          std::size_t t2 = 0;
          check(dv::decode_utf16(nullptr, t2, in, n, out16, sm, error_policy::replace), "decode_utf16 size");
          check(dv::decode_utf16(temp_for(t2), t2, in, n, out16, sm, error_policy::replace, true, false, s),
                "decode_utf16");
          gutf8::device::device_summary s2{};
          check(cudaMemcpyAsync(&s2, sm, sizeof s2, cudaMemcpyDeviceToHost, s), "summary");
          check(cudaStreamSynchronize(s), "sync");
          return 2 * static_cast<double>(s2.written);
        }();
        add("decode_utf16_replace", nn + u16_bytes, api([=](void* t, std::size_t& b) {
              return dv::decode_utf16(t, b, in, n, out16, sm, error_policy::replace, true, false, s);
            }));
        add("decode_utf16be_replace", nn + u16_bytes, api([=](void* t, std::size_t& b) {
              return dv::decode_utf16(t, b, in, n, out16, sm, error_policy::replace, true, true, s);
            }));
        // Its former three passes (UTF-32, a scan of unit counts, a scatter), for the A/B, into the
        // encoders' output buffer (not yet used): both outputs must be equal.
        auto* out16_3 = reinterpret_cast<char16_t*>(d_enc.data());
        add("decode_utf16_three_pass_replace", nn + u16_bytes, api([=](void* t, std::size_t& b) {
              return dv::detail::decode_utf16_three_pass(t, b, in, n, out16_3, sm, error_policy::replace, true, false, s);
            }));
        if (ops_filter.empty() || (ops_filter.find(",decode_utf16_replace,") != std::string::npos &&
                                   ops_filter.find(",decode_utf16_three_pass_replace,") != std::string::npos)) {
          std::size_t t2 = 0;  // the LE output again (the BE row wrote last)
          check(dv::decode_utf16(nullptr, t2, in, n, out16, sm, error_policy::replace), "decode_utf16 size");
          check(dv::decode_utf16(temp_for(t2), t2, in, n, out16, sm, error_policy::replace, true, false, s),
                "decode_utf16");
          gutf8::cuda::device_buffer<unsigned long long> bad(1);
          check(cudaMemsetAsync(bad.data(), 0, sizeof(unsigned long long), s), "memset");
          const auto words = static_cast<uint64_t>(u16_bytes / 4);  // whole pairs of units
          count_mismatches<<<1024, 256, 0, s>>>(reinterpret_cast<const char32_t*>(out16),
                                                reinterpret_cast<const char32_t*>(out16_3), words, bad.data());
          unsigned long long mism = 0;
          check(cudaMemcpyAsync(&mism, bad.data(), sizeof mism, cudaMemcpyDeviceToHost, s), "mismatches");
          check(cudaStreamSynchronize(s), "sync");
          if (mism) std::cout << "  WARNING: UTF-16 decode differs from its three passes in " << mism << " unit pairs\n";
        }
        add("decode_staged_replace", nn + u32_bytes, api([=](void* t, std::size_t& b) {
              return dv::decode(t, b, in, n, out32, sm, error_policy::replace, true, dv::decoder::staged, s);
            }));
        add("cub_baseline_replace", nn + u32_bytes, [&] { return baseline.run(d_in.data(), out32, s); });
        if (ops_filter.empty() || ops_filter.find(",cub_baseline_replace,") != std::string::npos) {
          // The baseline is a real decoder: its output must equal the fused decoder's.
          gutf8::cuda::device_buffer<unsigned long long> bad(1);
          check(cudaMemsetAsync(bad.data(), 0, sizeof(unsigned long long), s), "memset");
          check(baseline.run(d_in.data(), out32, s), "baseline");
          count_mismatches<<<1024, 256, 0, s>>>(out32, d_u32.data(), static_cast<uint64_t>(cps), bad.data());
          unsigned long long mism = 0;
          check(cudaMemcpyAsync(&mism, bad.data(), sizeof mism, cudaMemcpyDeviceToHost, s), "mismatches");
          check(cudaStreamSynchronize(s), "sync");
          if (mism) std::cout << "  WARNING: cub baseline differs from the fused decoder in " << mism << " code points\n";
        }
        add("repair_replace", nn + replaced_bytes, api([=](void* t, std::size_t& b) {
              return dv::repair(t, b, in, n, san, sm, error_policy::replace, true, s);
            }));
        add("repair_drop", 2 * nn, api([=](void* t, std::size_t& b) {
              return dv::repair(t, b, in, n, san, sm, error_policy::drop, true, s);
            }));
        // Encoders: input = the decoded (replace) UTF-32, output = replaced_bytes of UTF-8.
        // GB/s are reported per byte of that UTF-8 text, roofline = 4 per code point read +
        // the UTF-8 written.
        auto add_encode = [&](const std::string& op, dv::encoder v) {
          const std::size_t before = rows.size();
          if (!ops_filter.empty() && ops_filter.find("," + op + ",") == std::string::npos) return;
          add(op, u32_bytes + replaced_bytes, api([=](void* t, std::size_t& b) {
                return dv::encode(t, b, u32in, u32n, enc, sm, error_policy::strict, true, v, s);
              }));
          row& r = rows[before];
          r.text = replaced_bytes;
          r.gbps = replaced_bytes / (r.ms * 1e6);
          r.roofline = replaced_bytes / ((u32_bytes + replaced_bytes) / copy_gbps);
          r.fraction = r.gbps / r.roofline;
        };
        add_encode("encode_fused", dv::encoder::fused);
        add_encode("encode_compact", dv::encoder::compact);
      }
    }

    // ------------------------------------------------------------- reports ----
    std::filesystem::create_directories(out_dir);
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
    {
      std::ofstream csv(std::filesystem::path(out_dir) / "codec.csv");
      csv << "gpu,commit,date,size_mib,copy_gbps,input,invalid_pct,op,median_ms,gbps,roofline_gbps,"
             "fraction,read_gbps,text_bytes,moved_bytes\n";
      for (const row& r : rows)
        csv << '"' << prop.name << "\"," << commit << ',' << date << ',' << size_mib << ','
            << fmt(copy_gbps) << ',' << r.input << ',' << fmt(100 * r.invalid, 1) << ',' << r.op << ','
            << fmt(r.ms, 4) << ',' << fmt(r.gbps) << ',' << fmt(r.roofline) << ',' << fmt(r.fraction, 3)
            << ',' << fmt(read_gbps) << ',' << fmt(r.text, 0) << ',' << fmt(r.moved, 0) << '\n';
    }
    std::ostringstream md;
    md << "# gutf8 device codec benchmark\n\n"
       << "- GPU: " << prop.name << "\n- commit: " << commit << "\n- date: " << date
       << "\n- input: " << size_mib << " MiB per case, median of " << runs << " runs\n"
       << "- device copy rate (cudaMemcpy D2D, read+write): " << fmt(copy_gbps) << " GB/s\n"
       << "- read rate (a read kernel: 16-byte loads, grid-stride, every byte once): " << fmt(read_gbps) << " GB/s\n"
       << "- GB/s = bytes of UTF-8 text / time; roofline = that text's bytes / (bytes the op must "
          "read + write at the copy rate; validate: its bytes at the read rate)\n\n"
       << "| input | invalid | op | ms | GB/s | roofline GB/s | % of roofline |\n"
       << "|---|---:|---|---:|---:|---:|---:|\n";
    for (const row& r : rows)
      md << "| " << r.input << " | " << fmt(100 * r.invalid, 1) << "% | " << r.op << " | "
         << fmt(r.ms, 3) << " | " << fmt(r.gbps) << " | " << fmt(r.roofline) << " | "
         << fmt(100 * r.fraction, 0) << "% |\n";
    {
      std::ofstream f(std::filesystem::path(out_dir) / "codec.md");
      f << md.str();
    }
    std::cout << "\n" << md.str() << "\nwritten: " << out_dir << "/codec.csv, " << out_dir
              << "/codec.md (" << fmt(elapsed(), 0) << " s)\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_codec: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
