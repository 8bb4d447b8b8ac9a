#include "engine/lanes.hpp"

#include <chrono>

#include "cpu/cpu_block.hpp"
#include "codec/gpu_backend.hpp"
#include "engine/batches.hpp"
#include "engine/compressed.hpp"
#include "engine/gpu_parts.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {

gpu_lane::gpu_lane(const run_context& run, std::size_t id, const gpu_lane_config& config)
    : worker(run, id), config_(config) {
  traits_.opens = false;
  traits_.processes = false;
  traits_.gpu = true;
  traits_.takes_given_back = false;  // its outputs are bounded
  traits_.run_pieces = config_.run_pieces;
  if (run.plan.gpu_only && batch_settles(run.config)) {
    traits_.batch_inputs = run.plan.gpu_batch_inputs;
    traits_.batch_bytes = std::min(run.plan.gpu_batch_bytes, window_bytes());
  }
}

std::uint64_t gpu_lane::window_bytes() const noexcept {
  return std::max<std::uint64_t>(config_.run_pieces * run_.plan.piece_bytes, run_.plan.chunk_bytes) + piece_lead +
         piece_tail + 4;
}

gpu_lane::~gpu_lane() {
  parts_.reset();  // before its processor goes to the cache
  if (config_.cache && keep_) lane_cache::give_back(*config_.cache, std::move(lane_));
}

void gpu_lane::fail(std::exception_ptr why) {
  failed_ = true;
  keep_ = false;
  try {
    std::rethrow_exception(why);
  } catch (const error& e) {
    out_of_memory_ = e.code() == errc::out_of_memory;
  } catch (...) {
  }
  if (config_.give_back) throw run_given_back(std::move(why));
  std::rethrow_exception(why);
}

void gpu_lane::start() {
  if (config_.eager) build();
}

