// gutf8::process_file (include/gutf8/file.hpp): a regular file through the scheduler
// (file/scheduler.hpp) with CPU workers and GPU lanes (file/workers.hpp), committed into one
// internal::stream_core.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "codec/cpu_block.hpp"
#include "codec/stream_core.hpp"
#include "cuda/cuda_block.hpp"
#include "file/process_file.hpp"
#include "file/workers.hpp"
#include "gutf8/error.hpp"
#include "gutf8/file.hpp"
#include "gutf8/version.hpp"

namespace gutf8 {
namespace internal {
namespace {

constexpr std::size_t default_piece_bytes = std::size_t{2} << 20;  // a core's L2 on the GPU host

std::uint64_t size_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw system_call_failure(errno);
  if (!S_ISREG(st.st_mode)) throw error(errc::invalid_argument, "process_file needs a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

// One hardware thread in eight is left to the committing thread and the system: on the 16-vCPU
// GPU host 14 workers beat 16 in every median (bench/results/e2e.md).
unsigned cpu_worker_count(const file_config& config, std::uint64_t pieces) {
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = config.stream.backend.threads;
  const std::uint64_t wanted = threads != 0 ? threads : hardware - hardware / 8;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(pieces, 1, wanted));
}

// The GPUs to start lanes on; with all_devices, the indices of the usable ones that may exist.
std::vector<int> devices_of(const file_config& config) {
  if (config.all_devices) {
    std::vector<int> nth(max_file_devices);
    for (int d = 0; d < max_file_devices; ++d) nth[static_cast<std::size_t>(d)] = d;
    return nth;
  }
  return config.devices.empty() ? std::vector<int>{config.stream.backend.device} : config.devices;
}

}  // namespace

file_report run_file(int fd, std::uint64_t offset, const file_config& config, const output_sink& sink,
                     const progress_function& progress, std::size_t top_n, const file_run_tuning& tuning) {
  const auto t0 = std::chrono::steady_clock::now();
  const stream_config& sc = config.stream;
  // Pieces carry counts, not bytes: what needs the bytes runs through one gutf8::stream instead.
  if (sc.max_listed_errors != 0 || sc.form != text_form::utf32le || sc.bom)
    throw error(errc::invalid_argument,
                "process_file: error lists, other text forms and a BOM need one stream over the bytes");
  const operation op = sc.operation;
  const std::uint64_t size = size_of(fd);
  piece_plan plan;
  plan.total = size > offset ? size - offset : 0;
  const std::size_t piece = config.piece_bytes != 0 ? config.piece_bytes : default_piece_bytes;
  plan.piece_bytes = std::max<std::uint64_t>(piece / 4 * 4, 4);  // UTF-32 pieces cut at multiples of 4
  const std::uint64_t pieces = plan.count();

  file_source source(fd, offset, plan, config.map_file);
  file_work work{op, sc.policy, sc.histogram && op == operation::stats, &plan, &source};
  const backend b = sc.backend.backend;
  const unsigned cpu_count = tuning.cpu_workers ? *tuning.cpu_workers
                             : b == backend::cuda   ? 0
                                                    : cpu_worker_count(config, pieces);
  // Whether a GPU is there is asked on the lanes' own threads: CUDA's start-up is theirs to pay.
  const bool gpus = b == backend::cuda || (GUTF8_HAVE_CUDA && b == backend::auto_select && pieces != 0 &&
                                           (tuning.force_gpus || tuning.model.gpus_join(op, plan.total, cpu_count)));

  std::vector<std::unique_ptr<file_worker>> workers;
  std::vector<cpu_worker*> cpus;
  std::vector<gpu_lane*> lanes;
  for (unsigned w = 0; w < cpu_count; ++w) cpus.push_back(static_cast<cpu_worker*>(
      workers.emplace_back(std::make_unique<cpu_worker>(work)).get()));
  if (gpus) {
    gpu_lane_config lane = tuning.lane;
    lane.give_back = b == backend::auto_select;
    lane.cache = config.gpu_lanes;
    const std::uint64_t run_bytes = tuning.gpu_run_bytes != 0        ? tuning.gpu_run_bytes
                                    : output_width(op) == 0 ? std::uint64_t{64} << 20
                                                            : std::uint64_t{16} << 20;
    lane.run_pieces = std::max<std::uint64_t>(1, run_bytes / plan.piece_bytes);
    lane.nth_usable = config.all_devices;
    const unsigned lanes_per_gpu = tuning.lanes_per_gpu != 0 ? tuning.lanes_per_gpu : output_width(op) == 0 ? 3 : 2;
    const std::vector<int> devices = devices_of(config);
    for (const int device : devices) {
      lane.device = device;
      // The limit is the GPU's: its lanes (one processor each) share it.
      const auto lanes_here = static_cast<std::uint64_t>(std::ranges::count(devices, device)) * lanes_per_gpu;
      lane.device_memory_limit = sc.backend.device_memory_limit / lanes_here;
      for (unsigned l = 0; l < lanes_per_gpu; ++l)
        lanes.push_back(static_cast<gpu_lane*>(workers.emplace_back(std::make_unique<gpu_lane>(work, lane)).get()));
    }
  }

  if (tuning.extra_workers)
    for (auto& w : tuning.extra_workers(work)) workers.push_back(std::move(w));

  stream_core core(sc, make_cpu_processor(1));
  std::uint64_t done = 0;
  bool sink_ended = false;
  const unsigned line_threads = std::max(cpu_count, 4u);
  const commit_function commit = [&](const run_result& r) {
    const piece_outcome& o = r.outcome;
    if (o.result.errors != 0 && !o.counted_lines && core.error_unplaced())
      core.set_lines_before(source.count_lines(o.begin, line_unit(op), line_threads));
    core.commit(o.result, o.lines, o.counted_lines);
    sink_ended = sink && !r.output.empty() && !sink(std::as_bytes(r.output));
    source.committed(r.run);
    done = o.begin + o.result.consumed;
    if (progress) progress(done);
    return !core.stopped() && !sink_ended;
  };
  // Workers run ahead of the commit by a few pieces each, and the GPU lanes by two runs each.
  std::uint64_t ahead = 2 * std::uint64_t{cpu_count} + 4;
  for (const auto& w : workers) ahead += w->run_pieces() > 1 ? 2 * w->run_pieces() : 0;
  schedule_pieces(plan, workers, ahead, commit, tuning.hooks);

  file_report report;
  if (work.histogram)
    for (const auto& w : workers)
      if (const auto counts = w->histogram(); !counts.empty()) core.add_histogram(counts);
  for (const cpu_worker* c : cpus) report.timings.cpu_bytes += c->bytes();
  for (const gpu_lane* l : lanes) {
    report.timings.gpu_bytes += l->bytes();
    report.timings.gpu_startup_seconds = std::max(report.timings.gpu_startup_seconds, l->startup_seconds());
    report.timings.gpu_failed |= l->failed();
    report.timings.gpu.gpu_memory_fallback |= l->out_of_memory() && b == backend::auto_select;
    add_counters(report.timings.gpu, l->timings());
  }
  report.stats = core.stats();
  report.stopped = core.stopped();
  report.sink_ended = sink_ended;
  if (work.histogram && top_n != 0) report.top = core.top(top_n);
  report.timings.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace internal

file_report process_file(int fd, std::uint64_t offset, const file_config& config, const output_sink& sink,
                         const progress_function& progress, std::size_t top_n) {
  return internal::run_file(fd, offset, config, sink, progress, top_n, {});
}

file_report process_file(const std::string& path, const file_config& config, const output_sink& sink,
                         const progress_function& progress, std::size_t top_n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw system_call_failure(errno, path);
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_at_end{fd};
  return process_file(fd, 0, config, sink, progress, top_n);
}

}  // namespace gutf8
