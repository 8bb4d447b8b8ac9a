// Exercises the kernel-layer building blocks (warp_scan, block_scan, tile_lookback) through a
// minimal one-item-per-thread single-pass scan, for 4-byte, 8-byte and non-commutative types; the
// flagged sums, the block scan's warp parts, the flagged-count look-back (stored and counted
// publication) the codec builds on; the warp butterflies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cuda/cuda_resources.hpp"
#include "gutf8/prim/detail/block_scan.cuh"
#include "gutf8/prim/detail/flagged_sum.cuh"
#include "gutf8/prim/detail/tile_lookback.cuh"
#include "gutf8/prim/detail/warp_scan.cuh"
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

// ---- flagged sums, the block scan's warp parts, the flagged-count look-back, butterflies ----
namespace {

using flag32 = flagged_sum<std::uint32_t>;
using flag64 = flagged_count_state::sum;

// Counts 0..max_count, each stopping with probability 1/stop_every (never when 0).
std::vector<std::uint32_t> flagged_values(std::size_t n, std::uint32_t max_count, unsigned stop_every,
                                          std::uint64_t seed) {
  auto gen = gutf8::test::rng(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = flag32::flag(static_cast<std::uint32_t>(gen() % (max_count + 1)), stop_every && gen() % stop_every == 0);
  return v;
}

__global__ void flagged_parts(const std::uint32_t* in, std::uint32_t* out) {
  __shared__ block_scan<std::uint32_t, kThreads>::storage bs;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  const auto p = block_scan<std::uint32_t, kThreads>(bs).exclusive_parts<flagged_warp_scan>(in[i], 0u, flag32{});
  out[4 * i] = p.exclusive;
  out[4 * i + 1] = p.warp_exclusive;
  out[4 * i + 2] = p.warp_total;
  out[4 * i + 3] = p.aggregate;
}

// One value a thread, kThreads a tile; prefixes[tile] = the look-back's exclusive prefix (tile 0: 0).
// Counted: each warp adds its sum as a part (counted values never stop); else the tile's flagged
// aggregate is stored. Slots: lookback_exclusive_span's (1 = lookback_exclusive).
template <bool Counted, unsigned Slots>
__global__ void flagged_tiles(const std::uint32_t* in, std::uint64_t* prefixes, flagged_count_state st) {
  __shared__ block_scan<std::uint32_t, kThreads>::storage bs;
  const unsigned tile = blockIdx.x;
  const std::uint32_t v = in[static_cast<std::size_t>(tile) * kThreads + threadIdx.x];
  std::uint64_t agg = 0;
  if constexpr (Counted) {
    const std::uint32_t warp_sum = __reduce_add_sync(full_warp_mask, v);
    if (lane_id() == 0) st.add_part<kThreads / warp_threads>(tile, warp_sum);
    __syncthreads();  // every part's add before the owner's inclusive add
  } else {
    const auto p = block_scan<std::uint32_t, kThreads>(bs).exclusive_parts<flagged_warp_scan>(v, 0u, flag32{});
    agg = widen_flagged<flag64, flag32>(p.aggregate);
    if (threadIdx.x == 0) {
      if (tile == 0) st.publish_inclusive(0, agg);
      else st.publish_aggregate(tile, agg);
    }
  }
  if (threadIdx.x >= warp_threads) return;
  const std::uint64_t pre = tile == 0 ? 0 : lookback_exclusive_span<Slots>(st, tile);
  if (threadIdx.x == 0) {
    if (Counted) st.add_counted_inclusive(tile, pre);
    else if (tile != 0) st.publish_inclusive(tile, flag64{}(pre, agg));
    prefixes[tile] = pre;
  }
}

__global__ void butterflies(const std::uint64_t* in, std::uint64_t* out) {
  const std::uint64_t v = in[threadIdx.x];
  out[3 * threadIdx.x] = warp_allreduce(v, [](std::uint64_t a, std::uint64_t b) { return b < a ? b : a; });
  out[3 * threadIdx.x + 1] = warp_allreduce(v, [](std::uint64_t a, std::uint64_t b) { return b > a ? b : a; });
  out[3 * threadIdx.x + 2] = warp_allreduce(v, [](std::uint64_t a, std::uint64_t b) { return a + b; });
}

template <unsigned Slots = 1>
void check_flagged_tiles(bool counted, std::size_t tiles, std::uint32_t max_count, unsigned stop_every) {
  SCOPED_TRACE(::testing::Message() << (counted ? "counted" : "stored") << " slots=" << Slots << " tiles=" << tiles
                                    << " stop_every=" << stop_every);
  namespace cu = gutf8::cuda;
  const auto host = flagged_values(tiles * kThreads, max_count, counted ? 0 : stop_every, tiles + max_count);
  std::vector<std::uint64_t> expect(tiles);
  std::uint64_t acc = 0;
  for (std::size_t t = 0; t < tiles; ++t) {
    expect[t] = acc;
    std::uint32_t tile_agg = 0;
    for (int i = 0; i < kThreads; ++i) tile_agg = flag32{}(tile_agg, host[t * kThreads + i]);
    acc = flag64{}(acc, widen_flagged<flag64, flag32>(tile_agg));
  }
  cu::device_buffer<std::uint32_t> d_in(host.size());
  cu::device_buffer<std::uint64_t> d_pre(tiles);
  cu::device_buffer<unsigned char> d_state(flagged_count_state::storage_bytes(tiles));
  d_in.upload(host);
  cu::check(cudaMemset(d_state.data(), 0, d_state.size()), "clear");
  const flagged_count_state st{reinterpret_cast<unsigned long long*>(d_state.data())};
  if (counted) flagged_tiles<true, Slots><<<static_cast<unsigned>(tiles), kThreads>>>(d_in.data(), d_pre.data(), st);
  else flagged_tiles<false, Slots><<<static_cast<unsigned>(tiles), kThreads>>>(d_in.data(), d_pre.data(), st);
  cu::check_launch("flagged_tiles");
  std::vector<std::uint64_t> got(tiles);
  d_pre.download(got);
  cu::check(cudaDeviceSynchronize(), "sync");
  for (std::size_t t = 0; t < tiles; ++t) ASSERT_EQ(got[t], expect[t]) << "tile " << t;
}

}  // namespace

TEST(PrimBuildingBlocks, FlaggedSumBlockParts) {
  GUTF8_REQUIRE_GPU();
  namespace cu = gutf8::cuda;
  for (unsigned stop_every : {0u, 300u, 40u, 3u}) {
    SCOPED_TRACE(stop_every);
    constexpr unsigned blocks = 37;
    const auto host = flagged_values(std::size_t{blocks} * kThreads, 1000, stop_every, stop_every + 11);
    cu::device_buffer<std::uint32_t> d_in(host.size()), d_out(4 * host.size());
    d_in.upload(host);
    flagged_parts<<<blocks, kThreads>>>(d_in.data(), d_out.data());
    cu::check_launch("flagged_parts");
    std::vector<std::uint32_t> got(4 * host.size());
    d_out.download(got);
    cu::check(cudaDeviceSynchronize(), "sync");
    for (unsigned b = 0; b < blocks; ++b) {
      const std::uint32_t* v = host.data() + std::size_t{b} * kThreads;
      std::uint32_t all = 0;
      for (int i = 0; i < kThreads; ++i) all = flag32{}(all, v[i]);
      std::uint32_t acc = 0, warp_start = 0;
      for (int i = 0; i < kThreads; ++i) {
        if (i % 32 == 0) warp_start = acc;
        std::uint32_t warp_total = v[i / 32 * 32];
        for (int j = i / 32 * 32 + 1; j < i / 32 * 32 + 32; ++j) warp_total = flag32{}(warp_total, v[j]);
        const std::uint32_t* g = got.data() + 4 * (std::size_t{b} * kThreads + i);
        ASSERT_EQ(g[0], acc) << "block " << b << " thread " << i;
        ASSERT_EQ(g[1], warp_start) << "block " << b << " thread " << i;
        ASSERT_EQ(g[2], warp_total) << "block " << b << " thread " << i;
        ASSERT_EQ(g[3], all) << "block " << b << " thread " << i;
        acc = flag32{}(acc, v[i]);
      }
    }
  }
}

TEST(PrimBuildingBlocks, FlaggedCountLookbackStoredAndCounted) {
  GUTF8_REQUIRE_GPU();
  for (bool counted : {false, true})
    for (std::size_t tiles : {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{65}, std::size_t{5003}})
      for (unsigned stop_every : {0u, 20000u, 500u}) {
        check_flagged_tiles(counted, tiles, 1000, stop_every);
        // Tile values up to 2^26 (the state's bound is 2^27): prefixes past 2^32.
        check_flagged_tiles(counted, tiles, (1u << 26) / kThreads, stop_every);
      }
}

// Windows of 128 and 64 tiles: tile counts around them and around a lane's slots, stops at the
// nearest inclusive entry's lane and beyond, values up to the span's bound (2^25 at 4 slots).
TEST(PrimBuildingBlocks, FlaggedCountLookbackSpan) {
  GUTF8_REQUIRE_GPU();
  for (bool counted : {false, true})
    for (std::size_t tiles : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{63}, std::size_t{127},
                              std::size_t{129}, std::size_t{131}, std::size_t{385}, std::size_t{5003}})
      for (unsigned stop_every : {0u, 20000u, 500u, 7u}) {
        check_flagged_tiles<4>(counted, tiles, 1000, stop_every);
        check_flagged_tiles<4>(counted, tiles, (1u << 25) / kThreads - 1, stop_every);
        check_flagged_tiles<2>(counted, tiles, 1000, stop_every);
      }
}

TEST(PrimBuildingBlocks, WarpButterflies) {
  GUTF8_REQUIRE_GPU();
  namespace cu = gutf8::cuda;
  auto gen = gutf8::test::rng(77);
  std::vector<std::uint64_t> host(64);
  for (auto& x : host) x = gen() >> (gen() % 40);
  cu::device_buffer<std::uint64_t> d_in(64), d_out(3 * 64);
  d_in.upload(host);
  butterflies<<<1, 64>>>(d_in.data(), d_out.data());
  cu::check_launch("butterflies");
  std::vector<std::uint64_t> got(3 * 64);
  d_out.download(got);
  cu::check(cudaDeviceSynchronize(), "sync");
  for (int w = 0; w < 2; ++w) {
    const auto first = host.begin() + 32 * w, last = first + 32;
    std::uint64_t sum = 0;
    for (auto it = first; it != last; ++it) sum += *it;
    for (int l = 0; l < 32; ++l) {
      EXPECT_EQ(got[3 * (32 * w + l)], *std::min_element(first, last));
      EXPECT_EQ(got[3 * (32 * w + l) + 1], *std::max_element(first, last));
      EXPECT_EQ(got[3 * (32 * w + l) + 2], sum);
    }
  }
}
