// The file pipeline's two kinds of worker (file/scheduler.hpp).
//   cpu_worker: one CPU thread, one piece at a time, scanned in place from the file's mapped
//               segments by a single-thread CPU block processor (the piece stays in the core's cache).
//   gpu_lane:   a run of many pieces copied into page-locked memory on a few threads, then through
//               the CUDA block processor (cuda/cuda_block.hpp: its two CUDA streams overlap copies
//               and kernels inside the run). Two lanes a GPU, so one fills its buffer while the
//               other's run is on the GPU. CUDA starts in start(), on the lane's own thread, while
//               the CPU workers already run.
#pragma once

#include <condition_variable>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "codec/block.hpp"
#include "file/file_source.hpp"
#include "file/scheduler.hpp"
#include "gutf8/file.hpp"

namespace gutf8::internal {

// What every worker of one run shares.
struct file_work {
  operation op = operation::validate;
  error_policy policy = error_policy::strict;
  bool histogram = false;  // stats: count code points
  const piece_plan* plan = nullptr;
  file_source* source = nullptr;
};

using owned_bytes = std::unique_ptr<std::uint8_t, void (*)(std::uint8_t*)>;
owned_bytes ordinary_bytes(std::size_t n);
owned_bytes pinned_bytes(std::size_t n);  // page-locked; throws gutf8::error(out_of_memory)

// Output buffers that a worker fills and the committer hands back: a run's output lives until it
// is written, while the worker goes on with the next.
class output_pool {
 public:
  // Buffers of `bytes` each from allocate; at most `limit` at once (0: no limit): acquire() then
  // waits for one to come back.
  output_pool(std::size_t bytes, std::size_t limit, owned_bytes (*allocate)(std::size_t))
      : bytes_(bytes), limit_(limit), allocate_(allocate) {}
  // A buffer, and the function that hands it back (callable from any thread).
  std::pair<std::uint8_t*, std::function<void()>> acquire();

 private:
  std::size_t bytes_, limit_;
  owned_bytes (*allocate_)(std::size_t);
  std::mutex m_;
  std::condition_variable returned_;
  std::vector<owned_bytes> all_;
  std::vector<std::uint8_t*> free_;
};

// stream_timings' counters field by field, in one place so that a field added there is added to
// both: a sum over lanes, and a kept processor's part since a snapshot (gpu_memory_fallback, a
// flag, is neither).
void add_counters(stream_timings& sum, const stream_timings& t);
stream_timings counters_since(const stream_timings& now, const stream_timings& before);

// What a GPU lane builds before its first run (its CUDA processor and page-locked buffers), and
// the shape another run's lane must ask for to take it over (gutf8::gpu_lane_cache).
struct lane_shape {
  int device = 0;
  std::uint64_t device_memory_limit = 0;
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;  // of each of its two outputs; 0: none (validate, stats)
  friend bool operator==(const lane_shape&, const lane_shape&) = default;
};
struct lane_resources {
  lane_shape shape;
  std::unique_ptr<block_processor> processor;
  owned_bytes input{nullptr, nullptr};
  std::unique_ptr<output_pool> outputs;
};

// The file pipeline's side of gutf8::gpu_lane_cache (src/file/gpu_lane_cache.cpp).
struct gpu_lane_cache_access {
  // An idle lane of that shape, taken out of the cache, or nothing.
  static std::optional<lane_resources> take(gpu_lane_cache& cache, const lane_shape& shape);
  static void count_built(gpu_lane_cache& cache);
  // Keeps a lane that served its run (the oldest idle one goes when the cache is full).
  static void give_back(gpu_lane_cache& cache, lane_resources&& lane);
};

class cpu_worker final : public file_worker {
 public:
  explicit cpu_worker(const file_work& work);
  [[nodiscard]] std::uint64_t run_pieces() const noexcept override { return 1; }
  run_result process(const piece_run& run) override;
  [[nodiscard]] std::span<const std::uint64_t> histogram() const noexcept override { return histogram_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  file_work work_;
  std::unique_ptr<block_processor> processor_;
  output_pool outputs_;
  std::vector<std::uint8_t> scratch_;  // a window copied when it cannot be mapped
  std::vector<std::uint64_t> histogram_;
  std::uint64_t bytes_ = 0;
};

// How a GPU lane gets a run's bytes to the GPU.
enum class gpu_feed : std::uint8_t {
  copy,         // pread on fill_threads threads into a page-locked buffer, then DMA from it
  copy_mapped,  // the run's window mapped, then memcpy on fill_threads threads into that buffer
  register_,    // the run's window mapped and its page cache page-locked in place: DMA, no CPU copy
};

struct gpu_lane_config {
  int device = 0;
  gpu_feed feed = gpu_feed::copy;
  bool nth_usable = false;         // device is the index among all_devices(): absent, the lane stays out
  std::uint64_t run_pieces = 32;
  unsigned fill_threads = 6;       // threads that fill the page-locked input
  std::uint64_t device_memory_limit = 0;
  bool give_back = true;           // failures hand the run to the CPU workers (backend::auto_select)
  std::shared_ptr<gpu_lane_cache> cache;  // lanes to take over and to keep (file_config::gpu_lanes)
  // Tests: runs before each run on the lane's thread; what it throws stands for a GPU fault.
  std::function<void(const piece_run&)> before_run;
};

class gpu_lane final : public file_worker {
 public:
  gpu_lane(const file_work& work, const gpu_lane_config& config);
  gpu_lane(const gpu_lane&) = delete;
  gpu_lane& operator=(const gpu_lane&) = delete;
  ~gpu_lane() override;  // gives its resources to config.cache, if any, unless something failed
  void start() override;
  [[nodiscard]] std::uint64_t run_pieces() const noexcept override { return config_.run_pieces; }
  [[nodiscard]] bool takes_given_back() const noexcept override { return false; }  // its outputs are bounded
  run_result process(const piece_run& run) override;
  [[nodiscard]] std::span<const std::uint64_t> histogram() const noexcept override { return histogram_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] double startup_seconds() const noexcept { return startup_seconds_; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] bool out_of_memory() const noexcept { return out_of_memory_; }
  [[nodiscard]] stream_timings timings() const;

 private:
  // A run's window of the page cache, mapped and page-locked in place while it lives.
  class locked_window {
   public:
    explicit locked_window(mapped_range&& map) : map_(std::move(map)) {}
    locked_window(const locked_window&) = delete;
    locked_window& operator=(const locked_window&) = delete;
    ~locked_window();
    [[nodiscard]] bool lock(std::size_t length);
    [[nodiscard]] const std::uint8_t* data() const noexcept { return map_.at(0); }

   private:
    mapped_range map_;
    bool locked_ = false;
  };

  [[noreturn]] void fail(std::exception_ptr why);
  // The processor and buffers: the cache's, or built here.
  void acquire_resources();
  // The run's window in page-locked memory: copied into input_, or the page cache locked in place
  // (held by `held` until the run is done).
  const std::uint8_t* fill(const piece_run& run, std::optional<locked_window>& held);

  file_work work_;
  gpu_lane_config config_;
  lane_resources lane_;
  stream_timings timings_before_;  // the processor's, when this run took it
  bool keep_ = false;              // started, and nothing has thrown since
  std::vector<std::uint64_t> histogram_;
  std::uint64_t bytes_ = 0;
  double startup_seconds_ = 0;
  bool failed_ = false;
  bool out_of_memory_ = false;  // it failed for lack of GPU (or page-locked) memory
};

}  // namespace gutf8::internal
