#include "engine/workers.hpp"

#include <algorithm>
#include <optional>

#include "cpu/cpu_block.hpp"
#include "codec/stream_core.hpp"
#include "engine/compressed.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

// A stream core's view of a processor it does not own (a worker's, used for one input).
class borrowed_processor final : public block_processor {
 public:
  explicit borrowed_processor(block_processor& p) : p_(p) {}
  block_result process(const block_request& rq) override { return p_.process(rq); }

 private:
  block_processor& p_;
};

bool is_input_failure(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const error& x) {
    return x.code() == errc::io_failure;
  } catch (...) {
    return false;
  }
}

input_report report_of(const stream_core& core, const run_config& config) {
  input_report r;
  r.stats = core.stats();
  r.stopped = core.stopped();
  if (config.stream.histogram && config.stream.operation == operation::stats && config.top != 0)
    r.top = core.top(config.top);
  const auto listed = core.listed_errors();
  r.listed_errors.assign(listed.begin(), listed.end());
  return r;
}

run_result finish(const piece_run& run, piece_outcome&& outcome, std::uint8_t* out, std::function<void()> release) {
  run_result r;
  r.run = run;
  r.output = {out, out == nullptr ? 0 : outcome.result.written};
  r.outcome = std::move(outcome);
  r.release = std::move(release);
  return r;
}

// ----------------------------------------------------------------------- streams ----

// One stream's chunks through one stream core, on the reader's thread (configs that need every
// byte in one stream): each chunk's output is published as it comes, the report with the last.
void read_as_one_stream(worker& w, const run_context& run, job& j, stream_input& in, std::uint64_t& k) {
  const run_config& config = run.config;
  in.core.emplace(config.stream, make_processor(config.stream.backend));
  std::vector<std::uint8_t> bytes(run.plan.chunk_bytes);
  const auto stop = [&] { return run.work.stopping(j); };
  for (;; ++k) {
    if (!run.work.reserve_chunk(j, {})) return;
    const std::size_t got = in.read(bytes, stop);
    const bool at_end = got < bytes.size() || run.work.stopping(j);
    auto [out, release] = fresh_output(in.core->max_output(got));
    run_result r;
    r.run = {k, 1};
    r.accounted = true;
    const std::size_t written = in.core->feed(std::span(bytes).first(got), at_end, out);
    r.output = {out, written};
    r.release = std::move(release);
    r.outcome.result.consumed = got;
    const bool last = at_end || in.core->stopped();
    if (last) r.report = std::make_unique<input_report>(report_of(*in.core, config));
    w.pack_output(r);
    run.work.chunk_processed(j, std::move(r));
    if (last) return;
  }
}

// Work for a reader to do while its budget is spent (so that one worker alone still gets through).
std::function<bool()> helper(worker& w, const run_context& run) {
  return [&w, &run] {
    const std::optional<task> t = run.work.try_claim(w.traits());
    if (!t) return false;
    try {
      run_result r = w.process(*t->j, t->run);
      w.pack_output(r);
      run.work.publish(*t->j, std::move(r));
    } catch (...) {
      run.work.fail(*t->j, t->run, std::current_exception(), !is_input_failure(std::current_exception()));
    }
    return true;
  };
}

// A stream's reader: reads chunks cut at unit starts, which any worker may process, and while its
// budget is spent does the work that is there.
void read_chunks(worker& w, const run_context& run, job& j, stream_input& in, std::uint64_t& k) {
  const bool utf32 = run.config.stream.operation == operation::encode;
  const auto stop = [&] { return run.work.stopping(j); };
  const std::function<bool()> help = helper(w, run);
  for (;; ++k) {
    if (!run.work.reserve_chunk(j, help)) return;
    chunk c = in.next_chunk(run.plan.chunk_bytes, utf32, stop);
    const bool last = c.at_end || run.work.stopping(j);
    c.at_end = last;
    if (last) c.end = c.bytes.size();
    in.put(k, std::move(c));
    run.work.chunk_readable(j);
    if (last) return;
  }
}

void read_stream(worker& w, const run_context& run, job& j) {
  std::uint64_t k = 0;  // the chunk being read
  try {
    if (auto* parts = dynamic_cast<compressed_input*>(j.in.get())) {
      read_parts(run, j, *parts, k, helper(w, run));
    } else {
      auto& in = static_cast<stream_input&>(*j.in);
      if (run.plan.pieces) read_chunks(w, run, j, in, k);
      else read_as_one_stream(w, run, j, in, k);
    }
  } catch (...) {
    const std::exception_ptr why = std::current_exception();
    run.work.fail(j, piece_run{k, 0}, why, !is_input_failure(why));
    return;
  }
  run.work.chunks_end(j);
}

// ----------------------------------------------------------------------- opening ----

