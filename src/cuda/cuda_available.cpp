#include "gutf8/codec.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/engine.hpp"

namespace gutf8 {

bool cuda_available() noexcept {
  try {
    return cuda::gpu_unavailable_reason().empty();
  } catch (...) {
    return false;
  }
}

std::vector<int> all_devices() {
  if (!cuda_available()) return {};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::vector<int> devices(static_cast<std::size_t>(count));
  for (int d = 0; d < count; ++d) devices[static_cast<std::size_t>(d)] = d;
  return devices;
}

}  // namespace gutf8
