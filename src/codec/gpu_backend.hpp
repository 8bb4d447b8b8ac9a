// The GPU backend as the core sees it (dispatch.cpp, the stream's host_buffer, the input engine).
// src/cuda implements it; a build without CUDA links src/none instead, where make_gpu_processor
// throws errc::no_device and nothing is page-locked. Nothing outside src/cuda needs CUDA's headers.
#pragma once

#include <cstddef>
#include <memory>

#include "codec/block.hpp"
#include "gutf8/codec.hpp"

namespace gutf8::internal {

// How the GPU backend cuts a block: into sub-blocks of at most max_sub_block bytes, which two
// CUDA streams take in turn so that copies overlap kernels.
struct gpu_tuning {
  std::size_t min_gpu_block = 0;                      // smaller blocks go to the fallback
  std::size_t max_sub_block = std::size_t{32} << 20;  // largest sub-block; lowered on out-of-memory
  std::size_t min_sub_block = std::size_t{1} << 20;   // sub-blocks are at least this (or the block)
  unsigned sub_blocks = 4;  // a block is cut into about this many sub-blocks, for the overlap
  std::size_t min_retry_block = std::size_t{64} << 10;  // out-of-memory: halve down to this
  // backend::auto_select: the GPU starts on the first block that goes to it, and if it cannot
  // start (no GPU, no memory) every block goes to the fallback. Otherwise (backend::cuda) the
  // processor starts at construction and such failures throw gutf8::error.
  bool lazy = false;
};

// A block processor on the GPU options::device, with results identical to the CPU processor's
// for every block_request; blocks it cannot take go to `fallback`. Throws gutf8::error:
// no_device (not built with CUDA, no usable GPU, bad options::device), out_of_memory,
// device_failure.
std::unique_ptr<block_processor> make_gpu_processor(const options& opt, std::unique_ptr<block_processor> fallback,
                                                    gpu_tuning tuning = {});

// Page-locked host memory (portable across GPUs) or nullptr when it cannot be had.
void* allocate_pinned(std::size_t bytes) noexcept;
void free_pinned(void* p) noexcept;

// Page-locks memory in place for the GPU to read (read-only: a mapped file's page cache); false
// when it cannot be. unregister_host undoes it.
bool register_host(const void* p, std::size_t bytes) noexcept;
void unregister_host(const void* p) noexcept;

}  // namespace gutf8::internal