// Opens the job's input and starts it: a small input is processed at once (or left for a GPU
// lane), a big one is cut into pieces for everyone, a stream is read here to its end.
void open_job(worker& w, const run_context& run, job& j) {
  opened_input o;
  try {
    o = open_input(run.inputs[j.index], run.plan, run.config.stream.operation == operation::encode, w.opener());
  } catch (...) {
    run.work.open_failed(j, std::current_exception());
    return;
  }
  j.in = std::move(o.in);
  switch (o.shape) {
    case job_shape::whole:
      if (!run.plan.gpu_only) {
        std::optional<run_result> r;
        try {
          r = w.process(j, piece_run{0, 1});
          w.pack_output(*r);
        } catch (...) {
          run.work.opened(j, job_shape::whole, 1, 0, false, o.whole.size());
          run.work.fail(j, piece_run{0, 1}, std::current_exception(), !is_input_failure(std::current_exception()));
          return;
        }
        run.work.opened_whole(j, std::move(*r), o.whole.size());
      } else {
        j.gpu = true;
        run.work.opened(j, job_shape::whole, 1, 1, false, o.whole.size());
      }
      return;
    case job_shape::pieces:
      j.gpu = run.plan.gpu_only || (run.gpus_take_pieces && run.gpus_take_pieces(static_cast<random_input&>(*j.in).plan().total));
      run.work.opened(j, job_shape::pieces, o.pieces, o.pieces, o.holds_fd);
      return;
    case job_shape::chunks:
      j.gpu = run.plan.gpu_only && run.plan.pieces;
      run.work.opened(j, job_shape::chunks, 0, 0, o.holds_fd);
      read_stream(w, run, j);
      return;
    case job_shape::unopened:
      break;
  }
}

// Claimed runs of `jobs` that did not finish: given back (the worker stops), or failed (it stops
// when the failure is not the input's).
bool unfinished(worker& w, const run_context& run, std::span<job* const> jobs, const piece_run& pr,
                const std::exception_ptr& why) {
  try {
    std::rethrow_exception(why);
  } catch (const run_given_back&) {
    for (job* j : jobs) run.work.give_back(*j, pr);
    if (run.hooks.after) run.hooks.after(w, worker_event::gave_back);
    return false;
  } catch (...) {
    const bool fatal = !is_input_failure(why);
    for (job* j : jobs) run.work.fail(*j, pr, why, fatal);
    return !fatal;
  }
}

// A batch of whole jobs: each published (or given back, or failed) as a run of its own would be.
bool run_batch(worker& w, const run_context& run, const task& t) {
  const piece_run one{0, 1};
  std::vector<run_result> results;
  try {
    results = w.process_batch(t.batch);
    for (run_result& r : results) w.pack_output(r);
  } catch (...) {
    return unfinished(w, run, t.batch, one, std::current_exception());
  }
  for (std::size_t k = 0; k < t.batch.size(); ++k) {
    if (run.hooks.before_publish) run.hooks.before_publish(w, *t.batch[k], one);
    run.work.publish(*t.batch[k], std::move(results[k]));
  }
  return true;
}

// Runs one claimed task; false when the worker must stop (a fatal failure, or it gave back).
bool run_task(worker& w, const run_context& run, const task& t) {
  if (t.what == task::kind::open) {
    open_job(w, run, *t.j);
    return true;
  }
  if (!t.batch.empty()) return run_batch(w, run, t);
  try {
    run_result r = w.process(*t.j, t.run);
    w.pack_output(r);
    if (run.hooks.before_publish) run.hooks.before_publish(w, *t.j, t.run);
    run.work.publish(*t.j, std::move(r));
    return true;
  } catch (...) {
    return unfinished(w, run, std::span(&t.j, 1), t.run, std::current_exception());
  }
}

}  // namespace

// ---------------------------------------------------------------------- processing ----

std::size_t output_room(operation op, std::uint64_t window) {
  const std::size_t width = output_width(op);
  return width == 0 ? 0 : width * static_cast<std::size_t>(window) + 3;
}

run_result process_whole(block_processor& processor, std::span<const std::uint8_t> data, const run_config& config) {
  stream_core core(config.stream, std::make_unique<borrowed_processor>(processor), /*single_block=*/true);
  auto [out, release] = fresh_output(core.max_output(data.size()));
  const std::size_t written = core.feed(data, true, out);
  run_result r;
  r.run = {0, 1};
  r.accounted = true;
  r.output = {out, written};
  r.release = std::move(release);
  r.report = std::make_unique<input_report>(report_of(core, config));
  r.outcome.result.consumed = core.stats().input.bytes;
  return r;
}

piece_outcome process_chunk(block_processor& processor, const run_config& config, const chunk& c,
                            std::uint8_t* out, std::uint64_t* histogram) {
  piece_outcome o = process_counted(processor, config.stream.operation, config.stream.policy, c.bytes.data(),
                                    c.bytes.size(), c.end, c.at_end, out, histogram);
  o.begin = c.offset;
  return o;
}

// ------------------------------------------------------------------------ worker ----

// A worker processes the small inputs it opens at once unless the GPU lanes take them all.
worker::worker(const run_context& run, std::size_t id) : run_(run), id_(id), opener_(!run.plan.gpu_only) {}
worker::~worker() = default;

std::vector<run_result> worker::process_batch(std::span<job* const> jobs) {
  std::vector<run_result> results;
  results.reserve(jobs.size());
  for (job* j : jobs) results.push_back(process(*j, piece_run{0, 1}));
  return results;
}

