#include "cli/piece_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "cli/input.hpp"
#include "cli/mapped_input.hpp"
#include "cli/signals.hpp"
#include "codec/cpu_block.hpp"
#include "codec/lines.hpp"
#include "codec/pieces.hpp"
#include "codec/stream_access.hpp"
#include "cuda/cuda_block.hpp"

namespace gutf8::cli {
namespace {

using internal::piece_outcome;
using internal::piece_plan;

struct slot {
  std::vector<std::uint8_t> out;  // the piece's output
  piece_outcome outcome;
  std::exception_ptr failure;
  bool ready = false;
};

// The shared state of one run: which piece comes next, which is committed, the ring.
class piece_ring {
 public:
  piece_ring(std::size_t slots, std::uint64_t pieces) : slots_(slots), pieces_(pieces) {}

  // The next piece for a worker, once its slot is free; none when all are taken or cancelled.
  std::optional<std::uint64_t> claim() {
    const std::uint64_t k = next_.fetch_add(1, std::memory_order_relaxed);
    if (k >= pieces_) return std::nullopt;
    std::unique_lock lock(m_);
    slot_freed_.wait(lock, [&] { return cancelled_ || k < committed_ + slots_.size(); });
    if (cancelled_) return std::nullopt;
    return k;
  }
  slot& at(std::uint64_t k) { return slots_[k % slots_.size()]; }
  // Only the committing thread waits for a piece; only workers wait for a slot: two condition
  // variables, so that a finished piece does not wake every worker.
  void publish(std::uint64_t k) {
    {
      std::lock_guard lock(m_);
      at(k).ready = true;
    }
    piece_ready_.notify_one();
  }
  // Waits for piece k (the next in order) to be ready.
  slot& await(std::uint64_t k) {
    std::unique_lock lock(m_);
    piece_ready_.wait(lock, [&] { return at(k).ready; });
    return at(k);
  }
  void release(std::uint64_t k) {
    {
      std::lock_guard lock(m_);
      at(k).ready = false;
      committed_ = k + 1;
    }
    slot_freed_.notify_all();
  }
  void cancel() {
    {
      std::lock_guard lock(m_);
      cancelled_ = true;
    }
    slot_freed_.notify_all();
  }

 private:
  std::vector<slot> slots_;
  std::uint64_t pieces_;
  std::atomic<std::uint64_t> next_{0};
  std::mutex m_;
  std::condition_variable piece_ready_, slot_freed_;
  std::uint64_t committed_ = 0;  // guarded by m_
  bool cancelled_ = false;       // guarded by m_
};

using internal::lines_before;

// Where the workers' windows come from: the file mapped in segments of many pieces, each
// mapped when a worker first needs it and unmapped once its last piece is committed (so that
// the process holds a bounded part of the file), or pread copies when a segment cannot be
// mapped (and with GUTF8_NO_MAP set, to compare the two and to test the copies).
class piece_source {
 public:
  piece_source(const input_file& in, std::uint64_t base, const piece_plan& plan)
      : in_(in),
        base_(base),
        plan_(plan),
        pieces_per_segment_(std::max<std::uint64_t>(32, (std::uint64_t{64} << 20) / plan.piece_bytes)),
        segments_((plan.count() + pieces_per_segment_ - 1) / pieces_per_segment_) {
    if (std::getenv("GUTF8_NO_MAP") == nullptr) guard_.emplace();
  }

  // Piece k's window: the input's bytes [plan.window_begin(k), plan.window_end(k)); scratch
  // holds them when they are copied.
  const std::uint8_t* window(std::uint64_t k, std::vector<std::uint8_t>& scratch) {
    const std::uint64_t from = plan_.window_begin(k);
    const auto length = static_cast<std::size_t>(plan_.window_end(k) - from);
    if (const mapped_input* map = segment_of(k)) {
      const std::uint64_t at = from - segment_begin(k / pieces_per_segment_);
      map->populate(at, length);
      return map->at(at);
    }
    scratch.resize(length);
    in_.read_exactly_at(std::as_writable_bytes(std::span(scratch)), base_ + from);
    return scratch.data();
  }

  // Piece k is committed: no worker reads its segment again once it is the segment's last.
  void committed(std::uint64_t k) {
    if ((k + 1) % pieces_per_segment_ != 0 && k + 1 != plan_.count()) return;
    std::lock_guard lock(m_);
    segments_[k / pieces_per_segment_].reset();
  }

 private:
  // A segment's map reaches a page into its neighbours: the windows of its first and last
  // pieces do.
  static constexpr std::uint64_t margin = 4096;
  std::uint64_t segment_begin(std::uint64_t seg) const noexcept {
    const std::uint64_t nominal = seg * pieces_per_segment_ * plan_.piece_bytes;
    return nominal < margin ? 0 : nominal - margin;
  }
  std::uint64_t segment_end(std::uint64_t seg) const noexcept {
    return std::min(plan_.total, (seg + 1) * pieces_per_segment_ * plan_.piece_bytes + margin);
  }

  const mapped_input* segment_of(std::uint64_t k) {
    if (!guard_) return nullptr;
    const std::uint64_t seg = k / pieces_per_segment_;
    std::lock_guard lock(m_);
    std::optional<mapped_input>& map = segments_[seg];
    if (!map) map = mapped_input::map(in_, base_ + segment_begin(seg), segment_end(seg) - segment_begin(seg));
    return map ? &*map : nullptr;
  }

