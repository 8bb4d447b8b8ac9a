// Built without the CUDA backend: asking for it is a clear error, and nothing is page-locked.
#include "cuda/cuda_block.hpp"

#include "gutf8/error.hpp"

namespace gutf8::internal {

std::unique_ptr<block_processor> make_cuda_processor(const options&, std::unique_ptr<block_processor>,
                                                     cuda_tuning) {
  throw error(errc::no_device, "the CUDA backend is not available: gutf8 was built without CUDA");
}

stream_timings timings_of(const block_processor&) { return {}; }

void* allocate_pinned(std::size_t) noexcept { return nullptr; }
void free_pinned(void*) noexcept {}
bool register_host(const void*, std::size_t) noexcept { return false; }
void unregister_host(const void*) noexcept {}

}  // namespace gutf8::internal
