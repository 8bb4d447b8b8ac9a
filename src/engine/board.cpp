#include "engine/board.hpp"

#include <algorithm>

#include "gutf8/error.hpp"

namespace gutf8::internal {

board::board(std::size_t inputs, const board_limits& limits, std::size_t workers, std::size_t takers)
    : inputs_(inputs), limits_(limits), working_(workers), takers_(takers) {}

void board::notify(const wakes& w) {
  if (w.workers) {
    work_.notify_all();
    if (w.cpu) cpu_work_.notify_all();
  }
  if (w.committer) results_.notify_all();
}

void board::set_workers(std::size_t workers, std::size_t takers) {
  std::lock_guard lock(m_);
  working_ = workers;
  takers_ = takers;
}

bool board::within_budget(const job& j, std::uint64_t piece, std::uint64_t count) const noexcept {
  if (is_front(j)) return piece < j.committed_ + limits_.ahead;
  return behind_in_flight_ == 0 || behind_in_flight_ + count <= limits_.ahead;
}

bool board::may_open(const job& j) const noexcept {
  return within_budget(j, 0, 1) && (is_front(j) || small_in_flight_ < limits_.small_ahead);
}

void board::take(job& j, std::uint64_t count) {
  j.in_flight_ += count;
  if (!is_front(j)) behind_in_flight_ += count;
}

// ------------------------------------------------------------------------- claims ----

std::optional<task> board::work_in(job& j, const worker_traits& w) {
  if (j.closed_ || j.shape_ == job_shape::unopened) return std::nullopt;
  if (!(j.gpu ? w.gpu || w.processes : w.processes)) return std::nullopt;
  if (w.takes_given_back && !j.given_back_.empty()) {
    piece_run& back = j.given_back_.front();
    const piece_run run{back.first, std::min(w.run_pieces, back.count)};
    back.first += run.count;
    back.count -= run.count;
    if (back.count == 0) j.given_back_.erase(j.given_back_.begin());
    j.unfinished_ += run.count;
    return task{task::kind::run, &j, run, {}};
  }
  if (j.next_ >= j.readable_) return std::nullopt;
  // Chunks were counted in flight when their reader reserved them, whole jobs when they were opened.
  const bool reserved = j.shape_ == job_shape::chunks || j.shape_ == job_shape::whole;
  const std::uint64_t most = j.shape_ == job_shape::pieces ? w.run_pieces : 1;
  const piece_run run{j.next_, std::min(most, j.readable_ - j.next_)};
  if (!reserved && !within_budget(j, run.first, run.count)) return std::nullopt;
  j.next_ += run.count;
  j.unfinished_ += run.count;
  if (!reserved) take(j, run.count);
  return task{task::kind::run, &j, run, {}};
}

// More whole jobs after jobs_[from] for a worker that takes them in batches, while the batch's
// count and bytes allow (they are in flight since they were opened); jobs it cannot take are left.
void board::gather_batch(task& t, std::size_t from, const worker_traits& w) {
  job& first = *t.j;
  if (w.batch_inputs <= 1 || first.shape_ != job_shape::whole || first.bytes_ + 1 > w.batch_bytes) return;
  t.batch.push_back(&first);
  std::uint64_t bytes = first.bytes_ + 1;
  for (std::size_t k = from + 1; k < jobs_.size() && t.batch.size() < w.batch_inputs; ++k) {
    job& j = *jobs_[k];
    if (j.closed_ || j.shape_ != job_shape::whole || j.next_ >= j.readable_ || !j.given_back_.empty()) continue;
    if (!(j.gpu ? w.gpu || w.processes : w.processes)) continue;
    if (bytes + j.bytes_ + 1 > w.batch_bytes) break;
    bytes += j.bytes_ + 1;
    j.next_ += 1;  // in flight since it was opened
    j.unfinished_ += 1;
    t.batch.push_back(&j);
  }
  if (t.batch.size() == 1) t.batch.clear();
}

// Nothing of the job can be claimed now: it is closed, being opened, or every piece it has is
// taken. What gives it some again (opened, a chunk read, a piece run given back) calls may_claim.
bool board::nothing_to_claim(const job& j) noexcept {
  if (j.closed_) return true;
  if (j.shape_ == job_shape::unopened) return j.opening_;
  return j.next_ >= j.readable_ && j.given_back_.empty();
}

void board::may_claim(const job& j) noexcept {
  if (j.index >= first_) skip_ = std::min(skip_, j.index - first_);
}

std::optional<task> board::find_work(const worker_traits& w) {
  // Hundreds of small jobs may wait for their commit: the search starts past those at the front.
  while (skip_ < jobs_.size() && nothing_to_claim(*jobs_[skip_])) ++skip_;
  for (std::size_t k = skip_; k < jobs_.size(); ++k) {
    job& j = *jobs_[k];
    if (j.shape_ == job_shape::unopened && !j.opening_ && !j.closed_ && w.opens && may_open(j)) {
      j.opening_ = true;
      take(j, 1);
      return task{task::kind::open, &j, {}, {}};
    }
    if (auto t = work_in(j, w)) {
      gather_batch(*t, k, w);
      return t;
    }
  }
  const bool more = first_ + jobs_.size() < inputs_;
  if (!more || !w.opens || holding_ >= limits_.open_jobs) return std::nullopt;
  auto fresh = std::make_unique<job>(first_ + jobs_.size());
  if (!jobs_.empty() && !may_open(*fresh)) return std::nullopt;
  job& j = *jobs_.emplace_back(std::move(fresh));
  j.opening_ = true;
  take(j, 1);
  return task{task::kind::open, &j, {}, {}};
}

bool board::nothing_left(const worker_traits& w) const {
  if (first_ + jobs_.size() < inputs_) return false;
  return std::ranges::all_of(jobs_, [&](const auto& jp) {
    const job& j = *jp;
    if (j.closed_) return true;
    if (j.shape_ == job_shape::unopened || j.reading_ || !j.complete_ || j.unfinished_ != 0) return false;
    return j.next_ >= j.readable_ && (j.given_back_.empty() || !w.takes_given_back);
  });
}

std::optional<task> board::claim(const worker_traits& w, const std::function<void()>& before_wait) {
  std::unique_lock lock(m_);
  bool told = false;
  for (;;) {
    if (cancelled_) return std::nullopt;
    if (auto t = find_work(w)) return t;
    if (nothing_left(w)) return std::nullopt;
    if (before_wait && !told) {
      told = true;
      settle_committer();
      lock.unlock();
      before_wait();
      lock.lock();
      continue;  // the board may have changed meanwhile
    }
    // CPU workers wait apart: any of them can use a slot of budget, so one is woken for one.
    settle_committer();
    std::condition_variable& cv = w.opens ? cpu_work_ : work_;
    std::size_t& idle = w.opens ? idle_cpu_ : idle_;
    const std::size_t gpu_taker = w.opens && (w.gpu || w.processes) ? 1 : 0;
    ++idle;
    idle_cpu_gpu_ += gpu_taker;
    cv.wait(lock);
    --idle;
    idle_cpu_gpu_ -= gpu_taker;
  }
}

std::optional<task> board::try_claim(const worker_traits& w) {
  worker_traits helper = w;
  helper.opens = false;
  std::lock_guard lock(m_);
  if (cancelled_) return std::nullopt;
  return find_work(helper);
}

// ---------------------------------------------------------------------- openers ----

void board::opened(job& j, job_shape shape, std::uint64_t pieces, std::uint64_t readable, bool holds_fd,
                   std::uint64_t bytes) {
  wakes wake;
  {
    std::lock_guard lock(m_);
    wake = mark_opened(j, shape, pieces, readable, holds_fd, bytes);
  }
  notify(wake);
}

void board::opened_whole(job& j, run_result&& r, std::uint64_t bytes) {
  std::function<void()> release;
  wakes wake;
  {
    std::lock_guard lock(m_);
    wake = mark_opened(j, job_shape::whole, 1, 0, false, bytes);
    wake.committer = store(j, std::move(r), release);
  }
  if (release) release();
  notify(wake);
}

board::wakes board::mark_opened(job& j, job_shape shape, std::uint64_t pieces, std::uint64_t readable,
                                bool holds_fd, std::uint64_t bytes) {
  j.opening_ = false;
  may_claim(j);
  j.shape_ = shape;
  j.bytes_ = bytes;
  j.readable_ = readable;
  j.complete_ = shape != job_shape::chunks;
  j.holds_fd_ = holds_fd;
  holding_ += holds_fd ? 1 : 0;
  // The open's slot in flight: the opener's own piece of a whole job, else given up.
  if (shape == job_shape::whole && readable == 0) {
    j.next_ = j.readable_ = pieces;
    j.unfinished_ += pieces;
    if (!is_front(j) && bytes <= limits_.small_bytes) {  // its piece goes back to the budget
      j.small_ = true;
      behind_in_flight_ -= 1;
      ++small_in_flight_;
    }
  } else if (shape != job_shape::whole) {
    j.in_flight_ -= 1;
    if (!is_front(j)) behind_in_flight_ -= 1;
  }  // a whole job left for a GPU lane keeps its slot: the openers stay within the budget
  if (shape == job_shape::chunks) {
    j.reading_ = true;
    settle_committer();  // its reader may wait long for input
  }
  // A whole job's opener publishes its result next: the committer waits for that.
  const bool publishes = shape == job_shape::whole && readable == 0;
  wakes wake{readable != 0 && (idle_ != 0 || idle_cpu_ != 0), committer_waits_ && is_front(j) && !publishes};
  if (shape == job_shape::whole && readable != 0) {  // for the GPU lanes: CPU workers that open only sleep on
    wake.workers = idle_ != 0 || idle_cpu_gpu_ != 0;
    wake.cpu = idle_cpu_gpu_ != 0;
  }
  return wake;
}

void board::open_failed(job& j, std::exception_ptr why) {
  wakes wake;
  {
    std::lock_guard lock(m_);
    j.opening_ = false;
    j.shape_ = job_shape::whole;
    j.complete_ = true;
    j.closed_ = true;
    j.in_flight_ -= 1;
    if (!is_front(j)) behind_in_flight_ -= 1;
    j.failed_.emplace(0, job::failure{std::move(why), false});
    wake = {idle_ != 0 || idle_cpu_ != 0, committer_waits_ && is_front(j)};  // a worker waiting for the last input may end
  }
  notify(wake);
}

bool board::reserve_chunk(job& j, const std::function<bool()>& help) {
  std::unique_lock lock(m_);
  for (;;) {
    if (cancelled_ || j.closed_) return false;
    if (within_budget(j, j.reserved_, 1)) {
      ++j.reserved_;
      take(j, 1);
      return true;
    }
    lock.unlock();
    const bool helped = help && help();
    lock.lock();
    if (!helped && !cancelled_ && !j.closed_ && !within_budget(j, j.reserved_, 1)) {
      settle_committer();
      ++idle_;
      work_.wait(lock);
      --idle_;
    }
  }
}

void board::chunk_readable(job& j) {
  bool wake = false;
  {
    std::lock_guard lock(m_);
    ++j.readable_;
    may_claim(j);
    wake = idle_ != 0 || idle_cpu_ != 0;
  }
  if (wake) notify({true, false});
}

void board::chunk_processed(job& j, run_result&& r) {
  {
    std::lock_guard lock(m_);
    ++j.readable_;
    ++j.next_;
    ++j.unfinished_;
  }
  publish(j, std::move(r));
}

void board::chunks_end(job& j) {
  wakes wake;
  {
    std::lock_guard lock(m_);
    j.complete_ = true;
    j.reading_ = false;
    wake = {idle_ != 0 || idle_cpu_ != 0, committer_waits_ && is_front(j)};
  }
  notify(wake);
}

// ---------------------------------------------------------------------- results ----

void board::publish(job& j, run_result&& r) {
  std::function<void()> release;
  bool wake = false;
  {
    std::lock_guard lock(m_);
    wake = store(j, std::move(r), release);
  }
  if (release) release();
  if (wake) results_.notify_all();
}

bool board::store(job& j, run_result&& r, std::function<void()>& release) {
  j.unfinished_ -= r.run.count;
  const bool kept = !cancelled_ && !j.closed_;
  if (!kept) {
    release = std::move(r.release);
  } else {
    const std::uint64_t first = r.run.first;
    j.done_.emplace(first, std::move(r));
  }
  // The committer alone waits for results, the front's. A small input's opener goes on opening
  // the next ones, a big input's workers on its next pieces: the committer is woken for a batch
  // of results (or before a worker sleeps), not for each (a thread switch each).
  if (!committer_waits_ || (!is_front(j) && owed_ == 0)) return false;
  const bool small = kept && j.shape_ == job_shape::whole && !j.gpu && first_ + jobs_.size() < inputs_;
  const bool piece = kept && j.shape_ == job_shape::pieces && !j.gpu && j.next_ < j.readable_;
  const std::size_t batch = small ? std::max<std::size_t>(limits_.small_ahead / 4, 1) : piece ? limits_.results_batch : 1;
  if (++owed_ < batch) return false;
  owed_ = 0;
  return true;
}

void board::give_back(job& j, const piece_run& run) {
  wakes wake;
  {
    std::lock_guard lock(m_);
    j.unfinished_ -= run.count;
    j.given_back_.push_back(run);
    may_claim(j);
    wake = {idle_ != 0 || idle_cpu_ != 0, committer_waits_};
  }
  notify(wake);
}

void board::fail(job& j, const piece_run& run, std::exception_ptr why, bool fatal) {
  wakes wake;
  {
    std::lock_guard lock(m_);
    j.unfinished_ -= run.count;
    j.failed_.emplace(run.first, job::failure{std::move(why), fatal});
    // Its reader fails a stream with an empty piece run and reads no more; a worker's failure (a
    // part of a compressed file) leaves the reader to see the job closed.
    if (j.shape_ == job_shape::chunks && run.count == 0) j.reading_ = false;
    wake = {idle_ != 0 || idle_cpu_ != 0, committer_waits_ && is_front(j)};
  }
  notify(wake);
}

void board::fail_run(std::exception_ptr why) {
  {
    std::lock_guard lock(m_);
    if (!run_failure_) run_failure_ = std::move(why);
  }
  notify({true, true});
}

void board::settle_committer() {
  if (owed_ == 0 || !committer_waits_) return;
  owed_ = 0;
  results_.notify_all();
}

void board::worker_ended(const worker_traits& w) {
  {
    std::lock_guard lock(m_);
    --working_;
    if (w.takes_given_back) --takers_;
  }
  results_.notify_all();  // seldom: once a worker
}

// -------------------------------------------------------------------- committer ----

job& board::front() {
  std::lock_guard lock(m_);
  return *jobs_.front();
}

bool board::finished() const {
  std::lock_guard lock(m_);
  return first_ >= inputs_;
}

front_event board::await_front() {
  std::unique_lock lock(m_);
  for (;;) {
    if (run_failure_) std::rethrow_exception(run_failure_);
    if (jobs_.empty()) {  // nobody has reached it yet: make it, for the first opener to take
      jobs_.push_back(std::make_unique<job>(first_));
      if (idle_ != 0 || idle_cpu_ != 0) notify({true, false});
    }
    job& j = *jobs_.front();
    const auto first_failure = j.failed_.begin();
    const bool failure_due = first_failure != j.failed_.end() &&
                             (first_failure->first <= j.committed_ ||
                              (j.unfinished_ == 0 && j.given_back_.empty() && j.complete_ && j.next_ >= j.readable_ &&
                               !j.done_.contains(j.committed_)));
    if (failure_due) {
      if (first_failure->second.fatal) std::rethrow_exception(first_failure->second.why);
      j.closed_ = true;
      return {front_event::kind::failed, {}, first_failure->second.why};
    }
    if (const auto it = j.done_.find(j.committed_); it != j.done_.end()) {
      front_event e{front_event::kind::result, std::move(it->second), nullptr};
      j.done_.erase(it);
      // The job's last piece run: the committer need not come back for its end.
      e.last = j.shape_ != job_shape::unopened && j.complete_ && e.result.run.end() >= j.readable_ && !j.reading_;
      return e;
    }
    if (j.shape_ != job_shape::unopened && j.complete_ && j.committed_ >= j.readable_ && !j.reading_)
      return {front_event::kind::complete, {}, nullptr};
    const bool stranded = !j.given_back_.empty() && takers_ == 0;
    if (working_ == 0 || stranded)
      throw error(errc::device_failure, stranded ? "runs were given back and no worker of the run takes them"
                                                 : "every worker of the run stopped before the end of its inputs");
    wake_for_budget();  // before the committer sleeps, every freed slot is someone's
    committer_waits_ = true;
    results_.wait(lock);
    committer_waits_ = false;
    owed_ = 0;
  }
}

void board::committed(const piece_run& run) {
  {
    std::lock_guard lock(m_);
    job& j = *jobs_.front();
    j.committed_ = run.end();
    j.in_flight_ -= run.count;
    grew(run.count);
  }
}

// Budget grew by `slots` (under the lock): the idle are woken a few slots at a time, or before the
// committer waits, one CPU worker a slot (any of them can use one), every lane and reader (a few,
// each waiting for its own kind of work).
void board::grew(std::uint64_t slots) {
  freed_ += slots;
  // Openers of small inputs are woken once half their budget is free, not for each input.
  if (freed_ >= 4 && small_in_flight_ <= limits_.small_ahead / 2) wake_for_budget();
}

void board::wake_for_budget() {
  for (std::uint64_t k = 0; k < std::min<std::uint64_t>(freed_, idle_cpu_); ++k) cpu_work_.notify_one();
  if (idle_ != 0 && freed_ != 0) work_.notify_all();
  freed_ = 0;
}

void board::drop_outputs(job& j, std::vector<std::function<void()>>& releases) {
  for (auto& [first, r] : j.done_)
    if (r.release) releases.push_back(std::move(r.release));
  j.done_.clear();
}

std::unique_ptr<job> board::finish_front() {
  std::vector<std::function<void()>> releases;
  std::unique_ptr<job> ended;
  {
    std::unique_lock lock(m_);
    job& j = *jobs_.front();
    j.closed_ = true;  // a stopped or failed job: its workers and reader stop
    // Its workers still hold pointers to it: they publish (dropped, as it is closed) first.
    if (j.unfinished_ != 0 || j.reading_) {
      notify({true, false});
      freed_ = 0;
      committer_waits_ = true;
      results_.wait(lock, [&] { return j.unfinished_ == 0 && !j.reading_; });
      committer_waits_ = false;
      owed_ = 0;
    }
    drop_outputs(j, releases);
    holding_ -= j.holds_fd_ ? 1 : 0;
    ended = std::move(jobs_.front());
    jobs_.pop_front();
    skip_ -= skip_ != 0 ? 1 : 0;
    ++first_;
    std::uint64_t freed = 1;  // a job's place: one more may open
    if (!jobs_.empty()) {
      job& next = *jobs_.front();
      if (next.small_) {
        next.small_ = false;
        --small_in_flight_;
      } else {
        behind_in_flight_ -= next.in_flight_;
        freed += next.in_flight_;
      }
    }
    grew(freed);
  }
  for (auto& r : releases) r();
  return ended;
}

void board::cancel() {
  std::vector<std::function<void()>> releases;
  {
    std::lock_guard lock(m_);
    cancelled_ = true;
    for (auto& j : jobs_) {
      j->closed_ = true;
      drop_outputs(*j, releases);
    }
  }
  notify({true, true});
  for (auto& r : releases) r();
}

bool board::cancelled() const {
  std::lock_guard lock(m_);
  return cancelled_;
}

bool board::stopping(const job& j) const {
  std::lock_guard lock(m_);
  return cancelled_ || j.closed_;
}

std::exception_ptr board::run_failure() const {
  std::lock_guard lock(m_);
  return run_failure_;
}

}  // namespace gutf8::internal
