// gutf8::device::validate (and, for A/B measurements, its other shapes and its former walk:
// detail::validate_screen, detail::validate_planes)
#include "device_variants.hpp"
#include "validate_walk.cuh"

namespace gutf8::device {
namespace {

template <class Walk>
cudaError_t validate_with(Walk walk, void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                          device_summary* d_summary, bool is_last, cudaStream_t stream) {
  using namespace launch;
  const temp_layout l(0, 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary)) return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf8, stream); e != cudaSuccess)
    return e;
  if (const cudaError_t e = walk(in, n, is_last, l.acc(d_temp), stream); e != cudaSuccess) return e;
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, false, stream);
}

using walk_fn = cudaError_t (*)(const launch::u8*, launch::u64, bool, kern::accum*, cudaStream_t);

}  // namespace

cudaError_t validate(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                     device_summary* d_summary, bool is_last, cudaStream_t stream) {
  return validate_with(launch::screen_walk<>, d_temp, temp_bytes, d_in, n, d_summary, is_last, stream);
}

cudaError_t detail::validate_screen(screen_shape shape, void* d_temp, std::size_t& temp_bytes,
                                    const std::byte* d_in, std::uint64_t n, device_summary* d_summary, bool is_last,
                                    cudaStream_t stream) {
  walk_fn walk = nullptr;
  if (shape.lane_slabs == 1 && shape.min_blocks == 3) walk = launch::screen_walk<1, 3, true>;
  if (shape.lane_slabs == 1 && shape.min_blocks == 4) walk = launch::screen_walk<1, 4, true>;
  if (shape.lane_slabs == 2 && shape.min_blocks == 2) walk = launch::screen_walk<2, 2, true>;
  if (shape.lane_slabs == 2 && shape.min_blocks == 3) walk = launch::screen_walk<2, 3, true>;
  if (walk == nullptr) return cudaErrorInvalidValue;
  return validate_with(walk, d_temp, temp_bytes, d_in, n, d_summary, is_last, stream);
}

cudaError_t detail::validate_planes(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                                    device_summary* d_summary, bool is_last, cudaStream_t stream) {
  const auto walk = [](const launch::u8* in, launch::u64 len, bool last, kern::accum* acc, cudaStream_t s) {
    return launch::validate_walk<false>(in, len, last, acc, {}, s);
  };
  return validate_with(walk, d_temp, temp_bytes, d_in, n, d_summary, is_last, stream);
}

}  // namespace gutf8::device
