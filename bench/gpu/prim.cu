// bench_prim: scan / select / radix-sort throughput of every gutf8::prim algorithm against CUB,
// Thrust and the CPU, over sizes 2^10 .. 2^28 (every 2 powers). The byte compaction (select /
// u8_unpad: prim::select_bytes beside the general select and CUB on the same bytes) also runs at
// one size that is no power of two, 3 * 2^(max-log2 - 2) + 4099.
//
//   bench_prim --out DIR [--commit SHA] [--min-log2 10] [--max-log2 28] [--only scan,select,sort]
//              [--runs 15] [--cpu-max-log2 26] [--no-cpu] [--no-thrust]
//   bench_prim --sweep --out DIR [--commit SHA] [--only scan,sort] [--runs 15]
//
// --sweep: every tuning candidate of the default scan (u32 inclusive sum) and pair sort (u32 keys,
// u32 values) beside CUB, CUB with cuda::std::plus (its tuned sm90 policy), Thrust and our other
// algorithms, at 2^20 .. 2^28 and 3 * 2^k + 7, in interleaved rounds (each round calls every
// entry once; median of --runs >= 10 rounds); writes DIR/prim_sweep.csv and prim_sweep.md and
// prints one line a size: the default, the best candidate, the fastest other entry and the default
// / the candidate its band names (one kernel: near 1.000).
//
// * GPU times: CUDA events around each call, 2 warm-up calls, median (and min) of --runs calls
//   (5 for the naive algorithms from 2^24 on). Temporary storage is allocated outside the timed
//   region; Thrust allocates its own inside (that is how Thrust is used).
// * Inputs and outputs rotate through slices of 256 MiB pools, so consecutive calls touch different
//   memory and the 50 MB L2 does not flatter the small sizes.
// * Every GPU algorithm's output is compared with CUB's on the same input (column `ok`).
// * Writes DIR/prim.csv, DIR/prim.json, DIR/prim.md; prints the markdown summary and the device's
//   copy bandwidth (cudaMemcpy D2D of 1 GiB, bytes read + written / time) as the roofline.
// Google Benchmark is linked by the build but not used: this file has its own main().
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <new>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <cuda/std/functional>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#include "cuda/cuda_resources.hpp"
#include "gutf8/prim/cpu.hpp"
#include "gutf8/prim/radix_sort.cuh"
#include "gutf8/prim/scan.cuh"
#include "gutf8/prim/select.cuh"
#include "gutf8/prim/detail/scan_tuning.cuh"
#include "gutf8/prim/detail/sort_tuning.cuh"

