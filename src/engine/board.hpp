// The run board: every input of a run is a job, and a job's work comes in pieces — one for a file
// read whole, many for a big file, as many as its reader cuts for a stream. Workers claim pieces in
// input order; the calling thread commits them in input order, piece by piece, so the output and
// the reports are those of each input processed alone, whatever the mix of workers and whatever order
// they finish in.
//
// Bounds: the job being committed (the front) may have work in flight up to `ahead` pieces past its
// commit; the jobs behind it share a budget of `ahead` pieces in flight (a small input read whole
// gives its piece back once opened and counts among at most `small_ahead` of them instead), and
// at most `open_jobs` jobs are open at once (each may hold a descriptor), so memory and open files stay bounded
// whatever the number of inputs. A worker that fails may give its piece run back (the GPU lanes under
// backend::auto_select do): the others then take its pieces. A job whose input cannot be read
// fails alone: the pieces before the failure are committed, the rest dropped, and the run goes
// on. Any other failure ends the run once every worker has stopped, after everything before it
// has been committed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "engine/edges.hpp"
#include "engine/job_input.hpp"
#include "engine/pieces.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::internal {

// One piece run done: its outcome and its output, which stays valid until release() runs.
struct run_result {
  piece_run run;
  piece_outcome outcome;                  // counts for the committer's stream core, unless `report`
  std::span<const std::uint8_t> output;   // the piece run's output bytes
  std::function<void()> release;          // hands the output's memory back, if set
  bool gpu = false;                       // a GPU lane did it
  bool accounted = false;                 // the worker accounted the bytes itself (a whole input or
                                          // one stream): outcome is not committed
  std::unique_ptr<input_report> report;   // accounted jobs: the input's report, on its last piece run
  std::optional<text_edges> edges;        // a part of a compressed file: what lies outside the outcome
};

// Thrown by a worker that could not do a piece run and wants the others to do it instead.
class run_given_back : public std::exception {
 public:
  explicit run_given_back(std::exception_ptr why) : why_(std::move(why)) {}
  [[nodiscard]] const char* what() const noexcept override { return "run given back"; }
  [[nodiscard]] const std::exception_ptr& why() const noexcept { return why_; }

 private:
  std::exception_ptr why_;
};

enum class job_shape : std::uint8_t {
  unopened,
  pieces,  // a regular file or memory cut into pieces up front
  chunks,  // a stream cut into pieces by its reader as it reads
  whole,   // read whole by its opener: one piece
};

class job {
 public:
  explicit job(std::size_t input) : index(input) {}
  const std::size_t index;  // the input's place in the run
  // Set by the worker that opens the job, before board::opened publishes its shape.
  std::unique_ptr<job_input> in;
  bool gpu = false;  // GPU lanes may take its pieces

 private:
  std::uint64_t bytes_ = 0;       // whole: its size
  friend class board;
  job_shape shape_ = job_shape::unopened;
  bool opening_ = false;
  std::uint64_t readable_ = 0;    // pieces [next_, readable_) may be claimed
  bool complete_ = false;         // readable_ is the number of pieces
  std::uint64_t next_ = 0;        // the first piece nobody has claimed
  std::uint64_t reserved_ = 0;    // chunks: pieces a reader has claimed to read, from 0
  std::uint64_t committed_ = 0;   // the first piece not committed
  std::uint64_t in_flight_ = 0;   // claimed, reserved or done, and not committed
  std::uint64_t unfinished_ = 0;  // claimed and neither published, given back nor failed
  std::vector<piece_run> given_back_;  // a queue, seldom used: a deque would allocate for every job
  std::map<std::uint64_t, run_result> done_;            // by first piece
  struct failure {
    std::exception_ptr why;
    bool fatal = false;  // not the input's fault: the run ends there
  };
  std::map<std::uint64_t, failure> failed_;  // by first piece
  bool closed_ = false;   // failed or stopped: nothing more is claimed of it
  bool reading_ = false;  // a reader is on it (chunks)
  bool holds_fd_ = false;  // counted in board::holding_
  bool small_ = false;     // counted in board::small_in_flight_, not in behind_in_flight_
};

