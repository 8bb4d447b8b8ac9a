// Built without the CUDA backend: the host API reports no GPU, never fails to link.
#include "gutf8/codec.hpp"
#include "gutf8/engine.hpp"

namespace gutf8 {
bool cuda_available() noexcept { return false; }
std::vector<int> all_devices() { return {}; }
}  // namespace gutf8
