#include "file/workers.hpp"

#include <chrono>
#include <cstring>
#include <utility>

#include "codec/cpu_block.hpp"
#include "codec/stream_core.hpp"
#include "cuda/cuda_block.hpp"
#include "file/on_threads.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

void free_ordinary(std::uint8_t* p) { std::default_delete<std::uint8_t[]>{}(p); }
void free_page_locked(std::uint8_t* p) { free_pinned(p); }

std::size_t output_room(operation op, std::uint64_t window) {
  const std::size_t width = output_width(op);
  return width == 0 ? 0 : width * static_cast<std::size_t>(window) + 3;
}

std::vector<std::uint64_t> histogram_for(const file_work& work) {
  return work.histogram ? std::vector<std::uint64_t>(code_space, 0) : std::vector<std::uint64_t>{};
}

// memcpy of src into dst by slices on `threads` threads.
void copy_on_threads(const std::uint8_t* src, std::span<std::uint8_t> dst, unsigned threads) {
  constexpr std::size_t slice = std::size_t{2} << 20;
  on_threads((dst.size() + slice - 1) / slice, threads, [&](std::uint64_t i, unsigned) {
    const std::size_t at = static_cast<std::size_t>(i) * slice;
    std::memcpy(dst.data() + at, src + at, std::min(slice, dst.size() - at));
  });
}

run_result finish_run(const piece_run& run, piece_outcome&& outcome, std::uint8_t* out,
                      std::function<void()> release) {
  run_result r;
  r.run = run;
  r.output = {out, out == nullptr ? 0 : outcome.result.written};
  r.outcome = std::move(outcome);
  r.release = std::move(release);
  return r;
}

}  // namespace

owned_bytes ordinary_bytes(std::size_t n) {
  return owned_bytes(std::make_unique_for_overwrite<std::uint8_t[]>(n).release(), free_ordinary);
}

owned_bytes pinned_bytes(std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(allocate_pinned(n));
  if (p == nullptr) throw error(errc::out_of_memory, "cannot page-lock " + std::to_string(n) + " bytes of host memory");
  return owned_bytes(p, free_page_locked);
}

std::pair<std::uint8_t*, std::function<void()>> output_pool::acquire() {
  std::unique_lock lock(m_);
  if (free_.empty() && (limit_ == 0 || all_.size() < limit_)) {
    lock.unlock();
    owned_bytes fresh = allocate_(bytes_);  // outside the lock: page-locking takes milliseconds
    lock.lock();
    free_.push_back(fresh.get());
    all_.push_back(std::move(fresh));
  }
  returned_.wait(lock, [&] { return !free_.empty(); });
  std::uint8_t* b = free_.back();
  free_.pop_back();
  return {b, [this, b] {
            {
              std::lock_guard hold(m_);
              free_.push_back(b);
            }
            returned_.notify_one();
          }};
}

// ------------------------------------------------------------------------------ CPU ----

cpu_worker::cpu_worker(const file_work& work)
    : work_(work),
      processor_(make_cpu_processor(1)),
      outputs_(output_room(work.op, work.plan->max_window()), 0, ordinary_bytes),
      histogram_(histogram_for(work)) {}

run_result cpu_worker::process(const piece_run& run) {
  const std::uint8_t* window = work_.source->window(run.first, scratch_);
  auto [out, release] = output_width(work_.op) == 0 ? std::pair<std::uint8_t*, std::function<void()>>{}
                                                     : outputs_.acquire();
  piece_outcome o = process_pieces(*processor_, work_.op, work_.policy, *work_.plan, run, window, out,
                                   histogram_.empty() ? nullptr : histogram_.data());
  bytes_ += o.result.consumed;
  return finish_run(run, std::move(o), out, std::move(release));
}

// ------------------------------------------------------------------------------ GPU ----

gpu_lane::gpu_lane(const file_work& work, const gpu_lane_config& config)
    : work_(work), config_(config), histogram_(histogram_for(work)) {}

