// gutf8::device::decode (fused and staged variants)
#include "device_launch.cuh"
#include "utf8/kernel_decode_fused.cuh"
#include "utf8/kernel_decode_staged.cuh"

namespace gutf8::device {
namespace {

using namespace launch;

template <error_policy P, bool Vec>
cudaError_t launch_decode(decoder variant, const temp_layout& l, void* d_temp, const u8* in, u64 n,
                          char32_t* d_out, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(l.tiles);
  const auto last = static_cast<unsigned>(l.tiles - 1);
  auto* out = reinterpret_cast<kern::u32*>(d_out);
  if (variant == decoder::fused)
    return dependent(kern::decode_fused_kernel<P, Vec>, grid, stream, in, n, out, l.acc(d_temp), l.states(d_temp), last,
                     false);
  if (const cudaError_t e = dependent(kern::staged_scatter_kernel<P, Vec>, grid, stream, in, n,
                                      reinterpret_cast<u8*>(d_out), l.acc(d_temp), l.states(d_temp), last);
      e != cudaSuccess)
    return e;
  const unsigned g2 = stride_grid<kern::staged_decode_kernel>(ceil_div(n, 4 * kern::block_threads));
  kern::staged_decode_kernel<<<g2, kern::block_threads, 0, stream>>>(out, l.acc(d_temp), aligned16(out));
  return cudaGetLastError();
}

}  // namespace

cudaError_t decode(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                   char32_t* d_out, device_summary* d_summary, error_policy policy, bool is_last,
                   decoder variant, cudaStream_t stream) {
  const u64 tile = variant == decoder::fused ? kern::decode_tile : kern::staged_tile;
  const temp_layout l(ceil_div(n, tile), 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary) || (n != 0 && d_out == nullptr) ||
      variant > decoder::staged)
    return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf8, stream); e != cudaSuccess)
    return e;
  if (l.tiles != 0) {
    const cudaError_t e = with_policy(policy, aligned16(in), [&](auto p, auto vec) {
      return launch_decode<decltype(p)::value, decltype(vec)::value>(variant, l, d_temp, in, n, d_out, stream);
    });
    if (e != cudaSuccess) return e;
  }
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, policy == error_policy::strict,
                                     stream);
}

}  // namespace gutf8::device
