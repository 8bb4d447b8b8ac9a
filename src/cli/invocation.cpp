#include "cli/invocation.hpp"

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

#include "cli/input.hpp"
#include "cli/signals.hpp"
#include "gutf8/error.hpp"
#include "gutf8/file.hpp"

namespace gutf8::cli {
namespace {

// The whole size when every input is a regular file, for the progress bar's ETA.
std::optional<std::uint64_t> total_size(const std::vector<std::string>& inputs) {
  std::uint64_t total = 0;
  for (const auto& path : inputs) {
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
  if (progress_bar::wanted(options.progress)) bar_.start(total_size(options.inputs));
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

void invocation::for_each_input(const stream_config& config, fd_writer* sink, const done_function& done,
                             std::size_t top_n) {
  for (const auto& path : options_.inputs) {
    try {
      input_file in(path);
      const input_result result = takes_file_pipeline(in, config) ? run_regular_file(in, config, sink, top_n)
                                                                  : run_stream(in, config, sink, top_n);
      done(in.name(), result);
    } catch (const input_error& e) {
      unreadable(e);
    }
  }
}

// A non-empty regular file, unless the run needs every byte to pass through one stream: the file
// pipeline's pieces carry counts, not the bytes that an error list or another text form is made of.
bool invocation::takes_file_pipeline(const input_file& in, const stream_config& config) {
  return in.size() && *in.size() != 0 && config.max_listed_errors == 0 && config.form == text_form::utf32le &&
         !config.bom;
}

input_result invocation::run_regular_file(input_file& in, const stream_config& config, fd_writer* sink,
                                       std::size_t top_n) {
  file_config fc;
  fc.stream = config;
  fc.devices = options_.devices;
  fc.all_devices = options_.all_devices;
  fc.piece_bytes = std::min<std::size_t>(options_.chunk_size, std::size_t{2} << 20);
  fc.map_file = std::getenv("GUTF8_NO_MAP") == nullptr;  // pread copies instead, to compare and to test them
  const std::uint64_t base = in.tell();
  std::uint64_t done = 0;
  bool pipe_closed = false;
  const output_sink write = [&](std::span<const std::byte> bytes) {
    stage_timer t(times_.write);
    try {
      sink->write(bytes);
      return true;
    } catch (const broken_pipe&) {
      pipe_closed = true;  // ends the run; its counts so far still decide the exit status
      return false;
    }
  };
  const progress_function advance = [&](std::uint64_t reached) {
    bar_.advance(reached - done);
    done = reached;
  };
  file_report report;
  {
    const shrunk_input_guard guard;  // the pipeline scans the file's pages in place
    try {
      report = process_file(in.native_handle(), base, fc, sink ? write : output_sink{}, advance, top_n);
    } catch (const gutf8::error& e) {
      if (e.code() != errc::io_failure) throw;
      throw input_error(in.name(), e.what());
    }
  }
  if (pipe_closed) {
    if (invalid_input_fails() && !report.stats.input.valid()) raise(exit_invalid);
    throw broken_pipe{};
  }
  in.seek(base + report.stats.input.bytes);
  times_.bytes += report.stats.input.bytes;
  times_.process += std::chrono::duration_cast<steady_clock::duration>(std::chrono::duration<double>(report.timings.seconds));
  add_gpu_times(report.timings.gpu);
  times_.gpu_startup = std::max(times_.gpu_startup, report.timings.gpu_startup_seconds);
  return {report.stats, std::move(report.top)};
}

input_result invocation::run_stream(input_file& in, const stream_config& config, fd_writer* sink, std::size_t top_n) {
  stream_config c = config;
  c.backend.size_hint = in.size().value_or(0);  // lets --backend=auto weigh the transfer
  gutf8::stream stream(c);
  try {
    pipeline_.run(in, stream, c.backend, chunk_bytes(in.size()), sink, bar_, times_);
  } catch (const broken_pipe&) {
    // The reader downstream is gone and the run ends quietly, but what was already found
    // still decides the exit status (stats reports errors and always exits 0).
    if (invalid_input_fails() && !stream.stats().input.valid()) raise(exit_invalid);
    throw;
  }
  add_gpu_times(stream.timings());
  const auto errors = stream.listed_errors();
  return {stream.stats(), config.histogram && top_n != 0 ? stream.top(top_n) : std::vector<code_point_count>{},
          {errors.begin(), errors.end()}};
}

void invocation::add_gpu_times(const stream_timings& gpu) {
  times_.h2d += gpu.h2d_seconds;
  times_.kernels += gpu.kernel_seconds;
  times_.d2h += gpu.d2h_seconds;
  times_.staging += gpu.staging_seconds;
  times_.gpu_bytes += gpu.gpu_bytes;
  times_.gpu_memory_fallback |= gpu.gpu_memory_fallback;
}

void invocation::unreadable(const input_error& e) {
  error(e.what());
  raise(exit_failure);
  if (on_unreadable_) on_unreadable_(e.name(), e.reason());
}

// --chunk-size bytes, or less when the input is a smaller regular file (so a 1 KiB file does
// not cost 16 MiB buffers).
std::size_t invocation::chunk_bytes(std::optional<std::uint64_t> input_size) const {
  constexpr std::uint64_t small = 64 * 1024;
  std::size_t wanted = options_.chunk_size;
  if (input_size)
    wanted = std::size_t(std::min<std::uint64_t>(wanted, std::max(*input_size + 1, small)));
  return wanted;
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
  error("backend " + std::string(backend_name(options_.backend.backend)) + gpu + ", chunk size " +
        human_bytes(options_.chunk_size) + ", " + std::to_string(options_.inputs.size()) +
        (options_.inputs.size() == 1 ? " input" : " inputs"));
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
