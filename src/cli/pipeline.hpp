// One input through a gutf8::stream, with reading and writing overlapped with the work:
//
//   reader thread   fills the input_buffers chunk buffers in turn, ahead of the stream (read-ahead);
//   calling thread  feeds the chunks to the stream in order (feed_into: synchronous, returns the
//                   chunk's output). The CUDA backend overlaps its own copies and kernels inside
//                   each feed: sub-blocks alternate between two CUDA streams (src/cuda/cuda_block.hpp);
//   writer thread   writes the outputs in order from the output_buffers output buffers.
//
// So reading chunk k+1, processing chunk k and writing chunk k-1 run at the same time. The
// buffers are gutf8::host_buffers: page-locked when the input goes to the GPU, so the GPU copies
// chunks and outputs by DMA without staging. The buffers are kept for the next input.
#pragma once

#include <cstddef>
#include <vector>

#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::cli {

class input_file;

class pipeline {
 public:
  static constexpr std::size_t input_buffers = 3;   // one being fed, two read ahead
  static constexpr std::size_t output_buffers = 2;  // one being filled, one being written

  // Runs `in` through `stream` in chunks of chunk_bytes until the input ends (then finishes the
  // stream) or strict mode stops it. The output goes to sink (none: validate, stats). backend is
  // the stream's options (with size_hint), which decide whether buffers are page-locked.
  // Rethrows the first failure of any thread (input_error, io_error, broken_pipe, gutf8::error)
  // once both threads have stopped; outputs of the chunks before a failed read are written.
  void run(input_file& in, gutf8::stream& stream, const options& backend, std::size_t chunk_bytes,
           fd_writer* sink, progress_bar& bar, stage_times& times);

 private:
  void prepare(std::size_t chunk_bytes, std::size_t output_bytes, const options& backend);

  std::vector<host_buffer> in_, out_;
};

}  // namespace gutf8::cli
