// gutf8::run (include/gutf8/engine.hpp): the workers on their threads, and the commit of every
// input in order on the calling thread, into the observer.
#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <thread>

#include "cpu/cpu_block.hpp"
#include "codec/auto_model.hpp"
#include "codec/stream_core.hpp"
#include "engine/compressed.hpp"
#include "engine/lanes.hpp"
#include "engine/run.hpp"
#include "gutf8/error.hpp"

namespace gutf8 {

input input::file(std::string path) {
  input in(kind::file, path);
  in.path_ = std::move(path);
  return in;
}

input input::descriptor(int fd, std::string name) {
  input in(kind::descriptor, std::move(name));
  in.fd_ = fd;
  return in;
}

input input::memory(std::span<const std::byte> bytes, std::string name) {
  input in(kind::memory, std::move(name));
  in.bytes_ = bytes;
  return in;
}

namespace internal {
namespace {

error error_of(const std::exception_ptr& why) {
  try {
    std::rethrow_exception(why);
  } catch (const error& e) {
    return e;
  } catch (const std::exception& e) {
    return error(errc::io_failure, e.what());
  }
}

// The commit of one input: its piece runs in order into a stream core (pieces, chunks) or as they were
// accounted by the worker (a whole input, one stream), then its report to the observer.
class job_commit {
 public:
  job_commit(const run_context& run, run_observer& observer, run_report& report)
      : run_(run), observer_(observer), report_(report) {}

  // Commits the front job to its end; false when the observer ended the run.
  bool commit_front() {
    for (;;) {
      front_event e = run_.work.await_front();
      job& j = run_.work.front();
      if (e.what == front_event::kind::failed) {
        observer_.failed(j.index, error_of(e.why));
        ++report_.failed;
        break;
      }
      const bool go_on = e.what != front_event::kind::result || commit(j, e.result);
      const bool ends = e.what == front_event::kind::complete || stopped_ || e.last;
      if (!go_on || (ends && !end_output(j))) {
        observer_.done(j.index, finish(j));  // what was found before the observer ended the run
        return false;
      }
      if (ends) {
        observer_.done(j.index, finish(j));
        break;
      }
    }
    ++report_.inputs;
    const std::unique_ptr<job> ended = run_.work.finish_front();
    if (auto* pieces = dynamic_cast<random_input*>(ended->in.get())) pieces->consumed(bytes_);
    reset();
    return true;
  }

 private:
  bool commit(job& j, run_result& r) {
    const struct releaser {  // the output goes back to its worker however the commit ends
      std::function<void()>& release;
      ~releaser() {
        if (release) release();
      }
    } hand_back{r.release};
    // A part of a compressed file: the bytes between the part before and this one go first.
    if (seam_joiner::block seam; r.edges && seams_.before(*r.edges, seam) && !commit_block(j, seam)) return false;
    if (stopped_) {
      run_.work.committed(r.run);
      return true;
    }
    const std::uint64_t consumed = r.outcome.result.consumed;
    if (r.accounted) {
      if (r.report) reported_ = std::move(*r.report);
      stopped_ = reported_ && reported_->stopped;
    } else {
      place_first_error(j, r.outcome);
      core().commit(r.outcome.result, r.outcome.lines, r.outcome.counted_lines);
      stopped_ = core().stopped();
    }
    if (r.edges) seams_.after(*r.edges);
    bytes_ += consumed;
    gpu_bytes_ += r.gpu ? consumed : 0;
    report_.bytes += consumed;
    const bool go_on = emit(j, r.output);
    // After the emit: a valid piece's repair is emitted from the pages it lies in.
    if (auto* pieces = dynamic_cast<random_input*>(j.in.get())) pieces->release_before(bytes_);
    run_.work.committed(r.run);
    observer_.progress(report_.bytes);
    return go_on;
  }

  // Output of the front job to the observer; false when it ended the run.
  bool emit(const job& j, std::span<const std::uint8_t> bytes) {
    if (bytes.empty()) return true;
    emitted_ = true;
    return observer_.output(j.index, std::as_bytes(bytes));
  }

