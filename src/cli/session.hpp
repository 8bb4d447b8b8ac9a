// One run of a command: the options, the exit status so far, stderr messages, standard
// output, and the loop that feeds each input through a gutf8::stream.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/options.hpp"
#include "cli/output.hpp"
#include "cli/piece_pipeline.hpp"
#include "cli/pipeline.hpp"
#include "cli/progress.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::cli {

// SPEC §2. The final status of a run is the most severe one seen (3 > 1 > 0).
enum exit_status : int { exit_ok = 0, exit_invalid = 1, exit_usage = 2, exit_failure = 3 };

class input_file;

class session {
 public:
  explicit session(const cli_options& options);

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

  // Feeds each input, in order, through a fresh stream (reading, processing and writing
  // overlapped: cli/pipeline.hpp, or for a regular file on the CPU backend processed by pieces on
  // all cores: cli/piece_pipeline.hpp); the stream's output goes to sink (none for validate/stats).
  // The stream's backend options get the input's size as size_hint when it is a regular file.
  // done(name, stream) runs when an input has ended or strict mode stopped it. An input that
  // cannot be read is reported, raises exit_failure and does not stop the others.
  using done_function = std::function<void(const std::string& name, const gutf8::stream&)>;
  void for_each_input(const stream_config& config, fd_writer* sink, const done_function& done);
  // Also called, after the stderr message, for an input that cannot be read (--json records it).
  using unreadable_function = std::function<void(const std::string& name, const std::string& reason)>;
  void on_unreadable(unreadable_function f) { on_unreadable_ = std::move(f); }

  // Flushes standard output and prints the --verbose timings.
  void finish();

 private:
  [[nodiscard]] std::size_t chunk_bytes(std::optional<std::uint64_t> input_size) const;

  const cli_options& options_;
  exit_status status_ = exit_ok;
  fd_writer stdout_;
  progress_bar bar_;
  stage_times times_;
  pipeline pipeline_;  // its buffers are reused for every input
  unreadable_function on_unreadable_;

  void unreadable(const input_error& e);
};

// Where a command's text goes: -o OUT (atomically) or standard output.
class text_output {
 public:
  text_output(session& s, const std::optional<std::string>& path);
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
