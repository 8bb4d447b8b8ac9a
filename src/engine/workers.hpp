// The engine's workers and the loop each runs on its thread (engine/board.hpp):
//   cpu_worker  one CPU thread: opens inputs, reads streams and small files, and (unless the GPU
//               does the codec's work, backend::cuda) processes one piece at a time, scanned in
//               place or from a small buffer by a single-thread CPU block processor;
//   gpu_lane    (engine/lanes.hpp) a thread that drives one GPU: piece runs of many pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "codec/block.hpp"
#include "engine/board.hpp"
#include "engine/buffers.hpp"
#include "engine/inputs.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::internal {

class worker;
class output_packer;
class part_worker;

// What a worker's thread has just done, for tests that order the other workers after it.
enum class worker_event : std::uint8_t {
  gave_back,  // its run is back on the board for the others
  waits,      // it found nothing to take and waits (once a wait)
  ended,      // its thread ends
};

struct run_hooks {
  // On a worker's thread after a piece run is processed, before it is published: tests delay workers
  // here to force orders of completion.
  std::function<void(const worker&, const job&, const piece_run&)> before_publish;
  // On a worker's thread, outside the board's lock, after each worker_event.
  std::function<void(const worker&, worker_event)> after;
};

// What every worker of one run shares.
struct run_context {
  const run_config& config;
  const run_plan& plan;
  std::span<const input> inputs;
  board& work;
  run_hooks hooks;
  // Whether GPU lanes take a pieces job of `bytes` (auto: where the model says they pay).
  std::function<bool(std::uint64_t bytes)> gpus_take_pieces;
};

class worker {
 public:
  worker(const run_context& run, std::size_t id);
  virtual ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  [[nodiscard]] std::size_t id() const noexcept { return id_; }
  // Where it opens inputs (CPU workers): what it keeps from one open to the next.
  [[nodiscard]] opener_state& opener() noexcept { return opener_; }
  [[nodiscard]] virtual const worker_traits& traits() const noexcept = 0;
  // On the worker's own thread, before its first piece run. A run_given_back keeps the worker out of the
  // run; any other failure ends the run.
  virtual void start() {}
  // Processes piece run `run` of job j; throws run_given_back to let the others do it (and stops
  // this worker), gutf8::error(io_failure) when the job's input cannot be read.
  virtual run_result process(job& j, const piece_run& run) = 0;
  // Whole jobs claimed at once (traits().batch_inputs > 1): one result a job, in order; throws as
  // process does, for all of them. Unless overridden, each job alone.
  virtual std::vector<run_result> process_batch(std::span<job* const> jobs);
  // The piece run's output compressed as the plan says (engine/compressed.hpp), on this worker's thread,
  // before it is published.
  void pack_output(run_result& r);

 protected:
  const run_context& run_;

 private:
  std::size_t id_;
  opener_state opener_;
  std::unique_ptr<output_packer> packer_;
};

class cpu_worker final : public worker {
 public:
  cpu_worker(const run_context& run, std::size_t id);
  ~cpu_worker() override;
  [[nodiscard]] const worker_traits& traits() const noexcept override { return traits_; }
  run_result process(job& j, const piece_run& run) override;
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::optional<run_result> valid_in_place(const random_input& in, const piece_run& run, const std::uint8_t* window);

  worker_traits traits_;
  std::unique_ptr<block_processor> processor_;
  std::unique_ptr<output_pool> piece_outputs_, chunk_outputs_;
  std::unique_ptr<part_worker> parts_;  // compressed files' parts
  std::vector<std::uint8_t> scratch_;
  std::uint32_t backoff_ = 0, untried_ = 0;  // repair pieces not tried in place (valid_in_place)
  std::uint64_t bytes_ = 0;
};

// The loop of one worker's thread: claims tasks of the board until none is left.
void work(worker& w, const run_context& run);

// Processing shared by the workers, on whichever block processor they drive.
run_result process_whole(block_processor& processor, std::span<const std::uint8_t> data, const run_config& config);
piece_outcome process_chunk(block_processor& processor, const run_config& config, const chunk& c,
                            std::uint8_t* out, std::uint64_t* histogram);
// Room a piece run's output needs: output_width(op) bytes an input byte of its window, and 3 more.
std::size_t output_room(operation op, std::uint64_t window);

}  // namespace gutf8::internal
