// The file scheduler's given-back runs (src/file/scheduler.*) under the two interleavings that
// commit cc39eab mended, forced step by step: workers wait for each other's steps and for the
// scheduler's worker events (schedule_hooks::after), so each test takes the same path every time.
//   - A run taken back from the given-back list is in progress: while one worker holds it, the
//     others may not end (nor may a failure surface past it).
//   - A worker with a bounded output pool (a GPU lane) takes no given-back run: one lies before its
//     uncommitted outputs, and its pool would wait forever for their commit.
// Each fails on the scheduler before cc39eab (there with a clear error, not a hang). And the
// failures the run ends with when nobody is left to take a given-back run, or a worker could not
// start after the others had finished.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "check.hpp"
#include "codec/stream_core.hpp"
#include "cpu/cpu_block.hpp"
#include "file/process_file.hpp"
#include "file_pipeline_support.hpp"

namespace gutf8::test {
namespace {

using internal::file_run_tuning;
using internal::file_work;
using internal::file_worker;
using internal::piece_run;
using internal::run_result;
using internal::worker_event;

// Named steps that workers mark and wait for. A wait gives up after a minute with an error that
// ends the run: a deadlock the scheduler should not have, reported instead of hanging the suite.
class steps {
 public:
  void mark(const std::string& step) {
    {
      std::lock_guard lock(m_);
      marked_.insert(step);
    }
    changed_.notify_all();
  }
  // Waits until one of `any` is marked; returns it.
  std::string await(std::initializer_list<std::string> any) {
    std::unique_lock lock(m_);
    std::string seen;
    const auto found = [&] {
      for (const std::string& s : any)
        if (marked_.contains(s)) {
          seen = s;
          return true;
        }
      return false;
    };
    if (!changed_.wait_for(lock, std::chrono::minutes(1), found))
      throw error(errc::device_failure, "test step never came: " + *any.begin());
    return seen;
  }
  [[nodiscard]] bool marked(const std::string& step) {
    std::lock_guard lock(m_);
    return marked_.contains(step);
  }

 private:
  std::mutex m_;
  std::condition_variable changed_;
  std::set<std::string> marked_;
};

// Output buffers of which at most `limit` are out at once, as a GPU lane's page-locked pool: a run
// waits for one to come back from the commit. A run that lies before every output still out can
// never get one (those commit after it): that is the deadlock, thrown at once.
class bounded_outputs {
 public:
  explicit bounded_outputs(std::size_t limit) : limit_(limit) {}
  std::function<void()> acquire(const piece_run& run) {
    std::unique_lock lock(m_);
    while (out_.size() >= limit_) {
      if (*out_.begin() > run.first)
        throw error(errc::device_failure, "a bounded worker took piece " + std::to_string(run.first) +
                                              ", given back, before its uncommitted outputs: it would wait forever");
      if (returned_.wait_for(lock, std::chrono::minutes(1)) == std::cv_status::timeout)
        throw error(errc::device_failure, "a bounded worker's output never came back");
    }
    out_.insert(run.first);
    return [this, first = run.first] {
      {
        std::lock_guard hold(m_);
        out_.erase(first);
      }
      returned_.notify_all();
    };
  }

 private:
  std::size_t limit_;
  std::mutex m_;
  std::condition_variable returned_;
  std::set<std::uint64_t> out_;  // first pieces of the runs whose outputs are out
};

// One piece at a time, processed as the CPU does, with a script: start() runs before the first run,
// before_run(run, call) before each (it may wait for steps or throw run_given_back), after_run(run,
// call) once the run is processed. With output_limit, its outputs are bounded as a GPU lane's and it
// takes no given-back run.
struct worker_script {
  std::function<void()> start = nullptr;
  std::function<void(const piece_run&, int)> before_run = nullptr;
  std::function<void(const piece_run&, int)> after_run = nullptr;
  std::size_t output_limit = 0;
};

class scripted_worker final : public file_worker {
 public:
  // runs: where it notes the first piece of each run it is given.
  scripted_worker(const file_work& work, worker_script script, std::vector<std::uint64_t>& runs)
      : work_(work), script_(std::move(script)), processor_(internal::make_cpu_processor(1)), runs_(runs) {
    if (script_.output_limit != 0) bounded_.emplace(script_.output_limit);
  }

  void start() override {
    if (script_.start) script_.start();
  }
  [[nodiscard]] std::uint64_t run_pieces() const noexcept override { return 1; }
  [[nodiscard]] bool takes_given_back() const noexcept override { return !bounded_; }

