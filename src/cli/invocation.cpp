#include "cli/invocation.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <span>
#include <unistd.h>

#include "cli/input.hpp"
#include "cli/signals.hpp"
#include "gutf8/error.hpp"

namespace gutf8::cli {
namespace {

// The whole size when every input is a regular file, for the progress bar's ETA; none where a
// compressed file's name says that its text (which the bar counts) is larger.
std::optional<std::uint64_t> total_size(const std::vector<std::string>& inputs, bool decompress) {
  std::uint64_t total = 0;
  for (const auto& path : inputs) {
    if (decompress && compression_by_suffix(path) != compression::none) return std::nullopt;
    const auto size = regular_file_size(path);
    if (!size) return std::nullopt;
    total += *size;
  }
  return total;
}


std::string_view backend_name(backend b) {
  switch (b) {
    case backend::cpu: return "cpu";
    case backend::cuda: return "cuda";
    case backend::auto_select: break;
  }
  return "auto";
}

}  // namespace

invocation::invocation(const cli_options& options)
    : options_(options), stdout_(STDOUT_FILENO) {
  if (progress_bar::wanted(options.progress)) bar_.start(total_size(options.inputs, options.decompress));
}

void invocation::raise(exit_status status) noexcept { status_ = std::max(status_, status); }

void invocation::error(std::string_view text) { report("gutf8: " + std::string(text)); }

void invocation::report(std::string_view line) {
  bar_.clear();
  write_stderr(std::string(line) + '\n');
}

stream_config invocation::config(operation op, bool histogram) const {
  stream_config c;
  c.operation = op;
  c.policy = options_.policy;
  c.histogram = histogram;
  c.form = options_.form;
  c.bom = options_.bom;
  c.backend = options_.backend;
  return c;
}

bool invocation::invalid_input_fails() const noexcept {
  switch (options_.command) {
    case command::validate: return true;
    case command::decode:
    case command::encode: return options_.policy == error_policy::strict;
    case command::stats: break;
  }
  return false;
}

namespace {

// The warning for bytes after the last member that the format's tool ignores (gzip, bzip2).
std::string trailing_garbage(const input_report& report) {
  const std::string_view unit = report.compressed == compression::gzip ? "member" : "stream";
  return "trailing garbage ignored from compressed byte " + std::to_string(*report.trailing_ignored) +
         " (after the last " + std::string(name(report.compressed)) + " " + std::string(unit) + ")";
}

// The engine's side of one command: outputs to the sink, reports to `done`, in input order.
class cli_observer final : public run_observer {
 public:
  using message_function = std::function<void(const std::string&, const std::string&)>;
  cli_observer(std::span<const gutf8::input> inputs, fd_writer* sink, const invocation::done_function& done,
               const message_function& unreadable, const message_function& warn, progress_bar& bar,
               stage_times& times)
      : inputs_(inputs), sink_(sink), done_(done), unreadable_(unreadable), warn_(warn), bar_(bar), times_(times) {}

  bool output(std::size_t, std::span<const std::byte> bytes) override {
    stage_timer t(times_.write);
    try {
      sink_->write(bytes);
      return true;
    } catch (const broken_pipe&) {
      pipe_closed_ = true;  // ends the run; the counts so far still decide the exit status
      return false;
    }
  }
  void done(std::size_t index, const input_report& report) override {
    const input_result result(report.stats, report.top, report.listed_errors);
    if (pipe_closed_) {
      partial_ = result;
      return;
    }
    if (report.trailing_ignored) warn_(inputs_[index].name(), trailing_garbage(report));
    done_(inputs_[index].name(), result);
  }
  void failed(std::size_t index, const gutf8::error& why) override { unreadable_(inputs_[index].name(), why.what()); }
  void progress(std::uint64_t bytes) override {
    bar_.advance(bytes - done_bytes_);
    done_bytes_ = bytes;
  }
  [[nodiscard]] bool pipe_closed() const noexcept { return pipe_closed_; }
  // The counts of the input whose output was cut off by the closed pipe.
  [[nodiscard]] const std::optional<input_result>& partial() const noexcept { return partial_; }