  // A seam between two parts (or what the last part left) through the committer's own processor,
  // its output compressed here when outputs are.
  bool commit_block(job& j, const seam_joiner::block& b) {
    const stream_config& sc = run_.config.stream;
    if (!seam_processor_) seam_processor_ = make_cpu_processor(1);
    std::vector<std::uint8_t> out(output_room(sc.operation, b.bytes.size()));
    std::uint64_t* histogram = sc.histogram && sc.operation == operation::stats
                                   ? j.in->histogram.for_worker(std::numeric_limits<std::size_t>::max())
                                   : nullptr;
    const piece_outcome o = process_counted(*seam_processor_, sc.operation, sc.policy,
                                            reinterpret_cast<const std::uint8_t*>(b.bytes.data()), b.bytes.size(), b.end,
                                            b.at_end, out.empty() ? nullptr : out.data(), histogram);
    core().commit(o.result, o.lines, true);
    stopped_ = core().stopped();
    bytes_ += o.result.consumed;
    report_.bytes += o.result.consumed;
    const std::span<const std::uint8_t> text(out.data(), o.result.written);
    if (!packer() || text.empty()) return emit(j, text);
    const std::vector<std::uint8_t> members = packer()->pack(text);
    return emit(j, members);
  }

  // The input's end: the bytes its last part left, and one empty member where its compressed
  // output would otherwise be empty (each input's output is then a file of the format).
  bool end_output(job& j) {
    if (seam_joiner::block last; !stopped_ && seams_.finish(last) && !commit_block(j, last)) return false;
    if (!packer() || emitted_) return true;
    return emit(j, packer()->empty());
  }

  output_packer* packer() {
    if (run_.plan.output.format == compression::none) return nullptr;
    if (!packer_) packer_.emplace(run_.plan.output);
    return &*packer_;
  }

  // Pieces count their lines only for stats: the first error's line then needs the lines before it.
  void place_first_error(job& j, const piece_outcome& o) {
    if (o.result.errors == 0 || o.counted_lines || !core().error_unplaced()) return;
    const auto* pieces = dynamic_cast<const random_input*>(j.in.get());
    if (pieces == nullptr) return;
    const unsigned threads = std::max(run_.plan.cpu_workers, 4u);
    core().set_lines_before(pieces->count_lines(o.begin, line_unit(run_.config.stream.operation), threads));
  }

  stream_core& core() {
    if (!core_) core_.emplace(run_.config.stream, make_cpu_processor(1));
    return *core_;
  }

  input_report finish(job& j) {
    input_report r;
    if (reported_) {
      r = std::move(*reported_);
    } else {
      const stream_config& sc = run_.config.stream;
      if (sc.histogram && sc.operation == operation::stats) core().add_histogram(j.in->histogram.sum());
      r.stats = core().stats();
      r.stopped = core().stopped();
      if (sc.histogram && sc.operation == operation::stats && run_.config.top != 0) r.top = core().top(run_.config.top);
    }
    r.gpu_bytes = gpu_bytes_;
    if (j.in) {
      r.compressed = j.in->compressed;
      r.trailing_ignored = j.in->trailing_ignored;
    }
    return r;
  }

  void reset() {
    core_.reset();
    reported_.reset();
    stopped_ = false;
    emitted_ = false;
    seams_ = {};
    bytes_ = gpu_bytes_ = 0;
  }

