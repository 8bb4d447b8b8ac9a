// The CUDA block processor, the GPU backend of codec/gpu_backend.hpp: runs blocks through the
// device API (include/gutf8/device.hpp) plus the stats kernels (kernels/utf8/kernel_stats.hpp) on
// the GPU chosen by options::device, with results identical to the CPU processor for every
// block_request.
//
// How a block runs: it is cut into sub-blocks of at most max_sub_block bytes; two CUDA streams
// take sub-blocks in turn, so the host-to-device copy of sub-block k+1 and the device-to-host copy
// of sub-block k-1 overlap the kernels of sub-block k. A sub-block that is not the last ends where
// the device API's carry says (the host computes the same carry, so the next sub-block is queued
// before the GPU has finished). Chunk and output memory that is page-locked (gutf8::host_buffer)
// is copied by DMA directly; pageable memory goes through page-locked staging buffers. Blocks the
// device API cannot express (block_request::end < size: the few bytes that complete a carried
// sequence) go to the fallback processor, as do blocks below gpu_tuning::min_gpu_block.
// process_resident takes a block already in device memory (text decompressed there): no upload,
// its sub-blocks one after the other (the carry is the GPU's, the host has not the bytes), and
// only the few bytes the fallback settles come to the host.
//
// Its source files, one a concern (only src/cuda includes this header: it needs CUDA's):
//   cuda_block_startup.cpp  the device context: eager or lazy start-up, giving up, shutting down
//   cuda_block_buffers.cpp  the sub-block size and each CUDA stream's buffers, the memory limit
//   cuda_block_launch.cpp   the work: sub-blocks queued on the two CUDA streams, results collected
//   pinned_memory.cpp       page-locked host memory
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "codec/gpu_backend.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device.hpp"
#include "gutf8/error.hpp"
#include "utf8/kernel_stats.hpp"

namespace gutf8::internal {

class cuda_processor final : public block_processor {
 public:
  cuda_processor(const options& opt, std::unique_ptr<block_processor> fallback, gpu_tuning tuning);
  ~cuda_processor() override;
  cuda_processor(const cuda_processor&) = delete;
  cuda_processor& operator=(const cuda_processor&) = delete;

  block_result process(const block_request& rq) override;
  // rq.data is device memory of this processor's GPU (rq.out and rq.histogram are the host's).
  block_result process_resident(const block_request& rq);
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] stream_timings timings() const noexcept override { return times_; }

 private:
  using u8 = std::uint8_t;
  using cp_run = kern::stats::code_point_run;

  // What one sub-block leaves on the device for the host: copied back in one transfer.
  struct sub_block_result {
    device::device_summary summary;
    unsigned long long by_length[4];  // stats
    std::uint32_t runs;               // stats with a histogram
    std::uint32_t pad;
  };

  // One of the two CUDA streams and what a sub-block on it uses: events, device and staging buffers.
  struct stream_resources {
    cuda::stream stream;
    cuda::event start, h2d, kernels, summary, out_start, out_done;
    cuda::device_buffer<u8> in, out, temp, hist_temp;
    cuda::device_buffer<sub_block_result> result;
    cuda::device_buffer<cp_run> runs;
    cuda::pinned_buffer<u8> in_stage, out_stage;
    cuda::pinned_buffer<cp_run> runs_host;
    std::size_t capacity = 0;  // sub-block bytes the buffers hold
    double hist_kernel_s = 0, hist_d2h_s = 0;
  };

  // A part of a block, queued on one CUDA stream while the other stream works on the part before.
  struct sub_block {
    std::size_t pos = 0, n = 0, carry = 0;
    bool final = false;    // the last sub-block of the block
    bool is_last = false;  // ... and the input ends there
    unsigned index = 0;    // its CUDA stream: streams_[index % 2]
  };

  // What one stream's buffers must hold for sub-blocks of `sub_block` bytes of a request: computed
  // once, so the memory limit and the allocations cannot disagree. Device buffers in bytes, runs in
  // elements.
  struct buffer_sizes {
    std::size_t sub_block = 0, in = 0, out = 0, temp = 0, hist_temp = 0, runs = 0;
    bool histogram = false;
  };

  // cuda_block_startup.cpp
  bool ensure_started();
  void give_up(const error& why);
  void start();

  // cuda_block_buffers.cpp
  [[nodiscard]] std::size_t plan(std::size_t size) const;
  std::size_t reserve(const block_request& rq, bool in_pinned, bool out_pinned);
  static void release(stream_resources& s);
  [[nodiscard]] buffer_sizes sizes_for(const block_request& rq, std::size_t sub) const;
  static std::uint64_t device_bytes_after(const stream_resources& s, const buffer_sizes& z);
  void check_memory_limit(const buffer_sizes& z) const;
  static void reserve_stream(stream_resources& s, const block_request& rq, const buffer_sizes& z, bool in_pinned,
                             bool out_pinned);
  [[nodiscard]] static std::size_t temp_bytes(const block_request& rq, std::size_t n);

  // Where a block's input is: pageable or page-locked host memory (uploaded), or the device's.
  enum class input_at : std::uint8_t { pageable, pinned, device };

  // Nothing may still read a block's input or write its output once this is gone.
  struct drain {
    cuda_processor& self;
    explicit drain(cuda_processor& p) : self(p) {}
    drain(const drain&) = delete;
    drain& operator=(const drain&) = delete;
    ~drain();
  };

  // cuda_block_launch.cpp
  block_result with_histogram(const block_request& rq, block_result (cuda_processor::*how)(const block_request&));
  block_result process_block(const block_request& rq);
  block_result process_head_then_tail(const block_request& rq, bool resident);
  static void append_tail(block_result& r, const block_result& tail);  // tail's offsets from r.consumed
  static bool output_pinned(const block_request& rq);
  static cudaError_t launch(operation op, error_policy policy, void* temp, std::size_t& bytes, const u8* in,
                            std::size_t n, u8* out, device::device_summary* summary, bool is_last,
                            cudaStream_t stream);
  [[nodiscard]] sub_block next_sub_block(const block_request& rq, std::size_t pos, std::size_t sub,
                                         unsigned index) const;
  void enqueue(const block_request& rq, const sub_block& p, input_at in);
  void merge_histogram(stream_resources& s, std::uint64_t code_points, unsigned index);
  block_result run(const block_request& rq, std::size_t sub, bool in_pinned, bool out_pinned);
  bool collect(const block_request& rq, const sub_block& p, bool out_pinned, block_result& r);
  void copy_output(stream_resources& s, std::size_t bytes, u8* to, bool out_pinned);

  // cuda_block_resident.cpp
  block_result resident_block(const block_request& rq);
  block_result run_resident(const block_request& rq, std::size_t sub, bool out_pinned);
  block_result resident_on_host(const block_request& rq, std::size_t from);

  // device_ made current by the destructor to release the resources, and the destroying thread's
  // device given back after every member is gone (declared first, destroyed last).
  std::optional<cuda::device_scope> on_device_;
  std::unique_ptr<block_processor> fallback_;
  gpu_tuning tuning_;
  int device_;
  std::uint64_t memory_limit_;  // options::device_memory_limit; 0 = none
  bool started_ = false, failed_ = false;
  std::vector<stream_resources> streams_;  // two, once started
  cuda::pinned_buffer<sub_block_result> host_results_;
  std::vector<cp_run> pending_runs_;  // the block's histogram runs, added when it is done
  stream_timings times_{};
};

}  // namespace gutf8::internal
