#include "engine/gpu_parts.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include "codec/lines.hpp"
#include "compress/magic.hpp"
#include "compress/proof.hpp"
#include "engine/on_threads.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

// nvCOMP decodes a frame on one thread block: frames larger than this would leave the GPU idle.
constexpr std::uint64_t most_frame_text = std::uint64_t{4} << 20;
// A frame's room (the most text its blocks make) is GPU memory held for it: a frame whose blocks
// could make more (a header that lies, blocks of a few bytes that claim 128 KiB) stays on the CPU.
constexpr std::uint64_t most_frame_room = 2 * most_frame_text;

// The slot's compressed bytes: in place (memory), or read into buffer on a few threads (a file).
std::span<const std::uint8_t> slot_bytes(const compressed_input& in, const compress::part& p,
                                         std::span<std::uint8_t> buffer, unsigned threads) {
  const auto size = static_cast<std::size_t>(p.size);
  if (!in.memory().empty()) return in.memory().subspan(static_cast<std::size_t>(p.offset), size);
  const std::span<std::uint8_t> bytes = buffer.first(size);
  constexpr std::size_t slice = std::size_t{4} << 20;
  on_threads((size + slice - 1) / slice, threads, [&](std::uint64_t i, unsigned) {
    const std::size_t from = static_cast<std::size_t>(i) * slice;
    in.reader()(bytes.subspan(from, std::min(slice, size - from)), p.offset + from);
  });
  return bytes;
}

// The last newline in text [at, at + n) on the device, looked for from its end a window at a time.
std::size_t last_newline_of(gpu_zstd& z, std::size_t at, std::size_t n) {
  std::vector<std::uint8_t> window;
  for (std::size_t span = std::size_t{64} << 10, to = n; to > 0; span *= 4) {
    const std::size_t from = to - std::min(to, span);
    window.resize(to - from);
    z.copy_text(at + from, window);
    const std::size_t k = last_newline(window.data(), window.size(), 1);
    if (k != no_newline) return from + k;
    to = from;
  }
  return no_newline;
}

// find_line_facts for a block of the device's text that starts at `at` (its first error's facts
// from the bytes before it, copied back: an input with errors only).
line_facts line_facts_of(gpu_zstd& z, std::size_t at, const block_result& r) {
  line_facts f;
  if (r.lines != 0) f.last = last_newline_of(z, at, r.consumed);
  if (r.errors != 0) {
    std::vector<std::uint8_t> before(r.first_error);
    z.copy_text(at, before);
    f.before_error = count_newlines(before.data(), before.size(), 1);
    f.last_before_error = last_newline(before.data(), before.size(), 1);
  }
  return f;
}

// Whether a zstd frame's magic starts at `at` (a frame the structure check refused, not other bytes).
bool starts_zstd_frame(const compress::random_reader& read, std::uint64_t at, std::uint64_t file_size) {
  std::array<std::uint8_t, compress::magic::zstd.size()> head{};
  if (file_size - at < head.size()) return false;
  read(head, at);
  return compress::magic::zstd_frame(head) == compress::magic::verdict::yes;
}

}  // namespace

piece_outcome process_device_part(gpu_zstd& z, std::size_t size, const run_config& config, std::uint64_t* histogram,
                                  text_edges& edges) {
  std::array<std::uint8_t, 8> first{};
  const std::size_t seen = std::min(size, first.size());
  z.copy_text(0, std::span(first).first(seen));
  const std::size_t begin = first_certain_start(first.data(), seen);  // at most 3 where size > 3
  const std::size_t head = std::min(size, begin + 3);
  std::copy_n(first.data(), head, edges.head.begin());
  edges.head_size = static_cast<std::uint8_t>(head);
  edges.lead = static_cast<std::uint8_t>(begin);
  if (begin == size) {
    edges.no_start = true;
    piece_outcome none;
    none.counted_lines = true;
    return none;
  }
  std::array<std::uint8_t, 16> last{};
  const std::size_t from = size - std::min(size, last.size());
  z.copy_text(from, std::span(last).first(size - from));
  const std::size_t end = from + last_certain_start(last.data(), std::max(begin, from) - from, size - from);
  edges.tail_size = static_cast<std::uint8_t>(size - end);
  std::copy_n(last.data() + (end - from), size - end, edges.tail.begin());

  block_request rq;
  rq.op = config.stream.operation;
  rq.policy = error_policy::replace;  // validate and stats never stop
  rq.size = size - begin;
  rq.end = end - begin;
  rq.count_lines = true;
  rq.histogram = histogram;
  piece_outcome o;
  o.counted_lines = true;
  o.result = z.process(begin, rq);
  o.lines = line_facts_of(z, begin, o.result);
  return o;
}