namespace {

namespace cu = gutf8::cuda;
namespace prim = gutf8::prim;

// ---------------- options ----------------
struct options {
  std::string out = ".";
  std::string commit = "unknown";
  int min_log2 = 10, max_log2 = 28, cpu_max_log2 = 26, runs = 15;
  bool scan = true, select = true, sort = true, cpu = true, thrust = true, sweep = false;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_prim: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out") o.out = next();
    else if (a == "--commit") o.commit = next();
    else if (a == "--min-log2") o.min_log2 = std::stoi(next());
    else if (a == "--max-log2") o.max_log2 = std::stoi(next());
    else if (a == "--cpu-max-log2") o.cpu_max_log2 = std::stoi(next());
    else if (a == "--runs") o.runs = std::max(1, std::stoi(next()));
    else if (a == "--no-cpu") o.cpu = false;
    else if (a == "--no-thrust") o.thrust = false;
    else if (a == "--sweep") o.sweep = true;
    else if (a == "--only") {
      const std::string v = next();
      o.scan = v.find("scan") != std::string::npos;
      o.select = v.find("select") != std::string::npos;
      o.sort = v.find("sort") != std::string::npos;
    } else if (a == "-h" || a == "--help") {
      std::puts("bench_prim --out DIR [--commit SHA] [--min-log2 N] [--max-log2 N] [--only scan,select,sort]\n"
                "           [--runs N] [--cpu-max-log2 N] [--no-cpu] [--no-thrust]\n"
                "bench_prim --sweep --out DIR [--commit SHA] [--only scan,sort] [--runs N]");
      std::exit(0);
    } else {
      std::fprintf(stderr, "bench_prim: unknown option %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

// ---------------- results ----------------
struct row {
  std::string primitive, variant, algorithm;
  std::size_t n = 0;
  double median_ms = 0, min_ms = 0;
  int runs = 0;
  double bytes = 0;  // modelled bytes moved (reads + writes) for GB/s
  bool keys = false; // report keys/s
  std::string ok = "n/a";
  double ratio_vs_cub = 0;  // CUB time / this time (1 = CUB's throughput)
};
std::vector<row> g_rows;

// "2^k" for a power of two, else the size itself.
std::string size_label(std::size_t n) {
  if (n != 0 && (n & (n - 1)) == 0) return "2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(n))));
  return std::to_string(n);
}

void print_row(const row& r) {
  const double thr = r.keys ? r.n / (r.median_ms * 1e6) : r.bytes / (r.median_ms * 1e6);
  std::printf("%-7s %-13s %-20s %-9s %11.4f ms  %8.2f %s  %s\n", r.primitive.c_str(), r.variant.c_str(),
              r.algorithm.c_str(), size_label(r.n).c_str(), r.median_ms, thr, r.keys ? "Gkeys/s" : "GB/s   ",
              r.ok == "FAIL" ? "<-- MISMATCH vs CUB" : r.ok.c_str());
  std::fflush(stdout);
}

// ---------------- timing ----------------
struct stats {
  double median = 0, min = 0;
  int runs = 0;
};

stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  stats s;
  s.runs = static_cast<int>(v.size());
  s.min = v.front();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}

// F(void* temp, size_t& bytes, int k) -> cudaError_t, CUB convention; k picks the pools' slice.
template <class F>
stats time_gpu(F&& f, int runs, int warmup, cudaStream_t s) {
  std::size_t bytes = 0;
  cu::check(f(nullptr, bytes, 0), "temp query");
  cu::device_buffer<unsigned char> temp(std::max<std::size_t>(bytes, 1));
  for (int w = 0; w < warmup; ++w) cu::check(f(temp.data(), bytes, w), "warm-up");
  std::vector<cu::event> start(runs), stop(runs);
  for (int r = 0; r < runs; ++r) {
    start[r].record(s);
    cu::check(f(temp.data(), bytes, warmup + r), "timed call");
    stop[r].record(s);
  }
  cu::check(cudaStreamSynchronize(s), "sync");
  std::vector<double> ms(runs);
  for (int r = 0; r < runs; ++r) ms[r] = stop[r].elapsed_since(start[r]);
  return summarize(ms);
}

template <class F>
stats time_cpu(F&& f, int runs) {
  std::vector<double> ms(runs);
  f();  // warm-up (page faults, thread start)
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    ms[r] = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  return summarize(ms);
}

// ---------------- data ----------------
__device__ __forceinline__ std::uint32_t hash32(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<std::uint32_t>(x ^ (x >> 31));
}
__global__ void fill_u32(std::uint32_t* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = hash32(i * 0x100000001B3ull ^ seed) | 1u;  // never zero
}
__global__ void fill_flags(std::uint8_t* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<std::uint8_t>(hash32(i ^ (seed << 40)) & 1u);  // 50% selected
}
// The compact UTF-8 encoder's padded bytes: 4-byte slots of 1-4 bytes (never 0xFF, 62.5 % of all),
// the rest of each slot 0xFF.
__global__ void fill_padded(std::uint8_t* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const unsigned len = 1 + (hash32((i / 4) ^ (seed << 40)) & 3u);
    p[i] = i % 4 < len ? static_cast<std::uint8_t>(hash32(i ^ (seed << 48)) % 255u) : std::uint8_t{0xFF};
  }
}
__global__ void fill_iota(std::uint32_t* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<std::uint32_t>(i);
}
template <class T>
__global__ void count_mismatch(const T* a, const T* b, std::size_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(bad, local);
}

template <class T>
bool device_equal(const T* a, const T* b, std::size_t n, cudaStream_t s) {
  cu::device_buffer<unsigned long long> bad(1);
  cu::check(cudaMemsetAsync(bad.data(), 0, 8, s), "memset");
  if (n) count_mismatch<<<1024, 256, 0, s>>>(a, b, n, bad.data());
  cu::check_launch("count_mismatch");
  unsigned long long h = 0;
  cu::check(cudaMemcpyAsync(&h, bad.data(), 8, cudaMemcpyDeviceToHost, s), "D2H");
  cu::check(cudaStreamSynchronize(s), "sync");
  return h == 0;
}

// A pool of >= 256 MiB cut into slices of n elements: slice(k) rotates through it.
template <class T>
struct pool {
  std::size_t n = 0, stride = 0, slices = 1;
  cu::device_buffer<T> buf;
  explicit pool(std::size_t n_) : n(n_) {
    const std::size_t align = 256 / sizeof(T);
    stride = (n + align - 1) / align * align;
    const std::size_t want = (std::size_t{256} << 20) / sizeof(T);
    slices = std::max<std::size_t>(1, std::min<std::size_t>(want / std::max<std::size_t>(stride, 1), 4096));
    buf = cu::device_buffer<T>(stride * slices + align);
  }
  T* slice(int k) const { return buf.data() + (static_cast<std::size_t>(k) % slices) * stride; }
  std::size_t total() const { return stride * slices; }
};

unsigned grid_for(std::size_t n) { return static_cast<unsigned>(std::min<std::size_t>(4096, (n + 255) / 256 + 1)); }

// ---------------- benchmark bodies ----------------
bool slow_alg(const std::string& a) {
  return a == "hillis_steele" || a == "blelloch" || a == "split_bit";
}
int runs_for(const options& o, const std::string& alg, std::size_t n) {
  return (slow_alg(alg) && n >= (std::size_t{1} << 24)) ? std::min(o.runs, 5) : o.runs;
}

void finish_ratios() {
  std::map<std::string, double> cub;
  auto key = [](const row& r) { return r.primitive + "|" + r.variant + "|" + std::to_string(r.n); };
  for (const row& r : g_rows)
    if (r.algorithm == "cub") cub[key(r)] = r.median_ms;
  for (row& r : g_rows) {
    auto it = cub.find(key(r));
    r.ratio_vs_cub = it == cub.end() ? 0 : it->second / r.median_ms;
  }
}

void bench_scan(const options& o, std::size_t n, cudaStream_t s) {
  using T = std::uint32_t;
  pool<T> in(n), out(n);
  fill_u32<<<grid_for(in.total()), 256, 0, s>>>(in.buf.data(), in.total(), 1);
  cu::check_launch("fill");
  const double bytes = 2.0 * n * sizeof(T);
  cu::device_buffer<T> ref(n + 1), chk(n + 1);
  {  // reference output (CUB) for slice 0
    std::size_t b = 0;
    cu::check(prim::inclusive_sum(nullptr, b, in.slice(0), ref.data(), n, s, prim::scan_algorithm::cub), "q");
    cu::device_buffer<unsigned char> t(b);
    cu::check(prim::inclusive_sum(t.data(), b, in.slice(0), ref.data(), n, s, prim::scan_algorithm::cub), "cub");
  }
  for (auto alg : {prim::scan_algorithm::cub, prim::scan_algorithm::decoupled_lookback, prim::scan_algorithm::blocked,
                   prim::scan_algorithm::blelloch, prim::scan_algorithm::hillis_steele}) {
    const std::string name = prim::to_string(alg);
    const int runs = runs_for(o, name, n);
    auto call = [&](void* t, std::size_t& b, int k) {
      return prim::inclusive_sum(t, b, static_cast<const T*>(in.slice(k)), out.slice(k), n, s, alg);
    };
    const stats st = time_gpu(call, runs, slow_alg(name) && n >= (1u << 24) ? 1 : 2, s);
    {
      std::size_t b = 0;
      cu::check(prim::inclusive_sum(nullptr, b, in.slice(0), chk.data(), n, s, alg), "q");
      cu::device_buffer<unsigned char> t(b);
      cu::check(prim::inclusive_sum(t.data(), b, in.slice(0), chk.data(), n, s, alg), "check");
    }
    row r{"scan", "u32_incl_sum", name, n, st.median, st.min, st.runs, bytes};
    r.ok = device_equal(ref.data(), chk.data(), n, s) ? "ok" : "FAIL";
    print_row(r);
    g_rows.push_back(r);
  }
  if (o.thrust) {
    auto run = [&](const T* src, T* dst) {
      thrust::inclusive_scan(thrust::cuda::par.on(s), src, src + n, dst);
      return cudaGetLastError();
    };
    auto call = [&](void* t, std::size_t& b, int k) {
      if (!t) {
        b = 1;
        return cudaSuccess;
      }
      return run(in.slice(k), out.slice(k));
    };
    const stats st = time_gpu(call, o.runs, 2, s);
    cu::check(run(in.slice(0), chk.data()), "thrust check");
    row r{"scan", "u32_incl_sum", "thrust", n, st.median, st.min, st.runs, bytes};
    r.ok = device_equal(ref.data(), chk.data(), n, s) ? "ok" : "FAIL";
    print_row(r);
    g_rows.push_back(r);
  }
  if (o.cpu && n <= (std::size_t{1} << o.cpu_max_log2)) {
    std::vector<T> h(n), hout(n);
    cu::check(cudaMemcpy(h.data(), in.slice(0), n * sizeof(T), cudaMemcpyDeviceToHost), "D2H");
    const int runs = n >= (1u << 22) ? 3 : 7;
    for (unsigned threads : {1u, 0u}) {
      const stats st = time_cpu([&] { prim::cpu::inclusive_scan(h.data(), hout.data(), n, std::plus<T>{}, threads); }, runs);
      row r{"scan", "u32_incl_sum", threads == 1 ? "cpu_seq" : "cpu_mt", n, st.median, st.min, st.runs, bytes};
      print_row(r);
      g_rows.push_back(r);
    }
    const stats st = time_cpu([&] { std::inclusive_scan(h.begin(), h.end(), hout.begin()); }, runs);
    row r{"scan", "u32_incl_sum", "std_inclusive_scan", n, st.median, st.min, st.runs, bytes};
    print_row(r);
    g_rows.push_back(r);
  }
}

struct nonzero_flag {
  __host__ __device__ bool operator()(std::uint8_t f) const { return f != 0; }
};
struct is_odd {
  __host__ __device__ bool operator()(std::uint32_t x) const { return (x >> 9) & 1u; }
};

void bench_select(const options& o, std::size_t n, cudaStream_t s) {
  using T = std::uint32_t;
  pool<T> in(n), out(n);
  pool<std::uint8_t> flags(n);
  fill_u32<<<grid_for(in.total()), 256, 0, s>>>(in.buf.data(), in.total(), 2);
  fill_flags<<<grid_for(flags.total()), 256, 0, s>>>(flags.buf.data(), flags.total(), 3);
  cu::check_launch("fill");
  cu::device_buffer<std::size_t> num(4096);
  cu::device_buffer<T> ref(n + 1), chk(n + 1);
  std::size_t ref_num_flag = 0, ref_num_if = 0;
  auto run_once = [&](prim::select_algorithm alg, bool flagged, T* dst, std::size_t* d_num) {
    std::size_t b = 0;
    auto call = [&](void* t, std::size_t& bb) {
      return flagged ? prim::select_flagged(t, bb, static_cast<const T*>(in.slice(0)),
                                            static_cast<const std::uint8_t*>(flags.slice(0)), dst, d_num, n, s, alg)
                     : prim::select_if(t, bb, static_cast<const T*>(in.slice(0)), dst, d_num, n, is_odd{}, s, alg);
    };
    cu::check(call(nullptr, b), "q");
    cu::device_buffer<unsigned char> t(b);
    cu::check(call(t.data(), b), "select");
    std::size_t h = 0;
    cu::check(cudaMemcpyAsync(&h, d_num, sizeof(h), cudaMemcpyDeviceToHost, s), "D2H");
    cu::check(cudaStreamSynchronize(s), "sync");
    return h;
  };
  for (bool flagged : {true, false}) {
    const std::string variant = flagged ? "u32_flagged" : "u32_if";
    std::size_t& ref_num = flagged ? ref_num_flag : ref_num_if;
    ref_num = run_once(prim::select_algorithm::cub, flagged, ref.data(), num.data());
    const double bytes = n * (sizeof(T) + (flagged ? 1.0 : 0.0)) + static_cast<double>(ref_num) * sizeof(T);
    std::vector<prim::select_algorithm> algs = {prim::select_algorithm::cub, prim::select_algorithm::fused,
                                                prim::select_algorithm::decoupled_lookback};
    if (flagged)
      algs.insert(algs.end(), {prim::select_algorithm::blocked, prim::select_algorithm::blelloch,
                               prim::select_algorithm::hillis_steele});
    for (auto alg : algs) {
      const std::string name = prim::to_string(alg);
      auto call = [&](void* t, std::size_t& b, int k) {
        std::size_t* d_num = num.data() + (k % 4096);
        return flagged ? prim::select_flagged(t, b, static_cast<const T*>(in.slice(k)),
                                              static_cast<const std::uint8_t*>(flags.slice(k)), out.slice(k), d_num, n,
                                              s, alg)
                       : prim::select_if(t, b, static_cast<const T*>(in.slice(k)), out.slice(k), d_num, n, is_odd{}, s,
                                         alg);
      };
      const stats st = time_gpu(call, runs_for(o, name, n), slow_alg(name) && n >= (1u << 24) ? 1 : 2, s);
      const std::size_t got = run_once(alg, flagged, chk.data(), num.data() + 4095);
      row r{"select", variant, name, n, st.median, st.min, st.runs, bytes};
      r.ok = got == ref_num && device_equal(ref.data(), chk.data(), ref_num, s) ? "ok" : "FAIL";
      print_row(r);
      g_rows.push_back(r);
    }
    if (o.thrust) {
      auto run = [&](int k, T* dst) -> std::size_t {
        T* end = flagged ? thrust::copy_if(thrust::cuda::par.on(s), in.slice(k), in.slice(k) + n, flags.slice(k), dst,
                                           nonzero_flag{})
                         : thrust::copy_if(thrust::cuda::par.on(s), in.slice(k), in.slice(k) + n, dst, is_odd{});
        return static_cast<std::size_t>(end - dst);
      };
      auto call = [&](void* t, std::size_t& b, int k) {
        if (!t) {
          b = 1;
          return cudaSuccess;
        }
        run(k, out.slice(k));
        return cudaGetLastError();
      };
      const stats st = time_gpu(call, o.runs, 2, s);
      const std::size_t got = run(0, chk.data());
      row r{"select", variant, "thrust", n, st.median, st.min, st.runs, bytes};
      r.ok = got == ref_num && device_equal(ref.data(), chk.data(), ref_num, s) ? "ok" : "FAIL";
      print_row(r);
      g_rows.push_back(r);
    }
    if (o.cpu && n <= (std::size_t{1} << o.cpu_max_log2)) {
      std::vector<T> h(n), hout(n);
      std::vector<std::uint8_t> hf(n);
      cu::check(cudaMemcpy(h.data(), in.slice(0), n * sizeof(T), cudaMemcpyDeviceToHost), "D2H");
      cu::check(cudaMemcpy(hf.data(), flags.slice(0), n, cudaMemcpyDeviceToHost), "D2H");
      const int runs = n >= (1u << 22) ? 3 : 7;
      for (unsigned threads : {1u, 0u}) {
        const stats st = time_cpu(
            [&] {
              if (flagged) prim::cpu::select_flagged(h.data(), hf.data(), hout.data(), n, threads);
              else prim::cpu::select_if(h.data(), hout.data(), n, is_odd{}, threads);
            },
            runs);
        row r{"select", variant, threads == 1 ? "cpu_seq" : "cpu_mt", n, st.median, st.min, st.runs, bytes};
        print_row(r);
        g_rows.push_back(r);
      }
    }
  }
}

struct not_pad {
  __host__ __device__ bool operator()(std::uint8_t b) const { return b != 0xFF; }
};

// The compact encoder's compaction on the same bytes: CUB's DeviceSelect::If and the general fused
// select (select_if, a byte predicate), prim's select_bytes without and with an end bound (past the
// end, as the strict encoder's when the text has no error: the kernel it runs).
void bench_select_bytes(const options& o, std::size_t n, cudaStream_t s) {
  using T = std::uint8_t;
  pool<T> in(n), out(n);
  fill_padded<<<grid_for(in.total()), 256, 0, s>>>(in.buf.data(), in.total(), 6);
  cu::check_launch("fill");
  cu::device_buffer<std::size_t> num(4096);
  cu::device_buffer<std::uint64_t> end(1);
  const std::uint64_t no_end = ~std::uint64_t{0};
  cu::check(cudaMemcpyAsync(end.data(), &no_end, sizeof no_end, cudaMemcpyHostToDevice, s), "H2D");
  cu::device_buffer<T> ref(n + 1), chk(n + 1);
  auto call = [&](const std::string& alg, void* t, std::size_t& b, const T* src, T* dst, std::size_t* d_num) {
    if (alg == "select_bytes") return prim::select_bytes(t, b, src, dst, d_num, n, T{0xFF}, nullptr, s);
    if (alg == "select_bytes_end") return prim::select_bytes(t, b, src, dst, d_num, n, T{0xFF}, end.data(), s);
    return prim::select_if(t, b, src, dst, d_num, n, not_pad{}, s,
                           alg == "cub" ? prim::select_algorithm::cub : prim::select_algorithm::fused);
  };
  auto run_once = [&](const std::string& alg, T* dst, std::size_t* d_num) {
    std::size_t b = 0;
    cu::check(call(alg, nullptr, b, in.slice(0), dst, d_num), "q");
    cu::device_buffer<unsigned char> t(b);
    cu::check(call(alg, t.data(), b, in.slice(0), dst, d_num), "select_bytes");
    std::size_t h = 0;
    cu::check(cudaMemcpyAsync(&h, d_num, sizeof(h), cudaMemcpyDeviceToHost, s), "D2H");
    cu::check(cudaStreamSynchronize(s), "sync");
    return h;
  };
  const std::size_t ref_num = run_once("cub", ref.data(), num.data());
  const double bytes = static_cast<double>(n) + static_cast<double>(ref_num);
  for (const std::string alg : {"cub", "fused", "select_bytes", "select_bytes_end"}) {
    auto timed = [&](void* t, std::size_t& b, int k) {
      return call(alg, t, b, in.slice(k), out.slice(k), num.data() + (k % 4096));
    };
    const stats st = time_gpu(timed, o.runs, 2, s);
    const std::size_t got = run_once(alg, chk.data(), num.data() + 4095);
    row r{"select", "u8_unpad", alg, n, st.median, st.min, st.runs, bytes};
    r.ok = got == ref_num && device_equal(ref.data(), chk.data(), ref_num, s) ? "ok" : "FAIL";
    print_row(r);
    g_rows.push_back(r);
  }
}

void bench_sort(const options& o, std::size_t n, cudaStream_t s) {
  using K = std::uint32_t;
  using V = std::uint32_t;
  pool<K> kin(n), kout(n);
  pool<V> vin(n), vout(n);
  fill_u32<<<grid_for(kin.total()), 256, 0, s>>>(kin.buf.data(), kin.total(), 4);
  fill_iota<<<grid_for(vin.total()), 256, 0, s>>>(vin.buf.data(), vin.total());
  cu::check_launch("fill");
  cu::device_buffer<K> ref_k(n + 1), chk_k(n + 1);
  cu::device_buffer<V> ref_v(n + 1), chk_v(n + 1);
  auto run_once = [&](prim::sort_algorithm alg, bool pairs, K* dk, V* dv) {
    auto call = [&](void* t, std::size_t& b) {
      return pairs ? prim::radix_sort_pairs(t, b, static_cast<const K*>(kin.slice(0)), dk,
                                            static_cast<const V*>(vin.slice(0)), dv, n, 0, 32, s, alg)
                   : prim::radix_sort_keys(t, b, static_cast<const K*>(kin.slice(0)), dk, n, 0, 32, s, alg);
    };
    std::size_t b = 0;
    cu::check(call(nullptr, b), "q");
    cu::device_buffer<unsigned char> t(b);
    cu::check(call(t.data(), b), "sort");
  };
  for (bool pairs : {false, true}) {
    const std::string variant = pairs ? "u32_pairs" : "u32_keys";
    run_once(prim::sort_algorithm::cub, pairs, ref_k.data(), ref_v.data());
    const double bytes = n * (pairs ? 16.0 : 8.0);  // one read + one write of keys (+values)
    for (auto alg : {prim::sort_algorithm::cub, prim::sort_algorithm::onesweep, prim::sort_algorithm::digit,
                     prim::sort_algorithm::split_bit}) {
      const std::string name = prim::to_string(alg);
      auto call = [&](void* t, std::size_t& b, int k) {
        return pairs ? prim::radix_sort_pairs(t, b, static_cast<const K*>(kin.slice(k)), kout.slice(k),
                                              static_cast<const V*>(vin.slice(k)), vout.slice(k), n, 0, 32, s, alg)
                     : prim::radix_sort_keys(t, b, static_cast<const K*>(kin.slice(k)), kout.slice(k), n, 0, 32, s,
                                             alg);
      };
      const stats st = time_gpu(call, runs_for(o, name, n), slow_alg(name) && n >= (1u << 24) ? 1 : 2, s);
      run_once(alg, pairs, chk_k.data(), chk_v.data());
      row r{"sort", variant, name, n, st.median, st.min, st.runs, bytes, true};
      r.ok = device_equal(ref_k.data(), chk_k.data(), n, s) && (!pairs || device_equal(ref_v.data(), chk_v.data(), n, s))
                 ? "ok"
                 : "FAIL";
      print_row(r);
      g_rows.push_back(r);
    }
    if (o.thrust) {
      cu::device_buffer<K> tk(n + 1);
      cu::device_buffer<V> tv(n + 1);
      auto call = [&](void* t, std::size_t& b, int k) {
        if (!t) {
          b = 1;
          return cudaSuccess;
        }
        // thrust sorts in place: copy the input first (the copy is part of the measured time)
        cudaMemcpyAsync(tk.data(), kin.slice(k), n * sizeof(K), cudaMemcpyDeviceToDevice, s);
        if (pairs) {
          cudaMemcpyAsync(tv.data(), vin.slice(k), n * sizeof(V), cudaMemcpyDeviceToDevice, s);
          thrust::sort_by_key(thrust::cuda::par.on(s), tk.data(), tk.data() + n, tv.data());
        } else {
          thrust::sort(thrust::cuda::par.on(s), tk.data(), tk.data() + n);
        }
        return cudaGetLastError();
      };
      const stats st = time_gpu(call, o.runs, 2, s);
      std::size_t one = 1;
      cu::check(call(reinterpret_cast<void*>(1), one, 0), "thrust check");
      row r{"sort", variant, "thrust", n, st.median, st.min, st.runs, bytes, true};
      r.ok = device_equal(ref_k.data(), tk.data(), n, s) && (!pairs || device_equal(ref_v.data(), tv.data(), n, s))
                 ? "ok"
                 : "FAIL";
      print_row(r);
      g_rows.push_back(r);
    }
    if (o.cpu && n <= (std::size_t{1} << o.cpu_max_log2)) {
      std::vector<K> h(n), hk(n);
      std::vector<V> hv(n), hvo(n);
      cu::check(cudaMemcpy(h.data(), kin.slice(0), n * sizeof(K), cudaMemcpyDeviceToHost), "D2H");
      std::iota(hv.begin(), hv.end(), 0u);
      const int runs = n >= (1u << 22) ? 3 : 7;
      for (unsigned threads : {1u, 0u}) {
        const stats st = time_cpu(
            [&] {
              if (pairs) prim::cpu::radix_sort_pairs(h.data(), hk.data(), hv.data(), hvo.data(), n, 0, 32, threads);
              else prim::cpu::radix_sort_keys(h.data(), hk.data(), n, 0, 32, threads);
            },
            runs);
        row r{"sort", variant, threads == 1 ? "cpu_radix_seq" : "cpu_radix_mt", n, st.median, st.min, st.runs, bytes, true};
        print_row(r);
        g_rows.push_back(r);
      }
      if (!pairs) {
        const stats st = time_cpu(
            [&] {
              hk = h;
              std::sort(hk.begin(), hk.end());
            },
            runs);
        row r{"sort", variant, "std_sort", n, st.median, st.min, st.runs, bytes, true};
        print_row(r);
        g_rows.push_back(r);
      }
    }
  }
}

double copy_bandwidth(cudaStream_t s) {
  const std::size_t bytes = std::size_t{1} << 30;
  cu::device_buffer<unsigned char> a(bytes), b(bytes);
  cu::check(cudaMemsetAsync(a.data(), 1, bytes, s), "memset");
  std::vector<double> ms;
  for (int r = 0; r < 6; ++r) {
    cu::event e0, e1;
    e0.record(s);
    cu::check(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s), "D2D");
    e1.record(s);
    e1.synchronize();
    if (r > 0) ms.push_back(e1.elapsed_since(e0));
  }
  return 2.0 * bytes / (summarize(ms).median * 1e6);  // GB/s, read + write
}

std::string fmt(double v, int prec = 3) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(prec);
  os << v;
  return os.str();
}

