// Exercises the kernel-layer building blocks (warp_scan, block_scan, tile_lookback) through a
// minimal one-item-per-thread single-pass scan, for 4-byte, 8-byte and non-commutative types.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "gutf8/cuda_resources.hpp"
#include "prim/block_scan.cuh"
#include "prim/tile_lookback.cuh"
#include "prim/warp_scan.cuh"
#include "prim_test_util.hpp"
#include "support/gpu.hpp"

namespace {

using namespace gutf8::prim::detail;
constexpr int kThreads = 128;

template <class T, class Op>
__global__ void tiny_scan(const T* in, T* out, std::size_t n, tile_state<T> st, Op op) {
  __shared__ typename block_scan<T, kThreads>::storage bs;
  __shared__ typename tile_prefix<T, kThreads>::storage lb;
  const unsigned tile = blockIdx.x;
  const std::size_t i = static_cast<std::size_t>(tile) * kThreads + threadIdx.x;
  const T v = in[i < n ? i : static_cast<std::size_t>(tile) * kThreads];
  T agg;
  const T inc = block_scan<T, kThreads>(bs).inclusive(v, op, agg);
  const T prefix = tile_prefix<T, kThreads>::exclusive_prefix(st, tile, agg, op, lb);
  if (i < n) out[i] = tile == 0 ? inc : op(prefix, inc);
}

// warp_reduce / exclusive block scan with init, checked on one block.
template <class T, class Op>
__global__ void block_checks(const T* in, T* excl, T* red, T init, Op op) {
  __shared__ typename block_scan<T, kThreads>::storage bs;
  T agg;
  const T v = in[threadIdx.x];
  excl[threadIdx.x] = block_scan<T, kThreads>(bs).exclusive(v, init, op, agg);
  const T w = warp_reduce(v, op);
  if (lane_id() == 0) red[warp_id()] = w;
  if (threadIdx.x == 0) red[kThreads / 32] = agg;
}

template <class T, class Op>
void check_tiny_scan(std::size_t n, Op op) {
  SCOPED_TRACE(n);
  namespace cu = gutf8::cuda;
  const auto host = gutf8::test::random_values<T>(n, n + 17);
  std::vector<T> expect(n);
  if (n) std::inclusive_scan(host.begin(), host.end(), expect.begin(), op);
  const std::size_t tiles = (n + kThreads - 1) / kThreads;
  cu::device_buffer<T> d_in(n), d_out(n);
  cu::device_buffer<unsigned char> d_state(tile_state<T>::storage_bytes(tiles) + 1);
  auto st = tile_state<T>::attach(d_state.data(), tiles);
  if (n) d_in.upload(host);
  cu::check(st.reset(nullptr), "reset");
  if (tiles) tiny_scan<<<static_cast<unsigned>(tiles), kThreads>>>(d_in.data(), d_out.data(), n, st, op);
  cu::check_launch("tiny_scan");
  std::vector<T> got(n);
  if (n) d_out.download(got);
  cu::check(cudaDeviceSynchronize(), "sync");
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(got[i] == expect[i]) << "at " << i;
}

struct add_u32 {
  __host__ __device__ std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return a + b; }
};
struct add_u64 {
  __host__ __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a + b; }
};

}  // namespace

TEST(PrimBuildingBlocks, LookbackScanU32) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : gutf8::test::boundary_sizes(kThreads, 3)) check_tiny_scan<std::uint32_t>(n, add_u32{});
  check_tiny_scan<std::uint32_t>(kThreads * 5000 + 3, add_u32{});
}

TEST(PrimBuildingBlocks, LookbackScanU64) {
  GUTF8_REQUIRE_GPU();
  for (std::size_t n : gutf8::test::boundary_sizes(kThreads, 3)) check_tiny_scan<std::uint64_t>(n, add_u64{});
  check_tiny_scan<std::uint64_t>(kThreads * 5000 + 3, add_u64{});
}

TEST(PrimBuildingBlocks, LookbackScanNonCommutative) {
  GUTF8_REQUIRE_GPU();
  using gutf8::test::affine;
  for (std::size_t n : gutf8::test::boundary_sizes(kThreads, 3))
    check_tiny_scan<affine>(n, gutf8::test::affine_compose{});
  check_tiny_scan<affine>(kThreads * 5000 + 3, gutf8::test::affine_compose{});
}

TEST(PrimBuildingBlocks, BlockExclusiveAndWarpReduce) {
  GUTF8_REQUIRE_GPU();
  namespace cu = gutf8::cuda;
  using gutf8::test::affine;
  const gutf8::test::affine_compose op;
  const auto host = gutf8::test::random_values<affine>(kThreads, 5);
  const affine init{3, 7};
  cu::device_buffer<affine> d_in(kThreads), d_ex(kThreads), d_red(kThreads / 32 + 1);
  d_in.upload(host);
  block_checks<<<1, kThreads>>>(d_in.data(), d_ex.data(), d_red.data(), init, op);
  cu::check_launch("block_checks");
  std::vector<affine> ex(kThreads), red(kThreads / 32 + 1);
  d_ex.download(ex);
  d_red.download(red);
  cu::check(cudaDeviceSynchronize(), "sync");
  affine acc = init;
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(ex[i] == acc) << i;
    acc = op(acc, host[i]);
  }
  for (int w = 0; w < kThreads / 32; ++w) {
    affine r = host[w * 32];
    for (int i = 1; i < 32; ++i) r = op(r, host[w * 32 + i]);
    EXPECT_TRUE(red[w] == r) << w;
  }
  affine all = host[0];
  for (int i = 1; i < kThreads; ++i) all = op(all, host[i]);
  EXPECT_TRUE(red[kThreads / 32] == all);
}
