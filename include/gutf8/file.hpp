// A whole regular file at the speed of the machine: the file is cut into pieces that CPU threads
// and GPUs take as each comes free, and the results are committed in file order, so the output
// and the report are byte-identical to one gutf8::stream fed the whole file, whatever the mix of
// workers. The CLI, the Python package and C++ users all run files through this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gutf8/stream.hpp"
#include "gutf8/types.hpp"

namespace gutf8 {
namespace internal {
struct gpu_lane_cache_access;
}

// GPU lanes kept from one file run for the next: each lane's CUDA streams and device buffers and
// its page-locked input and output buffers. A run without it builds its lanes and frees them at
// its end, ~90-140 ms of every call on the H200 even with CUDA started
// (bench/results/gpu_file_call_h200.md); a process or a Dask worker that runs many files through
// the GPU keeps one and passes it in file_config::gpu_lanes. Runs at the same time take different
// lanes (one that finds none idle builds its own, and gives it back too); a lane that failed is
// not kept. Destroy it while CUDA is up (not from a static object's destructor).
class gpu_lane_cache {
 public:
  // At most `capacity` idle lanes are kept (the ones given back last): give at least the lanes a
  // run uses (2-3 a GPU) or some are built again every run. Idle lanes hold their page-locked
  // memory (48-144 MiB a lane by operation) and GPU buffers, outside any later run's
  // device_memory_limit; a lane whose sub-blocks were lowered after an out-of-memory keeps them so.
  explicit gpu_lane_cache(std::size_t capacity = 8);
  ~gpu_lane_cache();
  gpu_lane_cache(const gpu_lane_cache&) = delete;
  gpu_lane_cache& operator=(const gpu_lane_cache&) = delete;

  [[nodiscard]] std::size_t idle() const;   // lanes kept and not in use
  [[nodiscard]] std::size_t built() const;  // lanes built by runs given this cache, in all
  void clear();                             // frees the idle lanes

 private:
  friend struct internal::gpu_lane_cache_access;  // the file pipeline's lanes (src/file/)
  struct state;
  std::unique_ptr<state> state_;
};

struct file_config {
  stream_config stream;  // operation, policy, histogram and the backend options (backend, threads,
                         // memory limit); options::device is the GPU when `devices` is empty
  // GPUs that take pieces (backend cuda, or auto when they pay); empty: options::device alone.
  std::vector<int> devices;
  // Every usable GPU instead (up to max_file_devices), found on the GPUs' own threads, so that the
  // CPU workers need not wait for CUDA to count them.
  bool all_devices = false;
  std::size_t piece_bytes = 0;  // CPU piece size (rounded to 4 bytes); 0 = the tuned default
  // false: CPU workers copy every piece out with pread, and a file that shrinks while it is read is
  // an io_failure. true: they scan the page cache in place through mapped segments (faster on big
  // files); a shrink seen before a segment is read is an io_failure, but one that races with the
  // reading raises SIGBUS in a worker thread, which the caller must then handle (the CLI reports it
  // and exits 3). So the library's default is the one that cannot end the process.
  bool map_file = false;
  // GPU lanes to take and give back (null: the run builds its own and frees them at its end).
  std::shared_ptr<gpu_lane_cache> gpu_lanes;
};

inline constexpr int max_file_devices = 16;

// Every GPU that is usable, numbered for file_config::devices (empty where none is).
std::vector<int> all_devices();

// The GPUs a device list names, as the CLI's --device takes it: "all", or GPU numbers separated
// by commas ("0", "1,0"). Throws gutf8::error (errc::invalid_argument) on anything else.
struct device_list {
  std::vector<int> devices;  // in the order given; empty with all
  bool all = false;          // every usable GPU (file_config::all_devices)
};
device_list parse_device_list(std::string_view text);

// Output bytes, in file order, on the thread that called process_file. Returns false to end the run
// early (the reader downstream is gone): the report then covers what was committed up to there.
// What it throws ends the run too (every worker stops first) and comes out of process_file.
using output_sink = std::function<bool(std::span<const std::byte>)>;
// Input bytes committed so far, called in order on the thread that called process_file.
using progress_function = std::function<void(std::uint64_t done)>;

// Where a file's work went (for --verbose, benchmarks and the tests of the scheduler).
struct file_timings {
  std::uint64_t cpu_bytes = 0;      // input bytes done by CPU workers
  std::uint64_t gpu_bytes = 0;      // ... by GPU workers
  double gpu_startup_seconds = 0;   // CUDA start-up of the slowest GPU, overlapped with CPU work
  double seconds = 0;               // wall clock of the whole run
  bool gpu_failed = false;          // a GPU failed mid-run and the CPU workers finished its pieces
  stream_timings gpu;               // copies and kernels, summed over the GPUs
};

struct file_report {
  text_stats stats;          // as gutf8::stream::stats() after the whole file (or the strict stop)
  bool stopped = false;      // strict policy stopped at the first error unit
  bool sink_ended = false;   // the sink ended the run before the end of the file
  std::vector<code_point_count> top;  // stream_config::histogram: the most frequent, count descending
  file_timings timings;
};

// Runs the regular file open as `fd` from byte `offset` to its end (size as fstat says at the
// start; a file that shrinks while read is an io_failure). top_n: how many code points `top` holds.
// Throws gutf8::error: io_failure (cannot read), no_device (backend::cuda and no usable GPU),
// out_of_memory (backend::cuda and too little GPU memory even for small batches),
// invalid_argument (before any work: a config the pieces cannot serve, which needs the bytes in
// one stream: max_listed_errors, a form other than UTF-32LE, a BOM), and whatever sink or
// progress throw. What precedes a failure has been passed to sink.
file_report process_file(int fd, std::uint64_t offset, const file_config& config,
                         const output_sink& sink = {}, const progress_function& progress = {},
                         std::size_t top_n = 0);
// The same on a path (opened read-only for the call).
file_report process_file(const std::string& path, const file_config& config, const output_sink& sink = {},
                         const progress_function& progress = {}, std::size_t top_n = 0);

}  // namespace gutf8