void write_outputs(const options& o, const std::string& gpu, double copy_gbps) {
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  {
    std::ofstream csv(o.out + "/prim.csv");
    csv << "primitive,variant,algorithm,n,log2n,median_ms,min_ms,runs,gb_per_s,gkeys_per_s,ratio_vs_cub,ok,gpu,commit,"
           "date\n";
    for (const row& r : g_rows)
      csv << r.primitive << ',' << r.variant << ',' << r.algorithm << ',' << r.n << ','
          << static_cast<int>(std::log2(static_cast<double>(r.n))) << ',' << fmt(r.median_ms, 5) << ','
          << fmt(r.min_ms, 5) << ',' << r.runs << ',' << fmt(r.bytes / (r.median_ms * 1e6), 2) << ','
          << (r.keys ? fmt(r.n / (r.median_ms * 1e6), 4) : "") << ',' << fmt(r.ratio_vs_cub, 3) << ',' << r.ok << ",\""
          << gpu << "\"," << o.commit << ',' << date << '\n';
  }
  {
    std::ofstream js(o.out + "/prim.json");
    js << "{\n  \"gpu\": \"" << gpu << "\",\n  \"commit\": \"" << o.commit << "\",\n  \"date\": \"" << date
       << "\",\n  \"copy_bandwidth_gb_per_s\": " << fmt(copy_gbps, 1) << ",\n  \"cub_version\": " << CUB_VERSION
       << ",\n  \"results\": [\n";
    for (std::size_t i = 0; i < g_rows.size(); ++i) {
      const row& r = g_rows[i];
      js << "    {\"primitive\": \"" << r.primitive << "\", \"variant\": \"" << r.variant << "\", \"algorithm\": \""
         << r.algorithm << "\", \"n\": " << r.n << ", \"median_ms\": " << fmt(r.median_ms, 5)
         << ", \"min_ms\": " << fmt(r.min_ms, 5) << ", \"runs\": " << r.runs
         << ", \"gb_per_s\": " << fmt(r.bytes / (r.median_ms * 1e6), 2)
         << ", \"ratio_vs_cub\": " << fmt(r.ratio_vs_cub, 3) << ", \"ok\": \"" << r.ok << "\"}"
         << (i + 1 < g_rows.size() ? ",\n" : "\n");
    }
    js << "  ]\n}\n";
  }
  std::ostringstream md;
  md << "# gutf8::prim benchmark\n\nGPU: " << gpu << "  \nCommit: " << o.commit << "  \nDate: " << date
     << "  \nCUB: " << CUB_VERSION << "  \nDevice copy bandwidth (cudaMemcpy D2D 1 GiB, read+write): "
     << fmt(copy_gbps, 1) << " GB/s\n\n"
     << "Cells: median time in ms (throughput: GB/s for scan/select, Gkeys/s for sort; CUB's throughput = 100%).\n";
  std::vector<std::string> order;
  std::map<std::string, std::vector<const row*>> by;
  for (const row& r : g_rows) {
    const std::string k = r.primitive + " / " + r.variant;
    if (!by.count(k)) order.push_back(k);
    by[k].push_back(&r);
  }
  for (const std::string& k : order) {
    std::vector<std::string> algs;
    std::vector<std::size_t> sizes;
    for (const row* r : by[k]) {
      if (std::find(algs.begin(), algs.end(), r->algorithm) == algs.end()) algs.push_back(r->algorithm);
      if (std::find(sizes.begin(), sizes.end(), r->n) == sizes.end()) sizes.push_back(r->n);
    }
    md << "\n## " << k << "\n\n| n |";
    for (auto& a : algs) md << ' ' << a << " |";
    md << "\n|---|";
    for (std::size_t i = 0; i < algs.size(); ++i) md << "---|";
    md << '\n';
    for (std::size_t n : sizes) {
      md << "| " << size_label(n) << " |";
      for (auto& a : algs) {
        const row* hit = nullptr;
        for (const row* r : by[k])
          if (r->n == n && r->algorithm == a) hit = r;
        if (!hit) {
          md << " - |";
          continue;
        }
        const double thr = hit->keys ? hit->n / (hit->median_ms * 1e6) : hit->bytes / (hit->median_ms * 1e6);
        md << ' ' << fmt(hit->median_ms, hit->median_ms < 1 ? 4 : 2) << " (" << fmt(thr, hit->keys ? 2 : 0)
           << (hit->keys ? " Gk/s" : " GB/s");
        if (hit->ratio_vs_cub > 0) md << ", " << fmt(100 * hit->ratio_vs_cub, 0) << "%";
        if (hit->ok == "FAIL") md << ", MISMATCH";
        md << ") |";
      }
      md << '\n';
    }
  }
  std::ofstream(o.out + "/prim.md") << md.str();
}

