// gutf8::device::validate
#include "device_launch.cuh"
#include "utf8/kernel_validate.cuh"

namespace gutf8::device {

cudaError_t validate(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                     std::uint64_t n, device_summary* d_summary, bool is_last,
                     cudaStream_t stream) {
  using namespace launch;
  const temp_layout l(0, 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary)) return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf8, stream);
      e != cudaSuccess)
    return e;
  const u64 segs = ceil_div(n, kern::validate_segment);
  if (segs != 0) {
    // Every resident warp walks one contiguous run of segments.
    const bool vec = aligned16(in);
    const int per_sm = vec ? blocks_per_sm(kern::validate_kernel<true>) : blocks_per_sm(kern::validate_kernel<false>);
    const u64 warps_per_block = kern::block_threads / 32;
    const u64 blocks = std::max<u64>(
        1, std::min<u64>(static_cast<u64>(sm_count()) * static_cast<u64>(per_sm), ceil_div(segs, warps_per_block)));
    const u64 per_warp = ceil_div(segs, blocks * warps_per_block);
    const unsigned grid = static_cast<unsigned>(ceil_div(segs, per_warp * warps_per_block));
    const cudaError_t e =
        dependent(vec ? kern::validate_kernel<true> : kern::validate_kernel<false>, grid, stream, in, n, is_last,
                  l.acc(d_temp), per_warp, segs);
    if (e != cudaSuccess) return e;
  }
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, false, stream);
}

}  // namespace gutf8::device
