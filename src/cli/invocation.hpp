// One invocation of gutf8 (a run of one command): the options, the exit status so far, stderr messages, standard
// output, and the one run of the library's input engine over every input named.
#pragma once

#include <cstdint>
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/options.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::cli {

// SPEC §2. The final status of a run is the most severe one seen (3 > 1 > 0).
enum exit_status : int { exit_ok = 0, exit_invalid = 1, exit_usage = 2, exit_failure = 3 };

// What one input gave: its counts, for stats --top its most frequent code points, and for
// --list-errors its first error units.
class input_result {
 public:
  input_result(const text_stats& stats, std::vector<code_point_count> top, std::vector<error_unit> errors = {})
      : stats_(stats), top_(std::move(top)), errors_(std::move(errors)) {}
  [[nodiscard]] const text_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::span<const error_unit> listed_errors() const noexcept { return errors_; }
  // The n most frequent (at most the --top the run was given).
  [[nodiscard]] std::vector<code_point_count> top(std::size_t n) const {
    return {top_.begin(), top_.begin() + static_cast<std::ptrdiff_t>(std::min(n, top_.size()))};
  }

 private:
  text_stats stats_;
  std::vector<code_point_count> top_;
  std::vector<error_unit> errors_;
};

class invocation {
 public:
  explicit invocation(const cli_options& options);

  [[nodiscard]] const cli_options& options() const noexcept { return options_; }
  void raise(exit_status status) noexcept;
  // Whether error units in the input make the exit status 1: always for validate, for
  // decode/encode only under the strict policy, never for stats.
  [[nodiscard]] bool invalid_input_fails() const noexcept;
  [[nodiscard]] exit_status status() const noexcept { return status_; }

  void error(std::string_view text);   // "gutf8: TEXT" on stderr
  void report(std::string_view line);  // a line on stderr as is (validate's report)
  fd_writer& out() noexcept { return stdout_; }

  [[nodiscard]] stream_config config(operation op, bool histogram = false) const;

  // Runs every input through one gutf8::run (include/gutf8/engine.hpp); the outputs go to sink in
  // input order (none for validate/stats). done(name, result) runs, in input order, when an input
  // has ended or strict mode stopped it; top_n: how many code points result.top() may give (stats
  // --top). An input that cannot be read is reported, raises exit_failure and does not stop the
  // others.
  using done_function = std::function<void(const std::string& name, const input_result&)>;
  void for_each_input(const stream_config& config, fd_writer* sink, const done_function& done,
                      std::size_t top_n = 0);
  // Also called, after the stderr message, for an input that cannot be read (--json records it).
  using unreadable_function = std::function<void(const std::string& name, const std::string& reason)>;
  void on_unreadable(unreadable_function f) { on_unreadable_ = std::move(f); }

  // Flushes standard output and prints the --verbose timings.
  void finish();

 private:
  [[nodiscard]] run_config engine_config(const stream_config& config, std::size_t top_n) const;
  void add_run(const run_report& r);

  const cli_options& options_;
  exit_status status_ = exit_ok;
  fd_writer stdout_;
  progress_bar bar_;
  stage_times times_;
  std::string plan_;  // the engine's plan, for --verbose
  unreadable_function on_unreadable_;

  void unreadable(const std::string& name, const std::string& reason);
};

// Where a command's text goes: -o OUT (atomically) or standard output.
class text_output {
 public:
  text_output(invocation& inv, const std::optional<std::string>& path);
  fd_writer& writer() noexcept { return file_writer_ ? *file_writer_ : stdout_; }
  // Ends the output. Standard output is always flushed (what was written stays, as with
  // iconv); OUT is renamed into place only when keep is true, else it never appears.
  void finish(bool keep);

 private:
  fd_writer& stdout_;
  std::optional<atomic_output_file> file_;
  std::optional<fd_writer> file_writer_;
};

}  // namespace gutf8::cli
