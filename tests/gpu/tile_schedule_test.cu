// The fused decoder's tile schedule as prepare_kernel records it (kernels/utf8/tile_schedule.cuh):
// sampled, two tiles a block for text that writes under 1.85 output bytes per input byte (CJK,
// emoji), one for ASCII and for chunks under 1 MiB; fixed schedules recorded as given. The
// decoder's output does not depend on the choice (codec_large_test.cpp checks both schedules
// against the CPU codec); this checks that the choice is the intended one.
#include "gpu_harness.hpp"
#include "utf8/summary.cuh"

namespace gutf8::test::gpu {
namespace {

unsigned recorded_tiles_per_block(const bytes& text, kern::tile_schedule schedule) {
  cuda::device_buffer<std::uint8_t> in(std::max<std::size_t>(text.size(), 1));
  cuda::check(cudaMemcpy(in.data(), text.data(), text.size(), cudaMemcpyHostToDevice), "upload");
  cuda::device_buffer<kern::accum> acc(1);
  cuda::device_buffer<unsigned long long> states(1);
  kern::prepare_kernel<<<1, kern::block_threads>>>(acc.data(), in.data(), text.size(), true, kern::input_kind::utf8,
                                                   states.data(), 1, schedule);
  cuda::check(cudaGetLastError(), "prepare_kernel");
  kern::accum a{};
  cuda::check(cudaMemcpy(&a, acc.data(), sizeof a, cudaMemcpyDeviceToHost), "accum");
  return a.tiles_per_block;
}

TEST(TileSchedule, SampleChoosesByOutputPerInputByte) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(77);
  const std::size_t big = (3u << 20) + 4093, small = (1u << 20) - 16;
  EXPECT_EQ(recorded_tiles_per_block(random_text(g, big, script::cjk), kern::tile_schedule::sample), 2u);
  EXPECT_EQ(recorded_tiles_per_block(random_text(g, big, script::emoji), kern::tile_schedule::sample), 2u);
  EXPECT_EQ(recorded_tiles_per_block(random_text(g, big, script::ascii), kern::tile_schedule::sample), 1u);
  EXPECT_EQ(recorded_tiles_per_block(random_text(g, big, script::latin), kern::tile_schedule::sample), 1u);
  EXPECT_EQ(recorded_tiles_per_block(random_text(g, small, script::cjk), kern::tile_schedule::sample), 1u);
  bytes misaligned = random_text(g, big, script::cjk);  // not a multiple of 16: the guarded loads
  misaligned.resize(big - 5);
  EXPECT_EQ(recorded_tiles_per_block(misaligned, kern::tile_schedule::sample), 2u);
}

TEST(TileSchedule, FixedSchedulesRecordedAsGiven) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(78);
  const bytes cjk = random_text(g, 3u << 20, script::cjk), ascii = random_text(g, 3u << 20, script::ascii);
  EXPECT_EQ(recorded_tiles_per_block(cjk, kern::tile_schedule::single), 1u);
  EXPECT_EQ(recorded_tiles_per_block(ascii, kern::tile_schedule::paired), 2u);
}

}  // namespace
}  // namespace gutf8::test::gpu
