// Input adaptors for the scan kernels: a plain pointer, or a pointer plus an element-wise
// transform (used to scan flags/predicates/key bits without materialising them).
//   ptr_source<T>{p}                       yields p[i]
//   transform_source<T, U, F>{p, f}        yields f(p[i]) as T
// Both provide load<V>(i, x) for V consecutive elements (vectorised; the host checks
// `vector_ok(V)` once per launch) and load_one(i).
#pragma once

#include "common.cuh"

namespace gutf8::prim::detail {

template <class T>
struct ptr_source {
  using value_type = T;
  const T* p;
  template <int V>
  __device__ __forceinline__ void load(std::size_t i, T (&x)[V]) const {
    load_vec<V>(p + i, x);
  }
  __device__ __forceinline__ T load_one(std::size_t i) const { return p[i]; }
  template <int V>
  bool vector_ok() const {
    return is_aligned(p, vec_bytes<T, V>);
  }
};

template <class T, class U, class F>
struct transform_source {
  using value_type = T;
  const U* p;
  F f;
  template <int V>
  __device__ __forceinline__ void load(std::size_t i, T (&x)[V]) const {
    U u[V];
    load_vec<V>(p + i, u);
#pragma unroll
    for (int j = 0; j < V; ++j) x[j] = static_cast<T>(f(u[j]));
  }
  __device__ __forceinline__ T load_one(std::size_t i) const { return static_cast<T>(f(p[i])); }
  template <int V>
  bool vector_ok() const {
    return is_aligned(p, vec_bytes<U, V>);
  }
};

}  // namespace gutf8::prim::detail
