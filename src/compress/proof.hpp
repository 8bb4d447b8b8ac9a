// gutf8's proof that a zstd frame's compressed bytes are the ones its writer wrote: a skippable frame
// right after it (magic 0x184D2A5B: pzstd's ...50 and the seekable format's ...5E are taken) whose
// 12 bytes are the tag "G8XH" and the XXH64 (seed 0) of the frame's bytes, header to checksum,
// little-endian. Other tools skip it, as the format asks. A GPU lane takes only proven frames:
// nvCOMP's behaviour on damaged frames is undefined, and no structure check tells flipped payload
// bytes from an encoder's (docs/COMPRESSION.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace gutf8::internal::compress {

inline constexpr std::size_t proof_size = 20;  // skippable header (8), tag (4), XXH64 (8)
using proof = std::array<std::uint8_t, proof_size>;

// The proof of `frame` (the whole frame's bytes).
proof proof_of(std::span<const std::uint8_t> frame) noexcept;
// Whether `after`, the bytes right after `frame`, begin with the frame's proof.
bool proven(std::span<const std::uint8_t> frame, std::span<const std::uint8_t> after) noexcept;

}  // namespace gutf8::internal::compress
