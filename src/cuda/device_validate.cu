// gutf8::device::validate
#include "validate_walk.cuh"

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
  if (const cudaError_t e = validate_walk<false>(in, n, is_last, l.acc(d_temp), {}, stream); e != cudaSuccess)
    return e;
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, false, stream);
}

}  // namespace gutf8::device
