#include "engine/mapped_range.hpp"

#include <cerrno>

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

namespace gutf8::internal {

std::optional<mapped_range> mapped_range::map(int fd, std::uint64_t offset, std::uint64_t length) {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t aligned = offset / page * page;
  const std::uint64_t mapped = length + (offset - aligned);
  if (length == 0 || mapped > SIZE_MAX) return std::nullopt;
  void* base = ::mmap(nullptr, static_cast<std::size_t>(mapped), PROT_READ, MAP_SHARED, fd,
                      static_cast<off_t>(aligned));
  if (base == MAP_FAILED) return std::nullopt;
  return mapped_range(base, static_cast<std::size_t>(mapped), static_cast<std::size_t>(offset - aligned));
}

mapped_range::mapped_range(void* base, std::size_t length, std::size_t skew) noexcept
    : base_(base), length_(length), bytes_(static_cast<const std::uint8_t*>(base) + skew) {}

mapped_range::mapped_range(mapped_range&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(other.length_),
      bytes_(other.bytes_) {}

mapped_range& mapped_range::operator=(mapped_range&& other) noexcept {
  std::swap(base_, other.base_);
  std::swap(length_, other.length_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

mapped_range::~mapped_range() {
  if (base_ == nullptr) return;
  ::munmap(base_, length_);
}

void mapped_range::release(std::uint64_t offset, std::uint64_t length) const noexcept {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto from = (reinterpret_cast<std::uintptr_t>(bytes_ + offset) + page - 1) / page * page;
  const auto to = reinterpret_cast<std::uintptr_t>(bytes_ + offset + length) / page * page;
  if (to > from) (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

bool mapped_range::populate(std::uint64_t offset, std::size_t length) const noexcept {
#ifdef MADV_POPULATE_READ  // Linux 5.14
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto from = reinterpret_cast<std::uintptr_t>(bytes_ + offset) / page * page;
  const auto to = reinterpret_cast<std::uintptr_t>(bytes_ + offset + length);
  // EFAULT: a page past the end of the file; other errors (an older kernel) say nothing.
  return ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_READ) == 0 || errno != EFAULT;
#else
  (void)offset, (void)length;
  return true;
#endif
}

}  // namespace gutf8::internal
