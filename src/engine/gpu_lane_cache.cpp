// gutf8::gpu_lane_cache (include/gutf8/engine.hpp): idle GPU lanes' resources between runs, taken
// and given back by the lanes (engine/lanes.cpp) under one mutex.
#include <algorithm>
#include <deque>
#include <mutex>

#include "engine/lanes.hpp"
#include "gutf8/engine.hpp"

namespace gutf8 {

struct gpu_lane_cache::state {
  std::mutex m;
  std::deque<internal::lane_resources> idle;  // the last given back at the end
  std::size_t capacity = 0;
  std::size_t built = 0;
};

gpu_lane_cache::gpu_lane_cache(std::size_t capacity) : state_(std::make_unique<state>()) {
  state_->capacity = capacity;
}

gpu_lane_cache::~gpu_lane_cache() = default;

std::size_t gpu_lane_cache::idle() const {
  std::lock_guard lock(state_->m);
  return state_->idle.size();
}

std::size_t gpu_lane_cache::built() const {
  std::lock_guard lock(state_->m);
  return state_->built;
}

void gpu_lane_cache::clear() {
  std::deque<internal::lane_resources> freed;
  {
    std::lock_guard lock(state_->m);
    freed.swap(state_->idle);
  }  // freed outside the lock: releasing page-locked memory takes milliseconds
}

namespace internal {

std::optional<lane_resources> lane_cache::take(gpu_lane_cache& cache, const lane_shape& shape) {
  gpu_lane_cache::state& s = cache.lanes();
  std::lock_guard lock(s.m);
  const auto it = std::ranges::find_if(s.idle, [&](const lane_resources& l) { return l.shape == shape; });
  if (it == s.idle.end()) return std::nullopt;
  lane_resources lane = std::move(*it);
  s.idle.erase(it);
  return lane;
}

void lane_cache::count_built(gpu_lane_cache& cache) {
  std::lock_guard lock(cache.lanes().m);
  ++cache.lanes().built;
}

void lane_cache::give_back(gpu_lane_cache& cache, lane_resources&& lane) {
  gpu_lane_cache::state& s = cache.lanes();
  std::deque<lane_resources> freed;
  {
    std::lock_guard lock(s.m);
    s.idle.push_back(std::move(lane));
    while (s.idle.size() > s.capacity) {
      freed.push_back(std::move(s.idle.front()));
      s.idle.pop_front();
    }
  }
}

}  // namespace internal
}  // namespace gutf8
