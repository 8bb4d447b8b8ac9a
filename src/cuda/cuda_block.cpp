#include "cuda/cuda_block.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <vector>
#include <string>
#include <utility>

#include "gutf8/cuda_resources.hpp"
#include "gutf8/detail/utf8_rules.hpp"
#include "gutf8/device.hpp"
#include "gutf8/error.hpp"
#include "utf8/stats.hpp"

namespace gutf8::internal {
namespace {

using u8 = std::uint8_t;
using cp_run = kern::stats::code_point_run;

// What one sub-block leaves on the device for the host: copied back in one transfer.
struct sub_block_result {
  device::device_summary summary;
  unsigned long long by_length[4];  // stats
  std::uint32_t runs;               // stats with a histogram
  std::uint32_t pad;
};

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
  return pinned_at(p) && pinned_at(static_cast<const u8*>(p) + (n - 1));
}

double seconds_between(const cuda::event& from, const cuda::event& to) {
  return static_cast<double>(to.elapsed_since(from)) / 1000.0;
}

template <class T>
void grow(cuda::device_buffer<T>& b, std::size_t n) {
  if (b.size() < n) {
    b = cuda::device_buffer<T>();  // free first: the old and the new need not both fit
    b = cuda::device_buffer<T>(n);
  }
}
template <class T>
void grow(cuda::pinned_buffer<T>& b, std::size_t n) {
  if (b.size() < n) {
    b = cuda::pinned_buffer<T>();
    b = cuda::pinned_buffer<T>(n);
  }
}

class cuda_processor final : public block_processor {
 public:
  cuda_processor(const options& opt, std::unique_ptr<block_processor> fallback, cuda_tuning tuning)
      : fallback_(std::move(fallback)), tuning_(tuning), device_(opt.device),
        memory_limit_(opt.device_memory_limit) {
    tuning_.sub_blocks = std::max(tuning_.sub_blocks, 1u);
    tuning_.min_retry_block = std::max<std::size_t>(tuning_.min_retry_block, 4096);
    tuning_.max_sub_block = std::max(tuning_.max_sub_block, tuning_.min_retry_block);
    if (!tuning_.lazy) start();
  }

  ~cuda_processor() override {
    if (started_) {
      cudaSetDevice(device_);
      for (stream_resources& s : streams_) cudaStreamSynchronize(s.stream);
    }
  }

  block_result process(const block_request& rq) override {
    if (rq.end == 0 || rq.end < tuning_.min_gpu_block || !ensure_started()) return fallback_->process(rq);
    if (rq.end != rq.size) return process_head_then_tail(rq);
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");  // per thread: the caller may change
    const bool in_pinned = is_pinned(rq.data, rq.size);
    const std::size_t out_room = output_width(rq.op) * rq.size + (rq.op == operation::encode ? 3 : 0);
    const bool out_pinned = rq.out == nullptr || out_room == 0 || is_pinned(rq.out, out_room);
    const std::size_t sub = reserve(rq, in_pinned, out_pinned);
    if (sub == 0) return fallback_->process(rq);  // auto_select and no GPU memory: the CPU
    return run(rq, sub, in_pinned, out_pinned);
  }

  [[nodiscard]] stream_timings timings() const noexcept { return times_; }

 private:
  // A block whose units end at rq.end < rq.size (a run of file pieces): the GPU takes [0, end) as
  // a chunk that is not the last, which leaves at most 3 bytes of a sequence that may be cut
  // short; the fallback processor settles them with the bytes after end in view, as the CPU would.
  block_result process_head_then_tail(const block_request& rq) {
    block_request head = rq;
    head.size = rq.end;
    head.at_end = false;
    block_result r = process(head);
    if (r.stopped || r.consumed == rq.end) return r;
    block_request tail = rq;
    tail.data = rq.data + r.consumed;
    tail.size = rq.size - r.consumed;
    tail.end = rq.end - r.consumed;
    if (tail.out != nullptr) tail.out += r.written;
    const block_result t = fallback_->process(tail);
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
    return r;
  }

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

