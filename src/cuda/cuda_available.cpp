#include "gutf8/codec.hpp"
#include "gutf8/cuda_resources.hpp"

namespace gutf8 {
bool cuda_available() noexcept {
  try {
    return cuda::gpu_unavailable_reason().empty();
  } catch (...) {
    return false;
  }
}
}  // namespace gutf8
