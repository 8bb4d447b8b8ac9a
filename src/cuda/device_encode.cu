// gutf8::device::encode (fused and compact variants)
#include "device_launch.cuh"
#include "gutf8/prim/detail/select_bytes.cuh"
#include "utf8/kernel_encode.cuh"

namespace gutf8::device {
namespace {

using namespace launch;

// The compact encoder's second pass is the primitives' byte compaction of the padded bytes (strict:
// those before select_end) over the tile states prepare_kernel cleared, one per expand tile.
static_assert(prim::detail::select_bytes_policy::tile % (4 * kern::expand_tile) == 0,
              "a compaction tile spans whole expand tiles: no more of them than tile states");
// The expand pass writes whole tiles, 0xFF past the last element.
constexpr u64 padded_bytes(u64 tiles) { return tiles * kern::expand_tile * 4; }

template <error_policy P, bool Vec>
cudaError_t launch_encode(encoder variant, const temp_layout& l, void* d_temp, const u8* in, u64 n, u64 full,
                          u64 elems, u8* out, cudaStream_t stream) {
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
    kern::accum* acc = l.acc(d_temp);
    return prim::detail::select_bytes_on_states(padded, out, &acc->written, padded_bytes(l.tiles), u8{0xFF},
                                                P == error_policy::strict ? &acc->select_end : nullptr,
                                                l.states(d_temp), stream);
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
  const temp_layout l(tiles, variant == encoder::compact ? padded_bytes(tiles) : 0);
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
      return launch_encode<decltype(p)::value, decltype(vec)::value>(variant, l, d_temp, in, n, full, elems, out,
                                                                     stream);
    });
    if (e != cudaSuccess) return e;
  }
  return end<kern::input_kind::utf32>(l, d_temp, in, n, d_summary, policy == error_policy::strict,
                                      stream);
}

}  // namespace gutf8::device
