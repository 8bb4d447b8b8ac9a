// gutf8::cuda::nvcomp::decompress_zstd: lays out nvCOMP's per-frame arrays in the caller's temporary
// storage, uploads them in one copy, decompresses and folds the statuses into verdicts.
#include "cuda/nvcomp/zstd.hpp"

#include <nvcomp/zstd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/error.hpp"

namespace gutf8::cuda::nvcomp {
namespace {

static_assert(sizeof(nvcompStatus_t) == sizeof(std::int32_t));
static_assert(sizeof(std::size_t) == sizeof(std::uint64_t) && sizeof(void*) == sizeof(std::uint64_t));  // one word array

constexpr std::size_t align256(std::size_t v) { return (v + 255) / 256 * 256; }

// [frame pointers][output pointers][frame sizes][output rooms][content sizes][written][statuses]
// [nvCOMP's temporary storage]; the first five are one host array uploaded at once.
struct temp_layout {
  std::size_t n;
  std::size_t staged_bytes = 5 * n * sizeof(std::uint64_t);
  std::size_t written_offset = staged_bytes;
  std::size_t status_offset = written_offset + n * sizeof(std::size_t);
  std::size_t nvcomp_offset = align256(status_offset + n * sizeof(std::int32_t));

  [[nodiscard]] std::size_t* words(void* d_temp, std::size_t array) const {
    return static_cast<std::size_t*>(d_temp) + array * n;
  }
};

struct batch_shape {
  std::size_t max_text = 1;  // nvCOMP sizes its scratch by the largest frame; empty frames ask for 1
  std::size_t total_text = 0;
};

nvcompAlignmentRequirements_t alignments() {
  nvcompAlignmentRequirements_t a{};
  check(nvcompBatchedZstdDecompressGetRequiredAlignments(nvcompBatchedZstdDecompressDefaultOpts, &a),
        "nvcompBatchedZstdDecompressGetRequiredAlignments");
  return a;
}

// nvCOMP's output room for the frame: scratch is sized by it too, so a frame whose text outgrows
// its header's size still fits what nvCOMP planned for.
std::size_t room_of(const zstd_frame& f) { return std::max(f.room, f.text_bytes); }

bool aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % std::max<std::size_t>(alignment, 1) == 0;
}

// Refuses what nvCOMP would take as undefined behaviour on the host's side of the contract.
batch_shape shape_of(std::span<const zstd_frame> frames, const std::byte* d_out) {
  const nvcompAlignmentRequirements_t a = alignments();  // 6.0: 1 for input and output
  batch_shape s;
  for (const zstd_frame& f : frames) {
    if (f.d_data == nullptr || f.bytes == 0 || f.bytes > nvcompZstdDecompressionMaxAllowedChunkSize ||
        room_of(f) > nvcompZstdDecompressionMaxAllowedChunkSize)
      throw error(errc::invalid_argument, "nvcomp::decompress_zstd: a frame's sizes are out of nvCOMP's range");
    if (!aligned(f.d_data, a.input) || (d_out != nullptr && !aligned(d_out + f.out_offset, a.output)))
      throw error(errc::invalid_argument, "nvcomp::decompress_zstd: a frame or its text is not aligned for nvCOMP");
    s.max_text = std::max(s.max_text, room_of(f));
    s.total_text += room_of(f);
  }
  s.total_text = std::max<std::size_t>(s.total_text, 1);
  return s;
}

std::size_t nvcomp_temp_bytes(std::size_t n, const batch_shape& s, cudaStream_t stream) {
  std::size_t bytes = 0;
  check(nvcompBatchedZstdDecompressGetTempSize(n, s.max_text, nvcompBatchedZstdDecompressDefaultOpts, &bytes,
                                               s.total_text, stream),
        "nvcompBatchedZstdDecompressGetTempSize");
  return bytes;
}

// The four input arrays, as nvCOMP reads them, and the content sizes, in one host buffer.
std::vector<std::uint64_t> staged_arrays(std::span<const zstd_frame> frames, std::byte* d_out) {
  const std::size_t n = frames.size();
  std::vector<std::uint64_t> words(5 * n);
  for (std::size_t i = 0; i < n; ++i) {
    words[i] = reinterpret_cast<std::uintptr_t>(frames[i].d_data);
    words[n + i] = reinterpret_cast<std::uintptr_t>(d_out + frames[i].out_offset);
    words[2 * n + i] = frames[i].bytes;
    words[3 * n + i] = room_of(frames[i]);
    words[4 * n + i] = frames[i].text_bytes;
  }
  return words;
}

}  // namespace

