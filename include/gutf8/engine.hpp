// The input engine: one run over many inputs (regular files of any size, pipes, standard input,
// memory buffers) on one pool of CPU threads made for the run and, where they pay or are asked
// for, GPU lanes. The work inside a run goes in any order and in parallel: small files are read
// whole, many at a time, one worker each; a big file is cut into pieces that every worker takes;
// a pipe is read, processed and written overlapped. What the caller sees comes in input order, on
// the calling thread: each input's output, then its report (or the reason it could not be read),
// byte-identical to running that input alone through one gutf8::stream. The CLI, the Python
// package and C++ users all read their inputs through this. Compressed inputs (gzip, zstd, xz,
// bzip2, lz4) are recognized by their magic numbers and processed as the text they hold, in
// bounded memory; outputs may be compressed (run_config::compress_output).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gutf8/error.hpp"
#include "gutf8/stream.hpp"
#include "gutf8/types.hpp"

namespace gutf8 {

// One input of a run, and the name its reports go by.
class input {
 public:
  // A file opened read-only when the run reaches it (a directory, a missing or unreadable file is
  // reported in its place). Pipes, FIFOs and character devices are read as streams.
  static input file(std::string path);
  // An open descriptor (standard input, a pipe, a file), read from its current offset and never
  // closed; a regular file's offset is left after the bytes the run consumed.
  static input descriptor(int fd, std::string name);
  // Bytes in memory, borrowed for the run.
  static input memory(std::span<const std::byte> bytes, std::string name);

  enum class kind : std::uint8_t { file, descriptor, memory };
  [[nodiscard]] kind what() const noexcept { return kind_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }

 private:
  input(kind k, std::string name) : kind_(k), name_(std::move(name)) {}
  kind kind_;
  std::string name_, path_;
  int fd_ = -1;
  std::span<const std::byte> bytes_;
};

// GPU lanes kept from one run for the next: each lane's CUDA streams, device buffers and
// page-locked buffers. A run without it builds its lanes when it first needs them and frees them
// at its end; a process that runs many inputs through the GPU keeps one and passes it in
// run_config::gpu_lanes. Runs at the same time take different lanes; a lane that failed is not
// kept. Idle lanes hold their memory outside any later run's device_memory_limit. Destroy it while
// CUDA is up (not from a static object's destructor).
class gpu_lane_cache {
 public:
  explicit gpu_lane_cache(std::size_t capacity = 8);  // at most this many idle lanes are kept
  ~gpu_lane_cache();
  gpu_lane_cache(const gpu_lane_cache&) = delete;
  gpu_lane_cache& operator=(const gpu_lane_cache&) = delete;

  [[nodiscard]] std::size_t idle() const;   // lanes kept and not in use
  [[nodiscard]] std::size_t built() const;  // lanes built by runs given this cache, in all
  void clear();                             // frees the idle lanes

  struct state;                                                // the engine's; opaque to users
  [[nodiscard]] state& lanes() const noexcept { return *state_; }  // for the engine

