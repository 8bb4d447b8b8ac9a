// A read-only map of a range of a regular file, so that the piece workers scan the page cache
// in place: copying it out with pread cost as much as validating it (bench/results/e2e.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace gutf8::internal {

class mapped_range {
 public:
  // Bytes [offset, offset + length) of the file open as fd; nullopt when the system will not map
  // them (the caller then reads with pread).
  static std::optional<mapped_range> map(int fd, std::uint64_t offset, std::uint64_t length);

  mapped_range(mapped_range&& other) noexcept;
  mapped_range& operator=(mapped_range&& other) noexcept;
  mapped_range(const mapped_range&) = delete;
  ~mapped_range();

  // Byte `offset` of the mapped bytes.
  [[nodiscard]] const std::uint8_t* at(std::uint64_t offset) const noexcept { return bytes_ + offset; }
  // Maps the pages of a range into the page table in one call, rather than a fault every few pages
  // as the scan touches them. False when a page lies past the file's end (it shrank: reading it
  // would raise SIGBUS); true where the system cannot tell (it then faults page by page).
  [[nodiscard]] bool populate(std::uint64_t offset, std::size_t length) const noexcept;
  // Drops the whole pages of a range from the process (MADV_DONTNEED); they map again if read.
  void release(std::uint64_t offset, std::uint64_t length) const noexcept;

 private:
  mapped_range(void* base, std::size_t length, std::size_t skew) noexcept;

  void* base_;                 // page-aligned, as mmap returned it
  std::size_t length_;         // mapped bytes from base_
  const std::uint8_t* bytes_;  // byte 0 of the caller's range
};

}  // namespace gutf8::internal
