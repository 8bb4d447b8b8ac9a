// The CUDA block processor on input already in device memory (cuda/cuda_block_processor.hpp):
// text that nvCOMP decompressed on the GPU goes to the codec's kernels where it lies. Sub-blocks run
// one after the other on one CUDA stream, each cut where the GPU's carry says (there is no upload to
// overlap, and the host has not the bytes to know the carry ahead); the few bytes the fallback
// processor settles (a block's tail before rq.end, blocks too small for the GPU) come to the host.
#include <vector>

#include "cuda/cuda_block_processor.hpp"

namespace gutf8::internal {

block_result cuda_processor::resident_block(const block_request& rq) {
  if (rq.end == 0 || rq.end < tuning_.min_gpu_block || !ensure_started()) return resident_on_host(rq, 0);
  cuda::check(cudaSetDevice(device_), "cudaSetDevice");  // per thread: the caller may change
  if (rq.end != rq.size) return process_head_then_tail(rq, true);
  const bool out_pinned = output_pinned(rq);
  const std::size_t sub = reserve(rq, true, out_pinned);  // no staging of the input
  if (sub == 0) return resident_on_host(rq, 0);            // auto_select and no GPU memory: the CPU
  return run_resident(rq, sub, out_pinned);
}

// The block's bytes from `from` on, copied to the host for the fallback processor (offsets in the
// result count from `from`; rq.out already points where its output goes).
block_result cuda_processor::resident_on_host(const block_request& rq, std::size_t from) {
  std::vector<u8> bytes(rq.size - from);
  if (!bytes.empty())
    cuda::check(cudaMemcpy(bytes.data(), rq.data + from, bytes.size(), cudaMemcpyDeviceToHost),
                "cudaMemcpy (block tail to host)");
  block_request host = rq;
  host.data = bytes.data();
  host.size = bytes.size();
  host.end = rq.end - from;
  return fallback_->process(host);
}

block_result cuda_processor::run_resident(const block_request& rq, std::size_t sub, bool out_pinned) {
  const drain guard(*this);  // whatever happens
  block_result r;
  sub_block p;
  for (unsigned index = 0;; index += 2) {  // stream 0 only: each waits for the one before
    p.n = std::min(sub, rq.size - p.pos);
    p.final = p.pos + p.n == rq.size;
    p.is_last = p.final && rq.at_end;
    p.index = index;
    enqueue(rq, p, input_at::device);
    streams_[0].summary.synchronize();
    p.carry = p.is_last ? 0 : host_results_.data()[0].summary.carry;
    if (!collect(rq, p, out_pinned, r) || p.final) break;
    p.pos += p.n - p.carry;
  }
  if (!rq.count_lines) r.lines = 0;
  return r;
}

}  // namespace gutf8::internal
