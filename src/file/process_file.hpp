// The file pipeline with its knobs in view: gutf8::process_file runs with the defaults; tests
// force orders of completion and worker mixes, benchmarks compare settings.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "file/auto_model.hpp"
#include "file/scheduler.hpp"
#include "file/workers.hpp"
#include "gutf8/file.hpp"

namespace gutf8::internal {

struct file_run_tuning {
  bool map_file = true;                              // CPU workers scan mapped segments in place
  std::uint64_t gpu_run_bytes = std::uint64_t{64} << 20;  // what a GPU lane takes at once
  unsigned lanes_per_gpu = 2;
  gpu_lane_config lane{};                            // fill threads; device and run size are set per run
  auto_file_model model{};
  // Tests: the CPU workers' count instead of the backend's choice, and workers of their own
  // (e.g. CPU processors taking runs as a GPU lane does, failing on purpose).
  std::optional<unsigned> cpu_workers;
  std::function<std::vector<std::unique_ptr<file_worker>>(const file_work&)> extra_workers;
  schedule_hooks hooks{};
};

file_report run_file(int fd, std::uint64_t offset, const file_config& config, const output_sink& sink,
                     const progress_function& progress, std::size_t top_n, const file_run_tuning& tuning);

}  // namespace gutf8::internal
