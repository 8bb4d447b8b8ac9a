// gutf8::device::sanitize
#include "device_launch.cuh"
#include "utf8/sanitize.cuh"

namespace gutf8::device {

cudaError_t sanitize(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                     std::uint64_t n, char8_t* d_out, device_summary* d_summary,
                     error_policy policy, bool is_last, cudaStream_t stream) {
  using namespace launch;
  const temp_layout l(ceil_div(n, kern::sanitize_tile), 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary) || (n != 0 && d_out == nullptr))
    return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf8, true, stream);
      e != cudaSuccess)
    return e;
  if (l.tiles != 0) {
    const auto grid = static_cast<unsigned>(l.tiles);
    const auto last = static_cast<unsigned>(l.tiles - 1);
    auto* out = reinterpret_cast<u8*>(d_out);
    const bool vec = aligned16(in);
    switch (policy) {
      case error_policy::strict:
        kern::sanitize_kernel<error_policy::strict><<<grid, kern::block_threads, 0, stream>>>(
            in, n, out, l.acc(d_temp), l.state(d_temp), last, vec);
        break;
      case error_policy::replace:
        kern::sanitize_kernel<error_policy::replace><<<grid, kern::block_threads, 0, stream>>>(
            in, n, out, l.acc(d_temp), l.state(d_temp), last, vec);
        break;
      case error_policy::drop:
        kern::sanitize_kernel<error_policy::drop><<<grid, kern::block_threads, 0, stream>>>(
            in, n, out, l.acc(d_temp), l.state(d_temp), last, vec);
        break;
    }
  }
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, policy == error_policy::strict,
                                     stream);
}

}  // namespace gutf8::device
