// The one path that turns an nvCOMP status into gutf8::error with context (GUTF8_NVCOMP builds).
#pragma once

#include <nvcomp/shared_types.h>

#include <string>

#include "gutf8/error.hpp"

namespace gutf8::cuda::nvcomp {

inline void check(nvcompStatus_t status, const char* context) {
  if (status == nvcompSuccess) return;
  const errc code = status == nvcompErrorInvalidValue || status == nvcompErrorAlignment ||
                            status == nvcompErrorChunkSizeTooLarge || status == nvcompErrorBatchSizeTooLarge
                        ? errc::invalid_argument
                        : errc::device_failure;
  throw error(code, std::string(context) + ": nvCOMP status " + std::to_string(int(status)));
}

}  // namespace gutf8::cuda::nvcomp
