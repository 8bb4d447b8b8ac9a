// Device-API entry points of former kernels, kept beside the ones the library runs so that a
// benchmark can measure both in one run (bench/gpu/codec.cu). Same contract as device.hpp's.
#pragma once

#include "gutf8/device.hpp"

namespace gutf8::device::detail {

// validate with the walk that classifies every segment exactly (kern::validate_kernel).
cudaError_t validate_planes(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                            device_summary* d_summary, bool is_last = true, cudaStream_t stream = nullptr);

}  // namespace gutf8::device::detail
