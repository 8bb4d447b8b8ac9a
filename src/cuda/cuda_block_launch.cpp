// The CUDA block processor's work (cuda/cuda_block_processor.hpp): a block cut into sub-blocks
// that the two CUDA streams take in turn (upload, device API, summary download), their results
// checked against the host's carry and gathered into one block_result, outputs copied back.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>

#include "cuda/cuda_block_processor.hpp"
#include "utf8/utf8_rules.hpp"

namespace gutf8::internal {
namespace {

bool is_pinned(const void* p, std::size_t n) {
  if (p == nullptr || n == 0) return false;
  const auto pinned_at = [](const void* q) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, q) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeHost;
  };
  return pinned_at(p) && pinned_at(static_cast<const std::uint8_t*>(p) + (n - 1));
}

double seconds_between(const cuda::event& from, const cuda::event& to) {
  return static_cast<double>(to.elapsed_since(from)) / 1000.0;
}

// decode, repair and encode write output (and the strict policy stops them at an error).
bool writes_output(operation op) { return output_width(op) != 0; }

}  // namespace

bool cuda_processor::output_pinned(const block_request& rq) {
  const std::size_t out_room = output_width(rq.op) * rq.size + (rq.op == operation::encode ? 3 : 0);
  return rq.out == nullptr || out_room == 0 || is_pinned(rq.out, out_room);
}

// The histogram takes a block's code points only once the whole block is done: a block that fails
// part-way (and goes to other workers, under auto) must leave no counts behind.
block_result cuda_processor::process(const block_request& rq) {
  return with_histogram(rq, &cuda_processor::process_block);
}

block_result cuda_processor::process_resident(const block_request& rq) {
  return with_histogram(rq, &cuda_processor::resident_block);
}

block_result cuda_processor::with_histogram(const block_request& rq,
                                            block_result (cuda_processor::*how)(const block_request&)) {
  pending_runs_.clear();
  const block_result r = (this->*how)(rq);
  if (rq.histogram != nullptr)
    for (const cp_run& run : pending_runs_) rq.histogram[run.code_point] += run.count;
  return r;
}

cuda_processor::drain::~drain() {
  for (stream_resources& s : self.streams_) cudaStreamSynchronize(s.stream);
}

block_result cuda_processor::process_block(const block_request& rq) {
  if (rq.end == 0 || rq.end < tuning_.min_gpu_block || !ensure_started()) return fallback_->process(rq);
  if (rq.end != rq.size) return process_head_then_tail(rq, false);
  cuda::check(cudaSetDevice(device_), "cudaSetDevice");  // per thread: the caller may change
  const bool in_pinned = is_pinned(rq.data, rq.size);
  const bool out_pinned = output_pinned(rq);
  const std::size_t sub = reserve(rq, in_pinned, out_pinned);
  if (sub == 0) return fallback_->process(rq);  // auto_select and no GPU memory: the CPU
  return run(rq, sub, in_pinned, out_pinned);
}

// A block whose units end at rq.end < rq.size (a piece run of a big input): the GPU takes [0, end) as
// a chunk that is not the last, which leaves at most 3 bytes of a sequence that may be cut
// short; the fallback processor settles them with the bytes after end in view, as the CPU would.
// resident: rq.data is device memory (resident_block), whose tail comes to the host first.
block_result cuda_processor::process_head_then_tail(const block_request& rq, bool resident) {
  block_request head = rq;
  head.size = rq.end;
  head.at_end = false;
  block_result r = resident ? resident_block(head) : process_block(head);
  if (r.stopped || r.consumed == rq.end) return r;
  block_request tail = rq;
  if (tail.out != nullptr) tail.out += r.written;
  if (resident) {
    append_tail(r, resident_on_host(tail, r.consumed));
    return r;
  }
  tail.data = rq.data + r.consumed;
  tail.size = rq.size - r.consumed;
  tail.end = rq.end - r.consumed;
  append_tail(r, fallback_->process(tail));
  return r;
}

void cuda_processor::append_tail(block_result& r, const block_result& t) {
  if (t.first_error != no_error && r.first_error == no_error) {
    r.first_error = r.consumed + t.first_error;
    r.first_kind = t.first_kind;
  }
  r.errors += t.errors;
  r.lines += t.lines;
  r.written += t.written;
  r.stopped = t.stopped;
  for (std::size_t l = 0; l < 4; ++l) r.by_length[l] += t.by_length[l];
  r.consumed += t.consumed;
}

