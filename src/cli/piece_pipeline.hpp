// A regular file on the CPU backend, on all cores at once.
//
// Workers each take the next piece of the file (codec/pieces.hpp): read it with pread into their
// own buffer, small enough to stay in the core's cache, and process it there with their own
// single-thread CPU block processor, leaving the result and output in a slot of a ring. The
// calling thread takes the slots in file order, accounts them in the stream and writes their
// output. So the bytes cross memory once and nothing waits on one reader or one big block: the
// staged pipeline (cli/pipeline.hpp) reads a chunk on a few threads, then splits the processing
// of it over all of them, and pays a fork and join and a trip through memory per chunk.
// Workers run ahead of the writer by at most a ring of pieces, so memory stays bounded.
#pragma once

#include <cstddef>

#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::cli {

class input_file;

class piece_pipeline {
 public:
  // A core's L2 on the GPU host (Xeon, 2 MiB); 256 KiB to 4 MiB measured there, 1 and 2 MiB
  // best (bench/results/e2e.md). --chunk-size lowers it (tests use 16 bytes).
  static constexpr std::size_t max_piece_bytes = std::size_t{2} << 20;

  // Whether run() takes this input: a non-empty regular file that the CPU backend processes
  // (backend cpu, or auto when the GPU would not be chosen) without a code point histogram.
  [[nodiscard]] static bool suits(const input_file& in, const stream_config& config);

  // Runs the input (from the file offset on) through stream, which must be fresh and built from
  // config, with `threads` workers (0: seven hardware threads in eight) and pieces of at most chunk_bytes;
  // output to sink (none: validate, stats). Stops early when strict mode stops the stream.
  // Rethrows the first failure (input_error, io_error, broken_pipe) once every worker has
  // stopped; what precedes the failed piece has been written.
  static void run(input_file& in, gutf8::stream& stream, const stream_config& config, unsigned threads,
           std::size_t chunk_bytes, fd_writer* sink, progress_bar& bar, stage_times& times);
};

}  // namespace gutf8::cli
