// The CUDA block processor (codec/block.hpp seam): runs blocks through the device API
// (include/gutf8/device.hpp) plus the stats kernels (kernels/utf8/kernel_stats.hpp) on the GPU chosen by
// options::device, with results identical to the CPU processor for every block_request.
//
// Plain C++: dispatch.cpp and stream.cpp include it in every build. src/cuda/cuda_block_*.cpp
// implement it (cuda_block_processor.hpp lists them) and src/cuda/pinned_memory.cpp the page-locked
// memory; a build without CUDA links src/nocuda/cuda_block.cpp instead (no GPU, clear
// errors).
//
// How a block runs: it is cut into sub-blocks of at most max_sub_block bytes; two CUDA streams
// take sub-blocks in turn, so the host-to-device copy of sub-block k+1 and the device-to-host copy
// of sub-block k-1 overlap the kernels of sub-block k. A sub-block that is not the last ends where
// the device API's carry says (the host computes the same carry, so the next sub-block is queued
// before the GPU has finished). Chunk and output memory that is page-locked (gutf8::host_buffer)
// is copied by DMA directly; pageable memory goes through page-locked staging buffers. Blocks the device API
// cannot express (block_request::end < size: the few bytes that complete a carried sequence)
// go to the fallback processor, as do blocks below tuning.min_gpu_block.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "codec/block.hpp"
#include "gutf8/codec.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::internal {

struct cuda_tuning {
  std::size_t min_gpu_block = 0;                    // smaller blocks go to the fallback
  std::size_t max_sub_block = std::size_t{32} << 20;  // largest sub-block; lowered on out-of-memory
  std::size_t min_sub_block = std::size_t{1} << 20;   // sub-blocks are at least this (or the block)
  unsigned sub_blocks = 4;    // a block is cut into about this many sub-blocks, for the overlap
  std::size_t min_retry_block = std::size_t{64} << 10;  // out-of-memory: halve down to this
  // backend::auto_select: CUDA starts on the first block that goes to the GPU, and if it cannot
  // start (no GPU, no memory) every block goes to the fallback. Otherwise (backend::cuda) the
  // processor starts at construction and such failures throw gutf8::error.
  bool lazy = false;
};

// Throws gutf8::error: no_device (not built with CUDA, no usable GPU, bad options::device),
// out_of_memory, device_failure.
std::unique_ptr<block_processor> make_cuda_processor(const options& opt,
                                                     std::unique_ptr<block_processor> fallback,
                                                     cuda_tuning tuning = {});

// GPU time of a processor made by make_cuda_processor (zeros for any other processor).
stream_timings timings_of(const block_processor& processor);

// Whether opt sends an input of opt.size_hint bytes to the GPU (host_buffer pins memory then).
// Implemented in dispatch.cpp, next to make_processor, so that the two cannot disagree.
bool gpu_selected(const options& opt);

// Page-locked host memory (cudaHostAlloc, portable) or nullptr when it cannot be had.
void* allocate_pinned(std::size_t bytes) noexcept;
void free_pinned(void* p) noexcept;

// Page-locks memory in place for the GPU to read (cudaHostRegister, read-only: a mapped file's
// page cache); false when it cannot be. unregister_host undoes it.
bool register_host(const void* p, std::size_t bytes) noexcept;
void unregister_host(const void* p) noexcept;

}  // namespace gutf8::internal
