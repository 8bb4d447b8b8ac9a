// The host-side limits of an end-to-end run, measured on the machine at hand (not a Google
// Benchmark: most of these happen once per process, which is exactly what matters end to end):
//   * CUDA start-up: driver initialisation, context creation, and the cost of the first pinned
//     and device allocations, plus context teardown;
//   * PCIe: pinned and pageable host<->device copy rates, one direction and both at once;
//   * the page cache: pread() of a file with 1..16 threads into pageable and pinned buffers, and
//     page-locking it in place (cudaHostRegister) from 1..8 threads.
// These bound what `gutf8` can reach from file to file whatever its kernels do.
//
//   bench_host_limits [--file F] [--reps N]
// Prints a markdown table (medians of --reps, default 5) on stdout.
//   bench_host_limits --exit-test normal|quick
// Starts CUDA, takes 48 MiB of pinned and 256 MiB of device memory, then ends with the usual
// teardown (normal) or std::_Exit without it (quick): time it from outside (`time`) to see what
// the teardown costs a process.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_resources.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
constexpr std::size_t mib = std::size_t{1} << 20;

double seconds_of(const std::function<void()>& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median_of(int reps, const std::function<double()>& f) {
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) v.push_back(f());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void row(const std::string& what, double value, const char* unit) {
  std::printf("| %s | %.4g | %s |\n", what.c_str(), value, unit);
}

void start_up() {
  int count = 0;
  row("cuInit (first runtime call)", seconds_of([&] { gutf8::cuda::check(cudaGetDeviceCount(&count), "count"); }) * 1e3, "ms");
  row("context creation (cudaFree(0))", seconds_of([] { gutf8::cuda::check(cudaFree(nullptr), "ctx"); }) * 1e3, "ms");
  for (std::size_t m : {std::size_t{4}, std::size_t{16}, std::size_t{64}, std::size_t{256}}) {
    void* p = nullptr;
    const double a = seconds_of([&] { gutf8::cuda::check(cudaHostAlloc(&p, m * mib, cudaHostAllocPortable), "host alloc"); });
    const double f = seconds_of([&] { cudaFreeHost(p); });
    row("cudaHostAlloc " + std::to_string(m) + " MiB", a * 1e3, "ms");
    row("cudaFreeHost " + std::to_string(m) + " MiB", f * 1e3, "ms");
  }
  for (std::size_t m : {std::size_t{64}, std::size_t{1024}}) {
    void* p = nullptr;
    const double a = seconds_of([&] { gutf8::cuda::check(cudaMalloc(&p, m * mib), "malloc"); });
    const double f = seconds_of([&] { cudaFree(p); });
    row("cudaMalloc " + std::to_string(m) + " MiB", a * 1e3, "ms");
    row("cudaFree " + std::to_string(m) + " MiB", f * 1e3, "ms");
  }
}

void copies(int reps) {
  constexpr std::size_t n = 256 * mib;
  gutf8::cuda::pinned_buffer<unsigned char> pinned(n), pinned2(n);
  std::vector<unsigned char> pageable(n, 1);
  gutf8::cuda::device_buffer<unsigned char> dev(n), dev2(n);
  gutf8::cuda::stream s1, s2;
  std::fill_n(pinned.data(), n, 1);
  std::fill_n(pinned2.data(), n, 2);
  const auto rate = [&](auto&& copy) {
    return static_cast<double>(n) / median_of(reps, [&] {
             return seconds_of([&] {
               copy();
               gutf8::cuda::check(cudaDeviceSynchronize(), "sync");
             });
           }) / 1e9;
  };
  row("H2D pinned 256 MiB", rate([&] { cudaMemcpyAsync(dev.data(), pinned.data(), n, cudaMemcpyHostToDevice, s1); }), "GB/s");
  row("D2H pinned 256 MiB", rate([&] { cudaMemcpyAsync(pinned.data(), dev.data(), n, cudaMemcpyDeviceToHost, s1); }), "GB/s");
  row("H2D + D2H at once, pinned (each way)", rate([&] {
        cudaMemcpyAsync(dev.data(), pinned.data(), n, cudaMemcpyHostToDevice, s1);
        cudaMemcpyAsync(pinned2.data(), dev2.data(), n, cudaMemcpyDeviceToHost, s2);
      }), "GB/s");
  row("H2D pageable 256 MiB", rate([&] { cudaMemcpy(dev.data(), pageable.data(), n, cudaMemcpyHostToDevice); }), "GB/s");
  row("D2H pageable 256 MiB", rate([&] { cudaMemcpy(pageable.data(), dev.data(), n, cudaMemcpyDeviceToHost); }), "GB/s");
}

// pread of the whole file by `threads` threads, each reading 16 MiB at a time in turn.
double read_rate(const char* path, unsigned threads, bool pinned, int reps) {
  const int fd = ::open(path, O_RDONLY);
  if (fd < 0) return 0;
  const off_t size = ::lseek(fd, 0, SEEK_END);
  constexpr std::size_t read_size = 16 * mib;
  std::vector<gutf8::cuda::pinned_buffer<unsigned char>> pin;
  std::vector<std::vector<unsigned char>> page;
  for (unsigned t = 0; t < threads; ++t) {
    if (pinned) pin.emplace_back(read_size);
    else page.emplace_back(read_size);
  }
  const double s = median_of(reps, [&] {
    return seconds_of([&] {
      std::vector<std::jthread> pool;
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          unsigned char* buf = pinned ? pin[t].data() : page[t].data();
          for (off_t at = static_cast<off_t>(t * read_size); at < size; at += static_cast<off_t>(threads * read_size))
            if (::pread(fd, buf, read_size, at) < 0) std::abort();
        });
    });
  });
  ::close(fd);
  return static_cast<double>(size) / s / 1e9;
}