void gpu_lane::build() {
  if (built_) return;
  built_ = true;
  const auto t0 = std::chrono::steady_clock::now();
  if (config_.nth_usable) {
    const std::vector<int> usable = all_devices();
    if (config_.device >= static_cast<int>(usable.size())) {
      if (config_.device == 0 && !config_.give_back) throw error(errc::no_device, "no usable GPU for the CUDA backend");
      throw run_given_back(nullptr);  // fewer GPUs here than lanes were made for
    }
    config_.device = usable[static_cast<std::size_t>(config_.device)];
  }
  const operation op = run_.config.stream.operation;
  const std::uint64_t window = window_bytes();
  const lane_shape shape{config_.device, config_.device_memory_limit, static_cast<std::size_t>(window),
                         output_room(op, window)};
  try {
    if (config_.cache)
      if (std::optional<lane_resources> kept = lane_cache::take(*config_.cache, shape)) lane_ = std::move(*kept);
    if (!lane_.processor) {
      options opt;
      opt.backend = backend::cuda;
      opt.device = config_.device;
      opt.threads = 1;
      opt.device_memory_limit = config_.device_memory_limit;
      lane_.shape = shape;
      lane_.processor = make_gpu_processor(opt, make_cpu_processor(1));
      lane_.input = pinned_bytes(shape.input_bytes);
      // Two outputs: one being written by the committer while the next piece run fills the other.
      if (shape.output_bytes != 0) lane_.outputs = std::make_unique<output_pool>(shape.output_bytes, 2, pinned_bytes);
      if (config_.cache) lane_cache::count_built(*config_.cache);
    }
  } catch (...) {
    fail(std::current_exception());
  }
  timings_before_ = lane_.processor->timings();
  keep_ = true;
  startup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

run_result gpu_lane::process(job& j, const piece_run& run) {
  build();
  try {
    if (config_.before_run) config_.before_run(j, run);
    return process_run(j, run);
  } catch (...) {
    failed_run();
  }
}

std::vector<run_result> gpu_lane::process_batch(std::span<job* const> jobs) {
  build();
  try {
    const piece_run one{0, 1};
    if (config_.before_run)
      for (job* j : jobs) config_.before_run(*j, one);
    const std::span<std::uint8_t> buffer(lane_.input.get(), lane_.shape.input_bytes);
    const std::uint64_t before = bytes_;  // process_run counts the inputs that go alone
    std::vector<run_result> results =
        settle_batch(*lane_.processor, buffer, jobs, run_.config, [&](job& j) { return process_run(j, one); });
    bytes_ = before;
    for (run_result& r : results) {
      r.gpu = true;
      bytes_ += r.outcome.result.consumed;
    }
    return results;
  } catch (...) {
    failed_run();
  }
}

void gpu_lane::failed_run() {
  try {
    throw;
  } catch (const error& e) {
    keep_ = false;  // an output it took may not have come back
    // The input itself cannot be read: that is no GPU failure, and no other worker would do better.
    if (e.code() == errc::io_failure) throw;
    fail(std::current_exception());
  } catch (...) {
    fail(std::current_exception());
  }
}

run_result gpu_lane::process_run(job& j, const piece_run& run) {
  const operation op = run_.config.stream.operation;
  const bool counts = run_.config.stream.histogram && op == operation::stats;
  block_processor& processor = *lane_.processor;
  if (auto* parts = dynamic_cast<compressed_input*>(j.in.get())) {
    if (!parts_) parts_ = std::make_unique<gpu_part_worker>();
    const std::span<std::uint8_t> buffer(lane_.input.get(), lane_.shape.input_bytes);
    run_result r = parts_->process(*parts, run, processor, buffer, config_.fill_threads, run_,
                                   counts ? parts->histogram.for_worker(id()) : nullptr);
    r.gpu = true;
    bytes_ += r.outcome.result.consumed;
    return r;
  }
  if (auto* whole = dynamic_cast<whole_input*>(j.in.get())) {
    run_result r = process_whole(processor, whole->bytes(), run_.config);
    r.gpu = true;
    bytes_ += whole->bytes().size();
    return r;
  }
  auto [out, release] = lane_.outputs ? lane_.outputs->acquire() : std::pair<std::uint8_t*, std::function<void()>>{};
  piece_outcome o;
  if (auto* pieces = dynamic_cast<random_input*>(j.in.get())) {
    const piece_plan& plan = pieces->plan();
    const std::uint64_t from = run.window_begin(plan);
    const std::span<std::uint8_t> buffer(lane_.input.get(), static_cast<std::size_t>(run.window_end(plan) - from));
    pieces->read(buffer, from, config_.fill_threads);
    o = process_pieces(processor, op, run_.config.stream.policy, plan, run, buffer.data(), out,
                       counts ? pieces->histogram.for_worker(id()) : nullptr);
  } else {
    auto& stream = static_cast<stream_input&>(*j.in);
    chunk c = stream.take(run.first);
    o = process_chunk(processor, run_.config, c, out, counts ? stream.histogram.for_worker(id()) : nullptr);
    stream.recycle(std::move(c.bytes));
  }
  bytes_ += o.result.consumed;
  run_result r;
  r.run = run;
  r.output = {out, out == nullptr ? 0 : o.result.written};
  r.outcome = std::move(o);
  r.release = std::move(release);
  r.gpu = true;
  return r;
}

// The processor counts since it was built: this piece run's part.
stream_timings gpu_lane::timings() const {
  stream_timings t = lane_.processor ? counters_since(lane_.processor->timings(), timings_before_) : stream_timings{};
  t.gpu_decompressed_bytes = parts_ ? parts_->decompressed_bytes() : 0;
  return t;
}

void add_counters(stream_timings& sum, const stream_timings& t) {
  sum.h2d_seconds += t.h2d_seconds;
  sum.kernel_seconds += t.kernel_seconds;
  sum.d2h_seconds += t.d2h_seconds;
  sum.staging_seconds += t.staging_seconds;
  sum.gpu_bytes += t.gpu_bytes;
  sum.gpu_decompressed_bytes += t.gpu_decompressed_bytes;
}

stream_timings counters_since(const stream_timings& now, const stream_timings& before) {
  stream_timings t = now;
  t.h2d_seconds -= before.h2d_seconds;
  t.kernel_seconds -= before.kernel_seconds;
  t.d2h_seconds -= before.d2h_seconds;
  t.staging_seconds -= before.staging_seconds;
  t.gpu_bytes -= before.gpu_bytes;
  t.gpu_decompressed_bytes -= before.gpu_decompressed_bytes;
  return t;
}

}  // namespace gutf8::internal