  run_result process(const piece_run& run) override {
    const int call = ++calls_;
    runs_.push_back(run.first);
    if (script_.before_run) script_.before_run(run, call);
    auto out = std::make_shared<std::vector<std::uint8_t>>(run_output_bytes(work_, run));
    std::function<void()> release = [out] {};
    if (bounded_) release = [out, back = bounded_->acquire(run)] { back(); };
    run_result r = process_copied_run(work_, *processor_, histogram_, run, out->empty() ? nullptr : out->data(),
                                      std::move(release));
    if (script_.after_run) script_.after_run(run, call);
    return r;
  }

 private:
  file_work work_;
  worker_script script_;
  std::unique_ptr<internal::block_processor> processor_;
  std::vector<std::uint64_t> histogram_;
  std::optional<bounded_outputs> bounded_;
  int calls_ = 0;
  std::vector<std::uint64_t>& runs_;
};

// The cast of one test: its workers by name, made when the run starts, in the order given.
class cast {
 public:
  void add(const std::string& name, worker_script script) { scripts_.emplace_back(name, std::move(script)); }

  [[nodiscard]] file_run_tuning tuning(steps& st) {
    file_run_tuning t;
    t.cpu_workers = 0;  // the cast alone
    t.extra_workers = [this](const file_work& work) {
      std::vector<std::unique_ptr<file_worker>> w;
      for (const auto& [name, script] : scripts_) {
        auto worker = std::make_unique<scripted_worker>(work, script, runs_[name]);
        names_[worker.get()] = name;
        w.push_back(std::move(worker));
      }
      return w;
    };
    // Every worker event becomes a step: "NAME gave_back", "NAME waits", "NAME ended".
    t.hooks.after = [this, &st](const file_worker& w, worker_event e) {
      static constexpr const char* event_names[] = {"gave_back", "waits", "ended"};
      st.mark(names_.at(&w) + ' ' + event_names[static_cast<int>(e)]);
    };
    return t;
  }
  // The first pieces of the runs the worker was given, in order.
  [[nodiscard]] const std::vector<std::uint64_t>& runs_of(const std::string& name) const { return runs_.at(name); }

 private:
  std::vector<std::pair<std::string, worker_script>> scripts_;
  std::map<std::string, std::vector<std::uint64_t>> runs_;  // filled by the workers, each its own
  std::map<const file_worker*, std::string> names_;
};

[[noreturn]] void give_back() { throw internal::run_given_back(nullptr); }

// Marks "NAME holds its run" on its first run, then gives that run back once `after` is marked.
worker_script gives_back_first_run(steps& st, const std::string& name, const std::string& after) {
  return {.before_run = [&st, holds = name + " holds its run", after](const piece_run&, int call) {
    if (call != 1) return;
    st.mark(holds);
    st.await({after});
    give_back();
  }};
}

// Each test's steps and cast, and the file they decode.
class SchedulerGiveBack : public testing::Test {
 protected:
  // Decodes `size` bytes of text (seed: which) through the cast in pieces of 512 bytes; the output
  // must be the one-shot API's, and a failure that ends the run fails the test.
  void decode_through_the_cast(std::size_t size, std::uint64_t seed) {
    auto g = rng(seed);
    const std::string in = random_text(g, size, 0.01);
    const temp_file f(in);
    file_config config;
    config.stream = {operation::decode, error_policy::replace, false, {.backend = backend::cpu}};
    config.piece_bytes = 512;
    std::string written;
    const output_sink sink = [&](std::span<const std::byte> b) {
      written.append(reinterpret_cast<const char*>(b.data()), b.size());
      return true;
    };
    try {
      internal::run_file(f.fd(), 0, config, sink, {}, 0, workers.tuning(st));
    } catch (const error& e) {
      ADD_FAILURE() << "the run failed: " << e.what();
    }
    EXPECT_TRUE(same_bytes(written, one_shot(operation::decode, error_policy::replace, in).out));
  }

  // Decodes `size` bytes through the cast; returns the code of the error the run ended with.
  std::optional<errc> failure_through_the_cast(std::size_t size, std::uint64_t seed) {
    auto g = rng(seed);
    const temp_file f(random_text(g, size, 0.01));
    file_config config;
    config.stream = {operation::decode, error_policy::replace, false, {.backend = backend::cpu}};
    config.piece_bytes = 512;
    const progress_function progress = [&](std::uint64_t done) {
      if (done == size) st.mark("all committed");
    };
    try {
      internal::run_file(f.fd(), 0, config, [](std::span<const std::byte>) { return true; }, progress, 0,
                         workers.tuning(st));
    } catch (const error& e) {
      return e.code();
    }
    return std::nullopt;
  }