gpu_lane::~gpu_lane() {
  if (config_.cache && keep_) gpu_lane_cache_access::give_back(*config_.cache, std::move(lane_));
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
  const auto t0 = std::chrono::steady_clock::now();
  if (config_.nth_usable) {
    const std::vector<int> usable = all_devices();
    if (config_.device >= static_cast<int>(usable.size())) {
      if (config_.device == 0 && !config_.give_back) throw error(errc::no_device, "no usable GPU for the CUDA backend");
      throw run_given_back(nullptr);  // fewer GPUs here than lanes were made for
    }
    config_.device = usable[static_cast<std::size_t>(config_.device)];
  }
  try {
    acquire_resources();
  } catch (...) {
    fail(std::current_exception());
  }
  timings_before_ = timings_of(*lane_.processor);
  keep_ = true;
  startup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void gpu_lane::acquire_resources() {
  const std::uint64_t window = config_.run_pieces * work_.plan->piece_bytes + piece_lead + piece_tail;
  const lane_shape shape{config_.device, config_.device_memory_limit, static_cast<std::size_t>(window),
                         output_room(work_.op, window)};
  if (config_.cache)
    if (std::optional<lane_resources> kept = gpu_lane_cache_access::take(*config_.cache, shape)) {
      lane_ = std::move(*kept);
      return;
    }
  options opt;
  opt.backend = backend::cuda;
  opt.device = config_.device;
  opt.threads = 1;
  opt.device_memory_limit = config_.device_memory_limit;
  lane_.shape = shape;
  lane_.processor = make_cuda_processor(opt, make_cpu_processor(1));
  lane_.input = pinned_bytes(shape.input_bytes);
  // Two outputs: one being written by the committer while the next run fills the other.
  if (shape.output_bytes != 0) lane_.outputs = std::make_unique<output_pool>(shape.output_bytes, 2, pinned_bytes);
  if (config_.cache) gpu_lane_cache_access::count_built(*config_.cache);
}

run_result gpu_lane::process(const piece_run& run) {
  try {
    if (config_.before_run) config_.before_run(run);
    auto [out, release] = lane_.outputs ? lane_.outputs->acquire() : std::pair<std::uint8_t*, std::function<void()>>{};
    std::optional<locked_window> held;
    const std::uint8_t* window = fill(run, held);
    piece_outcome o = process_pieces(*lane_.processor, work_.op, work_.policy, *work_.plan, run, window, out,
                                     histogram_.empty() ? nullptr : histogram_.data());
    bytes_ += o.result.consumed;
    return finish_run(run, std::move(o), out, std::move(release));
  } catch (const error& e) {
    keep_ = false;  // an output it took may not have come back
    // The file itself cannot be read: that is no GPU failure, and no other worker would do better.
    if (e.code() == errc::io_failure) throw;
    fail(std::current_exception());
  } catch (...) {
    fail(std::current_exception());
  }
}

gpu_lane::locked_window::~locked_window() {
  if (locked_) unregister_host(map_.at(0));
}

bool gpu_lane::locked_window::lock(std::size_t length) { return locked_ = register_host(map_.at(0), length); }

const std::uint8_t* gpu_lane::fill(const piece_run& run, std::optional<locked_window>& held) {
  const std::uint64_t from = run.window_begin(*work_.plan);
  const auto length = static_cast<std::size_t>(run.window_end(*work_.plan) - from);
  if (config_.feed == gpu_feed::register_) {
    if (std::optional<mapped_range> map = work_.source->map_range(from, length)) {
      held.emplace(std::move(*map));
      if (held->lock(length)) return held->data();
      held.reset();  // the system will not lock these pages: copy them instead
    }
  }
  const std::span<std::uint8_t> buffer(lane_.input.get(), length);
  if (config_.feed == gpu_feed::copy_mapped) {
    if (const std::optional<mapped_range> map = work_.source->map_range(from, length)) {
      copy_on_threads(map->at(0), buffer, config_.fill_threads);
      return lane_.input.get();
    }
  }
  work_.source->read(buffer, from, config_.fill_threads);
  return lane_.input.get();
}

// The processor counts since it was built: this run's part.
stream_timings gpu_lane::timings() const {
  return lane_.processor ? counters_since(timings_of(*lane_.processor), timings_before_) : stream_timings{};
}

void add_counters(stream_timings& sum, const stream_timings& t) {
  sum.h2d_seconds += t.h2d_seconds;
  sum.kernel_seconds += t.kernel_seconds;
  sum.d2h_seconds += t.d2h_seconds;
  sum.staging_seconds += t.staging_seconds;
  sum.gpu_bytes += t.gpu_bytes;
}

stream_timings counters_since(const stream_timings& now, const stream_timings& before) {
  stream_timings t = now;
  t.h2d_seconds -= before.h2d_seconds;
  t.kernel_seconds -= before.kernel_seconds;
  t.d2h_seconds -= before.d2h_seconds;
  t.staging_seconds -= before.staging_seconds;
  t.gpu_bytes -= before.gpu_bytes;
  return t;
}

}  // namespace gutf8::internal
