// gutf8::device::decode_utf16: the fused decoder writing UTF-16 (kernels/utf8/kernel_decode_fused.cuh).
// Its former form, kept for A/B measurements (detail::decode_utf16_three_pass): the fused UTF-32
// decoder, then a scan of UTF-16 unit counts and a scatter (kernels/utf8/kernel_utf16.cuh).
#include "device_launch.cuh"
#include "device_variants.hpp"
#include "gutf8/prim/scan.cuh"
#include "utf8/kernel_decode_fused.cuh"
#include "utf8/kernel_utf16.cuh"

namespace gutf8::device {
namespace {

using namespace launch;
using kern::u32;

// Temporary storage: [decode's][UTF-32 code points: 4n][places: 8n][the scan's], 256-byte aligned.
struct utf16_layout {
  std::size_t decode_bytes = 0, scan_bytes = 0;
  std::size_t cps_offset = 0, place_offset = 0, scan_offset = 0, total = 0;

  utf16_layout(std::size_t decode, std::size_t scan, u64 n) : decode_bytes(decode), scan_bytes(scan) {
    cps_offset = align256(decode_bytes);
    place_offset = cps_offset + align256(4 * n);
    scan_offset = place_offset + align256(8 * n);
    total = scan_offset + align256(scan_bytes);
  }
  template <class T>
  [[nodiscard]] T* at(void* t, std::size_t offset) const {
    return reinterpret_cast<T*>(static_cast<unsigned char*>(t) + offset);
  }
};

cudaError_t scan_places(void* d_temp, std::size_t& bytes, const u32* cps, u64* place, u64 n, cudaStream_t stream) {
  return prim::transform_exclusive_scan(d_temp, bytes, cps, place, n, u64{0}, kern::utf16_units{}, prim::plus{},
                                        stream);
}

}  // namespace

cudaError_t decode_utf16(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in, std::uint64_t n,
                         char16_t* d_out, device_summary* d_summary, error_policy policy, bool is_last,
                         bool big_endian, cudaStream_t stream) {
  const temp_layout l(ceil_div(n, kern::decode_tile), 0);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (bad_args(temp_bytes, l, d_in, n, d_summary) || (n != 0 && d_out == nullptr)) return cudaErrorInvalidValue;
  const auto* in = reinterpret_cast<const u8*>(d_in);
  if (const cudaError_t e = begin(l, d_temp, in, n, is_last, kern::input_kind::utf8, stream); e != cudaSuccess)
    return e;
  if (l.tiles != 0) {
    auto* out = reinterpret_cast<kern::u16*>(d_out);
    const auto grid = static_cast<unsigned>(l.tiles);
    const auto last = static_cast<unsigned>(l.tiles - 1);
    const cudaError_t e = with_policy(policy, aligned16(in), [&](auto p, auto vec) {
      return dependent(kern::decode_fused_kernel<decltype(p)::value, decltype(vec)::value, kern::out_form::utf16>, grid,
                       stream, in, n, out, l.acc(d_temp), l.states(d_temp), last, big_endian);
    });
    if (e != cudaSuccess) return e;
  }
  return end<kern::input_kind::utf8>(l, d_temp, in, n, d_summary, policy == error_policy::strict, stream);
}

cudaError_t detail::decode_utf16_three_pass(void* d_temp, std::size_t& temp_bytes, const std::byte* d_in,
                                            std::uint64_t n, char16_t* d_out, device_summary* d_summary,
                                            error_policy policy, bool is_last, bool big_endian, cudaStream_t stream) {
  std::size_t decode_bytes = 0, scan_bytes = 0;
  if (const cudaError_t e = decode(nullptr, decode_bytes, d_in, n, nullptr, d_summary, policy, is_last,
                                   decoder::fused, stream);
      e != cudaSuccess)
    return e;
  if (n != 0)
    if (const cudaError_t e = scan_places(nullptr, scan_bytes, nullptr, nullptr, n, stream); e != cudaSuccess)
      return e;
  const utf16_layout l(decode_bytes, scan_bytes, n);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return cudaSuccess;
  }
  if (temp_bytes < l.total || d_summary == nullptr || (n != 0 && (d_in == nullptr || d_out == nullptr)))
    return cudaErrorInvalidValue;
  auto* cps = l.at<u32>(d_temp, l.cps_offset);
  auto* place = l.at<u64>(d_temp, l.place_offset);
  if (const cudaError_t e = decode(d_temp, decode_bytes, d_in, n, reinterpret_cast<char32_t*>(cps), d_summary,
                                   policy, is_last, decoder::fused, stream);
      e != cudaSuccess)
    return e;
  if (n == 0) return cudaSuccess;
  // The scan covers all n places (the code point count is on the device); those past it are unused.
  void* scan_temp = static_cast<unsigned char*>(d_temp) + l.scan_offset;
  if (const cudaError_t e = scan_places(scan_temp, scan_bytes, cps, place, n, stream); e != cudaSuccess)
    return e;
  auto* out = reinterpret_cast<kern::u16*>(d_out);
  const unsigned grid = stride_grid<kern::utf16_scatter_kernel>(ceil_div(n, kern::block_threads));
  kern::utf16_scatter_kernel<<<grid, kern::block_threads, 0, stream>>>(cps, place, d_summary, out, big_endian);
  kern::utf16_count_kernel<<<1, 1, 0, stream>>>(cps, place, d_summary);
  return cudaGetLastError();
}

}  // namespace gutf8::device