  const input_file& in_;
  std::uint64_t base_;
  const piece_plan& plan_;
  std::uint64_t pieces_per_segment_;
  std::optional<shrunk_input_guard> guard_;  // engaged: map segments
  std::mutex m_;
  std::vector<std::optional<mapped_input>> segments_;  // guarded by m_
};

// The lines of the input's first `end` bytes (the file from base on), read again in slices on
// `threads` threads: what placing the first error needs when the pieces did not count lines.
lines_before count_prefix_lines(const input_file& in, std::uint64_t base, std::uint64_t end,
                                std::size_t unit, unsigned threads) {
  constexpr std::size_t block = std::size_t{1} << 20;  // a multiple of 4: UTF-32 stays aligned
  const std::uint64_t blocks = (end + block - 1) / block;
  std::vector<lines_before> per_block(blocks);
  std::vector<std::exception_ptr> failure(threads);
  std::atomic<std::uint64_t> next{0};
  const auto work = [&](unsigned t) {
    std::vector<std::uint8_t> buffer(block);
    try {
      for (std::uint64_t b; (b = next++) < blocks;) {
        const std::uint64_t from = b * block;
        const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(block, end - from));
        in.read_exactly_at(std::as_writable_bytes(std::span(buffer).first(length)), base + from);
        per_block[b] = internal::count_lines_before(buffer.data(), length, unit, from);
      }
    } catch (...) {
      failure[t] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
  }
  for (const auto& f : failure)
    if (f) std::rethrow_exception(f);
  lines_before total;
  for (const lines_before& p : per_block) {
    total.newlines += p.newlines;
    total.line_start = std::max(total.line_start, p.line_start);
  }
  return total;
}

// By default one hardware thread in eight is left to the committing thread and the system:
// on the 16-vCPU GPU host, 14 workers beat 16 in every median (bench/results/e2e.md).
unsigned worker_count(unsigned threads, std::uint64_t pieces) {
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t wanted = threads != 0 ? threads : hardware - hardware / 8;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(pieces, 1, wanted));
}

}  // namespace

bool piece_pipeline::suits(const input_file& in, const stream_config& config) {
  if (!in.size() || *in.size() == 0 || config.histogram) return false;
  // Not for backend::cuda even without a GPU: that must fail (exit 3), not fall back.
  return config.backend.backend != backend::cuda && !internal::gpu_selected(config.backend);
}

void piece_pipeline::run(input_file& in, gutf8::stream& stream, const stream_config& config,
                         unsigned threads, std::size_t chunk_bytes, fd_writer* sink,
                         progress_bar& bar, stage_times& times) {
  const operation op = config.operation;
  const std::uint64_t base = in.tell();
  piece_plan plan;
  plan.total = *in.size() > base ? *in.size() - base : 0;
  // UTF-32 pieces are cut at multiples of 4 of the input.
  plan.piece_bytes = std::max<std::uint64_t>(std::min(chunk_bytes, max_piece_bytes) / 4 * 4, 4);
  const std::uint64_t pieces = plan.count();
  const unsigned workers = worker_count(threads, pieces);
  const std::size_t out_bytes =
      internal::output_width(op) == 0 ? 0 : internal::output_width(op) * plan.max_window() + 3;
  // Room for every worker's piece and a few finished ones waiting for a slower neighbour.
  piece_ring ring(std::size_t{workers} + workers / 2 + 2, pieces);
  std::atomic<std::int64_t> read_ns{0}, process_ns{0};
  piece_source source(in, base, plan);

  const auto work = [&] {
    const auto processor = internal::make_cpu_processor(1);
    std::vector<std::uint8_t> scratch;
    while (const auto k = ring.claim()) {
      slot& s = ring.at(*k);
      try {
        const auto t0 = steady_clock::now();
        const std::uint8_t* window = source.window(*k, scratch);
        const auto t1 = steady_clock::now();
        s.out.resize(out_bytes);
        s.outcome = internal::process_piece(*processor, op, config.policy, plan, *k, window,
                                            s.out.empty() ? nullptr : s.out.data());
        const auto t2 = steady_clock::now();
        read_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
        process_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count();
      } catch (...) {
        s.failure = std::current_exception();
      }
      ring.publish(*k);
    }
  };

  internal::session& session = internal::stream_access::session_of(stream);
  std::uint64_t done = 0;
  {
    std::vector<std::jthread> pool;
    // However the loop below ends, the workers stop before the ring goes away.
    struct stopper {
      piece_ring& ring;
      std::vector<std::jthread>& pool;
      ~stopper() {
        ring.cancel();
        pool.clear();  // joins
      }
    } stop{ring, pool};
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);

    for (std::uint64_t k = 0; k < pieces; ++k) {
      slot& s = ring.await(k);
      if (s.failure) std::rethrow_exception(s.failure);
      const piece_outcome& o = s.outcome;
      if (o.result.errors != 0 && !o.counted_lines && session.error_unplaced())
        session.set_lines_before(count_prefix_lines(in, base, o.begin, internal::line_unit(op), workers));
      session.commit(o.result, o.lines, o.counted_lines);
      if (sink && o.result.written != 0) {
        stage_timer t(times.write);
        sink->write(std::as_bytes(std::span(s.out).first(o.result.written)));
      }
      const std::uint64_t reached = o.begin + o.result.consumed;
      bar.advance(reached - done);
      done = reached;
      ring.release(k);
      source.committed(k);
      if (session.stopped()) break;  // strict mode stopped at an error unit
    }
  }
  in.seek(base + done);
  times.bytes += done;
  times.read += std::chrono::nanoseconds(read_ns.load());
  times.process += std::chrono::nanoseconds(process_ns.load());
  times.workers = std::max(times.workers, workers);
}

}  // namespace gutf8::cli
