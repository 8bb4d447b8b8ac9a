// CPU primitives: the thread helper behind the templates in gutf8/prim/cpu.hpp, plus the
// common radix-sort instantiations.
#include "gutf8/prim/cpu.hpp"

#include <exception>
#include <mutex>
#include <thread>

namespace gutf8::prim::cpu {

unsigned hardware_threads() noexcept {
  const unsigned h = std::thread::hardware_concurrency();
  return h == 0 ? 1u : h;
}

void parallel_parts(unsigned parts, const std::function<void(unsigned)>& body) {
  if (parts <= 1) {
    body(0);
    return;
  }
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto guarded = [&](unsigned p) {
    try {
      body(p);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(parts - 1);
  for (unsigned p = 1; p < parts; ++p) workers.emplace_back(guarded, p);
  guarded(0);
  for (auto& w : workers) w.join();
  if (first_error) std::rethrow_exception(first_error);
}

void radix_sort_keys_u32(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int begin_bit,
                         int end_bit, unsigned threads) {
  radix_sort_keys(in, out, n, begin_bit, end_bit, threads);
}

void radix_sort_keys_u64(const std::uint64_t* in, std::uint64_t* out, std::size_t n, int begin_bit,
                         int end_bit, unsigned threads) {
  radix_sort_keys(in, out, n, begin_bit, end_bit, threads);
}

}  // namespace gutf8::prim::cpu
