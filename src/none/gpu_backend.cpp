// The backend of a build without CUDA: no GPU. Asking for one is a clear error, the host API
// reports none, and nothing is page-locked.
#include "codec/gpu_backend.hpp"
#include "gutf8/codec.hpp"
#include "gutf8/error.hpp"
#include "gutf8/engine.hpp"

namespace gutf8 {

bool cuda_available() noexcept { return false; }
std::vector<int> all_devices() { return {}; }

namespace internal {

std::unique_ptr<block_processor> make_gpu_processor(const options&, std::unique_ptr<block_processor>, gpu_tuning) {
  throw error(errc::no_device, "the CUDA backend is not available: gutf8 was built without CUDA");
}

void* allocate_pinned(std::size_t) noexcept { return nullptr; }
void free_pinned(void*) noexcept {}
bool register_host(const void*, std::size_t) noexcept { return false; }
void unregister_host(const void*) noexcept {}

}  // namespace internal
}  // namespace gutf8
