// gutf8::cuda::nvcomp::pack_texts: the frames' texts moved from their guarded slots to one text,
// back to back, by CUB's batched memcpy (one launch for the batch, whatever its frame count).
#include <cub/device/device_memcpy.cuh>

#include "cuda/cuda_resources.hpp"
#include "cuda/nvcomp/zstd.hpp"

namespace gutf8::cuda::nvcomp {

void pack_texts(void* d_temp, std::size_t& temp_bytes, const void* const* d_from, void* const* d_to,
                const std::size_t* d_sizes, std::size_t n, cudaStream_t stream) {
  check(cub::DeviceMemcpy::Batched(d_temp, temp_bytes, d_from, d_to, d_sizes, static_cast<std::int64_t>(n), stream),
        "cub::DeviceMemcpy::Batched (frame texts)");
}

}  // namespace gutf8::cuda::nvcomp
