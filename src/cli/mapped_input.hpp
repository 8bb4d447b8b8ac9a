// A read-only map of a regular file's bytes, so that the piece workers scan the page cache
// in place: copying it out with pread cost as much as validating it (bench/results/e2e.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cli/input.hpp"

namespace gutf8::cli {

class mapped_input {
 public:
  // Bytes [offset, offset + length) of in; nullopt when the system will not map them (the
  // caller then reads with pread). A file that shrinks under a map makes its reader SIGBUS:
  // hold a shrunk_input_guard (cli/signals.hpp) while reading.
  static std::optional<mapped_input> map(const input_file& in, std::uint64_t offset, std::uint64_t length);

  mapped_input(mapped_input&& other) noexcept;
  mapped_input& operator=(mapped_input&& other) noexcept;
  mapped_input(const mapped_input&) = delete;
  ~mapped_input();

  // Byte `offset` of the mapped bytes.
  [[nodiscard]] const std::uint8_t* at(std::uint64_t offset) const noexcept { return bytes_ + offset; }
  // Maps the pages of a range into the page table in one call, rather than a fault every
  // few pages as the scan touches them. A hint: failure only means faults.
  void populate(std::uint64_t offset, std::size_t length) const noexcept;

 private:
  mapped_input(void* base, std::size_t length, std::size_t skew) noexcept;

  void* base_;               // page-aligned, as mmap returned it
  std::size_t length_;       // mapped bytes from base_
  const std::uint8_t* bytes_;  // byte 0 of the caller's range
};

}  // namespace gutf8::cli