  // ------------------------------------------------------------------ start-up ----

  bool ensure_started() {
    if (started_) return true;
    if (failed_) return false;
    try {
      start();
      return true;
    } catch (const error& e) {
      give_up(e);
      return false;  // lazy only: an eager processor started in its constructor
    }
  }

  // Lazy only: every later block goes to the fallback; --verbose says so when memory was why.
  void give_up(const error& why) {
    failed_ = true;
    if (why.code() == errc::out_of_memory) times_.gpu_memory_fallback = true;
  }

  void start() {
    const std::string why = cuda::gpu_unavailable_reason();
    if (!why.empty()) throw error(errc::no_device, "no usable GPU for the CUDA backend: " + why);
    int count = 0;
    cuda::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device_ < 0 || device_ >= count)
      throw error(errc::no_device, "no GPU " + std::to_string(device_) + " for the CUDA backend (" +
                                       std::to_string(count) + (count == 1 ? " GPU" : " GPUs") +
                                       ", numbered from 0)");
    try {
      cuda::check(cudaSetDevice(device_), "cudaSetDevice");
      cuda::check(cudaFree(nullptr), "creating the CUDA context");
      streams_.clear();
      streams_.resize(2);  // streams and events: created only now, never for a CPU-only run
      host_results_ = cuda::pinned_buffer<sub_block_result>(streams_.size());
    } catch (const error& e) {
      cudaGetLastError();
      throw error(e.code() == errc::out_of_memory ? errc::out_of_memory : errc::no_device,
                  "cannot use GPU " + std::to_string(device_) + ": " + e.what());
    }
    started_ = true;
  }

  // ----------------------------------------------------------------- buffers ----

  // The sub-block size for a block: about tuning.sub_blocks of them, whole MiB, within the limits.
  std::size_t plan(std::size_t size) const {
    constexpr std::size_t mib = std::size_t{1} << 20;
    std::size_t sub = (size / tuning_.sub_blocks + mib - 1) / mib * mib;
    sub = std::max(sub, tuning_.min_sub_block);
    sub = std::min(sub, tuning_.max_sub_block);
    return std::min(sub, size);
  }

  // Makes both streams' buffers hold sub-blocks of the planned size, halving it when the GPU (or the pinned
  // host memory, or options::device_memory_limit) runs out. Returns the sub-block size, or 0 when
  // even the smallest does not fit and the processor is lazy (auto_select falls back to the CPU).
  std::size_t reserve(const block_request& rq, bool in_pinned, bool out_pinned) {
    std::size_t sub = plan(rq.size);
    for (;;) {
      try {
        const buffer_sizes need = sizes_for(rq, sub);
        check_memory_limit(need);  // inside the try: a limit takes the path a real failure takes
        for (stream_resources& s : streams_) reserve_stream(s, rq, need, in_pinned, out_pinned);
        return sub;
      } catch (const error& e) {
        if (e.code() != errc::out_of_memory) throw;
        cudaGetLastError();
        for (stream_resources& s : streams_) release(s);
        if (sub <= tuning_.min_retry_block) {
          if (tuning_.lazy) {
            give_up(e);
            return 0;
          }
          throw error(errc::out_of_memory,
                      "not enough GPU memory for the CUDA backend, even in pieces of " +
                          std::to_string(sub) + " bytes: " + e.what());
        }
        sub = std::max(tuning_.min_retry_block, sub / 2);
        tuning_.max_sub_block = sub;  // later blocks start from the size that fitted
      }
    }
  }

  static void release(stream_resources& s) {
    s.in = {}, s.out = {}, s.temp = {}, s.hist_temp = {}, s.runs = {};
    s.in_stage = {}, s.out_stage = {}, s.runs_host = {};
    s.capacity = 0;
  }

