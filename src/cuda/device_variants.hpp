// Device-API entry points of other shapes and former kernels, kept beside the ones the library
// runs so that a benchmark can measure them all in one run (bench/gpu/codec.cu). Same contract
// as device.hpp's.
#pragma once

#include "gutf8/device.hpp"

namespace gutf8::device::detail {

// A shape of validate's screening walk (kernels/utf8/kernel_validate_screen.cuh): 32-byte slabs
// a lane and the blocks an SM its kernel is compiled for: {1, 3}, {1, 4}, {2, 2} or {2, 3}
// (device::validate's, tuning.cuh).
struct screen_shape {
  int lane_slabs = 2;
  int min_blocks = 3;
};

// validate with the screening walk of that shape; 16-byte aligned input only (else
// cudaErrorInvalidValue), as are unknown shapes.
cudaError_t validate_screen(screen_shape shape, void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                            std::uint64_t n, device_summary* d_summary, bool is_last = true,
                            cudaStream_t stream = nullptr);

// validate with the walk that classifies every warp tile exactly (kern::validate_kernel).
cudaError_t validate_planes(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                            device_summary* d_summary, bool is_last = true, cudaStream_t stream = nullptr);

// decode_utf16 in three passes: the fused UTF-32 decoder into temporary storage (about 12 n bytes
// more), an exclusive scan of each code point's UTF-16 units, a scatter.
cudaError_t decode_utf16_three_pass(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                                    char16_t* d_out, device_summary* d_summary, error_policy policy,
                                    bool is_last = true, bool big_endian = false, cudaStream_t stream = nullptr);

}  // namespace gutf8::device::detail
