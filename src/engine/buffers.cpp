#include "engine/buffers.hpp"

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
