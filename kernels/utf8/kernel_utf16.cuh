// UTF-16 output (device::decode_utf16): every code point of the decoded UTF-32 becomes one UTF-16
// unit, or a surrogate pair above U+FFFF. An exclusive scan of those 1-or-2 counts (the primitives'
// single-pass look-back scan, prim::transform_exclusive_scan with utf16_units) gives each code
// point its place; these kernels scatter the units there and count them.
#pragma once

#include <cstdint>

#include "utf8/common.cuh"

namespace gutf8::kern {

// UTF-16 units of a code point: the scan's transform.
struct utf16_units {
  __host__ __device__ __forceinline__ u64 operator()(u32 cp) const { return cp >= 0x10000u ? 2 : 1; }
};

__device__ __forceinline__ u16 utf16_unit(u32 unit, bool big_endian) {
  return static_cast<u16>(big_endian ? (unit >> 8 | unit << 8) : unit);
}

// Writes code points [0, summary->written) of the decoder's output at their places.
static __global__ void __launch_bounds__(block_threads)
    utf16_scatter_kernel(const u32* cps, const u64* place, const device::device_summary* summary, u16* out,
                         bool big_endian) {
  const u64 count = summary->written;
  const u64 stride = u64{gridDim.x} * block_threads;
  for (u64 k = u64{blockIdx.x} * block_threads + threadIdx.x; k < count; k += stride) {
    const u32 cp = cps[k];
    u16* at = out + place[k];
    if (cp < 0x10000u) {
      at[0] = utf16_unit(cp, big_endian);
    } else {
      at[0] = utf16_unit(0xD800u + ((cp - 0x10000u) >> 10), big_endian);
      at[1] = utf16_unit(0xDC00u + ((cp - 0x10000u) & 0x3FFu), big_endian);
    }
  }
}

// summary->written: from code points to UTF-16 units (one thread).
static __global__ void utf16_count_kernel(const u32* cps, const u64* place, device::device_summary* summary) {
  const u64 count = summary->written;
  if (count != 0) summary->written = place[count - 1] + utf16_units{}(cps[count - 1]);
}

}  // namespace gutf8::kern
