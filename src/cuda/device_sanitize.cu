// gutf8::device::sanitize
#include "device_launch.cuh"
#include "utf8/sanitize.cuh"

namespace gutf8::device {
namespace {

using namespace launch;

template <bool Vec>
void launch_sanitize(error_policy policy, const temp_layout& l, void* d_temp, const u8* in, u64 n, u8* out,
                     cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(l.tiles);
  const auto last = static_cast<unsigned>(l.tiles - 1);
  switch (policy) {
    case error_policy::strict:
      dependent(kern::sanitize_kernel<error_policy::strict, Vec>, grid, stream, in, n, out, l.acc(d_temp),
                l.states(d_temp), last);
      break;
    case error_policy::replace:
      dependent(kern::sanitize_kernel<error_policy::replace, Vec>, grid, stream, in, n, out, l.acc(d_temp),
                l.states(d_temp), last);
      break;
    case error_policy::drop:
      dependent(kern::sanitize_kernel<error_policy::drop, Vec>, grid, stream, in, n, out, l.acc(d_temp),
                l.states(d_temp), last);
      break;
  }
}

}  // namespace

cudaError_t sanitize(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                     std::uint64_t n, char8_t* d_out, device_summary* d_summary,
                     error_policy policy, bool is_last, cudaStream_t stream) {
  const temp_layout l(ceil_div(n, kern::sanitize_tile), 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary) || (n != 0 && d_out == nullptr))
    return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf8, stream);
      e != cudaSuccess)
    return e;
  if (l.tiles != 0) {
    auto* out = reinterpret_cast<u8*>(d_out);
    if (aligned16(in)) launch_sanitize<true>(policy, l, d_temp, in, n, out, stream);
    else launch_sanitize<false>(policy, l, d_temp, in, n, out, stream);
  }
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, policy == error_policy::strict,
                                     stream);
}

}  // namespace gutf8::device
