// The file pipeline with its knobs in view: gutf8::process_file runs with the defaults; tests
// force orders of completion and worker mixes, benchmarks compare settings.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "codec/auto_model.hpp"
#include "file/scheduler.hpp"
#include "file/workers.hpp"
#include "gutf8/file.hpp"

namespace gutf8::internal {

struct file_run_tuning {
  // What a GPU lane takes at once; 0: 64 MiB for validate and stats, 16 MiB for the operations that
  // write output (each lane holds two outputs of up to 4 bytes an input byte, page-locked).
  std::uint64_t gpu_run_bytes = 0;
  // GPU lanes a GPU; 0: 3 for validate and stats, 2 for the operations that write output, whose
  // page-locked outputs (two a lane, 4 bytes an input byte for decode) would take the CLI past its
  // bounded-memory promise of 512 MiB with three (H100 host: 3 lanes decode 3-6 % faster).
  unsigned lanes_per_gpu = 0;
  gpu_lane_config lane{};                            // fill threads; device and run size are set per run
  auto_model model{};
  bool force_gpus = false;  // tests and benchmarks: under auto the GPUs join whatever the model says
  // Tests: the CPU workers' count instead of the backend's choice, and workers of their own
  // (e.g. CPU processors taking runs as a GPU lane does, failing on purpose).
  std::optional<unsigned> cpu_workers;
  std::function<std::vector<std::unique_ptr<file_worker>>(const file_work&)> extra_workers;
  schedule_hooks hooks{};
};

file_report run_file(int fd, std::uint64_t offset, const file_config& config, const output_sink& sink,
                     const progress_function& progress, std::size_t top_n, const file_run_tuning& tuning);

}  // namespace gutf8::internal