  // What one stream's buffers must hold for sub-blocks of `sub_block` bytes of rq: computed once, so the
  // memory limit and the allocations cannot disagree. Device buffers in bytes, runs in elements.
  struct buffer_sizes {
    std::size_t sub_block = 0, in = 0, out = 0, temp = 0, hist_temp = 0, runs = 0;
    bool histogram = false;
  };

  buffer_sizes sizes_for(const block_request& rq, std::size_t sub) const {
    buffer_sizes z;
    const bool stats = rq.op == operation::stats;
    const std::size_t width = stats ? 4 : output_width(rq.op);
    z.sub_block = z.in = sub;
    z.out = width == 0 ? 0 : width * sub + 16;
    z.temp = std::max<std::size_t>(temp_bytes(rq, sub), 1);
    z.histogram = stats && rq.histogram != nullptr;
    if (z.histogram) {
      cuda::check(kern::stats::histogram_runs(nullptr, z.hist_temp, nullptr, sub, nullptr, nullptr, nullptr),
                  "histogram_runs (size query)");
      z.runs = kern::stats::max_runs(sub);
    }
    return z;
  }

  // Device bytes a stream's buffers hold once reserve_stream(z) ran: buffers only grow, so for each the larger
  // of what it holds and what z asks for.
  static std::uint64_t device_bytes_after(const stream_resources& s, const buffer_sizes& z) {
    const auto after = [](const auto& b, std::size_t bytes) {
      return std::max<std::uint64_t>(b.bytes(), bytes);
    };
    return after(s.in, z.in) + after(s.out, z.out) + after(s.temp, z.temp) + after(s.hist_temp, z.hist_temp) +
           after(s.runs, z.runs * sizeof(cp_run)) + sizeof(sub_block_result);
  }

  // options::device_memory_limit: buffers that would exceed it fail as cudaMalloc would, before
  // anything is allocated, so the caller's retry and fallback are those of a real out-of-memory.
  void check_memory_limit(const buffer_sizes& z) const {
    if (memory_limit_ == 0) return;
    std::uint64_t total = 0;
    for (const stream_resources& s : streams_) total += device_bytes_after(s, z);
    if (total > memory_limit_)
      throw error(errc::out_of_memory, "the buffers need " + std::to_string(total) +
                                           " bytes, over the device memory limit of " +
                                           std::to_string(memory_limit_) + " bytes");
  }

  void reserve_stream(stream_resources& s, const block_request& rq, const buffer_sizes& z, bool in_pinned, bool out_pinned) {
    grow(s.in, z.in);
    if (z.out != 0) grow(s.out, z.out);
    grow(s.temp, z.temp);
    if (s.result.size() == 0) {
      s.result = cuda::device_buffer<sub_block_result>(1);
      // Every sub-block downloads the whole sub_block_result, whose stats fields only stats writes.
      cuda::check(cudaMemset(s.result.data(), 0, sizeof(sub_block_result)), "cudaMemset (sub-block result)");
    }
    if (z.histogram) {
      grow(s.hist_temp, z.hist_temp);
      grow(s.runs, z.runs);
      grow(s.runs_host, z.runs);
    }
    if (!in_pinned) grow(s.in_stage, z.sub_block);
    if (!out_pinned && rq.op != operation::stats && z.out != 0) grow(s.out_stage, z.out);
    s.capacity = z.sub_block;
  }

  // Temporary storage of the device API for a sub-block of n bytes.
  std::size_t temp_bytes(const block_request& rq, std::size_t n) const {
    std::size_t bytes = 0;
    cuda::check(launch(rq.op, rq.policy, nullptr, bytes, nullptr, n, nullptr, nullptr, true, nullptr),
                "device API (size query)");
    return bytes;
  }

  // ------------------------------------------------------------------ the work ----

