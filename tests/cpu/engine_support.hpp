// What the input engine's tests share: temporary files, an observer that keeps what a run gives
// per input (checking the input order of the calls), and a worker that takes runs of many pieces
// as a GPU lane does, on a CPU processor, so that worker mixes run without a GPU.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cpu/cpu_block.hpp"
#include "engine/run.hpp"
#include "gutf8/engine.hpp"

namespace gutf8::test {

// A temporary file holding `text` after `prefix` bytes a descriptor's run must skip.
class temp_file {
 public:
  explicit temp_file(const std::string& text, const std::string& prefix = {}) {
    char name[] = "/tmp/gutf8_engine_XXXXXX";
    fd_ = ::mkstemp(name);
    path_ = name;
    const std::string all = prefix + text;
    EXPECT_EQ(::write(fd_, all.data(), all.size()), static_cast<ssize_t>(all.size()));
    EXPECT_EQ(::lseek(fd_, static_cast<off_t>(prefix.size()), SEEK_SET), static_cast<off_t>(prefix.size()));
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

// A temporary folder, removed with what it holds.
class temp_dir {
 public:
  temp_dir() {
    char name[] = "/tmp/gutf8_engine_dir_XXXXXX";
    path_ = ::mkdtemp(name);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// What a run gave each input; every call must come in input order.
struct kept_run : run_observer {
  struct one {
    std::string out;
    std::optional<input_report> report;
    std::optional<std::string> failure;  // the error's message
    errc code = errc::ok;
  };
  std::map<std::size_t, one> by_input;
  std::size_t last = 0;
  bool order_kept = true;
  std::function<bool(std::size_t, const std::string&)> keep_going;  // output(): false ends the run

  void saw(std::size_t index) {
    order_kept = order_kept && index >= last;
    last = index;
  }
  bool output(std::size_t index, std::span<const std::byte> bytes) override {
    saw(index);
    by_input[index].out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return !keep_going || keep_going(index, by_input[index].out);
  }
  void done(std::size_t index, const input_report& report) override {
    saw(index);
    EXPECT_FALSE(by_input[index].report) << "input " << index << " reported twice";
    by_input[index].report = report;
  }
  void failed(std::size_t index, const error& why) override {
    saw(index);
    by_input[index].failure = why.what();
    by_input[index].code = why.code();
  }
};

// Takes runs of `pieces` pieces, copies them out with pread as a GPU lane fills its buffer, and
// processes them on a single-thread CPU processor; fails as told after `fail_after` runs.
class batch_worker final : public internal::worker {
 public:
  enum class failure { none, give_back, fatal };
  batch_worker(const internal::run_context& run, std::size_t id, std::uint64_t pieces, failure fail = failure::none,
               int fail_after = 0)
      : worker(run, id), fail_(fail), fail_after_(fail_after), processor_(internal::make_cpu_processor(1)) {
    traits_.opens = true;
    traits_.processes = true;
    traits_.gpu = true;
    traits_.takes_given_back = fail == failure::none;
    traits_.run_pieces = pieces;
  }
  [[nodiscard]] const internal::worker_traits& traits() const noexcept override { return traits_; }

  internal::run_result process(internal::job& j, const internal::piece_run& run) override {
    if (fail_ != failure::none && runs_++ == fail_after_) {
      const auto why = std::make_exception_ptr(error(errc::device_failure, "planted device failure"));
      if (fail_ == failure::give_back) throw internal::run_given_back(why);
      std::rethrow_exception(why);
    }
    const run_config& config = run_.config;
    if (auto* whole = dynamic_cast<internal::whole_input*>(j.in.get()))
      return internal::process_whole(*processor_, whole->bytes(), config);
    internal::run_result r;
    r.run = run;
    if (auto* pieces = dynamic_cast<internal::random_input*>(j.in.get())) {
      const internal::piece_plan& plan = pieces->plan();
      std::vector<std::uint8_t> window(run.window_end(plan) - run.window_begin(plan));
      pieces->read(window, run.window_begin(plan), 2);
      auto out = std::make_shared<std::vector<std::uint8_t>>(internal::output_room(config.stream.operation, window.size()));
      r.outcome = internal::process_pieces(*processor_, config.stream.operation, config.stream.policy, plan, run,
                                           window.data(), out->empty() ? nullptr : out->data(),
                                           counts() ? pieces->histogram.for_worker(id()) : nullptr);
      r.output = {out->data(), out->empty() ? 0 : r.outcome.result.written};
      r.release = [out] {};  // the output lives until the committer hands it back
      return r;
    }
    auto& stream = static_cast<internal::stream_input&>(*j.in);
    const internal::chunk c = stream.take(run.first);
    auto out = std::make_shared<std::vector<std::uint8_t>>(internal::output_room(config.stream.operation, c.bytes.size()));
    r.outcome = internal::process_chunk(*processor_, config, c, out->empty() ? nullptr : out->data(),
                                        counts() ? stream.histogram.for_worker(id()) : nullptr);
    r.output = {out->data(), out->empty() ? 0 : r.outcome.result.written};
    r.release = [out] {};
    return r;
  }

 private:
  [[nodiscard]] bool counts() const {
    return run_.config.stream.histogram && run_.config.stream.operation == operation::stats;
  }
  internal::worker_traits traits_;
  failure fail_;
  int fail_after_;
  int runs_ = 0;
  std::unique_ptr<internal::block_processor> processor_;
};

}  // namespace gutf8::test
