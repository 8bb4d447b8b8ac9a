// gutf8::device::encode (fused and compact variants)
#include "device_launch.cuh"
#include "prim/select.cuh"
#include "utf8/kernel_encode.cuh"

namespace gutf8::device {
namespace {

using namespace launch;

// The compact encoder's second pass: kernels/prim's select over its padded bytes, whose temporary
// storage follows them in the extra part of the layout.
struct compact_pass {
  u64 padded_bytes = 0;
  std::size_t select_bytes = 0;

  explicit compact_pass(u64 elems) : padded_bytes(4 * elems) {
    prim::detail::select_fused(nullptr, select_bytes, static_cast<const u8*>(nullptr), kern::padded_byte_selector{},
                               static_cast<u8*>(nullptr), static_cast<u64*>(nullptr), padded_bytes, nullptr);
  }
  [[nodiscard]] std::size_t extra_bytes(u64 tiles) const { return align256(tiles * kern::expand_tile * 4) + select_bytes; }
  cudaError_t run(u8* padded, u64 tiles, u8* out, kern::accum* acc, cudaStream_t stream) const {
    std::size_t bytes = select_bytes;
    return prim::detail::select_fused(padded + align256(tiles * kern::expand_tile * 4), bytes,
                                      static_cast<const u8*>(padded), kern::padded_byte_selector{&acc->select_end},
                                      out, &acc->written, padded_bytes, stream);
  }
};

template <error_policy P, bool Vec>
cudaError_t launch_encode(encoder variant, const temp_layout& l, const compact_pass& compact, void* d_temp,
                          const u8* in, u64 n, u64 full, u64 elems, u8* out, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(l.tiles);
  const auto last = static_cast<unsigned>(l.tiles - 1);
  if (variant == encoder::fused) {
    kern::encode_fused_kernel<P, Vec><<<grid, kern::block_threads, 0, stream>>>(
        in, n, full, elems, out, l.acc(d_temp), l.states(d_temp), last);
  } else {
    auto* padded = static_cast<u8*>(l.extra(d_temp));
    kern::encode_expand_kernel<P, Vec><<<grid, kern::block_threads, 0, stream>>>(
        in, n, full, elems, reinterpret_cast<uint4*>(padded), l.acc(d_temp));
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    return compact.run(padded, l.tiles, out, l.acc(d_temp), stream);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t encode(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                   std::uint64_t n_bytes, char8_t* d_out, device_summary* d_summary,
                   error_policy policy, bool is_last, encoder variant, cudaStream_t stream) {
  const u64 n = n_bytes;
  const u64 full = n / 4;
  const u64 elems = full + (is_last && n % 4 != 0 ? 1 : 0);
  const u64 tiles = ceil_div(elems, variant == encoder::compact ? kern::expand_tile : kern::encode_tile);
  const compact_pass compact(variant == encoder::compact ? elems : 0);
  const temp_layout l(tiles, variant == encoder::compact ? compact.extra_bytes(tiles) : 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary) || (n != 0 && d_out == nullptr))
    return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf32, stream);
      e != cudaSuccess)
    return e;
  if (tiles != 0) {
    auto* out = reinterpret_cast<u8*>(d_out);
    const cudaError_t e = with_policy(policy, aligned16(in), [&](auto p, auto vec) {
      return launch_encode<decltype(p)::value, decltype(vec)::value>(variant, l, compact, d_temp, in, n, full, elems,
                                                                     out, stream);
    });
    if (e != cudaSuccess) return e;
  }
  return end<kern::input_kind::utf32>(l, d_temp, in, n, d_summary, policy == error_policy::strict,
                                      stream);
}

}  // namespace gutf8::device
