// The engine with its knobs in view: gutf8::run runs with the defaults; tests force orders of
// completion, worker mixes and GPU faults, benchmarks compare settings.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "codec/auto_model.hpp"
#include "engine/lanes.hpp"
#include "engine/workers.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::internal {

struct engine_tuning {
  std::optional<run_plan> plan;          // instead of plan_run's
  std::optional<unsigned> cpu_workers;   // instead of the plan's count
  gpu_lane_config lane{};                // fill threads, test faults; device and run size are set per lane
  auto_model model{};
  bool force_gpus = false;  // under auto the GPU lanes take every big file, whatever the model says
  // Tests: workers of their own (e.g. CPU workers that take runs as a GPU lane does, failing on purpose).
  std::function<std::vector<std::unique_ptr<worker>>(const run_context&, std::size_t first_id)> extra_workers;
  run_hooks hooks{};
};

run_report run_engine(std::span<const input> inputs, const run_config& config, run_observer& observer,
                      const engine_tuning& tuning);

}  // namespace gutf8::internal
