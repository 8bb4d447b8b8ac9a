// What the file pipeline's tests share: a temporary file, and a run processed as a GPU lane fills
// its buffer (the window copied out with pread) on a CPU processor, so test workers run without a GPU.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "codec/block.hpp"
#include "file/workers.hpp"

namespace gutf8::test {

// A temporary file holding `text` after `prefix` bytes the run must skip.
class temp_file {
 public:
  explicit temp_file(const std::string& text, const std::string& prefix = {}) {
    char name[] = "/tmp/gutf8_file_pipeline_XXXXXX";
    fd_ = ::mkstemp(name);
    path_ = name;
    const std::string all = prefix + text;
    EXPECT_EQ(::write(fd_, all.data(), all.size()), static_cast<ssize_t>(all.size()));
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// The run's window read with pread and processed on `processor` (single-thread) into `out`, which
// must hold output_width(op) * window + 3 bytes; release goes with the result.
inline internal::run_result process_copied_run(const internal::file_work& work, internal::block_processor& processor,
                                               std::vector<std::uint64_t>& histogram, const internal::piece_run& run,
                                               std::uint8_t* out, std::function<void()> release) {
  const std::uint64_t from = run.window_begin(*work.plan);
  std::vector<std::uint8_t> window(run.window_end(*work.plan) - from);
  work.source->read(window, from, 2);
  internal::run_result r;
  r.run = run;
  r.outcome = internal::process_pieces(processor, work.op, work.policy, *work.plan, run, window.data(), out,
                                       histogram.empty() ? nullptr : histogram.data());
  r.output = {out, out == nullptr ? 0 : r.outcome.result.written};
  r.release = std::move(release);
  return r;
}

// Output room for one run of work (none for validate and stats).
inline std::size_t run_output_bytes(const internal::file_work& work, const internal::piece_run& run) {
  const std::size_t width = internal::output_width(work.op);
  return width == 0 ? 0 : width * (run.window_end(*work.plan) - run.window_begin(*work.plan)) + 3;
}

}  // namespace gutf8::test