  // The device API call for op. stats decodes with drop: the code points of exactly the
  // well-formed sequences, which the stats kernels count; validate and stats never stop.
  static cudaError_t launch(operation op, error_policy policy, void* temp, std::size_t& bytes,
                            const u8* in, std::size_t n, u8* out, device::device_summary* summary,
                            bool is_last, cudaStream_t stream) {
    const auto* bin = reinterpret_cast<const std::byte*>(in);
    switch (op) {
      case operation::decode:
        return device::decode(temp, bytes, bin, n, reinterpret_cast<char32_t*>(out), summary, policy,
                              is_last, device::decoder::fused, stream);
      case operation::stats:
        return device::decode(temp, bytes, bin, n, reinterpret_cast<char32_t*>(out), summary,
                              error_policy::drop, is_last, device::decoder::fused, stream);
      case operation::sanitize:
        return device::sanitize(temp, bytes, bin, n, reinterpret_cast<char8_t*>(out), summary, policy,
                                is_last, stream);
      case operation::encode:
        return device::encode(temp, bytes, bin, n, reinterpret_cast<char8_t*>(out), summary, policy,
                              is_last, device::encoder::fused, stream);
      case operation::validate:
        break;
    }
    return device::validate(temp, bytes, bin, n, summary, is_last, stream);
  }