  const run_context& run_;
  run_observer& observer_;
  run_report& report_;
  std::optional<stream_core> core_;
  std::optional<input_report> reported_;
  bool stopped_ = false;
  bool emitted_ = false;   // the input gave output
  seam_joiner seams_;      // a compressed file's parts
  std::unique_ptr<block_processor> seam_processor_;
  std::optional<output_packer> packer_;
  std::uint64_t bytes_ = 0, gpu_bytes_ = 0;
};

std::vector<std::unique_ptr<worker>> make_workers(const run_context& ctx, const engine_tuning& tuning,
                                                  std::vector<cpu_worker*>& cpus, std::vector<gpu_lane*>& lanes) {
  const run_plan& plan = ctx.plan;
  std::vector<std::unique_ptr<worker>> workers;
  const unsigned cpu_count = tuning.cpu_workers.value_or(plan.cpu_workers);
  for (unsigned w = 0; w < cpu_count; ++w)
    cpus.push_back(static_cast<cpu_worker*>(workers.emplace_back(std::make_unique<cpu_worker>(ctx, workers.size())).get()));
  if (plan.lanes_per_gpu != 0) {
    gpu_lane_config lane = tuning.lane;
    lane.give_back = !plan.gpu_only;
    lane.eager = plan.gpu_only;
    lane.cache = ctx.config.gpu_lanes;
    lane.run_pieces = std::max<std::uint64_t>(1, plan.gpu_run_bytes / plan.piece_bytes);
    lane.nth_usable = plan.all_devices;
    std::vector<int> devices = plan.devices;
    if (plan.all_devices)
      for (int d = 0; d < 16; ++d) devices.push_back(d);
    for (const int device : devices) {
      lane.device = device;
      // The limit is the GPU's: its lanes (one processor each) share it.
      const auto lanes_here = static_cast<std::uint64_t>(std::ranges::count(devices, device)) * plan.lanes_per_gpu;
      lane.device_memory_limit = ctx.config.stream.backend.device_memory_limit / lanes_here;
      for (unsigned l = 0; l < plan.lanes_per_gpu; ++l)
        lanes.push_back(static_cast<gpu_lane*>(workers.emplace_back(std::make_unique<gpu_lane>(ctx, workers.size(), lane)).get()));
    }
  }
  if (tuning.extra_workers)
    for (auto& w : tuning.extra_workers(ctx, workers.size())) workers.push_back(std::move(w));
  return workers;
}

}  // namespace

run_report run_engine(std::span<const input> inputs, const run_config& config, run_observer& observer,
                      const engine_tuning& tuning) {
  const auto t0 = std::chrono::steady_clock::now();
  const run_plan plan = tuning.plan ? *tuning.plan : plan_run(config);
  run_report report;
  if (inputs.empty()) return report;
  const operation op = config.stream.operation;
  const auto model = tuning.model;
  const unsigned cpu_count = tuning.cpu_workers.value_or(plan.cpu_workers);
  const bool force = tuning.force_gpus;
  // Small inputs: eight to a piece's budget, each at most a 32nd of a piece.
  board b(inputs.size(),
          board_limits{plan.ahead, plan.open_inputs, plan.small_ahead, plan.whole_bytes / 32, plan.results_batch}, 0, 0);
  run_context ctx{config, plan, inputs, b, tuning.hooks,
                  [&](std::uint64_t bytes) { return force || model.gpus_join(op, bytes, cpu_count); }};
  std::vector<cpu_worker*> cpus;
  std::vector<gpu_lane*> lanes;
  std::vector<std::unique_ptr<worker>> workers = make_workers(ctx, tuning, cpus, lanes);
  b.set_workers(workers.size(), static_cast<std::size_t>(std::ranges::count_if(
                                    workers, [](const auto& w) { return w->traits().takes_given_back; })));
  {
    std::vector<std::jthread> threads;
    // However the commit ends, the workers stop before the board goes away.
    struct stopper {
      board& b;
      std::vector<std::jthread>& threads;
      ~stopper() {
        b.cancel();
        threads.clear();  // joins
      }
    } stop{b, threads};
    for (const auto& w : workers) threads.emplace_back([&ctx, &w] { work(*w, ctx); });
    job_commit commit(ctx, observer, report);
    while (!b.finished())
      if (!commit.commit_front()) {
        report.ended_early = true;
        break;
      }
  }
  for (const cpu_worker* c : cpus) report.cpu_bytes += c->bytes();
  for (const gpu_lane* l : lanes) {
    report.gpu_bytes += l->bytes();
    report.gpu_startup_seconds = std::max(report.gpu_startup_seconds, l->startup_seconds());
    report.gpu_failed |= l->failed();
    report.gpu.gpu_memory_fallback |= l->out_of_memory() && !plan.gpu_only;
    add_counters(report.gpu, l->timings());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace internal

run_report run(std::span<const input> inputs, const run_config& config, run_observer& observer) {
  return internal::run_engine(inputs, config, observer, {});
}

}  // namespace gutf8
