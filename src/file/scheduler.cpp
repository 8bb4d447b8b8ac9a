#include "file/scheduler.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

// The shared state of one run: what is claimed, what is done, what is committed.
class piece_board {
 public:
  // takers: the workers that take runs given back.
  piece_board(std::uint64_t pieces, std::uint64_t ahead, std::size_t workers, std::size_t takers)
      : pieces_(pieces), ahead_(ahead), working_(workers), takers_(takers) {}

  // The next run for a worker that takes `count` pieces at once: a run some other worker gave
  // back first (if it takes those), else the next unclaimed pieces once they are within `ahead` of
  // the commit; none once every piece is claimed and done or the run is cancelled. before_wait (if
  // set) runs outside the lock before the first wait.
  std::optional<piece_run> claim(std::uint64_t count, bool takes_given_back,
                                 const std::function<void()>& before_wait) {
    std::unique_lock lock(m_);
    bool told = false;
    for (;;) {
      if (cancelled_) return std::nullopt;
      if (takes_given_back && !given_back_.empty()) {
        piece_run& back = given_back_.front();
        const piece_run run{back.first, std::min(count, back.count)};
        back.first += run.count;
        back.count -= run.count;
        if (back.count == 0) given_back_.pop_front();
        unfinished_ += run.count;
        return run;
      }
      if (next_ >= pieces_ && unfinished_ == 0) return std::nullopt;
      if (next_ < pieces_ && next_ < committed_ + ahead_) break;
      // Every piece is claimed, but a run in progress may still be given back.
      if (before_wait && !told) {
        told = true;
        lock.unlock();
        before_wait();
        lock.lock();
        continue;  // the board may have changed meanwhile
      }
      changed_.wait(lock);
    }
    const piece_run run{next_, std::min(count, pieces_ - next_)};
    next_ += run.count;
    unfinished_ += run.count;
    return run;
  }

  void publish(run_result&& r) {
    std::function<void()> release;
    {
      std::lock_guard lock(m_);
      unfinished_ -= r.run.count;
      if (cancelled_) {
        release = std::move(r.release);
      } else {
        const std::uint64_t first = r.run.first;
        done_.emplace(first, std::move(r));
      }
    }
    if (release) release();
    changed_.notify_all();
  }

  void give_back(const piece_run& run) {
    {
      std::lock_guard lock(m_);
      unfinished_ -= run.count;
      given_back_.push_back(run);
    }
    changed_.notify_all();
  }

  // A failure that ends the run; the committer rethrows it when it reaches the failed run.
  void fail(const piece_run& run, std::exception_ptr why) {
    {
      std::lock_guard lock(m_);
      unfinished_ -= run.count;
      failures_.emplace(run.first, std::move(why));
    }
    changed_.notify_all();
  }

  // A worker that could not start (and did not give its place to the others): the run fails even
  // where the others did every piece, or there was none (an empty file).
  void fail_start(std::exception_ptr why) {
    {
      std::lock_guard lock(m_);
      if (!start_failure_) start_failure_ = why;
    }
    fail(piece_run{0, 0}, std::move(why));
  }
  [[nodiscard]] std::exception_ptr start_failure() {
    std::lock_guard lock(m_);
    return start_failure_;
  }

  // Waits for the run that starts at the next uncommitted piece, or the failure that is first in
  // file order (committing past it is impossible).
  run_result await_next() {
    std::unique_lock lock(m_);
    for (;;) {
      if (!failures_.empty() && failures_.begin()->first <= committed_) std::rethrow_exception(failures_.begin()->second);
      if (const auto it = done_.find(committed_); it != done_.end()) {
        run_result r = std::move(it->second);
        done_.erase(it);
        return r;
      }
      // A failure beyond the commit still ends the run once nothing can fill the gap before it.
      if (!failures_.empty() && unfinished_ == 0 && given_back_.empty() && next_ >= pieces_)
        std::rethrow_exception(failures_.begin()->second);
      // Nobody left to do the rest: the failure that stopped them, if one did, says why.
      const bool stranded = !given_back_.empty() && takers_ == 0;
      if (working_ == 0 || stranded) {
        if (!failures_.empty()) std::rethrow_exception(failures_.begin()->second);
        throw error(errc::device_failure, stranded ? "runs were given back and no worker of the file pipeline takes them"
                                                   : "every worker of the file pipeline stopped before the end of the file");
      }
      changed_.wait(lock);
    }
  }

