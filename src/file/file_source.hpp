// The bytes of a regular file, from a start offset to the end it had when the run began, as the
// file pipeline's workers read them: piece windows scanned in place from mapped segments (CPU
// workers), runs copied out with pread on several threads (GPU lanes fill page-locked buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "codec/lines.hpp"
#include "file/mapped_range.hpp"
#include "file/pieces.hpp"

namespace gutf8::internal {

class file_source {
 public:
  // map: scan mapped segments in place (else every window is copied with pread). A segment whose
  // pages lie past the file's end is reported as the file having shrunk, not read.
  file_source(int fd, std::uint64_t base, const piece_plan& plan, bool map);

  // Fills buffer with the input's bytes from `at` (relative to base), on `threads` threads; throws
  // gutf8::error(io_failure) when the file cannot be read or ends early (it shrank).
  void read(std::span<std::uint8_t> buffer, std::uint64_t at, unsigned threads = 1) const;

  // Piece k's window, [plan.window_begin(k), plan.window_end(k)): mapped, or copied into scratch.
  const std::uint8_t* window(std::uint64_t k, std::vector<std::uint8_t>& scratch);
  // The run is committed: its segments are unmapped once no later piece reads them.
  void committed(const piece_run& run);

  // The lines of the input's first `end` bytes, read again on `threads` threads: what placing the
  // first error needs when the pieces did not count their lines.
  [[nodiscard]] lines_before count_lines(std::uint64_t end, std::size_t unit, unsigned threads) const;

 private:
  // A segment's map reaches a page into its neighbours: the windows of its first and last pieces do.
  static constexpr std::uint64_t margin = 4096;
  [[nodiscard]] std::uint64_t segment_begin(std::uint64_t seg) const noexcept;
  [[nodiscard]] std::uint64_t segment_end(std::uint64_t seg) const noexcept;
  const mapped_range* segment_of(std::uint64_t k);
  void read_once(std::span<std::uint8_t> buffer, std::uint64_t at) const;

  int fd_;
  std::uint64_t base_;
  const piece_plan& plan_;
  std::uint64_t pieces_per_segment_;
  bool map_;
  std::mutex m_;
  std::vector<std::optional<mapped_range>> segments_;  // guarded by m_
};

}  // namespace gutf8::internal
