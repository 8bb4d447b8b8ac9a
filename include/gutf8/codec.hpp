// One-shot host API: validate, decode (UTF-8 -> UTF-32LE), encode (UTF-32LE -> UTF-8)
// and repair (UTF-8 -> UTF-8, repaired). Every backend gives byte-identical results.
//
// Output spans are caller-provided and must hold the worst case given by the max_*_size
// functions; results say how much was written. Nothing here throws for bad *text*:
// invalid input is reported in the result. gutf8::error is thrown only for a bad call
// (output too small) or a backend that cannot run (CUDA asked for, none usable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gutf8/types.hpp"

namespace gutf8 {

enum class backend : std::uint8_t { auto_select, cpu, cuda };

struct options {
  gutf8::backend backend = backend::auto_select;
  unsigned threads = 0;     // CPU backend: 0 = all hardware threads
  int device = 0;           // CUDA backend: device ordinal
  // Total input bytes when known (e.g. the file size), 0 when not. Only backend::auto_select
  // reads it.
  std::uint64_t size_hint = 0;
  // CUDA backend only; 0 = no limit. Caps the device memory that the backend's buffers (per CUDA
  // stream: input, output, temporary and stats buffers) may take. A limit that the buffers for a
  // sub-block (the part of a block one CUDA stream takes at once) would exceed is handled exactly
  // as a real cudaErrorMemoryAllocation: the backend retries with smaller sub-blocks; when even
  // the smallest does not fit, backend::cuda throws
  // gutf8::error(errc::out_of_memory) and backend::auto_select falls back to the CPU.
  // For tests of that path, and to leave GPU memory to other work. gutf8::run divides it among
  // the GPU lanes it runs on each GPU, so that it caps what the run takes of that GPU.
  std::uint64_t device_memory_limit = 0;
};

// backend::auto_select uses the GPU (when one is usable) where it is measured to pay: for a one-shot
// call or a stream, an input (size_hint when known, else the block at hand) large enough to repay
// CUDA's start-up against the CPU backend's threads; for a regular file (gutf8/file.hpp), beside the
// CPU workers once the file is large enough. Small inputs never start CUDA.

// True when this build has the CUDA backend and a usable GPU is present.
bool cuda_available() noexcept;

// Worst-case output sizes for an input of n bytes.
constexpr std::size_t max_decoded_size(std::size_t utf8_bytes) noexcept { return utf8_bytes; }
constexpr std::size_t max_encoded_size(std::size_t utf32_bytes) noexcept { return utf32_bytes + 3; }
constexpr std::size_t max_repaired_size(std::size_t utf8_bytes) noexcept { return 3 * utf8_bytes; }

summary validate(std::span<const std::byte> utf8, const options& opt = {});
text_stats stats(std::span<const std::byte> utf8, const options& opt = {});

transcode_result decode(std::span<const std::byte> utf8, std::span<char32_t> out,
                        error_policy policy, const options& opt = {});
transcode_result encode(std::span<const std::byte> utf32le, std::span<char8_t> out,
                        error_policy policy, const options& opt = {});
// strict copies the valid prefix and stops at the first error unit.
transcode_result repair(std::span<const std::byte> utf8, std::span<char8_t> out,
                          error_policy policy, const options& opt = {});

// Convenience wrappers that size the output themselves.
std::u32string decode(std::string_view utf8, error_policy policy, summary* info = nullptr,
                      const options& opt = {});
std::u8string encode(std::u32string_view utf32, error_policy policy, summary* info = nullptr,
                     const options& opt = {});
std::u8string repair(std::string_view utf8, error_policy policy, summary* info = nullptr,
                       const options& opt = {});

// The other forms (types.hpp): decode to `form` (with bom: U+FEFF first), encode from `form`;
// the bytes of that form in a std::string. Byte-exact with CPython's 'utf-32-be', 'utf-16-le' and
// 'utf-16-be' codecs under the same policy (strict: the output before the first error unit).
// Offsets in info are of the input; encode's line and column count code points.
std::string decode_to(std::string_view utf8, text_form form, error_policy policy, summary* info = nullptr,
                      const options& opt = {}, bool bom = false);
std::u8string encode_from(std::string_view text, text_form form, error_policy policy, summary* info = nullptr,
                          const options& opt = {});

inline std::span<const std::byte> as_bytes(std::string_view s) noexcept {
  return std::as_bytes(std::span(s.data(), s.size()));
}

}  // namespace gutf8
