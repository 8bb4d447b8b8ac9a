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

  bool enabled_ = false;
  std::optional<std::uint64_t> total_;
  std::uint64_t done_ = 0;
  steady_clock::time_point start_{}, last_draw_{};
  bool shown_ = false;
};

// Time spent in each stage, for --verbose. read and write are the busy times of the reader and
// writer threads, process the time this thread spent in the library (feed); h2d, kernels and d2h
// are the GPU's share of it (CUDA events, gutf8::stream::timings), staging the host copies
// through page-locked buffers. Stages overlap, so they add up to more than the total.
struct stage_times {
  steady_clock::duration read{}, process{}, write{};
  double h2d = 0, kernels = 0, d2h = 0, staging = 0;  // seconds
  double gpu_startup = 0;  // seconds: CUDA's start-up on the GPU lanes' threads, beside the CPU's work
  std::uint64_t bytes = 0, gpu_bytes = 0;
  bool gpu_memory_fallback = false;  // --backend=auto left the GPU for lack of its memory
  unsigned workers = 0;  // > 1: read and process are summed over this many piece workers
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
