// The names src/file still uses for the GPU backend, until it moves to codec/gpu_backend.hpp.
#pragma once

#include <memory>
#include <utility>

#include "codec/gpu_backend.hpp"

namespace gutf8::internal {

using cuda_tuning = gpu_tuning;

inline std::unique_ptr<block_processor> make_cuda_processor(const options& opt,
                                                            std::unique_ptr<block_processor> fallback,
                                                            cuda_tuning tuning = {}) {
  return make_gpu_processor(opt, std::move(fallback), tuning);
}

}  // namespace gutf8::internal