// The device API call for op. stats decodes with drop: the code points of exactly the
// well-formed sequences, which the stats kernels count; validate and stats never stop.
cudaError_t cuda_processor::launch(operation op, error_policy policy, void* temp, std::size_t& bytes, const u8* in,
                                   std::size_t n, u8* out, device::device_summary* summary, bool is_last,
                                   cudaStream_t stream) {
  const auto* bin = reinterpret_cast<const std::byte*>(in);
  switch (op) {
    case operation::decode:
      return device::decode(temp, bytes, bin, n, reinterpret_cast<char32_t*>(out), summary, policy,
                            is_last, device::decoder::fused, stream);
    case operation::stats:
      return device::decode(temp, bytes, bin, n, reinterpret_cast<char32_t*>(out), summary,
                            error_policy::drop, is_last, device::decoder::fused, stream);
    case operation::repair:
      return device::repair(temp, bytes, bin, n, reinterpret_cast<char8_t*>(out), summary, policy,
                              is_last, stream);
    case operation::encode:
      return device::encode(temp, bytes, bin, n, reinterpret_cast<char8_t*>(out), summary, policy,
                            is_last, device::encoder::fused, stream);
    case operation::validate:
      break;
  }
  return device::validate(temp, bytes, bin, n, summary, is_last, stream);
}

auto cuda_processor::next_sub_block(const block_request& rq, std::size_t pos, std::size_t sub, unsigned index) const
    -> sub_block {
  sub_block p;
  p.pos = pos;
  p.n = std::min(sub, rq.size - pos);
  p.final = pos + p.n == rq.size;
  p.is_last = p.final && rq.at_end;
  p.index = index;
  // The carry the device API will report, known here so the next sub-block is queued before the
  // GPU has decided.
  if (!p.is_last)
    p.carry = rq.op == operation::encode ? p.n % 4 : detail::incomplete_tail(rq.data + pos, p.n);
  return p;
}

// Queues a sub-block on its CUDA stream: upload, device API (+ stats kernels), summary download.
void cuda_processor::enqueue(const block_request& rq, const sub_block& p, input_at in) {
  stream_resources& s = streams_[p.index % 2];
  const u8* src = rq.data + p.pos;
  if (in == input_at::pageable) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(s.in_stage.data(), src, p.n);
    times_.staging_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    src = s.in_stage.data();
  }
  s.start.record(s.stream);
  if (in != input_at::device)
    cuda::check(cudaMemcpyAsync(s.in.data(), src, p.n, cudaMemcpyHostToDevice, s.stream),
                "cudaMemcpyAsync (chunk to GPU)");
  const u8* d_in = in == input_at::device ? src : s.in.data();
  s.h2d.record(s.stream);
  sub_block_result* result = s.result.data();
  device::device_summary* summary = &result->summary;
  if (rq.op == operation::stats)
    cuda::check(cudaMemsetAsync(result, 0, sizeof(sub_block_result), s.stream), "cudaMemsetAsync");
  std::size_t bytes = s.temp.size();
  cuda::check(launch(rq.op, rq.policy, s.temp.data(), bytes, d_in, p.n, s.out.data(), summary,
                     p.is_last, s.stream),
              "CUDA codec kernels");
  if (rq.op == operation::stats)
    cuda::check(kern::stats::count_lengths(reinterpret_cast<const char32_t*>(s.out.data()), summary, p.n,
                                           result->by_length, s.stream),
                "stats kernel (sequence lengths)");
  s.kernels.record(s.stream);
  cuda::check(cudaMemcpyAsync(&host_results_.data()[p.index % 2], result, sizeof(sub_block_result),
                              cudaMemcpyDeviceToHost, s.stream),
              "cudaMemcpyAsync (summary to host)");
  s.summary.record(s.stream);
}

// The (code point, count) runs of a stats sub-block, kept for the block's histogram.
void cuda_processor::merge_histogram(stream_resources& s, std::uint64_t code_points, unsigned index) {
  if (code_points == 0) return;
  const cuda::event& begin = s.summary;  // recorded, complete
  std::size_t bytes = s.hist_temp.size();
  sub_block_result* result = s.result.data();
  cuda::check(kern::stats::histogram_runs(s.hist_temp.data(), bytes,
                                          reinterpret_cast<const char32_t*>(s.out.data()), code_points,
                                          s.runs.data(), &result->runs, s.stream),
              "stats kernels (code point histogram)");
  s.kernels.record(s.stream);
  sub_block_result& host = host_results_.data()[index % 2];
  cuda::check(cudaMemcpyAsync(&host.runs, &result->runs, sizeof host.runs, cudaMemcpyDeviceToHost, s.stream),
              "cudaMemcpyAsync (histogram size)");
  s.out_start.record(s.stream);
  s.out_start.synchronize();
  s.hist_kernel_s += seconds_between(begin, s.kernels);
  const std::uint32_t runs = host.runs;
  if (runs > s.runs_host.size()) throw error(errc::device_failure, "stats kernels: run count out of range");
  cuda::check(cudaMemcpyAsync(s.runs_host.data(), s.runs.data(), runs * sizeof(cp_run), cudaMemcpyDeviceToHost,
                              s.stream),
              "cudaMemcpyAsync (histogram to host)");
  s.out_done.record(s.stream);
  s.out_done.synchronize();
  s.hist_d2h_s += seconds_between(s.kernels, s.out_done);
  pending_runs_.insert(pending_runs_.end(), s.runs_host.data(), s.runs_host.data() + runs);
}

