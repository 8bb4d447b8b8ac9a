// Scan test driver shared by the scan test files: every algorithm against a sequential loop.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gutf8/prim/scan.cuh"
#include "prim_gpu_util.cuh"
#include "prim_test_util.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace gutf8::test {

using prim::scan_algorithm;
inline constexpr scan_algorithm all_scan_algorithms[] = {
    scan_algorithm::hillis_steele, scan_algorithm::blelloch, scan_algorithm::blocked,
    scan_algorithm::decoupled_lookback, scan_algorithm::cub};

template <class T, class Op>
std::vector<T> reference_scan(const std::vector<T>& in, Op op, bool exclusive, T init) {
  std::vector<T> out(in.size());
  if (in.empty()) return out;
  if (exclusive) {
    T acc = init;
    for (std::size_t i = 0; i < in.size(); ++i) {
      out[i] = acc;
      acc = op(acc, in[i]);
    }
  } else {
    T acc = in[0];
    out[0] = acc;
    for (std::size_t i = 1; i < in.size(); ++i) out[i] = acc = op(acc, in[i]);
  }
  return out;
}

template <class T, class Op>
void check_scan(scan_algorithm alg, const std::vector<T>& host, Op op, bool exclusive, T init,
                bool in_place = false) {
  SCOPED_TRACE(::testing::Message() << prim::to_string(alg) << " n=" << host.size()
                                    << (exclusive ? " exclusive" : " inclusive") << (in_place ? " in-place" : ""));
  const std::size_t n = host.size();
  const auto expect = reference_scan(host, op, exclusive, init);
  auto d_in = to_device(host);
  cu::device_buffer<T> d_out_own(n + 1);
  T* d_out = in_place ? d_in.data() : d_out_own.data();
  run_with_temp([&](void* t, std::size_t& b) {
    return exclusive ? prim::exclusive_scan(t, b, static_cast<const T*>(d_in.data()), d_out, n, init, op, nullptr, alg)
                     : prim::inclusive_scan(t, b, static_cast<const T*>(d_in.data()), d_out, n, op, nullptr, alg);
  });
  std::vector<T> got(n);
  if (n) cu::check(cudaMemcpy(got.data(), d_out, n * sizeof(T), cudaMemcpyDeviceToHost), "D2H");
  const std::size_t bad = first_mismatch(got, expect);
  ASSERT_EQ(bad, SIZE_MAX) << "first mismatch at " << bad;
}

// Boundary sizes of the look-back (largest) tile plus the blocked tile.
template <class T>
std::vector<std::size_t> scan_sizes() {
  auto s = boundary_sizes(prim::detail::lookback_scan_policy<T>::tile, 3);
  for (std::size_t k : {1, 2, 3}) {
    const std::size_t t = prim::detail::blocked_scan_policy<T>::tile * k;
    s.insert(s.end(), {t - 1, t, t + 1});
  }
  s.insert(s.end(), {100000, 1000003});
  return s;
}

template <class T, class Op>
void check_scan_all(Op op, T init, std::uint64_t seed) {
  for (std::size_t n : scan_sizes<T>()) {
    const auto host = random_values<T>(n, seed + n);
    for (auto alg : all_scan_algorithms) {
      check_scan(alg, host, op, false, init);
      check_scan(alg, host, op, true, init);
    }
  }
}

}  // namespace gutf8::test
