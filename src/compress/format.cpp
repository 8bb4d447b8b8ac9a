#include "compress/format.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "compress/magic.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

struct format_row {
  format f;
  std::string_view name;
  std::string_view suffix;
  int level;
};
constexpr std::array<format_row, 5> formats{{{format::gzip, "gzip", ".gz", 6},
                                             {format::zstd, "zstd", ".zst", 3},
                                             {format::xz, "xz", ".xz", 6},
                                             {format::bzip2, "bzip2", ".bz2", 9},
                                             {format::lz4, "lz4", ".lz4", 1}}};

const format_row* row(format f) noexcept {
  for (const format_row& r : formats)
    if (r.f == f) return &r;
  return nullptr;
}

}  // namespace

std::string_view name(format f) noexcept { return row(f) ? row(f)->name : "none"; }
std::string_view suffix(format f) noexcept { return row(f) ? row(f)->suffix : ""; }
int default_level(format f) noexcept { return row(f) ? row(f)->level : 0; }

format by_suffix(std::string_view path) noexcept {
  for (const format_row& r : formats)
    if (path.size() > r.suffix.size() && path.ends_with(r.suffix)) return r.f;
  return format::none;
}

format sniff(std::span<const std::uint8_t> head) noexcept {
  if (magic::gzip_member(head) == magic::verdict::yes && head.size() > 2 && head[2] == magic::gzip_deflate)
    return format::gzip;
  if (magic::zstd_frame(head) == magic::verdict::yes || magic::skippable_frame(head) == magic::verdict::yes)
    return format::zstd;
  if (magic::xz_stream(head) == magic::verdict::yes) return format::xz;
  if (magic::bzip2_stream(head) == magic::verdict::yes && magic::bzip2_first_block(head)) return format::bzip2;
  if (magic::lz4_frame(head) == magic::verdict::yes && magic::lz4_version_ok(head)) return format::lz4;
  return format::none;
}

random_reader pread_reader(int fd, std::uint64_t base) {
  return [fd, base](std::span<std::uint8_t> buffer, std::uint64_t offset) {
    const std::uint64_t at = base + offset;
    for (std::size_t done = 0; done < buffer.size();) {
      const ssize_t n = ::pread(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(at + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw system_call_failure(errno, "pread at byte " + std::to_string(at + done));
      if (n == 0) throw error(errc::io_failure, "file ends at byte " + std::to_string(at + done) + " (it shrank)");
      done += static_cast<std::size_t>(n);
    }
  };
}

random_reader memory_reader(std::span<const std::uint8_t> bytes) {
  return [bytes](std::span<std::uint8_t> buffer, std::uint64_t at) {
    if (at > bytes.size() || buffer.size() > bytes.size() - at)
      throw error(errc::io_failure, "input ends at byte " + std::to_string(bytes.size()));
    std::memcpy(buffer.data(), bytes.data() + at, buffer.size());
  };
}

void throw_corrupt(format f, std::uint64_t at, std::string_view why) {
  throw error(errc::io_failure, "corrupt " + std::string(name(f)) + " data at compressed byte " + std::to_string(at) +
                                    ": " + std::string(why));
}

void throw_truncated(format f, std::uint64_t at) {
  throw error(errc::io_failure,
              "truncated " + std::string(name(f)) + " stream: input ends at compressed byte " + std::to_string(at));
}

}  // namespace gutf8::internal::compress