 private:
  std::span<const gutf8::input> inputs_;
  fd_writer* sink_;
  const invocation::done_function& done_;
  const message_function& unreadable_;
  const message_function& warn_;
  progress_bar& bar_;
  stage_times& times_;
  std::uint64_t done_bytes_ = 0;
  bool pipe_closed_ = false;
  std::optional<input_result> partial_;
};

}  // namespace

run_config invocation::engine_config(const stream_config& config, std::size_t top_n) const {
  run_config rc;
  rc.stream = config;
  rc.devices = options_.devices;
  rc.all_devices = options_.all_devices;
  rc.top = top_n;
  rc.decompress = options_.decompress;
  // -o NAME.gz (.zst, .xz, .bz2, .lz4) is written in that format, as tar -a chooses.
  if (options_.output) rc.compress_output.format = compression_by_suffix(*options_.output);
  if (options_.chunk_size) {
    rc.chunk_bytes = *options_.chunk_size;
    rc.piece_bytes = std::min(*options_.chunk_size, rc.piece_bytes);
  }
  // The pages of big files are scanned in place; a file that shrinks meanwhile raises SIGBUS,
  // which shrunk_input_guard reports. GUTF8_NO_MAP copies them out instead, to compare and to test;
  // GUTF8_POPULATE=0 faults each piece's pages in as it is scanned, to compare.
  rc.read = std::getenv("GUTF8_NO_MAP") == nullptr ? read_method::map : read_method::copy;
  if (const char* populate = std::getenv("GUTF8_POPULATE"); rc.read == read_method::map && populate != nullptr &&
                                                            std::string_view(populate) == "0")
    rc.read = read_method::map_faulted;
  // Tuning knobs for benchmarks (bench/engine_knobs.py): pieces (before decode's quarter), a mapped
  // file's release step, pieces in flight beyond the commit, results the committer is woken for,
  // how far big files' pieces grow.
  if (const char* bytes = std::getenv("GUTF8_PIECE_BYTES"))
    rc.piece_bytes = parse_size(bytes, "GUTF8_PIECE_BYTES", min_chunk_size, max_chunk_size);
  if (const char* release = std::getenv("GUTF8_RELEASE_BYTES"))
    rc.release_bytes = parse_size(release, "GUTF8_RELEASE_BYTES", std::size_t{1} << 20, std::size_t{1} << 40);
  if (const char* ahead = std::getenv("GUTF8_PIECES_AHEAD"))
    rc.pieces_ahead = parse_size(ahead, "GUTF8_PIECES_AHEAD", 1, std::size_t{1} << 20);
  if (const char* batch = std::getenv("GUTF8_RESULTS_BATCH"))
    rc.results_batch = parse_size(batch, "GUTF8_RESULTS_BATCH", 1, std::size_t{1} << 20);
  if (const char* growth = std::getenv("GUTF8_PIECE_GROWTH"))
    rc.piece_growth = parse_size(growth, "GUTF8_PIECE_GROWTH", 1, 64);
  return rc;
}

void invocation::for_each_input(const stream_config& config, fd_writer* sink, const done_function& done,
                                std::size_t top_n) {
  std::vector<gutf8::input> inputs;
  inputs.reserve(options_.inputs.size());
  for (const auto& path : options_.inputs) inputs.push_back(input_named(path));
  const run_config rc = engine_config(config, top_n);
  if (options_.verbose) plan_ = plan_run(rc).describe();  // the run plans again: only --verbose shows it
  const cli_observer::message_function unreadable =
      [this](const std::string& name, const std::string& reason) { this->unreadable(name, reason); };
  // A warning, as gzip's "trailing garbage ignored": -q hides it and the exit status stays.
  const cli_observer::message_function warn = [this](const std::string& name, const std::string& text) {
    if (!options_.quiet) error(name + ": " + text);
  };
  cli_observer observer(inputs, sink, done, unreadable, warn, bar_, times_);
  run_report report;
  {
    const shrunk_input_guard guard;  // the engine scans big files' pages in place
    report = gutf8::run(inputs, rc, observer);
  }
  add_run(report);
  if (observer.pipe_closed()) {
    // The reader downstream is gone and the run ends quietly, but what was already found still
    // decides the exit status (stats reports errors and always exits 0).
    if (const auto& partial = observer.partial(); partial && invalid_input_fails() && !partial->stats().input.valid())
      raise(exit_invalid);
    throw broken_pipe{};
  }
}

void invocation::add_run(const run_report& r) {
  times_.bytes += r.bytes;
  times_.cpu_bytes += r.cpu_bytes;
  times_.process += std::chrono::duration_cast<steady_clock::duration>(std::chrono::duration<double>(r.seconds));
  times_.h2d += r.gpu.h2d_seconds;
  times_.kernels += r.gpu.kernel_seconds;
  times_.d2h += r.gpu.d2h_seconds;
  times_.staging += r.gpu.staging_seconds;
  times_.gpu_bytes += r.gpu_bytes;
  times_.gpu_decompressed += r.gpu.gpu_decompressed_bytes;
  times_.gpu_memory_fallback |= r.gpu.gpu_memory_fallback;
  times_.gpu_startup = std::max(times_.gpu_startup, r.gpu_startup_seconds);
}

void invocation::unreadable(const std::string& name, const std::string& reason) {
  error(name + ": " + reason);
  raise(exit_failure);
  if (on_unreadable_) on_unreadable_(name, reason);
}

void invocation::finish() {
  {
    stage_timer t(times_.write);
    stdout_.flush();
  }
  bar_.clear();
  if (!options_.verbose) return;
  // Whether CUDA is usable is asked only where the run started it already: asking starts the
  // driver (~0.15 s, and as much again to tear it down at exit), which would distort the timings of
  // a run that --backend=auto kept on the CPU.
  std::string gpu;
  if (options_.backend.backend == backend::cuda || times_.gpu_bytes != 0 || times_.gpu_startup > 0 ||
      times_.gpu_memory_fallback) {
    gpu = std::string(" (CUDA usable: ") + (cuda_available() ? "yes" : "no");
    if (times_.gpu_memory_fallback) gpu += "; fell back to the CPU: not enough GPU memory";
    gpu += ")";
  } else if (options_.backend.backend == backend::auto_select) {
    gpu = " (the CPU did all the work)";
  }
  error("backend " + std::string(backend_name(options_.backend.backend)) + gpu + ", " +
        std::to_string(options_.inputs.size()) + (options_.inputs.size() == 1 ? " input" : " inputs"));
  if (!plan_.empty()) error("plan: " + plan_);
  error(times_.report());
}

text_output::text_output(invocation& inv, const std::optional<std::string>& path) : stdout_(inv.out()) {
  if (!path) return;
  file_.emplace(*path);
  file_writer_.emplace(file_->fd());
}

void text_output::finish(bool keep) {
  if (!file_) {
    stdout_.flush();
    return;
  }
  if (!keep) return;  // the destructor removes the temporary
  file_writer_->flush();
  file_->commit();
}

}  // namespace gutf8::cli