  sub_block next_sub_block(const block_request& rq, std::size_t pos, std::size_t sub, unsigned index) const {
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
  void enqueue(const block_request& rq, const sub_block& p, bool in_pinned) {
    stream_resources& s = streams_[p.index % 2];
    const u8* src = rq.data + p.pos;
    if (!in_pinned) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(s.in_stage.data(), src, p.n);
      times_.staging_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      src = s.in_stage.data();
    }
    s.start.record(s.stream);
    cuda::check(cudaMemcpyAsync(s.in.data(), src, p.n, cudaMemcpyHostToDevice, s.stream),
                "cudaMemcpyAsync (chunk to GPU)");
    s.h2d.record(s.stream);
    sub_block_result* result = s.result.data();
    device::device_summary* summary = &result->summary;
    if (rq.op == operation::stats)
      cuda::check(cudaMemsetAsync(result, 0, sizeof(sub_block_result), s.stream), "cudaMemsetAsync");
    std::size_t bytes = s.temp.size();
    cuda::check(launch(rq.op, rq.policy, s.temp.data(), bytes, s.in.data(), p.n, s.out.data(), summary,
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

  // The (code point, count) runs of a stats sub-block, added to the caller's histogram.
  void merge_histogram(stream_resources& s, std::uint64_t code_points, std::uint64_t* histogram, unsigned index) {
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
    for (std::uint32_t k = 0; k < runs; ++k) histogram[s.runs_host.data()[k].code_point] += s.runs_host.data()[k].count;
  }

  block_result run(const block_request& rq, std::size_t sub, bool in_pinned, bool out_pinned) {
    // Whatever happens, nothing may still read rq.data or write rq.out when this returns.
    struct drain {
      cuda_processor& self;
      ~drain() {
        for (stream_resources& s : self.streams_) cudaStreamSynchronize(s.stream);
      }
    } guard{*this};

    const bool transcodes = rq.op == operation::decode || rq.op == operation::sanitize ||
                            rq.op == operation::encode;
    const bool strict = transcodes && rq.policy == error_policy::strict;
    const std::size_t out_unit = rq.op == operation::decode ? 4 : 1;
    block_result r;
    std::deque<sub_block> queued;
    std::size_t next_pos = 0;
    unsigned next_index = 0;
    bool more = true;
    const auto push = [&] {
      const sub_block p = next_sub_block(rq, next_pos, sub, next_index++);
      enqueue(rq, p, in_pinned);
      next_pos = p.pos + p.n - p.carry;
      more = !p.final;
      queued.push_back(p);
    };
    push();
    if (more) push();

    while (!queued.empty()) {
      const sub_block p = queued.front();
      queued.pop_front();
      stream_resources& s = streams_[p.index % 2];
      s.hist_kernel_s = s.hist_d2h_s = 0;
      s.summary.synchronize();
      times_.h2d_seconds += seconds_between(s.start, s.h2d);
      times_.kernel_seconds += seconds_between(s.h2d, s.kernels);
      times_.d2h_seconds += seconds_between(s.kernels, s.summary);
      const sub_block_result& h = host_results_.data()[p.index % 2];
      const device::device_summary d = h.summary;
      const bool stopped = strict && d.errors != 0;
      if (!stopped && (d.carry != p.carry || d.consumed != p.n - p.carry))
        throw error(errc::device_failure,
                    "CUDA backend: the GPU carried " + std::to_string(d.carry) + " bytes of a sub-block, the host " +
                        std::to_string(p.carry));
      if (d.first_error_offset != device::no_offset && r.first_error == no_error) {
        r.first_error = p.pos + d.first_error_offset;
        r.first_kind = d.kind();
      }
      r.errors += d.errors;
      r.lines += d.lines;
      r.consumed = p.pos + d.consumed;
      if (rq.op == operation::stats) {
        for (std::size_t l = 0; l < 4; ++l) r.by_length[l] += h.by_length[l];
        if (rq.histogram != nullptr) merge_histogram(s, d.written, rq.histogram, p.index);
      }
      double out_s = 0;
      if (transcodes && rq.out != nullptr && d.written != 0) {
        const std::size_t bytes = d.written * out_unit;
        u8* target = out_pinned ? rq.out + r.written : s.out_stage.data();
        s.out_start.record(s.stream);
        cuda::check(cudaMemcpyAsync(target, s.out.data(), bytes, cudaMemcpyDeviceToHost, s.stream),
                    "cudaMemcpyAsync (output to host)");
        s.out_done.record(s.stream);
        s.out_done.synchronize();
        out_s = seconds_between(s.out_start, s.out_done);
        if (!out_pinned) {
          const auto t0 = std::chrono::steady_clock::now();
          std::memcpy(rq.out + r.written, target, bytes);
          times_.staging_seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
      }
      if (transcodes) r.written += d.written * out_unit;
      times_.kernel_seconds += s.hist_kernel_s;
      times_.d2h_seconds += out_s + s.hist_d2h_s;
      times_.gpu_bytes += stopped ? d.consumed : p.n - p.carry;
      if (stopped) {
        r.stopped = true;
        break;
      }
      if (more) push();  // onto the stream just drained
    }
    if (!rq.count_lines) r.lines = 0;
    return r;
  }

  std::unique_ptr<block_processor> fallback_;
  cuda_tuning tuning_;
  int device_;
  std::uint64_t memory_limit_;  // options::device_memory_limit; 0 = none
  bool started_ = false, failed_ = false;
  std::vector<stream_resources> streams_;  // two, once started
  cuda::pinned_buffer<sub_block_result> host_results_;
  stream_timings times_{};
};

}  // namespace

std::unique_ptr<block_processor> make_cuda_processor(const options& opt,
                                                     std::unique_ptr<block_processor> fallback,
                                                     cuda_tuning tuning) {
  return std::make_unique<cuda_processor>(opt, std::move(fallback), tuning);
}

stream_timings timings_of(const block_processor& processor) {
  if (const auto* p = dynamic_cast<const cuda_processor*>(&processor)) return p->timings();
  return {};
}

void* allocate_pinned(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (bytes == 0 || cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}

void free_pinned(void* p) noexcept {
  if (p != nullptr) cudaFreeHost(p);
}

bool register_host(const void* p, std::size_t bytes) noexcept {
  if (cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterReadOnly | cudaHostRegisterPortable) ==
      cudaSuccess)
    return true;
  cudaGetLastError();
  return false;
}

void unregister_host(const void* p) noexcept { cudaHostUnregister(const_cast<void*>(p)); }

}  // namespace gutf8::internal
