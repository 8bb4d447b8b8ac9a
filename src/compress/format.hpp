// Compressed formats gutf8 reads and writes: gzip, zstd, xz, bzip2 and lz4 (frame format), named by
// their magic numbers (input) or by a file name's suffix (output), and the byte plumbing the
// decompressor, compressor and parts share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace gutf8::internal::compress {

enum class format : std::uint8_t { none, gzip, zstd, xz, bzip2, lz4 };

// "gzip", "zstd", "xz", "bzip2", "lz4" ("none" for none).
[[nodiscard]] std::string_view name(format f) noexcept;
// ".gz", ".zst", ".xz", ".bz2", ".lz4" ("" for none).
[[nodiscard]] std::string_view suffix(format f) noexcept;
// The format a path names by its suffix (as `tar -a` chooses); none for any other name.
[[nodiscard]] format by_suffix(std::string_view path) noexcept;
// The standard tools' default levels: gzip 6, zstd 3, xz 6, bzip2 9, lz4 1.
[[nodiscard]] int default_level(format f) noexcept;

// How many first bytes sniff() looks at; a shorter input is sniffed on all it has.
inline constexpr std::size_t sniff_bytes = 10;

// The format whose magic number the input's first bytes carry: gzip 1F 8B 08, zstd 28 B5 2F FD or a
// skippable frame's 5? 2A 4D 18 (zstd's and lz4's alike; the decompressor tells them apart by the
// first frame after them), xz FD 37 7A 58 5A 00, bzip2 "BZh1".."BZh9" and a block or end-of-stream
// magic, lz4 04 22 4D 18 and a version-01 flag byte. Bytes that start so are compressed input: if
// they do not go on as the format says, decompressing them fails (zcat would too).
[[nodiscard]] format sniff(std::span<const std::uint8_t> head) noexcept;

// Where sequential compressed bytes come from (a pipe, a file read in order): fills up to
// buffer.size() bytes, returns how many; 0 only at the end. Throws to fail the run.
using byte_source = std::function<std::size_t(std::span<std::uint8_t> buffer)>;
// Where compressed bytes go, in order. Throws to fail the run.
using byte_sink = std::function<void(std::span<const std::uint8_t> bytes)>;
// Bytes of a file read at random (pread, a mapped view): fills all of buffer from offset `at`,
// or throws gutf8::error(io_failure).
using random_reader = std::function<void(std::span<std::uint8_t> buffer, std::uint64_t at)>;

// A random_reader over a file descriptor, offset 0 at byte `base` of the file (pread; a file that
// ends early is an io_failure, naming the file's byte).
[[nodiscard]] random_reader pread_reader(int fd, std::uint64_t base = 0);
// A random_reader over bytes in memory (kept by the caller; reading past them is an io_failure).
[[nodiscard]] random_reader memory_reader(std::span<const std::uint8_t> bytes);

// The io_failure of a corrupt stream: "corrupt F data at compressed byte AT: WHY".
[[noreturn]] void throw_corrupt(format f, std::uint64_t at, std::string_view why);
// The io_failure of a stream cut short: "truncated F stream: input ends at compressed byte AT".
[[noreturn]] void throw_truncated(format f, std::uint64_t at);

}  // namespace gutf8::internal::compress
