// The device entry points' grid sizing (src/cuda/device_launch.cuh): occupancy is cached per
// kernel, not per signature. validate_kernel's variants share one signature but not their
// registers, so a cache per signature let whichever variant ran first size the others' grids.
#include <cuda_runtime.h>

#include <cstdio>

#include "cuda/device_launch.cuh"
#include "support/gpu.hpp"
#include "utf8/kernel_validate.cuh"

namespace gutf8::test::gpu {
namespace {

template <auto Kernel>
int runtime_blocks_per_sm() {
  int per_sm = 0;
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, kern::block_threads, 0), cudaSuccess);
  return per_sm;
}

// Queried in the order of a process whose first call is a sanitize (its copying pass is the
// variant with more registers).
TEST(GpuLaunchGrid, OccupancyCachedPerKernel) {
  GUTF8_REQUIRE_GPU();
  constexpr auto copying = kern::validate_kernel<true, true>;
  constexpr auto aligned = kern::validate_kernel<true, false>;
  constexpr auto unaligned = kern::validate_kernel<false, false>;
  EXPECT_EQ(device::launch::blocks_per_sm<copying>(), runtime_blocks_per_sm<copying>());
  EXPECT_EQ(device::launch::blocks_per_sm<aligned>(), runtime_blocks_per_sm<aligned>());
  EXPECT_EQ(device::launch::blocks_per_sm<unaligned>(), runtime_blocks_per_sm<unaligned>());
  // The checks above discriminate only while the variants' occupancies differ.
  if (runtime_blocks_per_sm<aligned>() == runtime_blocks_per_sm<copying>() &&
      runtime_blocks_per_sm<unaligned>() == runtime_blocks_per_sm<copying>())
    std::printf("note: validate_kernel's variants now have the same occupancy on this device\n");
}

}  // namespace
}  // namespace gutf8::test::gpu
