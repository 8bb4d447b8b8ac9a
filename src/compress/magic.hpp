// The magic numbers that open each format's members, frames or streams, tested on the bytes at hand:
// sniff() names a file's format by them, the decompressor decides by them what follows a member.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace gutf8::internal::compress::magic {

// partial: the bytes at hand are a proper prefix of the magic (more input would decide).
enum class verdict { no, yes, partial };

inline verdict match(std::span<const std::uint8_t> head, std::span<const std::uint8_t> magic) noexcept {
  const std::size_t n = std::min(head.size(), magic.size());
  if (!std::equal(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(n), magic.begin())) return verdict::no;
  return n == magic.size() ? verdict::yes : verdict::partial;
}

inline constexpr std::array<std::uint8_t, 2> gzip{0x1F, 0x8B};
inline constexpr std::uint8_t gzip_deflate = 8;  // CM, the only compression method gzip defines
inline constexpr std::array<std::uint8_t, 4> zstd{0x28, 0xB5, 0x2F, 0xFD};
inline constexpr std::array<std::uint8_t, 6> xz{0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00};
inline constexpr std::array<std::uint8_t, 4> lz4{0x04, 0x22, 0x4D, 0x18};
// A skippable frame (zstd's and lz4's alike): 5? 2A 4D 18, a 32-bit size, that many bytes.
inline constexpr std::array<std::uint8_t, 3> skippable_tail{0x2A, 0x4D, 0x18};
inline constexpr std::size_t skippable_header = 8;

inline std::uint32_t le32(const std::uint8_t* p) noexcept {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

inline verdict gzip_member(std::span<const std::uint8_t> head) noexcept { return match(head, gzip); }
inline verdict zstd_frame(std::span<const std::uint8_t> head) noexcept { return match(head, zstd); }
inline verdict xz_stream(std::span<const std::uint8_t> head) noexcept { return match(head, xz); }
inline verdict lz4_frame(std::span<const std::uint8_t> head) noexcept { return match(head, lz4); }

inline verdict skippable_frame(std::span<const std::uint8_t> head) noexcept {
  if (head.empty()) return verdict::partial;
  if ((head[0] & 0xF0) != 0x50) return verdict::no;
  return match(head.subspan(1), skippable_tail);
}

// "BZh" and a block-size digit 1..9.
inline verdict bzip2_stream(std::span<const std::uint8_t> head) noexcept {
  static constexpr std::array<std::uint8_t, 3> bzh{'B', 'Z', 'h'};
  const verdict v = match(head, bzh);
  if (v != verdict::yes) return v;
  if (head.size() == 3) return verdict::partial;
  return head[3] >= '1' && head[3] <= '9' ? verdict::yes : verdict::no;
}

// The 48-bit magic after "BZhN": a block (pi's digits) or the end of an empty stream (sqrt(pi)'s).
inline bool bzip2_first_block(std::span<const std::uint8_t> head) noexcept {
  static constexpr std::array<std::uint8_t, 6> block{0x31, 0x41, 0x59, 0x26, 0x53, 0x59};
  static constexpr std::array<std::uint8_t, 6> end{0x17, 0x72, 0x45, 0x38, 0x50, 0x90};
  if (head.size() < 10) return false;
  return match(head.subspan(4, 6), block) == verdict::yes || match(head.subspan(4, 6), end) == verdict::yes;
}

// The frame descriptor's version bits (01, the only version lz4 defines).
inline bool lz4_version_ok(std::span<const std::uint8_t> head) noexcept {
  return head.size() > 4 && (head[4] & 0xC0) == 0x40;
}

}  // namespace gutf8::internal::compress::magic
