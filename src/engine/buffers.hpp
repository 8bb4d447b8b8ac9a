// Memory that outlives a worker's piece run: its output lives until it is committed, while the worker
// goes on with the next.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

namespace gutf8::internal {

using owned_bytes = std::unique_ptr<std::uint8_t, void (*)(std::uint8_t*)>;
owned_bytes ordinary_bytes(std::size_t n);
owned_bytes pinned_bytes(std::size_t n);  // page-locked; throws gutf8::error(out_of_memory)

// Output memory of one piece run that lives until it is committed (the function owns it and hands it
// back); none for 0 bytes.
std::pair<std::uint8_t*, std::function<void()>> fresh_output(std::size_t bytes);

// A worker's buffer that grows without initialising its bytes (what it held is not kept when it
// grows): zero-filling a block before the decoder overwrites it costs as much as a copy.
class scratch_bytes {
 public:
  std::span<std::uint8_t> at_least(std::size_t n) {
    if (n > size_) {
      bytes_ = std::make_unique_for_overwrite<std::uint8_t[]>(n);
      size_ = n;
    }
    return {bytes_.get(), n};
  }

 private:
  std::unique_ptr<std::uint8_t[]> bytes_;
  std::size_t size_ = 0;
};

// Output memory of any size that comes back for reuse when the committer hands it back (from any
// thread), so that a worker's steady state allocates nothing: fresh megabytes cost a page fault
// every 4 KiB, each time. It keeps at most `keep` buffers that are not in use, the largest.
class recycled_outputs {
 public:
  explicit recycled_outputs(std::size_t keep = 2);
  // At least `bytes` bytes (none for 0) and the function that hands them back.
  std::pair<std::uint8_t*, std::function<void()>> acquire(std::size_t bytes);

 private:
  struct shelf;  // shared with the hand-back functions, which may outlive the worker
  std::shared_ptr<shelf> shelf_;
};

// Output buffers that a worker fills and the committer hands back.
class output_pool {
 public:
  // Buffers of `bytes` each from allocate; at most `limit` at once (0: no limit): acquire() then
  // waits for one to come back.
  output_pool(std::size_t bytes, std::size_t limit, owned_bytes (*allocate)(std::size_t))
      : bytes_(bytes), limit_(limit), allocate_(allocate) {}
  // A buffer, and the function that hands it back (callable from any thread).
  std::pair<std::uint8_t*, std::function<void()>> acquire();
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::size_t bytes_, limit_;
  owned_bytes (*allocate_)(std::size_t);
  std::mutex m_;
  std::condition_variable returned_;
  std::vector<owned_bytes> all_;
  std::vector<std::uint8_t*> free_;
};

}  // namespace gutf8::internal