// The other way to feed a GPU from the page cache: map the file, page-lock the mapped pages in
// place (cudaHostRegister, read-only) and let the copy engines read them, with no CPU copy.
// Returns {registration GB/s, H2D GB/s from the registered pages} over `window`-byte windows.
std::pair<double, double> registered_rates(const char* path, std::size_t window, int reps) {
  const int fd = ::open(path, O_RDONLY);
  if (fd < 0) return {0, 0};
  const auto size = static_cast<std::size_t>(::lseek(fd, 0, SEEK_END));
  const std::size_t windows = std::min<std::size_t>(size / window, 16);
  gutf8::cuda::device_buffer<unsigned char> dev(window);
  gutf8::cuda::stream st;
  double reg_s = 0, copy_s = 0;
  for (int r = 0; r < reps; ++r)
    for (std::size_t w = 0; w < windows; ++w) {
      void* map = ::mmap(nullptr, window, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(w * window));
      if (map == MAP_FAILED) return {0, 0};
      reg_s += seconds_of([&] {
        gutf8::cuda::check(cudaHostRegister(map, window, cudaHostRegisterReadOnly), "cudaHostRegister");
      });
      copy_s += seconds_of([&] {
        gutf8::cuda::check(cudaMemcpyAsync(dev.data(), map, window, cudaMemcpyHostToDevice, st), "H2D");
        gutf8::cuda::check(cudaStreamSynchronize(st), "sync");
      });
      cudaHostUnregister(map);
      ::munmap(map, window);
    }
  ::close(fd);
  const double bytes = static_cast<double>(window) * static_cast<double>(windows) * reps;
  return {bytes / reg_s / 1e9, bytes / copy_s / 1e9};
}

// Registration from `threads` threads at once, each mapping and page-locking its own windows of
// the file (after MADV_POPULATE_READ of them when `populate`): whether the driver serialises it.
// Returns registration GB/s over the wall time of all threads.
double registered_rate_threads(const char* path, std::size_t window, unsigned threads, bool populate, int reps) {
  const int fd = ::open(path, O_RDONLY);
  if (fd < 0) return 0;
  const auto size = static_cast<std::size_t>(::lseek(fd, 0, SEEK_END));
  const std::size_t windows = std::min<std::size_t>(size / window, 32);
  std::vector<void*> maps(windows, nullptr);
  const double s = median_of(reps, [&] {
    for (std::size_t w = 0; w < windows; ++w) {
      maps[w] = ::mmap(nullptr, window, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(w * window));
      if (maps[w] == MAP_FAILED) std::abort();
    }
    const double t = seconds_of([&] {
      std::vector<std::jthread> pool;
      for (unsigned k = 0; k < threads; ++k)
        pool.emplace_back([&, k] {
          for (std::size_t w = k; w < windows; w += threads) {
#ifdef MADV_POPULATE_READ
            if (populate) ::madvise(maps[w], window, MADV_POPULATE_READ);
#endif
            gutf8::cuda::check(cudaHostRegister(maps[w], window, cudaHostRegisterReadOnly), "cudaHostRegister");
          }
        });
    });
    for (void* m : maps) {
      cudaHostUnregister(m);
      ::munmap(m, window);
    }
    return t;
  });
  ::close(fd);
  return static_cast<double>(window) * static_cast<double>(windows) / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const auto t0 = clock_type::now();
  const char* file = nullptr;
  int reps = 5;
  std::string exit_test;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--file") file = argv[i + 1];
    if (std::string(argv[i]) == "--reps") reps = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--exit-test") exit_test = argv[i + 1];
  }
  if (!exit_test.empty()) {
    gutf8::cuda::pinned_buffer<unsigned char> a(16 * mib), b(16 * mib), c(16 * mib);
    gutf8::cuda::device_buffer<unsigned char> d(256 * mib);
    if (exit_test == "quick") std::_Exit(0);
    return 0;
  }
  std::printf("| measure | value | unit |\n|---|---:|---|\n");
  try {
    start_up();
    row("process start to CUDA ready (all of the above)",
        std::chrono::duration<double>(clock_type::now() - t0).count() * 1e3, "ms");
    copies(reps);
    if (file != nullptr) {
      for (const bool pinned : {false, true})
        for (unsigned t : {1u, 2u, 4u, 8u, 12u, 16u})
          row(std::string("pread page cache, ") + std::to_string(t) + " threads, " + (pinned ? "pinned" : "pageable"),
              read_rate(file, t, pinned, reps), "GB/s");
      for (const std::size_t m : {std::size_t{16}, std::size_t{64}}) {
        const auto [reg, h2d] = registered_rates(file, m * mib, reps);
        row("cudaHostRegister (read-only) of " + std::to_string(m) + " MiB mapped page cache", reg, "GB/s");
        row("H2D from those registered pages, " + std::to_string(m) + " MiB", h2d, "GB/s");
      }
      for (const bool populate : {false, true})
        for (const std::size_t m : {std::size_t{16}, std::size_t{64}})
          for (unsigned t : {1u, 2u, 4u, 8u})
            row("cudaHostRegister of " + std::to_string(m) + " MiB windows on " + std::to_string(t) + " threads" +
                    (populate ? " after MADV_POPULATE_READ" : ""),
                registered_rate_threads(file, m * mib, t, populate, reps), "GB/s");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_host_limits: %s\n", e.what());
    return 3;
  }
  row("context teardown (cudaDeviceReset)", seconds_of([] { cudaDeviceReset(); }) * 1e3, "ms");
  return 0;
}
