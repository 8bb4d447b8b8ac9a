// The device entry points' grid sizing (src/cuda/device_launch.cuh): occupancy is cached per
// kernel, not per signature. validate_kernel's variants share one signature but not always their
// occupancy, so a cache per signature let whichever variant ran first size the others' grids.
#include <cuda_runtime.h>

#include "cuda/device_launch.cuh"
#include "support/gpu.hpp"
#include "utf8/kernel_validate.cuh"

namespace gutf8::test::gpu {
namespace {

// Two kernels of one signature whose occupancies differ on any GPU (40 KiB of static shared
// memory a block against none): never launched, only asked about.
__global__ void light_kernel(unsigned* out) { out[threadIdx.x] = threadIdx.x; }
__global__ void heavy_kernel(unsigned* out) {
  constexpr unsigned words = 10 * 1024;
  __shared__ unsigned staged[words];
  staged[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = staged[(threadIdx.x * 37u) % blockDim.x];
}

template <auto Kernel>
int runtime_blocks_per_sm() {
  int per_sm = 0;
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, kern::block_threads, 0), cudaSuccess);
  return per_sm;
}

TEST(GpuLaunchGrid, OccupancyCachedPerKernel) {
  GUTF8_REQUIRE_GPU();
  const int light = runtime_blocks_per_sm<light_kernel>(), heavy = runtime_blocks_per_sm<heavy_kernel>();
  ASSERT_NE(light, heavy) << "the two kernels must differ for the check to mean anything";
  EXPECT_EQ(device::launch::blocks_per_sm<light_kernel>(), light);
  EXPECT_EQ(device::launch::blocks_per_sm<heavy_kernel>(), heavy);
  // validate_kernel's variants, in the order of a process whose first call is a repair.
  constexpr auto copying = kern::validate_kernel<true, true>;
  constexpr auto aligned = kern::validate_kernel<true, false>;
  constexpr auto unaligned = kern::validate_kernel<false, false>;
  EXPECT_EQ(device::launch::blocks_per_sm<copying>(), runtime_blocks_per_sm<copying>());
  EXPECT_EQ(device::launch::blocks_per_sm<aligned>(), runtime_blocks_per_sm<aligned>());
  EXPECT_EQ(device::launch::blocks_per_sm<unaligned>(), runtime_blocks_per_sm<unaligned>());
}

}  // namespace
}  // namespace gutf8::test::gpu
