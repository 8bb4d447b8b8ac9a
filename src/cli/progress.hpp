// What the CLI reports on stderr about the work itself: the progress bar (only on a
// terminal) and the --verbose per-stage timings.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace gutf8::cli {

using steady_clock = std::chrono::steady_clock;

// "12.3 MiB"
std::string human_bytes(std::uint64_t bytes);

// The bar's text, without the carriage return: "1006.0 / 1024.0 MiB  98%  1.23 GB/s  ETA 0:01"
// (done and total in one unit, the largest in which the total is at least 10), or "12.0 MiB  1.23 GB/s" without a total. Fields are left
// out from the end, then the text cut, so that it fits in `columns` - 1 characters: writing
// the last column makes some terminals wrap and leave a stale line behind at each redraw.
std::string progress_text(std::uint64_t done, std::optional<std::uint64_t> total,
                          steady_clock::duration elapsed, unsigned columns);

class progress_bar {
 public:
  // True when a bar may be shown: it was not disabled and stderr is a terminal.
  static bool wanted(bool enabled_by_options);

  progress_bar() = default;  // disabled until start()
  ~progress_bar() { clear(); }
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  // total: the sum of the inputs' sizes when all are regular files (gives the
  // percentage and the ETA).
  void start(std::optional<std::uint64_t> total);
  // Cheap enough to call per chunk: redraws at most 10 times a second, and not at all
  // during the first half second, so short runs never flicker.
  void advance(std::uint64_t bytes);
  // Erases the bar before a message is printed and at the end; the next update redraws it.
  void clear();

 private:
  void draw(steady_clock::time_point now);
  static unsigned terminal_columns();

  bool enabled_ = false;
  std::optional<std::uint64_t> total_;
  std::uint64_t done_ = 0;
  steady_clock::time_point start_{}, last_draw_{};
  bool shown_ = false;
};

// Time spent in each stage, for --verbose. process is the engine's run (its workers read and
// process the inputs), write the time this thread spent writing outputs inside it; h2d, kernels
// and d2h are the GPU lanes' share (CUDA events), staging their host copies through page-locked
// buffers. Stages overlap, so they add up to more than the total.
struct stage_times {
  steady_clock::duration process{}, write{};
  double h2d = 0, kernels = 0, d2h = 0, staging = 0;  // seconds
  double gpu_startup = 0;  // seconds: CUDA's start-up on the GPU lanes' threads, beside the CPU's work
  std::uint64_t bytes = 0, cpu_bytes = 0, gpu_bytes = 0;
  std::uint64_t gpu_decompressed = 0;  // text the GPU lanes decompressed (nvCOMP)
  bool gpu_memory_fallback = false;  // --backend=auto left the GPU for lack of its memory
  steady_clock::time_point start = steady_clock::now();

  [[nodiscard]] std::string report() const;  // one line, without "gutf8: "
};

// Adds the time until the end of its scope to one stage.
class stage_timer {
 public:
  explicit stage_timer(steady_clock::duration& stage) : stage_(stage) {}
  ~stage_timer() { stage_ += steady_clock::now() - begin_; }
  stage_timer(const stage_timer&) = delete;
  stage_timer& operator=(const stage_timer&) = delete;

 private:
  steady_clock::duration& stage_;
  steady_clock::time_point begin_ = steady_clock::now();
};

}  // namespace gutf8::cli
