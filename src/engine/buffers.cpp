#include "engine/buffers.hpp"

#include <algorithm>
#include <string>

#include "codec/gpu_backend.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

void free_ordinary(std::uint8_t* p) { std::default_delete<std::uint8_t[]>{}(p); }
void free_page_locked(std::uint8_t* p) { free_pinned(p); }

}  // namespace

owned_bytes ordinary_bytes(std::size_t n) {
  return owned_bytes(std::make_unique_for_overwrite<std::uint8_t[]>(n).release(), free_ordinary);
}

owned_bytes pinned_bytes(std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(allocate_pinned(n));
  if (p == nullptr) throw error(errc::out_of_memory, "cannot page-lock " + std::to_string(n) + " bytes of host memory");
  return owned_bytes(p, free_page_locked);
}

std::pair<std::uint8_t*, std::function<void()>> fresh_output(std::size_t bytes) {
  if (bytes == 0) return {nullptr, {}};
  std::shared_ptr<std::uint8_t[]> buffer = std::make_shared_for_overwrite<std::uint8_t[]>(bytes);
  std::uint8_t* p = buffer.get();
  return {p, [owner = std::move(buffer)]() mutable { owner.reset(); }};
}

struct recycled_outputs::shelf {
  struct buffer {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t size = 0;
  };
  std::mutex m;
  std::vector<buffer> free;  // by size, smallest first
  std::size_t keep = 0;

  void put_back(buffer b) {
    if (!b.bytes) return;
    std::lock_guard hold(m);
    const auto at = std::ranges::lower_bound(free, b.size, {}, &buffer::size);
    free.insert(at, std::move(b));
    if (free.size() > keep) free.erase(free.begin());
  }
};

recycled_outputs::recycled_outputs(std::size_t keep) : shelf_(std::make_shared<shelf>()) { shelf_->keep = keep; }

std::pair<std::uint8_t*, std::function<void()>> recycled_outputs::acquire(std::size_t bytes) {
  if (bytes == 0) return {nullptr, {}};
  shelf::buffer b;
  {
    std::lock_guard hold(shelf_->m);
    const auto fits = std::ranges::lower_bound(shelf_->free, bytes, {}, &shelf::buffer::size);
    if (fits != shelf_->free.end()) {
      b = std::move(*fits);
      shelf_->free.erase(fits);
    }
  }
  if (!b.bytes) {
    b.size = bytes + bytes / 8;  // room for the next part's size to differ a little; untouched pages cost nothing
    b.bytes = std::make_unique_for_overwrite<std::uint8_t[]>(b.size);
  }
  std::uint8_t* p = b.bytes.get();
  // std::function needs a copyable callable: the buffer rides in a shared_ptr.
  auto held = std::make_shared<shelf::buffer>(std::move(b));
  return {p, [home = shelf_, held] { home->put_back(std::move(*held)); }};
}

std::pair<std::uint8_t*, std::function<void()>> output_pool::acquire() {
  std::unique_lock lock(m_);
  if (free_.empty() && (limit_ == 0 || all_.size() < limit_)) {
    lock.unlock();
    owned_bytes fresh = allocate_(bytes_);  // outside the lock: page-locking takes milliseconds
    lock.lock();
    free_.push_back(fresh.get());
    all_.push_back(std::move(fresh));
  }
  returned_.wait(lock, [&] { return !free_.empty(); });
  std::uint8_t* b = free_.back();
  free_.pop_back();
  return {b, [this, b] {
            {
              std::lock_guard hold(m_);
              free_.push_back(b);
            }
            returned_.notify_one();
          }};
}

}  // namespace gutf8::internal
