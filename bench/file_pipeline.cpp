// The file pipeline's settings measured inside one process (src/file/): the first run pays CUDA's
// start-up, the later ones show the streaming rate after it, which is what the GPU feed and the
// lane settings decide. Output is discarded (counted). One line per setting:
//
//   bench_file_pipeline --file F [--op validate|decode|sanitize|encode|stats] [--backend cpu|cuda|auto]
//   (auto: the CPU workers and the GPU lanes together, whatever backend::auto's model would choose)
//       [--threads N] [--lanes N (0: the default by operation)] [--feed copy|copy-mapped|register] [--fill-threads N] [--run-bytes MiB]
//       [--read map|pread] [--reps N] [--devices N,M,...|all (default: GPU 0 alone)]
//       [--keep-lanes 1 (the runs share a gutf8::gpu_lane_cache: the later ones take the first's lanes)]
//
// Prints: op, backend, settings, first run s, median of the later runs s, GB/s of input, the GPUs'
// share of the bytes in the last run and the GPU start-up the first run measured.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "file/process_file.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8;

operation operation_named(const std::string& s) {
  if (s == "decode") return operation::decode;
  if (s == "sanitize") return operation::sanitize;
  if (s == "encode") return operation::encode;
  if (s == "stats") return operation::stats;
  return operation::validate;
}

backend backend_named(const std::string& s) {
  if (s == "cpu") return backend::cpu;
  if (s == "cuda") return backend::cuda;
  return backend::auto_select;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> arg{{"op", "validate"}, {"backend", "auto"}, {"reps", "5"},
                                         {"feed", "copy"},   {"read", "map"},     {"lanes", "0"}};
  for (int i = 1; i + 1 < argc; i += 2) arg[std::string(argv[i]).substr(2)] = argv[i + 1];
  if (!arg.contains("file")) {
    std::fprintf(stderr, "usage: bench_file_pipeline --file F [--op ...] [--backend ...] (see the source)\n");
    return 2;
  }
  const int fd = ::open(arg["file"].c_str(), O_RDONLY);
  if (fd < 0) {
    std::fprintf(stderr, "bench_file_pipeline: %s: %s\n", arg["file"].c_str(), std::strerror(errno));
    return 3;
  }
  file_config config;
  config.stream.operation = operation_named(arg["op"]);
  config.stream.policy = error_policy::replace;
  config.stream.backend.backend = backend_named(arg["backend"]);
  if (arg.contains("threads")) config.stream.backend.threads = static_cast<unsigned>(std::stoul(arg["threads"]));
  config.map_file = arg["read"] == "map";
  if (arg.contains("devices")) {  // the GPUs a file is spread over, as the CLI's --device
    try {
      device_list list = parse_device_list(arg["devices"]);
      config.all_devices = list.all;
      config.devices = std::move(list.devices);
    } catch (const error& e) {
      std::fprintf(stderr, "bench_file_pipeline: --devices: %s\n", e.what());
      return 2;
    }
  }
  if (arg.contains("keep-lanes") && arg["keep-lanes"] != "0") config.gpu_lanes = std::make_shared<gpu_lane_cache>();
  internal::file_run_tuning tuning;
  tuning.lanes_per_gpu = static_cast<unsigned>(std::stoul(arg["lanes"]));
  tuning.lane.feed = arg["feed"] == "register"      ? internal::gpu_feed::register_
                     : arg["feed"] == "copy-mapped" ? internal::gpu_feed::copy_mapped
                                                    : internal::gpu_feed::copy;
  if (arg.contains("fill-threads")) tuning.lane.fill_threads = static_cast<unsigned>(std::stoul(arg["fill-threads"]));
  tuning.force_gpus = arg["backend"] == "auto";  // auto here means CPU workers and GPU lanes together
  if (arg.contains("run-bytes")) tuning.gpu_run_bytes = std::stoull(arg["run-bytes"]) << 20;

  std::uint64_t discarded = 0;
  const output_sink sink = [&](std::span<const std::byte> b) {
    discarded += b.size();
    return true;
  };
  const int reps = std::max(1, std::stoi(arg["reps"]));
  std::vector<double> seconds;
  file_report first, last;
  try {
    for (int r = 0; r <= reps; ++r) {
      last = internal::run_file(fd, 0, config, sink, {}, 0, tuning);
      if (r == 0) first = last;
      else seconds.push_back(last.timings.seconds);
    }
  } catch (const error& e) {
    std::fprintf(stderr, "bench_file_pipeline: %s\n", e.what());
    return 3;
  }
  std::sort(seconds.begin(), seconds.end());
  std::string devices_text = arg.contains("devices") ? arg["devices"] : "";
  std::ranges::replace(devices_text, ',', '+');  // the line is CSV
  const double median = seconds[seconds.size() / 2];
  const double bytes = static_cast<double>(first.stats.input.bytes);
  const auto done = static_cast<double>(last.timings.gpu_bytes + last.timings.cpu_bytes);
  const double gpu_share = done == 0 ? 0 : static_cast<double>(last.timings.gpu_bytes) / done;
  std::printf("%s,%s,threads=%s lanes=%s%s feed=%s fill=%s run=%sMiB read=%s%s%s,%.4f,%.4f,%.2f,%.2f,%.3f\n",
              arg["op"].c_str(), arg["backend"].c_str(), arg.contains("threads") ? arg["threads"].c_str() : "auto",
              arg["lanes"].c_str(), config.gpu_lanes ? " kept" : "", arg["feed"].c_str(), arg.contains("fill-threads") ? arg["fill-threads"].c_str() : "6",
              arg.contains("run-bytes") ? arg["run-bytes"].c_str() : "default", arg["read"].c_str(),
              arg.contains("devices") ? " devices=" : "", devices_text.c_str(),
              first.timings.seconds, median, bytes / median / 1e9, gpu_share, first.timings.gpu_startup_seconds);
  ::close(fd);
  return 0;
}