bool gpu_decompresses(const run_config& config) noexcept {
  return gpu_zstd_built() && config.decompress && output_width(config.stream.operation) == 0;
}

bool gpu_frames(std::span<const std::uint8_t> bytes, std::vector<gpu_frame>& frames) {
  frames.clear();
  const compress::random_reader read = compress::memory_reader(bytes);
  for (std::uint64_t at = 0; at < bytes.size();) {
    const std::optional<compress::member_extent> e = compress::zstd_frame_extent(read, at, bytes.size());
    if (!e || (!e->skippable && (!e->text_size || *e->text_size > most_frame_text || e->room > most_frame_room)))
      return false;
    if (!e->skippable)
      frames.push_back(gpu_frame{static_cast<std::size_t>(at), static_cast<std::size_t>(e->size),
                                 static_cast<std::size_t>(*e->text_size), e->checksum,
                                 static_cast<std::size_t>(std::max(*e->text_size, e->room))});
    at += e->size;
  }
  return true;
}

bool frames_proven(std::span<const std::uint8_t> bytes, std::span<const gpu_frame> frames, unsigned threads) {
  std::atomic<bool> all{true};
  on_threads(frames.size(), threads, [&](std::uint64_t i, unsigned) {
    const gpu_frame& f = frames[static_cast<std::size_t>(i)];
    if (all.load(std::memory_order_relaxed) &&
        !compress::proven(bytes.subspan(f.offset, f.bytes), bytes.subspan(f.offset + f.bytes)))
      all.store(false, std::memory_order_relaxed);
  });
  return all.load();
}

bool lanes_take_in_parts(const compress::random_reader& read, std::uint64_t file_size) {
  constexpr int most_skipped = 16;  // skippable frames first (pzstd writes one): passed over
  std::uint64_t at = 0;
  for (int k = 0; k < most_skipped && at < file_size; ++k) {
    const std::optional<compress::member_extent> e = compress::zstd_frame_extent(read, at, file_size);
    if (!e) return starts_zstd_frame(read, at, file_size);  // refused by the check: the CPU's parts
    if (!e->skippable) return e->text_size && *e->text_size <= most_frame_text;
    at += e->size;
  }
  return false;
}

run_result gpu_part_worker::process(compressed_input& in, const piece_run& run, block_processor& gpu,
                                    std::span<std::uint8_t> buffer, unsigned read_threads, const run_context& ctx,
                                    std::uint64_t* histogram) {
  part_slot s = in.take(run.first);
  if (!std::exchange(made_, true)) {
    block_request shape;  // how process_device_part processes a part's text
    shape.op = ctx.config.stream.operation;
    shape.count_lines = true;
    std::vector<std::uint64_t> counters(histogram != nullptr ? code_space : 0);  // the run's stay untouched
    shape.histogram = histogram != nullptr ? counters.data() : nullptr;
    zstd_ = make_gpu_zstd(gpu, static_cast<std::size_t>(ctx.plan.gpu_run_bytes), shape);
  }
  if (std::optional<run_result> r = on_device(in, s, run, buffer, read_threads, ctx, histogram)) return std::move(*r);
  return cpu_.process(in, s, run, gpu, ctx, histogram);
}

std::optional<run_result> gpu_part_worker::on_device(compressed_input& in, const part_slot& s, const piece_run& run,
                                                     std::span<std::uint8_t> buffer, unsigned read_threads,
                                                     const run_context& ctx, std::uint64_t* histogram) {
  const compress::part& p = s.part;
  if (!zstd_ || s.text || in.format() != compress::format::zstd || p.holds != compress::layout::members ||
      !p.text_size || p.size > buffer.size() || *p.text_size > ctx.plan.gpu_run_bytes)
    return std::nullopt;
  const std::span<const std::uint8_t> bytes = slot_bytes(in, p, buffer, read_threads);
  if (!gpu_frames(bytes, frames_) || !frames_proven(bytes, frames_, read_threads)) return std::nullopt;
  std::uint64_t text = 0, room = 0;
  for (const gpu_frame& f : frames_) {
    text += f.text_bytes;
    room += f.room;
  }
  // The rooms are GPU memory too: 4 runs' text at most (a 64 KiB frame's block counts 128 KiB).
  if (text != *p.text_size || room > 4 * ctx.plan.gpu_run_bytes || !zstd_->decompress(bytes, frames_))
    return std::nullopt;
  run_result r;
  r.run = run;
  r.edges.emplace();
  r.outcome = process_device_part(*zstd_, static_cast<std::size_t>(*p.text_size), ctx.config, histogram, *r.edges);
  r.gpu = true;
  return r;
}

}  // namespace gutf8::internal
