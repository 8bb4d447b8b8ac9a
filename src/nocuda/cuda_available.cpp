// Built without the CUDA backend: the host API reports no GPU, never fails to link.
#include "gutf8/codec.hpp"

namespace gutf8 {
bool cuda_available() noexcept { return false; }
}  // namespace gutf8