block_result cuda_processor::run(const block_request& rq, std::size_t sub, bool in_pinned, bool out_pinned) {
  const drain guard(*this);  // whatever happens

  block_result r;
  std::deque<sub_block> queued;
  std::size_t next_pos = 0;
  unsigned next_index = 0;
  bool more = true;
  const auto push = [&] {
    const sub_block p = next_sub_block(rq, next_pos, sub, next_index++);
    enqueue(rq, p, in_pinned ? input_at::pinned : input_at::pageable);
    next_pos = p.pos + p.n - p.carry;
    more = !p.final;
    queued.push_back(p);
  };
  push();
  if (more) push();
  while (!queued.empty()) {
    const sub_block p = queued.front();
    queued.pop_front();
    if (!collect(rq, p, out_pinned, r)) break;
    if (more) push();  // onto the stream just drained
  }
  if (!rq.count_lines) r.lines = 0;
  return r;
}

// Waits for sub-block p, checks the GPU's carry against the host's and adds its summary and output
// to r. False when the strict policy stops there.
bool cuda_processor::collect(const block_request& rq, const sub_block& p, bool out_pinned, block_result& r) {
  stream_resources& s = streams_[p.index % 2];
  s.hist_kernel_s = s.hist_d2h_s = 0;
  s.summary.synchronize();
  times_.h2d_seconds += seconds_between(s.start, s.h2d);
  times_.kernel_seconds += seconds_between(s.h2d, s.kernels);
  times_.d2h_seconds += seconds_between(s.kernels, s.summary);
  const sub_block_result& h = host_results_.data()[p.index % 2];
  const device::device_summary d = h.summary;
  const bool stopped = writes_output(rq.op) && rq.policy == error_policy::strict && d.errors != 0;
  if (!stopped && (d.carry != p.carry || d.consumed != p.n - p.carry))
    throw error(errc::device_failure, "CUDA backend: the GPU carried " + std::to_string(d.carry) +
                                          " bytes of a sub-block, the host " + std::to_string(p.carry));
  if (d.first_error_offset != device::no_offset && r.first_error == no_error) {
    r.first_error = p.pos + d.first_error_offset;
    r.first_kind = d.kind();
  }
  r.errors += d.errors;
  r.lines += d.lines;
  r.consumed = p.pos + d.consumed;
  if (rq.op == operation::stats) {
    for (std::size_t l = 0; l < 4; ++l) r.by_length[l] += h.by_length[l];
    if (rq.histogram != nullptr) merge_histogram(s, d.written, p.index);
  }
  if (writes_output(rq.op)) {
    const std::size_t bytes = d.written * (rq.op == operation::decode ? 4 : 1);
    if (rq.out != nullptr && bytes != 0) copy_output(s, bytes, rq.out + r.written, out_pinned);
    r.written += bytes;
  }
  times_.kernel_seconds += s.hist_kernel_s;
  times_.d2h_seconds += s.hist_d2h_s;
  times_.gpu_bytes += stopped ? d.consumed : p.n - p.carry;
  r.stopped = stopped;
  return !stopped;
}

// A sub-block's output to the host: by DMA into page-locked output, else through the staging buffer.
void cuda_processor::copy_output(stream_resources& s, std::size_t bytes, u8* to, bool out_pinned) {
  u8* target = out_pinned ? to : s.out_stage.data();
  s.out_start.record(s.stream);
  cuda::check(cudaMemcpyAsync(target, s.out.data(), bytes, cudaMemcpyDeviceToHost, s.stream),
              "cudaMemcpyAsync (output to host)");
  s.out_done.record(s.stream);
  s.out_done.synchronize();
  times_.d2h_seconds += seconds_between(s.out_start, s.out_done);
  if (!out_pinned) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(to, target, bytes);
    times_.staging_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

}  // namespace gutf8::internal
