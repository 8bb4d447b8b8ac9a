// backend::auto_select for a regular file: the CPU workers start at once; GPUs join only when the
// CPU alone would take long enough to repay CUDA's start-up, which the GPU pays on its own thread
// while the CPU works. The rates are those measured on the H100 host (bench/results/e2e.md).
#pragma once

#include <algorithm>
#include <cstdint>

#include "gutf8/stream.hpp"

namespace gutf8::internal {

struct auto_file_model {
  double startup_seconds = 0.33;      // CUDA driver, context and page-locked buffers
  double worth_startups = 1.5;        // the CPU alone must need this many start-ups' time
  double memory_bytes_per_second = 55e9;  // where the CPU workers stop scaling
  // One CPU worker's rate, by operation (bytes of input a second).
  [[nodiscard]] static double worker_rate(operation op) noexcept {
    switch (op) {
      case operation::validate: return 3.8e9;
      case operation::stats: return 1.6e9;
      case operation::sanitize: return 3.0e9;
      case operation::encode: return 2.0e9;
      case operation::decode: break;
    }
    return 1.5e9;
  }
  [[nodiscard]] double cpu_seconds(operation op, std::uint64_t bytes, unsigned workers) const noexcept {
    const double rate = std::min(worker_rate(op) * std::max(workers, 1u), memory_bytes_per_second);
    return static_cast<double>(bytes) / rate;
  }
  // Whether GPUs should take part in a file of `bytes` beside `workers` CPU workers.
  [[nodiscard]] bool gpus_pay(operation op, std::uint64_t bytes, unsigned workers) const noexcept {
    return cpu_seconds(op, bytes, workers) > worth_startups * startup_seconds;
  }
};

}  // namespace gutf8::internal
