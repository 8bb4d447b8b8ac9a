#include "file/file_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "file/on_threads.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

[[noreturn]] void shrank() { throw error(errc::io_failure, "the file shrank while it was read"); }

}  // namespace

file_source::file_source(int fd, std::uint64_t base, const piece_plan& plan, bool map)
    : fd_(fd),
      base_(base),
      plan_(plan),
      pieces_per_segment_(std::max<std::uint64_t>(32, (std::uint64_t{64} << 20) / std::max<std::uint64_t>(plan.piece_bytes, 1))),
      map_(map),
      segments_((plan.count() + pieces_per_segment_ - 1) / pieces_per_segment_) {}

void file_source::read_once(std::span<std::uint8_t> buffer, std::uint64_t at) const {
  std::size_t filled = 0;
  while (filled < buffer.size()) {
    const ssize_t n = ::pread(fd_, buffer.data() + filled, buffer.size() - filled,
                              static_cast<off_t>(base_ + at + filled));
    if (n == 0) shrank();
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_call_failure(errno);
    }
    filled += static_cast<std::size_t>(n);
  }
}

void file_source::read(std::span<std::uint8_t> buffer, std::uint64_t at, unsigned threads) const {
  constexpr std::size_t slice = std::size_t{4} << 20;  // each thread's share, in pieces of this
  const std::uint64_t slices = (buffer.size() + slice - 1) / slice;
  on_threads(slices, threads, [&](std::uint64_t i, unsigned) {
               const std::size_t from = static_cast<std::size_t>(i) * slice;
               read_once(buffer.subspan(from, std::min(slice, buffer.size() - from)), at + from);
             });
}

std::optional<mapped_range> file_source::map_range(std::uint64_t at, std::size_t length) const {
  std::optional<mapped_range> map = mapped_range::map(fd_, base_ + at, length);
  if (map && !map->populate(0, length)) shrank();
  return map;
}

std::uint64_t file_source::segment_begin(std::uint64_t seg) const noexcept {
  const std::uint64_t nominal = seg * pieces_per_segment_ * plan_.piece_bytes;
  return nominal < margin ? 0 : nominal - margin;
}

std::uint64_t file_source::segment_end(std::uint64_t seg) const noexcept {
  return std::min(plan_.total, (seg + 1) * pieces_per_segment_ * plan_.piece_bytes + margin);
}

const mapped_range* file_source::segment_of(std::uint64_t k) {
  if (!map_) return nullptr;
  const std::uint64_t seg = k / pieces_per_segment_;
  std::lock_guard lock(m_);
  std::optional<mapped_range>& map = segments_[seg];
  if (!map) map = mapped_range::map(fd_, base_ + segment_begin(seg), segment_end(seg) - segment_begin(seg));
  return map ? &*map : nullptr;
}

const std::uint8_t* file_source::window(std::uint64_t k, std::vector<std::uint8_t>& scratch) {
  const std::uint64_t from = plan_.window_begin(k);
  const auto length = static_cast<std::size_t>(plan_.window_end(k) - from);
  if (const mapped_range* map = segment_of(k)) {
    const std::uint64_t at = from - segment_begin(k / pieces_per_segment_);
    if (!map->populate(at, length)) shrank();
    return map->at(at);
  }
  scratch.resize(length);
  read_once(scratch, from);
  return scratch.data();
}

void file_source::committed(const piece_run& run) {
  if (!map_ || run.count == 0) return;
  // Every segment whose last piece is in the run (or is the file's last) is done with.
  const std::uint64_t last = run.end() - 1;
  std::lock_guard lock(m_);
  for (std::uint64_t seg = run.first / pieces_per_segment_; seg <= last / pieces_per_segment_; ++seg) {
    const std::uint64_t seg_last = std::min((seg + 1) * pieces_per_segment_, plan_.count()) - 1;
    if (seg_last <= last) segments_[seg].reset();
  }
}

lines_before file_source::count_lines(std::uint64_t end, std::size_t unit, unsigned threads) const {
  constexpr std::size_t block = std::size_t{1} << 20;  // a multiple of 4: UTF-32 stays aligned
  const std::uint64_t blocks = (end + block - 1) / block;
  std::vector<lines_before> per_block(blocks);
  threads = std::max(threads, 1u);
  std::vector<std::vector<std::uint8_t>> buffers(threads);
  on_threads(blocks, threads, [&](std::uint64_t b, unsigned t) {
    std::vector<std::uint8_t>& buffer = buffers[t];
    buffer.resize(block);
    const std::uint64_t from = b * block;
    const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(block, end - from));
    read_once(std::span(buffer).first(length), from);
    per_block[b] = count_lines_before(buffer.data(), length, unit, from);
  });
  lines_before total;
  for (const lines_before& p : per_block) {
    total.newlines += p.newlines;
    total.line_start = std::max(total.line_start, p.line_start);
  }
  return total;
}

}  // namespace gutf8::internal
