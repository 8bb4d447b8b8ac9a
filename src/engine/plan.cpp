// gutf8::plan_run: every number a run works with, decided once from the config and the machine.
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <string>
#include <thread>

#include "codec/block.hpp"
#include "engine/batches.hpp"
#include "engine/compressed.hpp"
#include "engine/gpu_parts.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/error.hpp"
#include "gutf8/version.hpp"

namespace gutf8 {
namespace {

constexpr std::size_t min_bytes = 16;             // the smallest piece or chunk (a unit cut needs 3 bytes each side)
constexpr int max_gpus = 16;                      // lanes made for --device all
constexpr std::size_t most_open_inputs = 1024;    // beyond this, more open inputs buy nothing
constexpr std::size_t max_piece_growth = 64;

// Inputs that may be open at once: what the descriptor limit leaves after the standard streams,
// an output, CUDA's own and one transient descriptor a worker.
std::size_t open_input_budget(unsigned workers) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return most_open_inputs;
  const std::size_t reserve = 16 + workers;
  const auto soft = static_cast<std::size_t>(limit.rlim_cur);
  return std::clamp<std::size_t>(soft > reserve ? soft - reserve : 1, 1, most_open_inputs);
}

std::string mib(std::uint64_t bytes) {
  if (bytes % (std::uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return bytes % 1024 == 0 ? std::to_string(bytes >> 10) + " KiB" : std::to_string(bytes) + " bytes";
}

}  // namespace

run_plan plan_run(const run_config& config) {
  if (config.piece_bytes < min_bytes || config.chunk_bytes < min_bytes)
    throw error(errc::invalid_argument, "pieces and chunks must be at least 16 bytes");
  if (config.piece_growth && (*config.piece_growth == 0 || *config.piece_growth > max_piece_growth))
    throw error(errc::invalid_argument, "piece growth must be 1 to " + std::to_string(max_piece_growth));
  const stream_config& sc = config.stream;
  const operation op = sc.operation;
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  run_plan p;
  p.gpu_only = sc.backend.backend == backend::cuda;
  // One hardware thread in eight is left to the committing thread and the system
  // (bench/results/host_engine_h200.md).
  p.cpu_workers = sc.backend.threads != 0 ? sc.backend.threads : hardware - hardware / 8;
  if (p.gpu_only || (GUTF8_HAVE_CUDA && sc.backend.backend == backend::auto_select)) {
    p.all_devices = config.all_devices;
    p.devices = config.devices.empty() ? std::vector<int>{sc.backend.device} : config.devices;
    if (p.all_devices) p.devices.clear();
    p.lanes_per_gpu = internal::output_width(op) == 0 ? 3 : 2;  // outputs are page-locked: two lanes
  }
  p.whole_bytes = std::max<std::uint64_t>(config.piece_bytes / 4 * 4, min_bytes);
  // Decode writes 4 bytes a character: its pieces are a quarter of the others, so that a piece's
  // output stays in the worker's cache until its next piece overwrites it, rather than in DRAM.
  const std::uint64_t scale = op == operation::decode ? 4 : 1;
  p.piece_bytes = std::max<std::uint64_t>(config.piece_bytes / scale / 4 * 4, min_bytes);
  // Decode's pieces double on files with many a worker: fewer commits, their outputs still near a
  // core's cache. Validate's would gain as much but hold 4x the pages in its wide window of pieces,
  // which a narrower one loses again (bench/results/host_engine_h200.md, session 37). Lanes take
  // runs of plan-sized pieces.
  if (p.lanes_per_gpu == 0)
    p.piece_growth = std::bit_floor(config.piece_growth.value_or(op == operation::decode ? 2 : 1));
  p.chunk_bytes = config.chunk_bytes;
  p.gpu_run_bytes = internal::output_width(op) == 0 ? std::uint64_t{64} << 20 : std::uint64_t{16} << 20;
  p.pieces = sc.max_listed_errors == 0 && sc.form == text_form::utf32le && !sc.bom;
  // Under cuda a small input alone costs a launch sequence and a synchronisation: lanes validate
  // them in batches (engine/batches.hpp), each a few launches' worth of bytes.
  if (p.gpu_only && internal::batch_settles(config)) {
    p.gpu_batch_inputs = 64;
    p.gpu_batch_bytes = std::uint64_t{4} << 20;
  }
  p.read = config.read;
  p.release_bytes = config.release_bytes;
  p.decompress = config.decompress;
  // UTF-32 input cannot be cut where parts end (its values sit at multiples of 4 of the whole text);
  // GPU lanes take parts where they decompress zstd frames on the GPU (engine/gpu_parts.hpp), else
  // chunks of compressed inputs read in order.
  p.compressed_parts = p.pieces && op != operation::encode && (!p.gpu_only || internal::gpu_decompresses(config));
  p.output = internal::output_width(op) == 0 ? output_compression{} : config.compress_output;
  // A level the format does not have fails here, before any work, rather than on a worker.
  if (p.output.format != compression::none) (void)internal::output_packer(p.output).empty();
  const std::uint64_t run_pieces = std::max<std::uint64_t>(1, p.gpu_run_bytes / p.piece_bytes);
  const std::size_t gpus = p.all_devices ? max_gpus : p.devices.size();
  const std::size_t lanes_ahead = gpus * p.lanes_per_gpu * 2 * run_pieces;
  p.small_ahead = 8 * (2 * std::size_t{p.cpu_workers} + 4 + lanes_ahead);
  // A piece in flight without output holds no memory: a wide window keeps the workers going while
  // the committing thread is held (releasing a map's pages takes milliseconds) or off its core.
  const std::size_t per_worker = internal::output_width(op) == 0 ? 8 : 2;
  p.ahead = config.pieces_ahead.value_or(per_worker * std::size_t{p.cpu_workers} + 4 + lanes_ahead);
  // Woken for each result: batches of a worker's count measured no faster on the 16-core host.
  p.results_batch = config.results_batch.value_or(1);
  p.open_inputs = open_input_budget(p.cpu_workers);
  return p;
}

std::uint64_t run_plan::pieces_of(std::uint64_t total) const noexcept {
  std::uint64_t piece = piece_bytes;
  const std::uint64_t wanted = pieces_a_worker * std::max(1u, cpu_workers);
  for (std::uint64_t grown = 1; grown * 2 <= piece_growth && total / (piece * 2) >= wanted; grown *= 2) piece *= 2;
  return piece;
}

std::string run_plan::describe() const {
  std::string text = std::to_string(cpu_workers) + " CPU worker" + (cpu_workers == 1 ? "" : "s");
  text += gpu_only ? " reading inputs" : "";
  text += "; big files in pieces of " + mib(piece_bytes);
  if (piece_growth > 1)
    text += " (doubling to at most " + mib(piece_bytes * piece_growth) + " while each worker keeps " +
            std::to_string(pieces_a_worker) + ")";
  text += read != read_method::copy ? " scanned in place" : " copied out";
  text += ", files up to " + mib(whole_bytes) + " read whole, streams read " + mib(chunk_bytes) + " at a time";
  if (!pieces) text += " (each input through one stream: the options need every byte in order)";
  if (!decompress) text += "; compressed inputs read as bytes";
  else if (gpu_only && compressed_parts) text += "; zstd files of small frames in parts, decompressed on the GPU";
  else text += compressed_parts ? "; compressed files in parts where they split" : "; compressed inputs in order";
  if (output.format != compression::none) text += "; outputs compressed as " + std::string(name(output.format));
  text += "; " + std::to_string(ahead) + " pieces in flight, " + std::to_string(open_inputs) + " inputs open at most; ";
  if (lanes_per_gpu == 0) return text + "no GPU";
  std::string gpus = all_devices ? std::string("every usable GPU") : "GPU";
  if (!all_devices) {
    gpus += devices.size() == 1 ? " " : "s ";
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (i != 0) gpus += ',';  // appended part by part: GCC 12 gives a false -Wrestrict for "literal" + string
      gpus += std::to_string(devices[i]);
    }
  }
  text += std::to_string(lanes_per_gpu) + " lanes on " + gpus + ", runs of " + mib(gpu_run_bytes);
  if (gpu_batch_inputs > 1)
    text += ", small inputs " + std::to_string(gpu_batch_inputs) + " (" + mib(gpu_batch_bytes) + ") at a time";
  return text + (gpu_only ? " (the GPU does all the work)" : " (big files, where the GPU pays)");
}

}  // namespace gutf8