  // A worker's thread ends (nothing left for it, or it stopped).
  void worker_ended(bool taker) {
    {
      std::lock_guard lock(m_);
      --working_;
      if (taker) --takers_;
    }
    changed_.notify_all();
  }

  void committed(const piece_run& run) {
    {
      std::lock_guard lock(m_);
      committed_ = run.end();
    }
    changed_.notify_all();
  }

  // Ends the run: workers claim nothing more, and the outputs nobody will commit go back.
  void cancel() {
    std::map<std::uint64_t, run_result> dropped;
    {
      std::lock_guard lock(m_);
      cancelled_ = true;
      dropped.swap(done_);
    }
    changed_.notify_all();
    for (auto& [first, r] : dropped)
      if (r.release) r.release();
  }

 private:
  const std::uint64_t pieces_, ahead_;
  std::mutex m_;
  std::condition_variable changed_;
  std::uint64_t next_ = 0;        // the first piece nobody has claimed
  std::uint64_t committed_ = 0;   // the first piece not committed
  std::uint64_t unfinished_ = 0;  // pieces claimed and neither published, given back nor failed
  std::size_t working_;           // workers whose threads have not ended
  std::size_t takers_;            // ... of which take runs given back
  std::deque<piece_run> given_back_;
  std::map<std::uint64_t, run_result> done_;             // by first piece
  std::map<std::uint64_t, std::exception_ptr> failures_;  // by first piece
  bool cancelled_ = false;
  std::exception_ptr start_failure_;
};

void work_on(file_worker& worker, piece_board& board, const schedule_hooks& hooks) {
  std::function<void()> waits;
  if (hooks.after) waits = [&] { hooks.after(worker, worker_event::waits); };
  try {
    worker.start();
  } catch (const run_given_back&) {
    return;  // this worker stays out; the others do every piece
  } catch (...) {
    board.fail_start(std::current_exception());
    return;
  }
  while (const auto run = board.claim(worker.run_pieces(), worker.takes_given_back(), waits)) {
    try {
      run_result r = worker.process(*run);
      if (hooks.before_publish) hooks.before_publish(worker, *run);
      board.publish(std::move(r));
    } catch (const run_given_back&) {
      board.give_back(*run);
      if (hooks.after) hooks.after(worker, worker_event::gave_back);
      return;
    } catch (...) {
      board.fail(*run, std::current_exception());
      return;
    }
  }
}

void work(file_worker& worker, piece_board& board, const schedule_hooks& hooks) {
  work_on(worker, board, hooks);
  board.worker_ended(worker.takes_given_back());
  if (hooks.after) hooks.after(worker, worker_event::ended);
}

}  // namespace

std::uint64_t schedule_pieces(const piece_plan& plan, std::span<const std::unique_ptr<file_worker>> workers,
                              std::uint64_t ahead, const commit_function& commit,
                              const schedule_hooks& hooks) {
  const std::uint64_t pieces = plan.count();
  for (const auto& w : workers) ahead = std::max(ahead, w->run_pieces());
  const auto takers = static_cast<std::size_t>(std::ranges::count_if(workers, [](const auto& w) { return w->takes_given_back(); }));
  piece_board board(pieces, ahead, workers.size(), takers);
  std::uint64_t committed = 0;
  bool ended_early = false;
  {
    std::vector<std::jthread> threads;
    // However the loop below ends, the workers stop before the board goes away.
    struct stopper {
      piece_board& board;
      std::vector<std::jthread>& threads;
      ~stopper() {
        board.cancel();
        threads.clear();  // joins
      }
    } stop{board, threads};
    for (const auto& w : workers) threads.emplace_back(work, std::ref(*w), std::ref(board), std::cref(hooks));

    while (committed < pieces) {
      run_result r = board.await_next();
      // The output goes back to its worker however the commit ends.
      const struct releaser {
        const std::function<void()>& release;
        ~releaser() {
          if (release) release();
        }
      } hand_back{r.release};
      const bool go_on = commit(r);
      committed = r.run.end();
      board.committed(r.run);
      if (!go_on) {
        ended_early = true;
        break;
      }
    }
  }
  // A worker that failed to start after the others had committed everything (or on an empty file).
  if (!ended_early)
    if (const std::exception_ptr why = board.start_failure()) std::rethrow_exception(why);
  return committed;
}

}  // namespace gutf8::internal