void decompress_zstd(void* d_temp, std::size_t& temp_bytes, std::span<const zstd_frame> frames, std::byte* d_out,
                     frame_result* d_results, cudaStream_t stream) {
  const std::size_t n = frames.size();
  const temp_layout l{n};
  const batch_shape s = shape_of(frames, d_out);
  const std::size_t scratch = n == 0 ? 0 : nvcomp_temp_bytes(n, s, stream);
  const std::size_t needed = std::max<std::size_t>(l.nvcomp_offset + scratch, 1);
  if (d_temp == nullptr) {
    temp_bytes = needed;
    return;
  }
  if (temp_bytes < needed || d_out == nullptr || d_results == nullptr)
    throw error(errc::invalid_argument, "nvcomp::decompress_zstd: temporary storage or output missing");
  if (n == 0) return;
  // A pageable source: the copy returns once CUDA has staged it, so the vector may go.
  const std::vector<std::uint64_t> words = staged_arrays(frames, d_out);
  cuda::check(cudaMemcpyAsync(d_temp, words.data(), l.staged_bytes, cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync H2D (nvCOMP arrays)");
  auto* d_written = reinterpret_cast<std::size_t*>(static_cast<std::byte*>(d_temp) + l.written_offset);
  auto* d_status = reinterpret_cast<nvcompStatus_t*>(static_cast<std::byte*>(d_temp) + l.status_offset);
  // A frame nvCOMP leaves unreported reads as failed, never as a stale success.
  cuda::check(cudaMemsetAsync(d_written, 0, n * sizeof(std::size_t), stream), "cudaMemsetAsync (sizes)");
  cuda::check(cudaMemsetAsync(d_status, 0xFF, n * sizeof(nvcompStatus_t), stream), "cudaMemsetAsync (statuses)");
  check(nvcompBatchedZstdDecompressAsync(
            reinterpret_cast<const void* const*>(l.words(d_temp, 0)), l.words(d_temp, 2), l.words(d_temp, 3),
            d_written, n, static_cast<std::byte*>(d_temp) + l.nvcomp_offset, scratch,
            reinterpret_cast<void* const*>(l.words(d_temp, 1)), nvcompBatchedZstdDecompressDefaultOpts, d_status,
            stream),
        "nvcompBatchedZstdDecompressAsync");
  fold_verdicts(reinterpret_cast<const std::int32_t*>(d_status), d_written, l.words(d_temp, 4), n, d_results, stream);
}

namespace {

// 2 s, or GUTF8_NVCOMP_WAIT_SECONDS: compute-sanitizer's runs make kernels many times slower.
double base_wait_seconds() {
  static const double seconds = [] {
    const char* asked = std::getenv("GUTF8_NVCOMP_WAIT_SECONDS");
    const double s = asked == nullptr ? 0.0 : std::strtod(asked, nullptr);
    return s > 0 ? s : 2.0;
  }();
  return seconds;
}

}  // namespace

std::chrono::steady_clock::time_point batch_deadline(std::size_t compressed_bytes) {
  constexpr double bytes_per_second = 0.5e9;
  const std::chrono::duration<double> wait(base_wait_seconds() + static_cast<double>(compressed_bytes) / bytes_per_second);
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
}

bool completes_by(cudaEvent_t done, std::chrono::steady_clock::time_point deadline) {
  auto pause = std::chrono::microseconds(10);
  for (;;) {
    const cudaError_t status = cudaEventQuery(done);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) cuda::raise(status, "nvCOMP batch");
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(200));  // a batch's end is seen within 0.2 ms
  }
}

std::vector<std::size_t> failed_frames(std::span<const frame_result> results) {
  std::vector<std::size_t> failed;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].verdict != frame_verdict::ok) failed.push_back(i);
  return failed;
}

}  // namespace gutf8::cuda::nvcomp
