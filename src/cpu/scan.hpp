// The CPU scanners: one interface, an implementation per ISA chosen at run time (scan_request::level).
// scan_utf8 walks UTF-8 for validate, stats, decode and repair; scan_utf32 walks UTF-32LE for
// encode. Both process the units that start in [0, end) of a buffer readable up to `limit`, so a
// block can be split at unit boundaries and the segments scanned independently (threads) with
// results identical to one pass.
//
//   scan_state.hpp     the scan request, the result, a scan's state and the exact path (Table 3-7)
//   scan_portable.hpp  16-byte vectors (SSE2 or plain C++); ends every other ISA's scan
//   scan_avx2.hpp      32-byte vectors (kernels: simd_avx2.hpp)
//   scan_avx512.hpp    64-byte vectors at fixed steps and unit windows (kernels: simd_avx512.hpp)
#pragma once

#include "cpu/isa.hpp"
#include "cpu/scan_avx2.hpp"
#include "cpu/scan_avx512.hpp"
#include "cpu/scan_portable.hpp"
#include "cpu/scan_state.hpp"

namespace gutf8::cpu {

template <mode M, error_policy P, bool Histogram = false>
inline segment_result scan_utf8(const scan_request& j) noexcept {
  utf8_state<M, P, Histogram> s(j);
#if GUTF8_X86
  if (j.level == isa::avx512) return avx512::run_utf8(s);
  if (j.level == isa::avx2) return avx2::run_utf8(s);
#endif
  return portable::run_utf8(s, 0);
}

template <error_policy P>
inline segment_result scan_utf32(const scan_request& j) noexcept {
  utf32_state<P> s(j);
#if GUTF8_X86
  if (j.level >= isa::avx2) return avx2::run_utf32(s);
#endif
  return portable::run_utf32(s, 0);
}

}  // namespace gutf8::cpu
