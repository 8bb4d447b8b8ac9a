// gutf8 primitives: stable stream compaction (select by flags / by predicate), header-only CUDA,
// CUB conventions (temp-size query with d_temp == nullptr, async on `stream`, errors returned).
//
//   gutf8::prim::select_flagged(d_temp, temp_bytes, d_in, d_flags, d_out, d_num_selected, n, s);
//   gutf8::prim::select_if(d_temp, temp_bytes, d_in, d_out, d_num_selected, n, pred, s);
//
// * Items whose flag is non-zero (or for which pred(item) is true) are copied to d_out in their
//   original order; the count is written to *d_num_selected (device memory, any integer type).
// * d_out must not overlap d_in / d_flags.
// * Algorithms: `fused` (default, single pass with decoupled look-back), `cub`
//   (cub::DeviceSelect), or flags -> exclusive scan -> scatter on any scan algorithm.
//
//   gutf8::prim::select_bytes(d_temp, temp_bytes, d_in, d_out, d_num_selected, n, pad, d_end, s);
//
// * A named variant for bytes: those of d_in[0 .. n) that are not `pad`, and (d_end not null)
//   lie before *d_end, a 64-bit bound in device memory read by the kernel; single pass.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <cub/device/device_select.cuh>

#include "gutf8/prim/scan.cuh"
#include "gutf8/prim/detail/select.cuh"
#include "gutf8/prim/detail/select_bytes.cuh"

namespace gutf8::prim {

enum class select_algorithm {
  hillis_steele,       // map -> Hillis-Steele exclusive scan -> scatter
  blelloch,            // map -> Blelloch scan -> scatter
  blocked,             // map -> blocked (reduce-then-scan) scan -> scatter
  decoupled_lookback,  // map -> single-pass look-back scan -> scatter
  cub,                 // cub::DeviceSelect (reference)
  fused,               // single pass: look-back over tile selection counts (production)
};

inline const char* to_string(select_algorithm a) {
  switch (a) {
    case select_algorithm::hillis_steele: return "hillis_steele";
    case select_algorithm::blelloch: return "blelloch";
    case select_algorithm::blocked: return "blocked";
    case select_algorithm::decoupled_lookback: return "decoupled_lookback";
    case select_algorithm::cub: return "cub";
    case select_algorithm::fused: return "fused";
  }
  return "?";
}

namespace detail {

inline scan_algorithm scan_for(select_algorithm a) {
  switch (a) {
    case select_algorithm::hillis_steele: return scan_algorithm::hillis_steele;
    case select_algorithm::blelloch: return scan_algorithm::blelloch;
    case select_algorithm::blocked: return scan_algorithm::blocked;
    default: return scan_algorithm::decoupled_lookback;
  }
}

template <class T, class Sel, class NumT>
cudaError_t select_dispatch(void* d_temp, std::size_t& temp_bytes, const T* in, Sel sel, T* out,
                            NumT* num_selected, std::size_t n, cudaStream_t s, select_algorithm alg) {
  if (alg == select_algorithm::fused) return select_fused(d_temp, temp_bytes, in, sel, out, num_selected, n, s);
  const scan_algorithm sa = scan_for(alg);
  auto run = [&](auto offset_tag) {
    using O = decltype(offset_tag);
    auto scan = [sa](void* t, std::size_t& b, const O* i, O* o, std::size_t m, cudaStream_t st) {
      return scan_dispatch(t, b, i, o, m, plus{}, true, O{0}, st, sa);
    };
    return select_by_scan<O>(d_temp, temp_bytes, in, sel, out, num_selected, n, s, scan);
  };
  if (n <= 0xffffffffu) return run(std::uint32_t{});
  return run(std::uint64_t{});
}

}  // namespace detail

template <class T, class FlagT, class NumT>
cudaError_t select_flagged(void* d_temp, std::size_t& temp_bytes, const T* d_in, const FlagT* d_flags,
                           T* d_out, NumT* d_num_selected, std::size_t n, cudaStream_t stream = nullptr,
                           select_algorithm alg = select_algorithm::fused) {
  if (alg == select_algorithm::cub) {
    const cudaError_t e = ::cub::DeviceSelect::Flagged(d_temp, temp_bytes, d_in, d_flags, d_out,
                                                       d_num_selected, static_cast<std::int64_t>(n), stream);
    if (d_temp == nullptr && temp_bytes == 0) temp_bytes = 1;
    return e;
  }
  return detail::select_dispatch(d_temp, temp_bytes, d_in, detail::flag_selector<FlagT>{d_flags}, d_out,
                                 d_num_selected, n, stream, alg);
}

template <class T, class Pred, class NumT>
cudaError_t select_if(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                      NumT* d_num_selected, std::size_t n, Pred pred, cudaStream_t stream = nullptr,
                      select_algorithm alg = select_algorithm::fused) {
  if (alg == select_algorithm::cub) {
    const cudaError_t e = ::cub::DeviceSelect::If(d_temp, temp_bytes, d_in, d_out, d_num_selected,
                                                  static_cast<std::int64_t>(n), pred, stream);
    if (d_temp == nullptr && temp_bytes == 0) temp_bytes = 1;
    return e;
  }
  return detail::select_dispatch(d_temp, temp_bytes, d_in, detail::pred_selector<Pred>{pred}, d_out,
                                 d_num_selected, n, stream, alg);
}

template <class NumT>
cudaError_t select_bytes(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_in, std::uint8_t* d_out,
                         NumT* d_num_selected, std::size_t n, std::uint8_t pad, const std::uint64_t* d_end = nullptr,
                         cudaStream_t stream = nullptr) {
  return detail::select_bytes_impl(d_temp, temp_bytes, d_in, d_out, d_num_selected, n, pad, d_end, stream);
}

}  // namespace gutf8::prim
