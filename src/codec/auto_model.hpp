// backend::auto_select's model: when a GPU pays. Its constants come from measured rates
// (bench/results/auto_model.csv, fitted by bench/fit_auto_model.py into auto_model_fit.hpp).
//
//   * A stream or one-shot call (the GPU instead of the CPU backend): the GPU pays for an input of at
//     least gpu_threshold(threads) bytes, where the end-to-end times are equal:
//       threshold = startup / (1 / cpu_rate(threads) - 1 / gpu_rate),
//     with the CPU backend's rate growing as max_rate * t / (t + half_threads) (fitted to decode,
//     the costlier direction).
//   * A big file in the input engine (engine/run.cpp): the CPU workers start at once and GPUs start
//     CUDA on their own threads, so GPUs are asked to join only where the GPU lanes' streaming rate
//     beats the CPU workers' and the CPU alone would need several start-ups' time.
#pragma once

#include <algorithm>
#include <cstdint>

#include "codec/auto_model_fit.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::internal {

struct auto_model {
  double startup_seconds = auto_fit::startup_seconds;  // CUDA's start-up
  double gpu_bytes_per_second = auto_fit::gpu_bytes_per_second;  // stream decode after the start-up
  double cpu_max_bytes_per_second = auto_fit::cpu_max_bytes_per_second;
  double cpu_half_rate_threads = auto_fit::cpu_half_rate_threads;
  double worth_startups = 1.5;  // files: the CPU alone must need this many start-ups' time
  double cpu_memory_bytes_per_second = auto_fit::cpu_memory_bytes_per_second;  // CPU workers stop scaling

  // Streams and one-shot calls: the input size from which the GPU alone beats `threads` CPU threads.
  [[nodiscard]] constexpr std::uint64_t gpu_threshold(unsigned threads) const noexcept {
    const double t = threads == 0 ? 1.0 : static_cast<double>(threads);
    const double cpu_rate = cpu_max_bytes_per_second * t / (t + cpu_half_rate_threads);
    const double gain_per_byte = 1.0 / cpu_rate - 1.0 / gpu_bytes_per_second;
    if (gain_per_byte <= 0) return UINT64_MAX;  // the CPU alone is as fast: never worth it
    return static_cast<std::uint64_t>(startup_seconds / gain_per_byte);
  }

  // Files: one CPU worker's input rate by operation (on the text it does best).
  [[nodiscard]] static constexpr double worker_rate(operation op) noexcept {
    switch (op) {
      case operation::validate: return auto_fit::worker_validate;
      case operation::stats: return auto_fit::worker_stats;
      case operation::repair: return auto_fit::worker_repair;
      case operation::encode: return auto_fit::worker_encode;
      case operation::decode: break;
    }
    return auto_fit::worker_decode;
  }
  // Files: the GPU lanes' input rate after the start-up (on the text they do worst).
  [[nodiscard]] static constexpr double gpu_file_rate(operation op) noexcept {
    switch (op) {
      case operation::validate: return auto_fit::gpu_file_validate;
      case operation::stats: return auto_fit::gpu_file_stats;
      case operation::repair: return auto_fit::gpu_file_repair;
      case operation::encode: return auto_fit::gpu_file_encode;
      case operation::decode: break;
    }
    return auto_fit::gpu_file_decode;
  }
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