  steps st;
  cast workers;
};

// A gives piece 0 back; R takes it from the given-back list, and while R holds it W publishes piece 1
// and asks for more. W must wait (R's run is in progress and may come back), not end: when R gives
// the piece back again, W is the one left to do it. Before cc39eab the retaken run was not counted,
// W ended, and the run failed with "every worker of the file pipeline stopped".
TEST_F(SchedulerGiveBack, RetakenRunKeepsTheOthersWaiting) {
  workers.add("A", gives_back_first_run(st, "A", "W holds its run"));  // W has the other piece first
  workers.add("W", {.start = [&] { st.await({"A holds its run"}); },
                    .before_run = [&](const piece_run&, int call) {
                      if (call != 1) return;
                      st.mark("W holds its run");
                      st.await({"R holds its run"});  // W asks for more only once R holds A's run
                    }});
  workers.add("R", {.start = [&] { st.await({"A gave_back"}); },
                    .before_run = [&](const piece_run& run, int call) {
                      if (call != 1) return;
                      EXPECT_EQ(run.first, 0u) << "R should hold the piece A gave back";
                      st.mark("R holds its run");
                      if (st.await({"W waits", "W ended"}) == "W ended")
                        ADD_FAILURE() << "W ended while R held a retaken run";
                      give_back();
                    }});
  decode_through_the_cast(1000, 61);  // two pieces
  EXPECT_TRUE(st.marked("R holds its run"));
}

// G gives piece 0 back once L, a worker with two bounded outputs, has processed pieces 1 and 2,
// whose outputs cannot commit before piece 0. L's next claim comes after the give-back: it must
// leave piece 0 to C (a CPU worker, held back until L has claimed) and take piece 3. Before cc39eab
// L took piece 0 and its pool would have waited forever (bounded_outputs reports that at once).
TEST_F(SchedulerGiveBack, BoundedWorkerLeavesGivenBackRunsToOthers) {
  workers.add("G", gives_back_first_run(st, "G", "L processed two runs"));
  workers.add("L", {.start = [&] { st.await({"G holds its run"}); },
                    .before_run = [&](const piece_run&, int call) {
                      if (call == 3) st.mark("L claimed a third run");
                    },
                    .after_run = [&](const piece_run&, int call) {
                      if (call != 2) return;
                      st.mark("L processed two runs");
                      st.await({"G gave_back"});  // L claims again only after the give-back
                    },
                    .output_limit = 2});
  workers.add("C", {.start = [&] { st.await({"L claimed a third run"}); }});
  decode_through_the_cast(3000, 62);  // six pieces
  ASSERT_GE(workers.runs_of("L").size(), 3u);
  EXPECT_EQ(workers.runs_of("L")[2], 3u) << "L should have left the given-back piece 0 and taken piece 3";
}

// G gives piece 0 back after C, the only other worker that takes given-back runs, has failed on
// its own piece; L (bounded, as a GPU lane) takes no given-back run. Nobody can fill the gap before
// L's outputs: the run must end with C's failure. Before, the committer waited for piece 0 for ever
// (and without L it reported "every worker stopped" instead of C's failure).
TEST_F(SchedulerGiveBack, GivenBackRunWithNobodyToTakeItEndsWithTheFailure) {
  workers.add("G", gives_back_first_run(st, "G", "C ended"));
  workers.add("C", {.start = [&] { st.await({"G holds its run"}); },
                    .before_run = [](const piece_run&, int) { throw error(errc::io_failure, "C cannot read"); }});
  workers.add("L", {.start = [&] { st.await({"C ended"}); }, .output_limit = 2});
  EXPECT_EQ(failure_through_the_cast(6000, 63), errc::io_failure);
}

// A worker that cannot start fails the run even when the others have done every piece by then, or
// when there is none (an empty file), as backend::cuda without a GPU must.
TEST_F(SchedulerGiveBack, StartFailureAfterTheLastCommitFailsTheRun) {
  workers.add("C", {});
  workers.add("S", {.start = [&] {
    st.await({"all committed"});
    throw error(errc::no_device, "S has no GPU");
  }});
  EXPECT_EQ(failure_through_the_cast(3000, 64), errc::no_device);
}

TEST_F(SchedulerGiveBack, StartFailureOnAnEmptyFileFailsTheRun) {
  workers.add("S", {.start = [] { throw error(errc::no_device, "S has no GPU"); }});
  EXPECT_EQ(failure_through_the_cast(0, 65), errc::no_device);
}

}  // namespace
}  // namespace gutf8::test
