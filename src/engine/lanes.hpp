// GPU lanes: a thread that drives one GPU through its CUDA block processor (codec/gpu_backend.hpp,
// whose two CUDA streams overlap copies and kernels inside a piece run), taking a piece run of
// many pieces of a big input at once into page-locked memory (filled by pread on a few threads),
// or one chunk of a stream, or one small input. Two or three lanes a GPU, so that one fills its buffer while
// another's piece run is on the GPU. A lane builds its resources (or takes an idle lane's from a
// gutf8::gpu_lane_cache) on its own thread when it first gets work, while the CPU workers run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

#include "engine/buffers.hpp"
#include "engine/workers.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::internal {

class gpu_part_worker;

// stream_timings' counters field by field, in one place so that a field added there is added to
// both: a sum over lanes, and a kept processor's part since a snapshot (gpu_memory_fallback, a
// flag, is neither).
void add_counters(stream_timings& sum, const stream_timings& t);
stream_timings counters_since(const stream_timings& now, const stream_timings& before);

// What a GPU lane builds before its first piece run (its CUDA processor and page-locked buffers), and
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

// The engine's side of gutf8::gpu_lane_cache (engine/gpu_lane_cache.cpp).
struct lane_cache {
  // An idle lane of that shape, taken out of the cache, or nothing.
  static std::optional<lane_resources> take(gpu_lane_cache& cache, const lane_shape& shape);
  static void count_built(gpu_lane_cache& cache);
  // Keeps a lane that served its run (the oldest idle one goes when the cache is full).
  static void give_back(gpu_lane_cache& cache, lane_resources&& lane);
};

struct gpu_lane_config {
  int device = 0;
  bool nth_usable = false;         // device is the index among all_devices(): absent, the lane stays out
  std::uint64_t run_pieces = 32;
  unsigned fill_threads = 6;       // threads that fill the page-locked input
  std::uint64_t device_memory_limit = 0;
  bool give_back = true;           // failures hand the piece run to the CPU workers (backend::auto_select)
  bool eager = false;              // builds its resources at its thread's start, not at its first piece run
  std::shared_ptr<gpu_lane_cache> cache;  // lanes to take over and to keep (run_config::gpu_lanes)
  // Tests: runs before each piece run on the lane's thread; what it throws stands for a GPU fault.
  std::function<void(const job&, const piece_run&)> before_run;
};

class gpu_lane final : public worker {
 public:
  gpu_lane(const run_context& run, std::size_t id, const gpu_lane_config& config);
  ~gpu_lane() override;  // gives its resources to config.cache, if any, unless something failed
  [[nodiscard]] const worker_traits& traits() const noexcept override { return traits_; }
  void start() override;
  run_result process(job& j, const piece_run& run) override;
  // Small inputs validated together in the page-locked input (engine/batches.hpp).
  std::vector<run_result> process_batch(std::span<job* const> jobs) override;
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] double startup_seconds() const noexcept { return startup_seconds_; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] bool out_of_memory() const noexcept { return out_of_memory_; }
  [[nodiscard]] stream_timings timings() const;

 private:
  [[noreturn]] void fail(std::exception_ptr why);
  void build();  // the processor and buffers: the cache's, or built here
  [[nodiscard]] std::uint64_t window_bytes() const noexcept;  // the page-locked input's size
  [[noreturn]] void failed_run();  // in a catch block: the current exception as a GPU failure or not
  run_result process_run(job& j, const piece_run& run);

  worker_traits traits_;
  gpu_lane_config config_;
  lane_resources lane_;
  std::unique_ptr<gpu_part_worker> parts_;  // compressed files' parts (it uses lane_.processor)
  stream_timings timings_before_;  // the processor's, when this piece run took it
  bool built_ = false;
  bool keep_ = false;              // built, and nothing has thrown since
  std::uint64_t bytes_ = 0;
  double startup_seconds_ = 0;
  bool failed_ = false;
  bool out_of_memory_ = false;  // it failed for lack of GPU (or page-locked) memory
};

}  // namespace gutf8::internal
