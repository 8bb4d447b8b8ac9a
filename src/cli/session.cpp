#include "cli/session.hpp"

#include <algorithm>
#include <unistd.h>

#include "cli/input.hpp"

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

session::session(const cli_options& options)
    : options_(options), stdout_(STDOUT_FILENO) {
  if (progress_bar::wanted(options.progress)) bar_.start(total_size(options.inputs));
}

void session::raise(exit_status status) noexcept { status_ = std::max(status_, status); }

void session::error(std::string_view text) { report("gutf8: " + std::string(text)); }

void session::report(std::string_view line) {
  bar_.clear();
  write_stderr(std::string(line) + '\n');
}

stream_config session::config(operation op, bool histogram) const {
  stream_config c;
  c.operation = op;
  c.policy = options_.policy;
  c.histogram = histogram;
  c.form = options_.form;
  c.bom = options_.bom;
  c.backend = options_.backend;
  return c;
}

bool session::invalid_input_fails() const noexcept {
  switch (options_.command) {
    case command::validate: return true;
    case command::decode:
    case command::encode: return options_.policy == error_policy::strict;
    case command::stats: break;
  }
  return false;
}

void session::for_each_input(const stream_config& config, fd_writer* sink,
                             const done_function& done) {
  for (const auto& path : options_.inputs) {
    try {
      input_file in(path);
      stream_config c = config;
      c.backend.size_hint = in.size().value_or(0);  // lets --backend=auto weigh the transfer
      gutf8::stream stream(c);
      try {
        if (piece_pipeline::suits(in, c))
          piece_pipeline::run(in, stream, c, options_.backend.threads, options_.chunk_size, sink, bar_, times_);
        else
          pipeline_.run(in, stream, c.backend, chunk_bytes(in.size()), sink, bar_, times_);
      } catch (const broken_pipe&) {
        // The reader downstream is gone and the run ends quietly, but what was already found
        // still decides the exit status (stats reports errors and always exits 0).
        if (invalid_input_fails() && !stream.stats().input.valid()) raise(exit_invalid);
        throw;
      }
      const stream_timings gpu = stream.timings();
      times_.h2d += gpu.h2d_seconds;
      times_.kernels += gpu.kernel_seconds;
      times_.d2h += gpu.d2h_seconds;
      times_.staging += gpu.staging_seconds;
      times_.gpu_bytes += gpu.gpu_bytes;
      times_.gpu_memory_fallback |= gpu.gpu_memory_fallback;
      done(in.name(), stream);
    } catch (const input_error& e) {
      unreadable(e);
    }
  }
}

void session::unreadable(const input_error& e) {
  error(e.what());
  raise(exit_failure);
  if (on_unreadable_) on_unreadable_(e.name(), e.reason());
}

// --chunk-size bytes, or less when the input is a smaller regular file (so a 1 KiB file does
// not cost 16 MiB buffers).
std::size_t session::chunk_bytes(std::optional<std::uint64_t> input_size) const {
  constexpr std::uint64_t small = 64 * 1024;
  std::size_t wanted = options_.chunk_size;
  if (input_size)
    wanted = std::size_t(std::min<std::uint64_t>(wanted, std::max(*input_size + 1, small)));
  return wanted;
}

void session::finish() {
  {
    stage_timer t(times_.write);
    stdout_.flush();
  }
  bar_.clear();
  if (!options_.verbose) return;
  // Asking whether CUDA is usable starts the driver (~0.15 s): never for --backend=cpu, whose
  // timings it would distort.
  std::string gpu;
  if (options_.backend.backend != backend::cpu) {
    gpu = std::string(" (CUDA usable: ") + (cuda_available() ? "yes" : "no");
    if (times_.gpu_memory_fallback) gpu += "; fell back to the CPU: not enough GPU memory";
    gpu += ")";
  }
  error("backend " + std::string(backend_name(options_.backend.backend)) + gpu + ", chunk size " +
        human_bytes(options_.chunk_size) + ", " + std::to_string(options_.inputs.size()) +
        (options_.inputs.size() == 1 ? " input" : " inputs"));
  error(times_.report());
}

text_output::text_output(session& s, const std::optional<std::string>& path) : stdout_(s.out()) {
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