void worker::pack_output(run_result& r) {
  if (run_.plan.output.format == compression::none || r.output.empty()) return;
  if (!packer_) packer_ = std::make_unique<output_packer>(run_.plan.output);
  packer_->pack(r);
}

// --------------------------------------------------------------------------- CPU ----

cpu_worker::cpu_worker(const run_context& run, std::size_t id)
    : worker(run, id), processor_(make_cpu_processor(1)) {
  traits_.opens = true;
  traits_.processes = !run.plan.gpu_only;
}

cpu_worker::~cpu_worker() = default;

run_result cpu_worker::process(job& j, const piece_run& run) {
  const operation op = run_.config.stream.operation;
  const bool counts = run_.config.stream.histogram && op == operation::stats;
  if (auto* whole = dynamic_cast<whole_input*>(j.in.get())) {
    run_result r = process_whole(*processor_, whole->bytes(), run_.config);
    bytes_ += whole->bytes().size();
    return r;
  }
  if (auto* pieces = dynamic_cast<random_input*>(j.in.get())) {
    const std::uint8_t* window = pieces->window(run, scratch_);
    if (op == operation::repair && pieces->in_place())
      if (std::optional<run_result> r = valid_in_place(*pieces, run, window)) return std::move(*r);
    if (!piece_outputs_) {  // room for the largest pieces any file of the run gets (run_plan::pieces_of)
      const piece_plan largest{0, run_.plan.piece_bytes * run_.plan.piece_growth};
      piece_outputs_ = std::make_unique<output_pool>(output_room(op, largest.max_window()), 0, ordinary_bytes);
    }
    auto [out, release] = output_width(op) == 0 ? std::pair<std::uint8_t*, std::function<void()>>{} : piece_outputs_->acquire();
    piece_outcome o = process_pieces(*processor_, op, run_.config.stream.policy, pieces->plan(), run, window, out,
                                     counts ? pieces->histogram.for_worker(id()) : nullptr);
    bytes_ += o.result.consumed;
    return finish(run, std::move(o), out, std::move(release));
  }
  if (auto* parts = dynamic_cast<compressed_input*>(j.in.get())) {
    if (!parts_) parts_ = std::make_unique<part_worker>();
    run_result r = parts_->process(*parts, run, *processor_, run_, counts ? parts->histogram.for_worker(id()) : nullptr);
    bytes_ += r.outcome.result.consumed;
    return r;
  }
  auto& stream = static_cast<stream_input&>(*j.in);
  chunk c = stream.take(run.first);
  if (!chunk_outputs_) chunk_outputs_ = std::make_unique<output_pool>(output_room(op, run_.plan.chunk_bytes + 4), 0, ordinary_bytes);
  auto [out, release] = output_width(op) == 0 ? std::pair<std::uint8_t*, std::function<void()>>{} : chunk_outputs_->acquire();
  piece_outcome o = process_chunk(*processor_, run_.config, c, out, counts ? stream.histogram.for_worker(id()) : nullptr);
  stream.recycle(std::move(c.bytes));
  bytes_ += o.result.consumed;
  return finish(run, std::move(o), out, std::move(release));
}

// A valid piece's repair is its own bytes: validated, then handed to the commit where they lie
// (memory, the map), with no copy through an output buffer; a piece with errors is repaired.
// A try that finds errors costs a validate, and errors come in stretches: after one, the next
// 1, 2, 4 ... 64 pieces of this worker are repaired without a try.
std::optional<run_result> cpu_worker::valid_in_place(const random_input& in, const piece_run& run,
                                                     const std::uint8_t* window) {
  if (untried_ != 0) {
    --untried_;
    return std::nullopt;
  }
  piece_outcome o = process_pieces(*processor_, operation::validate, error_policy::replace, in.plan(), run, window,
                                   nullptr);
  const bool valid = o.result.errors == 0;
  backoff_ = valid ? 0 : std::clamp<std::uint32_t>(2 * backoff_, 1, 64);
  untried_ = backoff_;
  if (!valid) return std::nullopt;
  o.result.written = o.result.consumed;
  const std::uint8_t* bytes = window + (o.begin - run.window_begin(in.plan()));
  bytes_ += o.result.consumed;
  run_result r = finish(run, std::move(o), nullptr, {});
  r.output = {bytes, r.outcome.result.written};
  return r;
}

// -------------------------------------------------------------------------- loop ----

void work(worker& w, const run_context& run) {
  std::function<void()> waits;
  if (run.hooks.after) waits = [&] { run.hooks.after(w, worker_event::waits); };
  bool started = false;
  try {
    w.start();
    started = true;
  } catch (const run_given_back&) {
  } catch (...) {
    run.work.fail_run(std::current_exception());
  }
  if (started)
    while (const std::optional<task> t = run.work.claim(w.traits(), waits))
      if (!run_task(w, run, *t)) break;
  run.work.worker_ended(w.traits());
  if (run.hooks.after) run.hooks.after(w, worker_event::ended);
}

}  // namespace gutf8::internal
