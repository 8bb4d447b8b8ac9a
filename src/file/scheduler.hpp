// The file scheduler: pieces of a regular file (file/pieces.hpp) go to whichever worker is free,
// CPU threads one piece at a time, GPU lanes a run of many pieces at once, and the calling
// thread commits the results in file order into one internal::stream_core, so the output and the
// report are those of one stream fed the whole file, whatever the mix of workers and whatever
// order they finish in.
//
// Workers run ahead of the committer by at most `ahead` pieces, so memory stays bounded. A worker
// that fails may give its run back (the GPU lanes under backend::auto_select do): the others then
// take its pieces, and nothing of it was committed. Any other failure ends the run once every
// worker has stopped, after everything before the failed run has been committed.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "file/pieces.hpp"

namespace gutf8::internal {

// One run of pieces done: its outcome and its output, which stays valid until release() runs.
struct run_result {
  piece_run run;
  piece_outcome outcome;
  std::span<const std::uint8_t> output;  // outcome.result.written bytes
  std::function<void()> release;         // hands the output's memory back to its worker, if set
};

// Thrown by a worker that could not do a run and wants the others to do it instead.
class run_given_back : public std::exception {
 public:
  explicit run_given_back(std::exception_ptr why) : why_(std::move(why)) {}
  [[nodiscard]] const char* what() const noexcept override { return "run given back"; }
  [[nodiscard]] const std::exception_ptr& why() const noexcept { return why_; }

 private:
  std::exception_ptr why_;
};

class file_worker {
 public:
  virtual ~file_worker() = default;
  // On the worker's own thread, before its first run (a GPU starts CUDA here). A failure that is
  // run_given_back keeps the worker out of the run; any other ends the run.
  virtual void start() {}
  // How many pieces this worker takes at once.
  [[nodiscard]] virtual std::uint64_t run_pieces() const noexcept = 0;
  // Whether it may take runs that others gave back: not a worker whose next output may wait for
  // the commit of its earlier runs (a GPU lane's bounded outputs), since a given-back run lies
  // before them in the file and would never let them commit.
  [[nodiscard]] virtual bool takes_given_back() const noexcept { return true; }
  // On the worker's own thread. Throws run_given_back to let the others do the run (and stops
  // this worker); anything else ends the run.
  virtual run_result process(const piece_run& run) = 0;
  // Code point counts of the runs it did (stats with a histogram), read after the run.
  [[nodiscard]] virtual std::span<const std::uint64_t> histogram() const noexcept { return {}; }
};

// What a worker's thread has just done, for tests that order the other workers after it.
enum class worker_event : std::uint8_t {
  gave_back,  // its run is back on the board for the others
  waits,      // it found no run to take and waits for one (once a wait)
  ended,      // its thread ends
};

struct schedule_hooks {
  // Called on a worker's thread after a run is processed, before it is published: tests delay
  // workers here to force orders of completion.
  std::function<void(const file_worker&, const piece_run&)> before_publish;
  // Called on a worker's thread, outside the scheduler's lock, after each worker_event.
  std::function<void(const file_worker&, worker_event)> after;
};

// Commits one run into the caller's bookkeeping; returns false to stop the run (strict policy).
using commit_function = std::function<bool(const run_result&)>;

// Runs every piece of plan through the workers (each on a thread of its own) and commit (on the
// calling thread) in file order. Returns the pieces committed. `ahead`: how far workers may run
// ahead of the commit, in pieces (at least the largest run_pieces()).
std::uint64_t schedule_pieces(const piece_plan& plan, std::span<const std::unique_ptr<file_worker>> workers,
                              std::uint64_t ahead, const commit_function& commit,
                              const schedule_hooks& hooks = {});

}  // namespace gutf8::internal
