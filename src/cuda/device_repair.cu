// gutf8::device::repair
#include "utf8/kernel_repair.cuh"
#include "validate_walk.cuh"

namespace gutf8::device {
namespace {

using namespace launch;

template <error_policy P, bool Vec>
cudaError_t launch_repair(const temp_layout& l, void* d_temp, const u8* in, u64 n, u8* out,
                            const kern::verbatim_summary* copy_pass, cudaStream_t stream) {
  return dependent(kern::repair_kernel<P, Vec>, static_cast<unsigned>(l.tiles), stream, in, n, out, l.acc(d_temp),
                   l.states(d_temp), static_cast<unsigned>(l.tiles - 1), copy_pass);
}

}  // namespace

cudaError_t repair(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                     std::uint64_t n, char8_t* d_out, device_summary* d_summary,
                     error_policy policy, bool is_last, cudaStream_t stream) {
  // The extra part: the copying pass's summary (kernel_validate.cuh), zeroed with the tile states.
  const temp_layout l(ceil_div(n, kern::repair_tile), sizeof(kern::verbatim_summary), true);
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
    // Valid text is its own repair: where both buffers allow 16-byte stores, a copying pass
    // first; the tile kernel's blocks then return at once unless that pass found an error unit.
    kern::verbatim_summary* copy_pass = nullptr;
    if (aligned16(in) && aligned16(out)) {
      copy_pass = static_cast<kern::verbatim_summary*>(l.extra(d_temp));
      if (const cudaError_t e = validate_walk<true>(in, n, is_last, l.acc(d_temp), {out, copy_pass}, stream);
          e != cudaSuccess)
        return e;
    }
    const cudaError_t e = with_policy(policy, aligned16(in), [&](auto p, auto vec) {
      return launch_repair<decltype(p)::value, decltype(vec)::value>(l, d_temp, in, n, out, copy_pass, stream);
    });
    if (e != cudaSuccess) return e;
  }
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, policy == error_policy::strict,
                                     stream);
}

}  // namespace gutf8::device