void print_summary() {
  std::puts("\n== headline (own production algorithm vs CUB; >= 1.0 means as fast as CUB) ==");
  struct want {
    const char* prim;
    const char* variant;
    const char* alg;
  } wants[] = {{"scan", "u32_incl_sum", "decoupled_lookback"}, {"select", "u32_flagged", "fused"},
               {"select", "u32_if", "fused"}, {"select", "u8_unpad", "select_bytes"},
               {"sort", "u32_keys", "onesweep"}, {"sort", "u32_pairs", "onesweep"}};
  for (auto& w : wants)
    for (const row& r : g_rows)
      if (r.primitive == w.prim && r.variant == w.variant && r.algorithm == w.alg &&
          (r.n == (1u << 20) || r.n == (1u << 24) || r.n == (1u << 28)))
        std::printf("%-7s %-13s %-20s %-9s %9.4f ms  %5.3fx CUB  %s\n", r.primitive.c_str(), r.variant.c_str(),
                    r.algorithm.c_str(), size_label(r.n).c_str(), r.median_ms,
                    r.ratio_vs_cub, r.ok.c_str());
}

// ---------------- --sweep: the tuning candidates beside CUB and Thrust ----------------
namespace detail = prim::detail;

struct sweep_entry {
  std::string name;
  std::string kind;  // "peer" (CUB, Thrust), "ours" (the default, other algorithms), "candidate"
  std::function<cudaError_t(void*, std::size_t&, int)> call;  // slice k; temp query with nullptr
  stats st;
  std::string ok = "n/a";
};

