// GPU tests skip, with the reason printed, where no GPU is usable (CI, developer boxes).
#pragma once

#include <gtest/gtest.h>

#include "cuda/cuda_resources.hpp"

#define GUTF8_REQUIRE_GPU()                                                  \
  do {                                                                       \
    const std::string gutf8_gpu_reason = ::gutf8::cuda::gpu_unavailable_reason(); \
    if (!gutf8_gpu_reason.empty()) GTEST_SKIP() << "no usable GPU: " << gutf8_gpu_reason; \
  } while (false)
