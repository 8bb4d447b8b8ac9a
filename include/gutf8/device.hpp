// Device API of gutf8 (CUB conventions). Every entry point:
//   * takes device pointers for input and output and a cudaStream_t;
//   * takes caller-provided temporary storage: call first with d_temp == nullptr to learn
//     temp_bytes (nothing is launched), then again with at least that many bytes, 256-byte
//     aligned (cudaMalloc memory is);
//   * neither allocates nor synchronises: results the GPU decides (how much was written, the
//     error count, the first error, ...) land in a `device_summary` in device memory;
//   * returns cudaError_t (launch / argument errors), never throws.
//
// Chunking: with is_last == false, a trailing sequence that is incomplete but valid so far
// (1..3 bytes of UTF-8; the 1..3 ragged bytes of UTF-32) is NOT processed; summary.carry says how
// many trailing bytes the caller must prepend to the next chunk. Offsets in the summary are
// relative to the chunk. Sizes and offsets are 64-bit throughout.
//
// Output sizes the caller must provide (worst case, as the host API): decode n code points,
// repair 3n bytes, encode n + 3 bytes (n = input bytes). The input of decode / validate /
// repair may have any alignment (16-byte aligned is fastest; repair copies valid text in one
// pass where input and output are both 16-byte aligned); decode output must be 4-byte
// aligned; encode input should be 4-byte aligned (other alignments work, slowly). Output past
// `written` may be overwritten (repair stores its input there before it knows the output).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gutf8/types.hpp"

namespace gutf8::device {

inline constexpr std::uint64_t no_offset = ~std::uint64_t{0};

// What the GPU decided; written by every entry point (one 72-byte struct in device memory).
struct device_summary {
  std::uint64_t written = 0;   // output units: char32_t for decode, bytes for repair/encode
  std::uint64_t consumed = 0;  // input bytes processed: n - carry; strict with an error: the
                               // first error's offset (as the host API's summary::bytes)
  std::uint64_t carry = 0;     // trailing input bytes not processed (is_last == false only)
  std::uint64_t errors = 0;    // error units (strict decode/repair/encode: 0 or 1)
  std::uint64_t first_error_offset = no_offset;        // byte offset of the first error unit
  std::uint64_t lines_before_first_error = 0;          // LF units in [0, first error), or in
                                                       // [0, n - carry) when there is none
  std::uint64_t last_lf_before_first_error = no_offset;  // byte offset of the last of them
  std::uint64_t lines = 0;                             // LF units in [0, consumed)
  std::uint32_t first_error_kind = 0;                  // gutf8::error_kind
  std::uint32_t reserved = 0;

  [[nodiscard]] bool valid() const noexcept { return errors == 0; }
  [[nodiscard]] error_kind kind() const noexcept { return static_cast<error_kind>(first_error_kind); }
};
static_assert(sizeof(device_summary) == 72);

enum class decoder : std::uint8_t {
  fused,   // default: one pass, look-back ranking of output units, staged coalesced writes,
           // one 8 KiB tile a block
  staged,  // expansion offsets -> scan -> scatter into 4-byte groups -> decode groups
};
enum class encoder : std::uint8_t {
  compact,  // 4 bytes per code point with 0xFF padding, then stream compaction
  fused,    // look-back ranking of encoded lengths, direct writes
};

// Counts the error units of a chunk of UTF-8 and locates the first one.
cudaError_t validate(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                     std::uint64_t n, device_summary* d_summary, bool is_last = true,
                     cudaStream_t stream = nullptr);

// UTF-8 -> UTF-32 (host-order char32_t). strict: the valid prefix; replace: U+FFFD per error
// unit; drop: error units removed. Strict with an error: d_out beyond the `written` units holds
// unspecified values (the fused decoder ranks tiles as if the text were valid; it never writes
// past n units).
cudaError_t decode(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                   char32_t* d_out, device_summary* d_summary, error_policy policy,
                   bool is_last = true, decoder variant = decoder::fused,
                   cudaStream_t stream = nullptr);

// UTF-8 -> UTF-16 (char16_t in host order, i.e. UTF-16LE; big_endian: UTF-16BE), with decode's
// policies and summary, but `written` counts UTF-16 units (d_out: room for n units). One pass:
// the fused decoder counting UTF-16 units (two above U+FFFF, a surrogate pair); temporary
// storage as decode's.
cudaError_t decode_utf16(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                         char16_t* d_out, device_summary* d_summary, error_policy policy,
                         bool is_last = true, bool big_endian = false, cudaStream_t stream = nullptr);

// UTF-8 -> UTF-8. strict: the valid prefix; replace: EF BF BD per error unit; drop: removed.
cudaError_t repair(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                     std::uint64_t n, char8_t* d_out, device_summary* d_summary,
                     error_policy policy, bool is_last = true, cudaStream_t stream = nullptr);

// UTF-32LE bytes -> UTF-8. Error units: a surrogate or a value above 0x10FFFF (offset = its byte
// offset), and 1..3 trailing bytes at the end of the input (is_last only).
cudaError_t encode(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                   std::uint64_t n_bytes, char8_t* d_out, device_summary* d_summary,
                   error_policy policy, bool is_last = true, encoder variant = encoder::fused,
                   cudaStream_t stream = nullptr);

// Host-side bookkeeping for a stream of chunks (one-shot = one chunk): global offsets, error
// totals, and line/column of the first error across chunks. `unit` is 1 for UTF-8 input and 4
// for encode's UTF-32 input (a line ends at LF = U+000A; the column counts bytes, or code points
// for UTF-32, from the start of the line, 1-based).
class chunk_tracker {
 public:
  explicit chunk_tracker(unsigned unit = 1) : unit_(unit) {}

  // Accounts one chunk's (downloaded) summary. The chunk's byte 0 is at global offset bytes().
  void add(const device_summary& d) {
    if (!s_.first_error && d.first_error_offset != no_offset) {
      const std::uint64_t at = s_.bytes + d.first_error_offset;
      const std::uint64_t start = d.last_lf_before_first_error == no_offset
                                      ? line_start_
                                      : s_.bytes + d.last_lf_before_first_error + unit_;
      s_.first_error = error_position{at, 1 + lines_ + d.lines_before_first_error,
                                      (at - start) / unit_ + 1, d.kind()};
    } else if (!s_.first_error) {
      lines_ += d.lines_before_first_error;
      if (d.last_lf_before_first_error != no_offset)
        line_start_ = s_.bytes + d.last_lf_before_first_error + unit_;
    }
    s_.errors += d.errors;
    s_.bytes += d.consumed;
    written_ += d.written;
  }
  [[nodiscard]] const summary& result() const noexcept { return s_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return s_.bytes; }
  [[nodiscard]] std::uint64_t written() const noexcept { return written_; }

 private:
  unsigned unit_;
  summary s_{};
  std::uint64_t lines_ = 0;       // LF units before bytes() (while no error was seen)
  std::uint64_t line_start_ = 0;  // global offset just after the last of them
  std::uint64_t written_ = 0;
};

// One-shot conversion of a downloaded summary into the host API's vocabulary.
inline summary to_summary(const device_summary& d, unsigned unit = 1) {
  chunk_tracker t(unit);
  t.add(d);
  return t.result();
}

}  // namespace gutf8::device