// What a worker takes.
struct worker_traits {
  bool opens = true;              // opens inputs and reads streams (CPU threads)
  bool processes = true;          // processes pieces of jobs that GPU lanes alone may not take
  bool gpu = false;               // takes pieces of jobs marked gpu (a GPU lane)
  bool takes_given_back = true;   // not a worker whose outputs are bounded (a GPU lane): a given-back
                                  // piece run before its own could keep them from ever being committed
  std::uint64_t run_pieces = 1;   // pieces taken at once from a pieces job
  // Small inputs read whole taken at once (engine/batches.hpp), with a separator byte each; 1: one.
  std::size_t batch_inputs = 1;
  std::uint64_t batch_bytes = 0;
};

struct task {
  enum class kind : std::uint8_t { open, run } what = kind::run;
  job* j = nullptr;
  piece_run run;
  // A batch of whole jobs claimed at once, j first, in input order (each its one piece); else empty.
  std::vector<job*> batch;
};

// What the committer gets next of the front job.
struct front_event {
  enum class kind : std::uint8_t { result, failed, complete } what = kind::complete;
  run_result result;        // kind::result
  std::exception_ptr why;   // kind::failed
  bool last = false;        // kind::result: the job's last piece run (no kind::complete follows)
};

struct board_limits {
  std::size_t ahead = 8;      // pieces in flight (see the file comment)
  std::size_t open_jobs = 8;  // jobs that hold a descriptor at once
  // Small inputs in flight behind the front, and the most bytes one may have: a piece's memory
  // holds several, and opening many at a time spares thread switches (one each otherwise).
  std::size_t small_ahead = 64;
  std::uint64_t small_bytes = std::uint64_t{64} << 10;
  // Results of a big input's pieces that may wait before the committer is woken for them (it is
  // woken at once for a job's last pieces and before a worker sleeps); the plan's default is 1.
  std::size_t results_batch = 1;
};

class board {
 public:
  board(std::size_t inputs, const board_limits& limits, std::size_t workers, std::size_t takers);
  board(const board&) = delete;
  // The workers (and of them, those that take given-back piece runs), before any has started.
  void set_workers(std::size_t workers, std::size_t takers);
  board& operator=(const board&) = delete;

  // ------------------------------------------------------------------- workers ----
  // The next task for a worker, in input order; none once every input is claimed and done or the
  // run is cancelled. before_wait (if set) runs outside the lock before the first wait.
  std::optional<task> claim(const worker_traits& w, const std::function<void()>& before_wait = {});
  // The opener says what the job is: `pieces` pieces (final unless shape is chunks), of which
  // the first `readable` may be claimed. A whole job's piece is published by its opener or
  // made readable for a GPU lane.
  // holds_fd: the job keeps a descriptor open until it is finished; bytes: a whole job's size.
  void opened(job& j, job_shape shape, std::uint64_t pieces, std::uint64_t readable, bool holds_fd,
              std::uint64_t bytes = 0);
  // The opener could not open or classify the input: the job fails before its first piece.
  void open_failed(job& j, std::exception_ptr why);
  // A piece run for a worker that only helps while it waits (a stream's reader): piece runs only,
  // no opens, no waiting.
  std::optional<task> try_claim(const worker_traits& w);
  // A stream's reader: claims the next chunk to read (waiting, or doing `help` meanwhile, while
  // the budget is spent); false once the job is closed or the run cancelled.
  bool reserve_chunk(job& j, const std::function<bool()>& help);
  void chunk_readable(job& j);                 // the reserved chunk is read: others may take it
  void chunk_processed(job& j, run_result&& r);  // ... or the reader did it itself
  void chunks_end(job& j);                     // no more chunks (the stream ended)
  void publish(job& j, run_result&& r);
  // opened(j, whole, 1, 0, false, bytes) and publish(j, r) at once: a small input's opener did it.
  void opened_whole(job& j, run_result&& r, std::uint64_t bytes);
  void give_back(job& j, const piece_run& run);
  // A failure at piece run `run` of job j (run.count may be 0): fatal = false, the input cannot be
  // read and the job fails there while the run goes on; fatal = true, the run ends there.
  void fail(job& j, const piece_run& run, std::exception_ptr why, bool fatal);
  // A failure of no job's (a GPU lane could not start under backend::cuda): the run ends.
  void fail_run(std::exception_ptr why);
  void worker_ended(const worker_traits& w);

