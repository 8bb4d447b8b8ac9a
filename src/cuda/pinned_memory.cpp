// Page-locked host memory for the GPU backend (declared in codec/gpu_backend.hpp): allocated, or
// the caller's memory (a mapped file's page cache) locked in place; failures are answers, not errors.
#include "codec/gpu_backend.hpp"

#include <cuda_runtime.h>

#include "cuda/cuda_resources.hpp"

namespace gutf8::internal {

void* allocate_pinned(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (bytes == 0 || cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}

void free_pinned(void* p) noexcept {
  if (p != nullptr) cuda::detail::host_free{}(p);
}

bool register_host(const void* p, std::size_t bytes) noexcept {
  if (cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterReadOnly | cudaHostRegisterPortable) ==
      cudaSuccess)
    return true;
  cudaGetLastError();
  return false;
}

void unregister_host(const void* p) noexcept {
  if (!cuda::device_abandoned().load(std::memory_order_relaxed)) cudaHostUnregister(const_cast<void*>(p));
}

}  // namespace gutf8::internal
