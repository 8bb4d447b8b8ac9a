// Runs a loop's iterations on a few threads at once: a GPU lane's fills and the line counts that
// place a first error share it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace gutf8::internal {

// Runs f(i, t) for i in [0, n) on threads t in [0, threads) (at least one, at most n), the calling
// thread being t = 0; rethrows the first failure once every thread has stopped.
template <class F>
void on_threads(std::uint64_t n, unsigned threads, const F& f) {
  threads = static_cast<unsigned>(std::clamp<std::uint64_t>(threads, 1, std::max<std::uint64_t>(n, 1)));
  std::atomic<std::uint64_t> next{0};
  std::vector<std::exception_ptr> failure(threads);
  const auto work = [&](unsigned t) {
    try {
      for (std::uint64_t i; (i = next++) < n;) f(i, t);
    } catch (...) {
      failure[t] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
  }
  for (const auto& e : failure)
    if (e) std::rethrow_exception(e);
}

}  // namespace gutf8::internal