// Keeps the GPU busy while the host queues a round, so that no timed call waits for its launch.
__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Thrust's temporary storage from a buffer allocated once (Thrust's kernels without cudaMalloc):
// blocks are handed out in order and the buffer is reused once all of them are back.
struct prealloc_allocator {
  using value_type = char;
  char* base = nullptr;
  std::size_t bytes = 0, used = 0, live = 0;
  char* allocate(std::ptrdiff_t n) {
    const std::size_t want = (static_cast<std::size_t>(n) + 255) / 256 * 256;
    if (used + want > bytes) throw std::bad_alloc();
    char* p = base + used;
    used += want;
    ++live;
    return p;
  }
  void deallocate(char*, std::size_t) {
    if (live > 0 && --live == 0) used = 0;
  }
};

// Every entry once a round, in order, after a spin that covers the host's queueing of the round
// (measured in the last warm-up round); 2 warm-up rounds, then `runs` timed ones. One temp buffer of
// the largest size serves all (the calls are ordered on one stream).
void time_interleaved(std::vector<sweep_entry>& es, int runs, cudaStream_t s) {
  std::size_t most = 1;
  for (auto& e : es) {
    std::size_t b = 0;
    cu::check(e.call(nullptr, b, 0), "temp query");
    most = std::max(most, b);
  }
  cu::device_buffer<unsigned char> temp(most);
  constexpr int warm = 2;
  std::vector<std::vector<cu::event>> start(es.size()), stop(es.size());
  for (std::size_t i = 0; i < es.size(); ++i) {
    start[i] = std::vector<cu::event>(runs);
    stop[i] = std::vector<cu::event>(runs);
  }
  double queue_ms = 0.05;
  for (int r = 0; r < warm + runs; ++r) {
    spin_kernel<<<1, 1, 0, s>>>(static_cast<long long>(std::min(50.0, 1.5 * queue_ms) * 2.0e6));
    cu::check_launch("spin");
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < es.size(); ++i) {
      std::size_t b = most;
      if (r >= warm) start[i][r - warm].record(s);
      cu::check(es[i].call(temp.data(), b, r), es[i].name.c_str());
      if (r >= warm) stop[i][r - warm].record(s);
    }
    if (r == warm - 1)  // the first round pays one-off costs (module loading)
      queue_ms = std::max(0.05, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  cu::check(cudaStreamSynchronize(s), "sync");
  for (std::size_t i = 0; i < es.size(); ++i) {
    std::vector<double> ms(runs);
    for (int r = 0; r < runs; ++r) ms[r] = stop[i][r].elapsed_since(start[i][r]);
    es[i].st = summarize(ms);
  }
}

std::vector<std::size_t> sweep_sizes() {
  std::vector<std::size_t> v;
  for (int k = 20; k <= 28; ++k) v.push_back(std::size_t{1} << k);
  for (int k = 20; k <= 26; ++k) v.push_back((std::size_t{3} << k) + 7);
  std::sort(v.begin(), v.end());
  return v;
}

// A CUB-convention call run once with its own temporary storage (the reference outputs).
template <class F>
void run_cub_reference(F&& f) {
  std::size_t b = 0;
  cu::check(f(nullptr, b), "reference temp query");
  cu::device_buffer<unsigned char> t(std::max<std::size_t>(b, 1));
  cu::check(f(t.data(), b), "reference");
}

// Calls each entry once on slice 0 and compares its output with CUB's (ref); out: slice 0 of the
// output pool(s), cleared first so that a call that writes nothing fails.
template <class T>
void check_entries(std::vector<sweep_entry>& es, const std::vector<std::pair<T*, const T*>>& outs_refs, std::size_t n,
                   cudaStream_t s) {
  for (auto& e : es) {
    for (auto& [out, ref] : outs_refs) cu::check(cudaMemsetAsync(out, 0xA5, n * sizeof(T), s), "clear");
    std::size_t b = 0;
    cu::check(e.call(nullptr, b, 0), "temp query");
    cu::device_buffer<unsigned char> t(std::max<std::size_t>(b, 1));
    cu::check(e.call(t.data(), b, 0), e.name.c_str());
    bool same = true;
    for (auto& [out, ref] : outs_refs) same = same && device_equal(ref, out, n, s);
    e.ok = same ? "ok" : "FAIL";
  }
}

// The candidate the default runs at n: the band of Bands that holds n.
template <class Bands, class F>
std::string band_candidate(std::size_t n, F name_of) {
  std::string name;
  detail::with_band<Bands>(n, [&](auto band) { name = name_of(static_cast<typename decltype(band)::type*>(nullptr)); });
  return name;
}

std::string default_band_entry(const std::string& primitive, std::size_t n) {
  if (primitive == "scan")
    return "lb_" + band_candidate<detail::scan_default_bands_u32>(
                       n, []<class B>(B*) { return B::tuning::name(); });
  return "os_" + band_candidate<detail::sort_pairs_default_bands_u32>(
                     n, []<class B>(B*) { return B::shape::name(); });
}

std::vector<sweep_entry> scan_entries(const pool<std::uint32_t>& in, const pool<std::uint32_t>& out, std::size_t n,
                                      prealloc_allocator& thrust_temp, cudaStream_t s) {
  using T = std::uint32_t;
  std::vector<sweep_entry> es;
  auto add = [&](std::string name, std::string kind, auto f) { es.push_back({std::move(name), std::move(kind), f}); };
  add("cub", "peer", [&, n, s](void* t, std::size_t& b, int k) {
    return prim::inclusive_sum(t, b, static_cast<const T*>(in.slice(k)), out.slice(k), n, s, prim::scan_algorithm::cub);
  });
  add("cub_std_plus", "peer", [&, n, s](void* t, std::size_t& b, int k) {
    return ::cub::DeviceScan::InclusiveScan(t, b, static_cast<const T*>(in.slice(k)), out.slice(k),
                                            ::cuda::std::plus<>{}, static_cast<int>(n), s);
  });
  add("blocked", "ours", [&, n, s](void* t, std::size_t& b, int k) {
    return prim::inclusive_sum(t, b, static_cast<const T*>(in.slice(k)), out.slice(k), n, s,
                               prim::scan_algorithm::blocked);
  });
  // the default apart from the candidate it runs: a kernel right after an identical one starts warm
  // (measured: the later of the two 5-10 % faster below 2^22), so both follow other kernels
  add("default", "ours", [&, n, s](void* t, std::size_t& b, int k) {
    return prim::inclusive_sum(t, b, static_cast<const T*>(in.slice(k)), out.slice(k), n, s);
  });
  detail::for_each_type<detail::scan_candidates_u32>([&](auto tag, std::size_t) {
    using tuning = typename decltype(tag)::type;
    add("lb_" + tuning::name(), "candidate", [&, n, s](void* t, std::size_t& b, int k) {
      return detail::lookback_scan_tuned<tuning>(t, b, detail::ptr_source<T>{in.slice(k)}, out.slice(k), n,
                                                 prim::plus{}, false, T{}, s);
    });
  });
  // par_nosync: thrust::cuda::par waits for the GPU after the scan, which would leave the entry
  // after it timed from an idle GPU (its launches exposed)
  add("thrust_prealloc", "peer", [&, n, s](void* t, std::size_t& b, int k) {
    if (!t) {
      b = 1;
      return cudaSuccess;
    }
    thrust::inclusive_scan(thrust::cuda::par_nosync(thrust_temp).on(s), in.slice(k), in.slice(k) + n, out.slice(k));
    return cudaGetLastError();
  });
  // last: its cudaFree waits for the GPU, which would expose the launches queued after it
  add("thrust", "peer", [&, n, s](void* t, std::size_t& b, int k) {
    if (!t) {
      b = 1;
      return cudaSuccess;
    }
    thrust::inclusive_scan(thrust::cuda::par.on(s), in.slice(k), in.slice(k) + n, out.slice(k));
    return cudaGetLastError();
  });
  return es;
}

std::vector<sweep_entry> sweep_scan(const options& o, std::size_t n, cudaStream_t s) {
  using T = std::uint32_t;
  pool<T> in(n), out(n);
  fill_u32<<<grid_for(in.total()), 256, 0, s>>>(in.buf.data(), in.total(), 11);
  cu::check_launch("fill");
  cu::device_buffer<T> ref(n + 1);
  run_cub_reference([&](void* t, std::size_t& b) {
    return prim::inclusive_sum(t, b, static_cast<const T*>(in.slice(0)), ref.data(), n, s, prim::scan_algorithm::cub);
  });
  cu::device_buffer<char> thrust_buf(std::size_t{64} << 20);
  prealloc_allocator thrust_temp{thrust_buf.data(), std::size_t{64} << 20, 0, 0};
  auto es = scan_entries(in, out, n, thrust_temp, s);
  time_interleaved(es, std::max(10, o.runs), s);
  check_entries<T>(es, {{out.slice(0), ref.data()}}, n, s);
  return es;
}

std::vector<sweep_entry> sweep_sort(const options& o, std::size_t n, cudaStream_t s) {
  using K = std::uint32_t;
  pool<K> kin(n), kout(n), vin(n), vout(n);
  fill_u32<<<grid_for(kin.total()), 256, 0, s>>>(kin.buf.data(), kin.total(), 12);
  fill_iota<<<grid_for(vin.total()), 256, 0, s>>>(vin.buf.data(), vin.total());
  cu::check_launch("fill");
  auto sort_call = [&](prim::sort_algorithm alg) {
    return [&, alg, n, s](void* t, std::size_t& b, int k) {
      return prim::radix_sort_pairs(t, b, static_cast<const K*>(kin.slice(k)), kout.slice(k),
                                    static_cast<const K*>(vin.slice(k)), vout.slice(k), n, 0, 32, s, alg);
    };
  };
  cu::device_buffer<K> ref_k(n + 1), ref_v(n + 1);
  run_cub_reference([&](void* t, std::size_t& b) {
    return prim::radix_sort_pairs(t, b, static_cast<const K*>(kin.slice(0)), ref_k.data(),
                                  static_cast<const K*>(vin.slice(0)), ref_v.data(), n, 0, 32, s,
                                  prim::sort_algorithm::cub);
  });
  std::vector<sweep_entry> es;
  es.push_back({"cub", "peer", sort_call(prim::sort_algorithm::cub)});
  es.push_back({"default", "ours", sort_call(prim::sort_algorithm::onesweep)});
  detail::for_each_type<detail::sort_pairs_candidates_u32>([&](auto tag, std::size_t) {
    using shape = typename decltype(tag)::type;
    es.push_back({"os_" + shape::name(), "candidate", [&, n, s](void* t, std::size_t& b, int k) {
                    return detail::onesweep_sort<K, K, true, shape>(t, b, kin.slice(k), kout.slice(k), vin.slice(k),
                                                                   vout.slice(k), n, 0, 32, s);
                  }});
  });
  time_interleaved(es, std::max(10, o.runs), s);
  check_entries<K>(es, {{kout.slice(0), ref_k.data()}, {vout.slice(0), ref_v.data()}}, n, s);
  return es;
}

struct sweep_result {
  std::string primitive;
  std::size_t n;
  std::vector<sweep_entry> entries;
  // The fastest entry of the kinds given (e.g. peers and our other algorithms), or nullptr.
  const sweep_entry* fastest(std::initializer_list<const char*> kinds, const char* except = "") const {
    const sweep_entry* best = nullptr;
    for (const auto& e : entries)
      if (e.name != except && std::any_of(kinds.begin(), kinds.end(), [&](const char* k) { return e.kind == k; }) &&
          (!best || e.st.median < best->st.median))
        best = &e;
    return best;
  }
  const sweep_entry* find(const std::string& name) const {
    for (const auto& e : entries)
      if (e.name == name) return &e;
    return nullptr;
  }
};

// One line a size: the default, the best candidate, CUB and the fastest other entry (peers and
// our other algorithms), with ratios (their time / ours: >= 1 means ours is as fast or faster).
void print_sweep_line(const sweep_result& r) {
  const sweep_entry* def = r.find("default");
  const sweep_entry* best = r.fastest({"candidate"});
  const sweep_entry* other = r.fastest({"peer", "ours"}, "default");
  const sweep_entry* cub = r.find("cub");
  if (!def || !best || !other || !cub) return;
  bool bad = false;
  for (const auto& e : r.entries) bad = bad || e.ok == "FAIL";
  // the default runs its band's candidate: default / band near 1, else the two calls differ
  const sweep_entry* band = r.find(default_band_entry(r.primitive, r.n));
  std::printf("%-5s %-10s default %8.4f | best %-24s %8.4f | cub %8.4f | fastest other %-15s %8.4f | "
              "default %5.3fx  best %5.3fx | default/%s %5.3f%s\n",
              r.primitive.c_str(), size_label(r.n).c_str(), def->st.median, best->name.c_str(), best->st.median,
              cub->st.median, other->name.c_str(), other->st.median, other->st.median / def->st.median,
              other->st.median / best->st.median, band ? band->name.c_str() : "band?",
              band ? def->st.median / band->st.median : 0.0, bad ? "  MISMATCH" : "");
  std::fflush(stdout);
}

// DIR/prim_sweep.csv: a row an entry and size; ratio_vs_fastest_other = the fastest peer or other
// algorithm's time / this time.
void write_sweep_csv(const options& o, const std::vector<sweep_result>& rs, const std::string& gpu) {
  std::ofstream csv(o.out + "/prim_sweep.csv");
  csv << "primitive,n,entry,kind,median_ms,min_ms,runs,gb_per_s,gkeys_per_s,ratio_vs_fastest_other,ok,gpu,commit\n";
  for (const auto& r : rs) {
    const sweep_entry* other = r.fastest({"peer", "ours"}, "default");
    for (const auto& e : r.entries) {
      const double gbs = r.primitive == "scan" ? 8.0 * r.n / (e.st.median * 1e6) : 16.0 * r.n / (e.st.median * 1e6);
      csv << r.primitive << ',' << r.n << ',' << e.name << ',' << e.kind << ',' << fmt(e.st.median, 5) << ','
          << fmt(e.st.min, 5) << ',' << e.st.runs << ',' << fmt(gbs, 1) << ','
          << (r.primitive == "sort" ? fmt(r.n / (e.st.median * 1e6), 3) : "") << ','
          << fmt(other ? other->st.median / e.st.median : 0, 4) << ',' << e.ok << ",\"" << gpu << "\"," << o.commit
          << '\n';
    }
  }
}

// DIR/prim_sweep.md: per primitive, entries x sizes, each cell the ratio to the fastest other entry.
void write_sweep_md(const options& o, const std::vector<sweep_result>& rs, const std::string& gpu) {
  std::ofstream md(o.out + "/prim_sweep.md");
  md << "# bench_prim --sweep\n\nGPU: " << gpu << "  \nCommit: " << o.commit
     << "  \nCells: median ms of >= 10 interleaved rounds, and (fastest other entry's time / this time).\n";
  for (const char* prim_name : {"scan", "sort"}) {
    std::vector<const sweep_result*> cols;
    for (const auto& r : rs)
      if (r.primitive == prim_name) cols.push_back(&r);
    if (cols.empty()) continue;
    md << "\n## " << prim_name << (std::string(prim_name) == "scan" ? " (u32 inclusive sum)" : " (u32 pairs)")
       << "\n\n| entry |";
    for (auto* c : cols) md << ' ' << size_label(c->n) << " |";
    md << "\n|---|";
    for (std::size_t i = 0; i < cols.size(); ++i) md << "---:|";
    md << '\n';
    for (const auto& e : cols.front()->entries) {
      md << "| " << e.name << " |";
      for (auto* c : cols) {
        const sweep_entry* x = c->find(e.name);
        const sweep_entry* other = c->fastest({"peer", "ours"}, "default");
        if (!x || !other) {
          md << " - |";
          continue;
        }
        md << ' ' << fmt(x->st.median, 4) << " (" << fmt(other->st.median / x->st.median, 3) << ")"
           << (x->ok == "FAIL" ? " MISMATCH" : "") << " |";
      }
      md << '\n';
    }
  }
}

int run_sweep(const options& o, const std::string& gpu, cudaStream_t s) {
  std::vector<sweep_result> rs;
  std::printf("sweep: %zu scan and %zu sort candidates; median ms of %d interleaved rounds\n",
              detail::scan_candidates_u32::size, detail::sort_pairs_candidates_u32::size, std::max(10, o.runs));
  for (std::size_t n : sweep_sizes()) {
    if (o.scan) rs.push_back({"scan", n, sweep_scan(o, n, s)});
    if (o.scan) print_sweep_line(rs.back());
    if (o.sort) rs.push_back({"sort", n, sweep_sort(o, n, s)});
    if (o.sort) print_sweep_line(rs.back());
  }
  for (auto& r : rs)
    for (auto& e : r.entries) e.call = nullptr;  // their buffers are gone
  write_sweep_csv(o, rs, gpu);
  write_sweep_md(o, rs, gpu);
  int failures = 0;
  for (const auto& r : rs)
    for (const auto& e : r.entries) failures += e.ok == "FAIL";
  std::printf("\nwrote %s/prim_sweep.csv, prim_sweep.md; %d entries unlike CUB\n", o.out.c_str(), failures);
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  try {
    const std::string why = cu::gpu_unavailable_reason();
    if (!why.empty()) {
      std::fprintf(stderr, "bench_prim: no usable GPU: %s\n", why.c_str());
      return 3;
    }
    cudaDeviceProp prop{};
    cu::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const std::string gpu = prop.name;
    cu::stream s;
    const double copy_gbps = copy_bandwidth(s);
    std::printf("GPU: %s, %d SMs, L2 %d MB; commit %s; CUB %d\n", gpu.c_str(), prop.multiProcessorCount,
                prop.l2CacheSize >> 20, o.commit.c_str(), CUB_VERSION);
    std::printf("device copy bandwidth (cudaMemcpy D2D 1 GiB, read+write): %.1f GB/s\n", copy_gbps);
    if (o.sweep) return run_sweep(o, gpu, s);
    for (int lg = o.min_log2; lg <= o.max_log2; lg += 2) {
      const std::size_t n = std::size_t{1} << lg;
      if (o.scan) bench_scan(o, n, s);
      if (o.select) bench_select(o, n, s);
      if (o.select) bench_select_bytes(o, n, s);
      if (o.sort) bench_sort(o, n, s);
    }
    if (o.select && o.max_log2 >= 2) bench_select_bytes(o, (std::size_t{3} << (o.max_log2 - 2)) + 4099, s);
    finish_ratios();
    write_outputs(o, gpu, copy_gbps);
    print_summary();
    std::printf("\nwrote %s/prim.csv, prim.json, prim.md\n", o.out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_prim: %s\n", e.what());
    return 3;
  }
  return 0;
}
