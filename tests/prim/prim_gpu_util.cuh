// GPU test helpers for the primitives: device buffers from host vectors, temp storage, sync.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/cuda_resources.hpp"

namespace gutf8::test {

namespace cu = gutf8::cuda;

template <class T>
cu::device_buffer<T> to_device(const std::vector<T>& h) {
  // one spare element so that n == 0 still yields a valid (non-null) pointer
  cu::device_buffer<T> d(h.size() + 1);
  if (!h.empty()) d.upload(h);
  return d;
}

template <class T>
std::vector<T> to_host(const cu::device_buffer<T>& d, std::size_t n) {
  std::vector<T> h(n);
  if (n) d.download(h);
  cu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return h;
}

// Runs a CUB-style call twice: size query, then the real call with exactly that much storage.
template <class F>
void run_with_temp(F&& call) {
  std::size_t bytes = 0;
  cu::check(call(nullptr, bytes), "temp size query");
  ASSERT_GT(bytes, 0u);
  cu::device_buffer<unsigned char> temp(bytes);
  cu::check(call(static_cast<void*>(temp.data()), bytes), "primitive");
  cu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// First index where two vectors differ, or SIZE_MAX.
template <class T>
std::size_t first_mismatch(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return i;
  return SIZE_MAX;
}

}  // namespace gutf8::test
