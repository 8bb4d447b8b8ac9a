// backend::auto_select's model: when a GPU pays. Two questions, one set of measured figures
// (the H100 host of the GPU machine: 16 Xeon vCPUs, files in the page cache; bench/results/e2e.md).
//
//   * A stream or one-shot call (the GPU instead of the CPU backend): the GPU pays for an input of at
//     least gpu_threshold(threads) bytes, where the end-to-end times are equal:
//       threshold = startup / (1 / cpu_rate(threads) - 1 / gpu_rate).
//     Fitted to decode, the costlier direction, at commit 2c9c681: start-up 0.32 s, then 11.1 GB/s on
//     the GPU; the CPU backend's threads as max_rate * t / (t + half_threads) to 2.83 / 9.75 / 17.1 /
//     23.6 GB/s at 1 / 4 / 8 / 14 threads. About 1.2 GB for 1 thread, 3.4 GB for 2, 28 GB for 4 and
//     never from 5 threads on.
//   * A regular file (file/process_file.cpp): the CPU workers start at once and GPUs start CUDA on
//     their own threads, so GPUs are asked to join only where the measured streaming rate of the GPU
//     lanes beats the CPU workers' and the CPU alone would need several start-ups' time. Measured in
//     one process at 0aa1e25 (bench_file_pipeline, 16 GiB of English and Chinese text in the page
//     cache, 14 workers, bench/results/e2e.md): CPU validate 66.1 / 50.2 GB/s, decode 18.6 / 30.1,
//     sanitize 54.3 / 42.0, encode 35.6 (of UTF-32); GPU lanes validate 29.6 / 26.9, decode 10.2 /
//     14.6, sanitize 17.6 / 15.4, encode 19.6; stats (4 GiB of mixed text) CPU 42.0, GPU 22.7; both
//     together were slower than the CPU alone on every file. So on that host the 14 CPU workers keep files to themselves, and GPUs join only beside
//     fewer workers (--threads) or on hosts whose CPU is slower.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gutf8/stream.hpp"

namespace gutf8::internal {

struct auto_model {
  double startup_seconds = 0.32;           // gutf8 --backend=cuda on 6 bytes
  double gpu_bytes_per_second = 11.1e9;    // stream decode after the start-up
  double cpu_max_bytes_per_second = 55.8e9;
  double cpu_half_rate_threads = 18.7;
  double worth_startups = 1.5;             // files: the CPU alone must need this many start-ups' time

  // Streams and one-shot calls: the input size from which the GPU alone beats `threads` CPU threads.
  [[nodiscard]] constexpr std::uint64_t gpu_threshold(unsigned threads) const noexcept {
    const double t = threads == 0 ? 1.0 : static_cast<double>(threads);
    const double cpu_rate = cpu_max_bytes_per_second * t / (t + cpu_half_rate_threads);
    const double gain_per_byte = 1.0 / cpu_rate - 1.0 / gpu_bytes_per_second;
    if (gain_per_byte <= 0) return UINT64_MAX;  // the CPU alone is as fast: never worth it
    return static_cast<std::uint64_t>(startup_seconds / gain_per_byte);
  }

  // Files: one piece worker's input rate by operation, the better of the two texts (14 workers / 14).
  [[nodiscard]] static constexpr double worker_rate(operation op) noexcept {
    switch (op) {
      case operation::validate: return 4.7e9;
      case operation::stats: return 3.0e9;
      case operation::sanitize: return 3.9e9;
      case operation::encode: return 2.5e9;
      case operation::decode: break;
    }
    return 2.15e9;
  }
  // Files: the GPU lanes' input rate after the start-up, the worse of the two texts.
  [[nodiscard]] static constexpr double gpu_file_rate(operation op) noexcept {
    switch (op) {
      case operation::validate: return 26.9e9;
      case operation::stats: return 22.7e9;
      case operation::sanitize: return 15.4e9;
      case operation::encode: return 19.6e9;
      case operation::decode: break;
    }
    return 10.2e9;
  }
  double cpu_memory_bytes_per_second = 66.1e9;  // where the CPU workers stop scaling (validate, 14)
  [[nodiscard]] constexpr double cpu_file_rate(operation op, unsigned workers) const noexcept {
    return std::min(worker_rate(op) * std::max(workers, 1u), cpu_memory_bytes_per_second);
  }
  // Whether GPUs should join `workers` CPU workers on a file of `bytes`.
  [[nodiscard]] constexpr bool gpus_join(operation op, std::uint64_t bytes, unsigned workers) const noexcept {
    const double cpu_rate = cpu_file_rate(op, workers);
    return gpu_file_rate(op) > cpu_rate && static_cast<double>(bytes) / cpu_rate > worth_startups * startup_seconds;
  }
};

constexpr std::uint64_t auto_gpu_threshold(unsigned threads) noexcept { return auto_model{}.gpu_threshold(threads); }

}  // namespace gutf8::internal
