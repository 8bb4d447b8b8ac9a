// What an opened job reads from: the base of the engine's inputs (engine/inputs.hpp), and what
// every kind of input keeps beside its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <mutex>
#include <utility>
#include <vector>

#include "gutf8/engine.hpp"

namespace gutf8::internal {

// Code point counts of one input, one array a worker (stats with a histogram), summed at its end.
class histogram_parts {
 public:
  std::uint64_t* for_worker(std::size_t worker);
  [[nodiscard]] std::vector<std::uint64_t> sum() const;

 private:
  mutable std::mutex m_;
  std::map<std::size_t, std::vector<std::uint64_t>> parts_;
};

// What a job's reader posts for piece run k, taken by the worker that claimed it.
template <class T>
class numbered_slots {
 public:
  void put(std::uint64_t k, T&& v) {
    std::lock_guard lock(m_);
    waiting_.emplace(k, std::move(v));
  }
  T take(std::uint64_t k) {
    std::lock_guard lock(m_);
    return std::move(waiting_.extract(k).mapped());
  }

 private:
  std::mutex m_;
  std::map<std::uint64_t, T> waiting_;
};

class job_input {
 public:
  virtual ~job_input() = default;
  histogram_parts histogram;
  // A compressed input: its format, and where bytes after its last member were ignored (set by the
  // thread that read the last member, before it published; read by the committer at the end).
  compression compressed = compression::none;
  std::optional<std::uint64_t> trailing_ignored;
};

}  // namespace gutf8::internal