  // ----------------------------------------------------------------- committer ----
  // Waits for the front job's next piece run, its failure or its end; the front job is the first input
  // not yet finished (finish_front moves on). Rethrows a run failure.
  front_event await_front();
  [[nodiscard]] job& front();
  [[nodiscard]] bool finished() const;  // every input has been finished
  void committed(const piece_run& run);
  // The front job is done (complete, failed or stopped): its outputs not committed are released and
  // the next input becomes the front.
  // Returns the job, to be destroyed outside the board (closing its input takes time).
  std::unique_ptr<job> finish_front();
  // Ends the run: workers claim nothing more, and outputs nobody will commit go back.
  void cancel();
  [[nodiscard]] bool cancelled() const;
  // The run is cancelled or job j closed (stopped, failed): its reader stops waiting for input.
  [[nodiscard]] bool stopping(const job& j) const;
  [[nodiscard]] std::exception_ptr run_failure() const;

 private:
  [[nodiscard]] bool is_front(const job& j) const noexcept { return !jobs_.empty() && &j == jobs_.front().get(); }
  [[nodiscard]] bool within_budget(const job& j, std::uint64_t piece, std::uint64_t count) const noexcept;
  [[nodiscard]] bool may_open(const job& j) const noexcept;
  std::optional<task> find_work(const worker_traits& w);
  [[nodiscard]] static bool nothing_to_claim(const job& j) noexcept;
  void may_claim(const job& j) noexcept;
  std::optional<task> work_in(job& j, const worker_traits& w);
  void gather_batch(task& t, std::size_t from, const worker_traits& w);
  void take(job& j, std::uint64_t count);
  [[nodiscard]] bool nothing_left(const worker_traits& w) const;
  void drop_outputs(job& j, std::vector<std::function<void()>>& releases);

  const std::size_t inputs_;
  const board_limits limits_;
  mutable std::mutex m_;
  std::condition_variable work_;     // GPU lanes and stream readers wait for work and budget
  std::condition_variable cpu_work_; // CPU workers wait for work and budget
  std::condition_variable results_;  // the committer waits for results
  // Who waits, so that a change wakes only those it concerns: one thread switch a small input costs.
  std::size_t idle_ = 0;          // lanes and readers waiting on work_
  std::size_t idle_cpu_ = 0;      // CPU workers waiting on cpu_work_
  std::size_t idle_cpu_gpu_ = 0;  // ... of which those that may take a job for the GPU lanes
  bool committer_waits_ = false;  // the committer waits on results_
  // Small inputs' results ready for the waiting committer that it was not woken for: it is woken
  // once a batch is ready or before a worker sleeps, not for each input (a thread switch each).
  std::size_t owed_ = 0;
  void settle_committer();
  struct wakes {
    bool workers = false, committer = false;
    bool cpu = true;  // workers: the CPU workers too, not only the lanes and readers
  };
  void notify(const wakes& w);
  // Under the lock: opened's and publish's changes, and whom they wake.
  wakes mark_opened(job& j, job_shape shape, std::uint64_t pieces, std::uint64_t readable, bool holds_fd,
                    std::uint64_t bytes);
  bool store(job& j, run_result&& r, std::function<void()>& release);
  void grew(std::uint64_t slots);
  void wake_for_budget();
  std::uint64_t freed_ = 0;  // budget freed since the idle were last woken
  std::deque<std::unique_ptr<job>> jobs_;  // inputs [first_, first_ + jobs_.size())
  std::size_t first_ = 0;                  // the front job's index
  std::size_t skip_ = 0;                   // jobs_[0, skip_) have nothing to claim: find_work skips them
  std::uint64_t behind_in_flight_ = 0;     // in flight in jobs behind the front
  std::size_t small_in_flight_ = 0;        // small jobs behind the front (job::small_)
  std::size_t working_;                    // workers whose threads have not ended
  std::size_t holding_ = 0;                // jobs that hold a descriptor
  std::size_t takers_;                     // working workers that take given-back piece runs
  bool cancelled_ = false;
  std::exception_ptr run_failure_;
};

}  // namespace gutf8::internal
