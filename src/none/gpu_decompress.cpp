// GPU decompression in a build without nvCOMP (codec/gpu_decompress.hpp): none, and the input
// engine's GPU lanes read compressed inputs as the CPU does.
#include "codec/gpu_decompress.hpp"

namespace gutf8::internal {

bool gpu_zstd_built() noexcept { return false; }

std::unique_ptr<gpu_zstd> make_gpu_zstd(block_processor&, std::size_t, const block_request&) { return nullptr; }

}  // namespace gutf8::internal
