// The input engine's settings measured inside one process (src/engine/): the first run pays CUDA's
// start-up, the later ones show the rate after it, which is what the GPU lanes' settings decide.
// Output is discarded (counted). One CSV line per invocation:
//
//   bench_engine --file F[,F2,...] | --list FILE_OF_PATHS
//       [--op validate|decode|repair|encode|stats] [--backend cpu|cuda|auto]
//       (auto: the CPU workers and the GPU lanes together, whatever backend::auto's model would choose)
//       [--threads N] [--lanes N (0: the plan's)] [--fill-threads N] [--run-bytes MiB] [--piece-kib KiB]
//       [--read map|copy] [--reps N] [--devices N,M,...|all (default: GPU 0 alone)]
//       [--keep-lanes 1 (the runs share a gutf8::gpu_lane_cache: the later ones take the first's lanes)]
//
// Prints: op, backend, settings, first run s, median of the later runs s, GB/s of input, the GPUs'
// share of the bytes in the last run and the GPU start-up the first run measured.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/run.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8;

operation operation_named(const std::string& s) {
  if (s == "decode") return operation::decode;
  if (s == "repair") return operation::repair;
  if (s == "encode") return operation::encode;
  if (s == "stats") return operation::stats;
  return operation::validate;
}

backend backend_named(const std::string& s) {
  if (s == "cpu") return backend::cpu;
  if (s == "cuda") return backend::cuda;
  return backend::auto_select;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, sep);)
    if (!item.empty()) parts.push_back(item);
  return parts;
}

std::vector<input> inputs_of(std::map<std::string, std::string>& arg) {
  std::vector<std::string> paths = split(arg["file"], ',');
  if (arg.contains("list")) {
    std::ifstream list(arg["list"]);
    for (std::string line; std::getline(list, line);)
      if (!line.empty()) paths.push_back(line);
  }
  std::vector<input> inputs;
  for (const std::string& p : paths) inputs.push_back(input::file(p));
  return inputs;
}

struct counter final : run_observer {
  std::uint64_t bytes = 0, unreadable = 0;
  bool output(std::size_t, std::span<const std::byte> b) override {
    bytes += b.size();
    return true;
  }
  void failed(std::size_t, const error&) override { ++unreadable; }
};

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> arg{{"op", "validate"}, {"backend", "auto"}, {"reps", "5"}, {"read", "map"}, {"lanes", "0"}};
  for (int i = 1; i + 1 < argc; i += 2) arg[std::string(argv[i]).substr(2)] = argv[i + 1];
  const std::vector<input> inputs = inputs_of(arg);
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: bench_engine --file F | --list PATHS [--op ...] [--backend ...] (see the source)\n");
    return 2;
  }
  run_config config;
  config.stream.operation = operation_named(arg["op"]);
  config.stream.policy = error_policy::replace;
  config.stream.backend.backend = backend_named(arg["backend"]);
  if (arg.contains("threads")) config.stream.backend.threads = static_cast<unsigned>(std::stoul(arg["threads"]));
  if (arg.contains("piece-kib")) config.piece_bytes = std::stoull(arg["piece-kib"]) << 10;
  config.read = arg["read"] == "map" ? read_method::map : read_method::copy;
  if (arg.contains("devices")) {  // the GPUs the inputs are spread over, as the CLI's --device
    if (arg["devices"] == "all") config.all_devices = true;
    else
      for (const std::string& d : split(arg["devices"], ',')) config.devices.push_back(std::stoi(d));
  }
  if (arg.contains("keep-lanes") && arg["keep-lanes"] != "0") config.gpu_lanes = std::make_shared<gpu_lane_cache>();
  internal::engine_tuning tuning;
  run_plan plan = plan_run(config);
  if (arg["lanes"] != "0" && plan.lanes_per_gpu != 0) plan.lanes_per_gpu = static_cast<unsigned>(std::stoul(arg["lanes"]));
  if (arg.contains("run-bytes")) plan.gpu_run_bytes = std::stoull(arg["run-bytes"]) << 20;
  tuning.plan = plan;
  if (arg.contains("fill-threads")) tuning.lane.fill_threads = static_cast<unsigned>(std::stoul(arg["fill-threads"]));
  tuning.force_gpus = arg["backend"] == "auto";  // auto here means CPU workers and GPU lanes together

  const int reps = std::max(1, std::stoi(arg["reps"]));
  std::vector<double> seconds;
  run_report first, last;
  try {
    for (int r = 0; r <= reps; ++r) {
      counter c;
      last = internal::run_engine(inputs, config, c, tuning);
      if (r == 0) first = last;
      else seconds.push_back(last.seconds);
    }
  } catch (const error& e) {
    std::fprintf(stderr, "bench_engine: %s\n", e.what());
    return 3;
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const auto bytes = static_cast<double>(first.bytes);
  const auto done = static_cast<double>(last.gpu_bytes + last.cpu_bytes);
  const double gpu_share = done == 0 ? 0 : static_cast<double>(last.gpu_bytes) / done;
  std::printf("%s,%s,inputs=%zu threads=%s lanes=%s%s run=%sMiB piece=%sKiB read=%s,%.4f,%.4f,%.2f,%.2f,%.3f\n",
              arg["op"].c_str(), arg["backend"].c_str(), inputs.size(),
              arg.contains("threads") ? arg["threads"].c_str() : "auto", arg["lanes"].c_str(),
              config.gpu_lanes ? " kept" : "", arg.contains("run-bytes") ? arg["run-bytes"].c_str() : "default",
              arg.contains("piece-kib") ? arg["piece-kib"].c_str() : "default", arg["read"].c_str(),
              first.seconds, median, bytes / median / 1e9, gpu_share, first.gpu_startup_seconds);
  return 0;
}
