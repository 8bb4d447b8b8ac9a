// Device-resident string-column throughput (gutf8/device_columns.hpp): is_valid and
// make_valid(replace) against the flat device validate / repair of the same data bytes, on the
// columns of bench/columns_data.hpp (10 M rows of ~20 B and ~200 B, 10 k rows of ~100 KiB; clean
// and with 1% of rows carrying an error; GUTF8_COLUMNS_SCALE scales the row counts).
// Times are wall-clock medians of --runs calls after one warm-up, each ending with the stream
// synchronised (the column calls allocate their results and temporaries, from a memory pool that
// keeps freed memory as RMM's does, or with --no-pool from the device's default pool, and
// synchronise; the flat calls get their temporary storage and output once, outside the timing).
// GB/s counts column data bytes.
//
//   bench_columns [--runs N] [--out FILE.md] [--no-pool] [--only COLUMN]   (COLUMN: a name in the table)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "../columns_data.hpp"
#include "gutf8/codec.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device.hpp"
#include "gutf8/device_columns.hpp"

namespace {

using namespace gutf8;
using cuda::check;

template <class F>
double median_seconds(int runs, cudaStream_t stream, const F& f) {
  f();
  check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    check(cudaStreamSynchronize(stream), "run");
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct device_column_data {
  explicit device_column_data(const bench::column_data& c)
      : offsets(c.offsets.size()), data(std::max<std::size_t>(c.data.size(), 1)), bytes(c.data.size()) {
    offsets.upload(std::span(c.offsets));
    check(cudaMemcpy(data.data(), c.data.data(), c.data.size(), cudaMemcpyHostToDevice), "upload");
    buffers[1] = offsets.data();
    buffers[2] = data.data();
    array.array = {c.rows(), 0, 0, 3, 0, buffers, nullptr, nullptr, [](ArrowArray* a) { a->release = nullptr; }, nullptr};
    array.device_type = ARROW_DEVICE_CUDA;
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    array.device_id = device;
    schema = {"z", "", nullptr, 0, 0, nullptr, nullptr, [](ArrowSchema* s) { s->release = nullptr; }, nullptr};
  }
  cuda::device_buffer<std::int32_t> offsets;
  cuda::device_buffer<std::byte> data;
  std::size_t bytes;
  const void* buffers[3]{};
  ArrowDeviceArray array{};
  ArrowSchema schema{};
};

}  // namespace

int main(int argc, char** argv) {
  int runs = 7;
  std::string out_path;
  bool own_pool = true;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-pool") own_pool = false;
    if (a == "--only" && i + 1 < argc) only = argv[++i];
    if (a == "--runs" && i + 1 < argc) runs = std::stoi(argv[++i]);
    if (a == "--out" && i + 1 < argc) out_path = argv[++i];
  }
  try {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    cuda::stream stream;
    std::optional<cuda::memory_pool> pool;
    if (own_pool) pool.emplace();
    const cudaMemPool_t results = own_pool ? pool->get() : nullptr;
    device::device_summary* d_summary = nullptr;
    check(cudaMalloc(&d_summary, sizeof *d_summary), "cudaMalloc");
    std::string report = std::string("GPU: ") + prop.name + ", median of " + std::to_string(runs) +
                         " runs, GB/s of column data bytes (rows/s in M); column results from " +
                         (own_pool ? "a memory pool that keeps freed memory" : "the device's default pool") +
                         "\n\n"
                         "| column | rows | MB | is_valid GB/s | Mrows/s | flat validate GB/s | is_valid / flat | "
                         "make_valid GB/s | Mrows/s | flat repair GB/s | make_valid / flat |\n"
                         "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const bench::column_data& c : bench::bench_columns(only)) {
      const device_column_data d(c);
      const auto n = static_cast<std::uint64_t>(d.bytes);
      std::size_t temp_validate = 0, temp_repair = 0;
      check(device::validate(nullptr, temp_validate, d.data.data(), n, d_summary, true, stream), "validate size");
      check(device::repair(nullptr, temp_repair, d.data.data(), n, nullptr, d_summary, error_policy::replace, true,
                             stream),
            "repair size");
      cuda::device_buffer<std::byte> temp(std::max(temp_validate, temp_repair));
      cuda::device_buffer<char8_t> repaired(max_repaired_size(n));
      const double t_valid = median_seconds(runs, stream, [&] { (void)device::is_valid(d.array, d.schema, {}, stream, results); });
      const double t_flat = median_seconds(runs, stream, [&] {
        check(device::validate(temp.data(), temp_validate, d.data.data(), n, d_summary, true, stream), "validate");
      });
      const double t_make = median_seconds(
          runs, stream, [&] { (void)device::make_valid(d.array, d.schema, error_policy::replace, {}, stream, results); });
      const double t_repair = median_seconds(runs, stream, [&] {
        check(device::repair(temp.data(), temp_repair, d.data.data(), n, repaired.data(), d_summary,
                               error_policy::replace, true, stream),
              "repair");
      });
      char line[512];
      const double gb = static_cast<double>(n) / 1e9, mrows = static_cast<double>(c.rows()) / 1e6;
      std::snprintf(line, sizeof line, "| %s | %lld | %.0f | %.1f | %.0f | %.1f | %.0f%% | %.1f | %.0f | %.1f | %.0f%% |\n",
                    c.name.c_str(), static_cast<long long>(c.rows()), gb * 1e3, gb / t_valid, mrows / t_valid,
                    gb / t_flat, 100 * t_flat / t_valid, gb / t_make, mrows / t_make, gb / t_repair,
                    100 * t_repair / t_make);
      report += line;
      std::fputs(line, stdout);
      std::fflush(stdout);
    }
    cudaFree(d_summary);
    std::puts(report.c_str());
    if (!out_path.empty()) std::ofstream(out_path, std::ios::app) << report << '\n';
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_columns: %s\n", e.what());
    return 3;
  }
  return 0;
}
