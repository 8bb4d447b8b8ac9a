// Shared plumbing for the device-wide primitives: temporary-storage carving (CUB convention),
// vectorised global loads/stores of V consecutive elements, small math helpers.
//
//   size_t sizes[3] = {a, b, c};  void* ptrs[3];
//   if (auto e = carve_temp(d_temp, temp_bytes, sizes, ptrs); e != cudaSuccess || !d_temp) return e;
// carve_temp with d_temp == nullptr only stores the total (always >= 1 byte, so a caller that
// allocates exactly temp_bytes never gets a null pointer back) and returns cudaSuccess.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gutf8::prim::detail {

inline constexpr std::size_t temp_alignment = 256;

__host__ __device__ constexpr std::size_t align_up(std::size_t v, std::size_t a) {
  return (v + a - 1) / a * a;
}
__host__ __device__ constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

template <int N>
cudaError_t carve_temp(void* d_temp, std::size_t& temp_bytes, const std::size_t (&sizes)[N],
                       void* (&ptrs)[N]) {
  std::size_t offsets[N];
  std::size_t total = 0;
  for (int i = 0; i < N; ++i) {
    offsets[i] = total;
    total += (sizes[i] + temp_alignment - 1) / temp_alignment * temp_alignment;
  }
  if (total == 0) total = 1;
  if (d_temp == nullptr) {
    temp_bytes = total;
    return cudaSuccess;
  }
  if (temp_bytes < total) return cudaErrorInvalidValue;
  for (int i = 0; i < N; ++i)
    ptrs[i] = sizes[i] ? static_cast<void*>(static_cast<unsigned char*>(d_temp) + offsets[i]) : nullptr;
  return cudaSuccess;
}

// The first error wins; launches are checked with cudaPeekAtLastError-free cudaGetLastError.
#define GUTF8_PRIM_TRY(expr)                             \
  do {                                                   \
    const cudaError_t gutf8_prim_e = (expr);             \
    if (gutf8_prim_e != cudaSuccess) return gutf8_prim_e; \
  } while (false)
#define GUTF8_PRIM_LAUNCHED() GUTF8_PRIM_TRY(cudaGetLastError())

inline bool is_aligned(const void* p, std::size_t a) {
  return (reinterpret_cast<std::uintptr_t>(p) % a) == 0;
}

// ---- vectorised access to V consecutive elements of U ----
// A run of V elements is moved with the widest natural loads (16, 8 or 4 bytes) when its byte
// size allows; the caller guarantees the pointer is aligned to `vec_bytes<U, V>` (checked once
// per launch on the host with is_aligned(base, vec_bytes) plus tile sizes that keep it).
template <class U, int V>
inline constexpr std::size_t vec_bytes = (sizeof(U) * V) % 16 == 0  ? 16
                                         : (sizeof(U) * V) % 8 == 0 ? 8
                                         : (sizeof(U) * V) % 4 == 0 ? 4
                                                                    : alignof(U);

template <std::size_t B>
struct word_of;
template <>
struct word_of<16> {
  using type = uint4;
};
template <>
struct word_of<8> {
  using type = uint2;
};
template <>
struct word_of<4> {
  using type = unsigned;
};

template <int V, class U>
__device__ __forceinline__ void load_vec(const U* p, U (&dst)[V]) {
  constexpr std::size_t B = vec_bytes<U, V>;
  if constexpr (B >= 4 && B > alignof(U)) {
    using W = typename word_of<B>::type;
    constexpr int words = static_cast<int>(sizeof(U) * V / B);
    W w[words];
#pragma unroll
    for (int i = 0; i < words; ++i) w[i] = __ldg(reinterpret_cast<const W*>(p) + i);
    std::memcpy(dst, w, sizeof(U) * V);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) dst[i] = p[i];
  }
}

template <int V, class U>
__device__ __forceinline__ void store_vec(U* p, const U (&src)[V]) {
  constexpr std::size_t B = vec_bytes<U, V>;
  if constexpr (B >= 4 && B > alignof(U)) {
    using W = typename word_of<B>::type;
    constexpr int words = static_cast<int>(sizeof(U) * V / B);
    W w[words];
    std::memcpy(w, src, sizeof(U) * V);
#pragma unroll
    for (int i = 0; i < words; ++i) reinterpret_cast<W*>(p)[i] = w[i];
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = src[i];
  }
}

// Largest V <= 16 bytes / sizeof(T) that divides 16 bytes exactly (1 for odd-sized types).
template <class T>
inline constexpr int vec_items = (sizeof(T) <= 16 && 16 % sizeof(T) == 0) ? static_cast<int>(16 / sizeof(T)) : 1;

}  // namespace gutf8::prim::detail