 private:
  std::unique_ptr<state> state_;
};

// Compressed formats: what an input holds (recognized by its magic number) and what an output is
// written as.
enum class compression : std::uint8_t { none, gzip, zstd, xz, bzip2, lz4 };
// "none", "gzip", "zstd", "xz", "bzip2", "lz4".
[[nodiscard]] std::string_view name(compression c) noexcept;
// The format a file name asks for by its suffix (.gz, .zst, .xz, .bz2, .lz4, as `tar -a` chooses);
// none for any other name.
[[nodiscard]] compression compression_by_suffix(std::string_view path) noexcept;
// The format whose magic number the first bytes of an input carry (10 bytes are enough); none for
// anything else, which the engine reads as text.
[[nodiscard]] compression sniff_compression(std::span<const std::byte> first_bytes) noexcept;

struct output_compression {
  compression format = compression::none;
  int level = 0;  // 0: the format's tool's default (gzip 6, zstd 3, xz 6, bzip2 9, lz4 1)
};

// How regular files are read.
enum class read_method : std::uint8_t {
  copy,  // pread into the workers' own buffers: a file that shrinks is that input's failure
  map,   // scanned in place in the page cache (faster on big files), each piece's pages mapped by one
         // call before its scan; a file that shrinks while it is read raises SIGBUS in the process,
         // which the caller must handle (the CLI does)
  map_faulted,  // as map, its pages faulted in as they are scanned (to compare)
};

struct run_config {
  stream_config stream;           // operation, policy, text form, backend (backend, threads, device,
                                  // device_memory_limit); backend::cuda runs the codec on GPU lanes
  std::vector<int> devices;       // GPUs for the lanes; empty: stream.backend.device
  bool all_devices = false;       // every usable GPU instead (found on the lanes' own threads)
  std::shared_ptr<gpu_lane_cache> gpu_lanes;  // lanes to take and give back; null: the run's own
  std::size_t top = 0;            // stats with histogram: code points in each report's top
  std::size_t piece_bytes = std::size_t{2} << 20;   // a big file's pieces (a core's L2 on the GPU host;
                                                    // decode's are a quarter: its output is 4 bytes a character;
                                                    // decode's grow on big files: run_plan::piece_growth)
  std::optional<std::size_t> pieces_ahead;          // pieces in flight beyond the commit; none: the plan's
  std::optional<std::size_t> results_batch;         // a big file's results the committing thread is
                                                    // woken for at once; none: 1 (woken for each)
  // How many times a big file's pieces may grow (1 to 64, rounded down to a power of two; none: 2
  // for decode, else 1). Ignored where GPU lanes share the run. Each piece in flight holds its pages:
  // the window of pieces in flight grows with them.
  std::optional<std::size_t> piece_growth;
  // A mapped file's pages leave the process behind the commit this many bytes at a time (each
  // release stops every thread of the process for a moment); the page cache keeps them.
  std::uint64_t release_bytes = std::uint64_t{64} << 20;
  std::size_t chunk_bytes = std::size_t{4} << 20;   // reads of a stream (pipe, standard input)
  read_method read = read_method::copy;
  // Inputs that start with a compressed format's magic number are read as the text they hold
  // (offsets, lines and columns count in that text); false reads every input's bytes as they are.
  bool decompress = true;
  // Each input's output is compressed into self-contained members (frames) of this format, on the
  // workers, in parallel; their concatenation, in order, is one valid file of the format. An input
  // whose output is empty gives one empty member, so that each input's output is such a file too.
  output_compression compress_output{};
};

// What run() will do with a config on this machine, decided once before any input is read.
struct run_plan {
  unsigned cpu_workers = 0;        // threads that read inputs and, unless the GPU does it, process them
  std::vector<int> devices;        // GPUs lanes may start on (empty: none)
  bool all_devices = false;        // ... or every usable one
  unsigned lanes_per_gpu = 0;
  bool gpu_only = false;           // backend::cuda: the codec runs on GPU lanes alone
  std::uint64_t piece_bytes = 0;   // big files' pieces
  // ... which double while the file keeps pieces_a_worker pieces for each worker, until they are
  // this many times piece_bytes (a power of two; 1: never, as in runs with GPU lanes)
  std::uint64_t piece_growth = 1;
  static constexpr std::uint64_t pieces_a_worker = 16;
  std::uint64_t whole_bytes = 0;   // regular files up to this size are read whole by one worker
  std::uint64_t chunk_bytes = 0;   // stream reads
  std::uint64_t gpu_run_bytes = 0; // what a GPU lane takes of a big file at once
  // Small inputs a GPU lane validates at once, joined (gpu_only validate; 1: one at a time), and
  // the most bytes such a batch holds.
  std::size_t gpu_batch_inputs = 1;
  std::uint64_t gpu_batch_bytes = 0;
  std::size_t ahead = 0;           // pieces in flight beyond the commit, in all
  std::size_t results_batch = 1;   // a big file's pieces done before the committing thread is woken
  std::size_t small_ahead = 0;     // small inputs read whole in flight, at most
  std::uint64_t release_bytes = 0; // a mapped file's pages leave the process this many at a time
  std::size_t open_inputs = 0;     // inputs open at once, at most
  read_method read = read_method::copy;
  bool pieces = true;              // false: the config needs every byte in one stream (error lists,
                                   // other text forms, a BOM), so each input is read by one worker
  bool decompress = true;          // compressed inputs are read as their text
  bool compressed_parts = true;    // ... a compressed file's independent parts on every worker (else in order)
  output_compression output{};     // outputs compressed so
  [[nodiscard]] std::string describe() const;  // one line for --verbose
  // The nominal piece size of a big file of `total` bytes (piece_bytes, grown by piece_growth).
  [[nodiscard]] std::uint64_t pieces_of(std::uint64_t total) const noexcept;
};
run_plan plan_run(const run_config& config);

struct input_report {
  text_stats stats;          // as gutf8::stream::stats() after the whole input (or the strict stop)
  bool stopped = false;      // the strict policy stopped at the first error unit
  std::vector<code_point_count> top;     // run_config::top most frequent (stats with histogram)
  std::vector<error_unit> listed_errors;  // stream_config::max_listed_errors first error units
  std::uint64_t gpu_bytes = 0;           // input bytes the GPU lanes did
  compression compressed = compression::none;  // the input was decompressed from this format
  // Bytes after the last member of a compressed input that were ignored, from this compressed
  // offset: gzip and bzip2 ignore them as their tools do (gzip when they are not all zeros).
  std::optional<std::uint64_t> trailing_ignored;
};

struct run_report {
  std::size_t inputs = 0;        // inputs reported (done or failed) before the run ended
  std::size_t failed = 0;        // ... of which could not be read
  std::uint64_t bytes = 0;       // input bytes committed
  std::uint64_t cpu_bytes = 0;   // ... processed by CPU workers
  std::uint64_t gpu_bytes = 0;   // ... by GPU lanes
  bool ended_early = false;      // the observer ended the run
  bool gpu_failed = false;       // a GPU failed and the CPU workers did its work (backend::auto_select)
  double gpu_startup_seconds = 0;  // CUDA start-up of the slowest lane, overlapped with CPU work
  double seconds = 0;            // wall clock of the run
  stream_timings gpu;            // copies and kernels, summed over the lanes
};

// What a run tells its caller, on the calling thread, in input order. What a call throws ends the
// run (every worker stops first) and comes out of run().
class run_observer {
 public:
  virtual ~run_observer() = default;
  // Output of input `index`, in order. Returns false to end the run (the reader downstream is gone).
  virtual bool output(std::size_t /*index*/, std::span<const std::byte> /*bytes*/) { return true; }
  // Input `index` is done: its output was all given.
  virtual void done(std::size_t /*index*/, const input_report& /*report*/) {}
  // Input `index` could not be read, vanished, is a directory or shrank while it was read (what
  // came before was given); the run goes on with the next.
  virtual void failed(std::size_t /*index*/, const error& /*why*/) {}
  // Input bytes committed so far over the whole run.
  virtual void progress(std::uint64_t /*bytes*/) {}
};

// Runs every input through config's operation. Throws gutf8::error: invalid_argument (a bad
// config, before any work), no_device (backend::cuda without a usable GPU), out_of_memory,
// device_failure (a GPU failed under backend::cuda), and whatever the observer throws.
run_report run(std::span<const input> inputs, const run_config& config, run_observer& observer);

// Bytes [offset, offset + count) of an input's text as a run reads it (decompressed, unless
// decompress is false), fewer where the text ends first: what an error report shows of the unit at
// an offset. A compressed input is decompressed from its start up to there. Throws
// gutf8::error(io_failure) when the input cannot be read.
std::vector<std::byte> text_at(const input& in, std::uint64_t offset, std::size_t count, bool decompress = true);

// Every usable GPU, numbered for run_config::devices (empty where none is).
std::vector<int> all_devices();

}  // namespace gutf8
