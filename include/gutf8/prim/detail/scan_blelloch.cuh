// Work-efficient Blelloch scan (1990) over the whole array: an up-sweep (reduce) tree and a
// down-sweep tree, one launch per level, each launching only the threads its level needs
// (ceil(n / 2^(level+1)) nodes: subtrees entirely past n are skipped). O(n) work, 2 log n launches.
//
// The tree lives in a temporary array of N = next power of two >= max(n, 2) elements (slots past
// n hold partial sums of the partial rightmost subtrees). No identity element is assumed: a
// right child whose subtree starts at or past n is "absent" (the node just copies its left
// child), and the down-sweep tracks the empty prefix of the leftmost spine by index (node 0 of
// every level), so non-commutative operators without identity work.
// The first up-sweep level is fused with the copy in -> tree, and the last down-sweep level with
// the final output (inclusive or exclusive, with init), so in may equal out.
#pragma once

#include <cuda_runtime.h>

#include "common.cuh"
#include "tuning.cuh"

namespace gutf8::prim::detail {

// Level 0 of the up-sweep: pairs (2k, 2k+1) of the input.
template <class T, class Op>
__global__ void __launch_bounds__(elementwise_policy::threads)
    blelloch_up0(const T* in, T* a, std::size_t n, std::size_t nodes, Op op) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * elementwise_policy::threads + threadIdx.x;
  if (k >= nodes) return;
  const T l = in[2 * k];
  a[2 * k] = l;
  a[2 * k + 1] = 2 * k + 1 < n ? op(l, in[2 * k + 1]) : l;
}

// Up-sweep level with half-width h (children at k*2h + h - 1 and k*2h + 2h - 1).
template <class T, class Op>
__global__ void __launch_bounds__(elementwise_policy::threads)
    blelloch_up(T* a, std::size_t n, std::size_t h, std::size_t nodes, Op op) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * elementwise_policy::threads + threadIdx.x;
  if (k >= nodes) return;
  const std::size_t start = k * 2 * h;
  const std::size_t l = start + h - 1, r = start + 2 * h - 1;
  const T lv = a[l];
  a[r] = start + h < n ? op(lv, a[r]) : lv;
}

// Down-sweep level: a[r] holds the node's exclusive prefix (empty for node 0).
template <class T, class Op>
__global__ void __launch_bounds__(elementwise_policy::threads)
    blelloch_down(T* a, std::size_t h, std::size_t nodes, Op op) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * elementwise_policy::threads + threadIdx.x;
  if (k >= nodes) return;
  const std::size_t start = k * 2 * h;
  const std::size_t l = start + h - 1, r = start + 2 * h - 1;
  const T left_sum = a[l];
  const T prefix = a[r];
  a[l] = prefix;                                  // garbage for k == 0: never read as a prefix
  a[r] = k == 0 ? left_sum : op(prefix, left_sum);
}

// Last level fused with the output: node k covers elements 2k and 2k+1 with prefix a[2k+1].
template <class T, class Op>
__global__ void __launch_bounds__(elementwise_policy::threads)
    blelloch_down0(const T* a, const T* in, T* out, std::size_t n, std::size_t nodes, Op op,
                   bool exclusive, T init) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * elementwise_policy::threads + threadIdx.x;
  if (k >= nodes) return;
  const bool has_right = 2 * k + 1 < n;
  const T x0 = in[2 * k];
  const T x1 = has_right ? in[2 * k + 1] : x0;
  if (exclusive) {
    const T p = k == 0 ? init : op(init, a[2 * k + 1]);
    out[2 * k] = p;
    if (has_right) out[2 * k + 1] = op(p, x0);
  } else {
    const T y0 = k == 0 ? x0 : op(a[2 * k + 1], x0);
    out[2 * k] = y0;
    if (has_right) out[2 * k + 1] = op(y0, x1);
  }
}

template <class T, class Op>
cudaError_t blelloch_scan(void* d_temp, std::size_t& temp_bytes, const T* in, T* out,
                          std::size_t n, Op op, bool exclusive, T init, cudaStream_t stream) {
  int levels = 1;  // N = 2^levels >= max(n, 2)
  while ((std::size_t{1} << levels) < n) ++levels;
  const std::size_t sizes[1] = {n ? (std::size_t{1} << levels) * sizeof(T) : 0};
  void* ptrs[1];
  GUTF8_PRIM_TRY(carve_temp(d_temp, temp_bytes, sizes, ptrs));
  if (d_temp == nullptr || n == 0) return cudaSuccess;
  T* a = static_cast<T*>(ptrs[0]);
  constexpr unsigned B = elementwise_policy::threads;
  auto grid = [](std::size_t nodes) { return static_cast<unsigned>(ceil_div(nodes, B)); };

  std::size_t nodes = ceil_div(n, 2);
  blelloch_up0<<<grid(nodes), B, 0, stream>>>(in, a, n, nodes, op);
  GUTF8_PRIM_LAUNCHED();
  for (int d = 1; d < levels; ++d) {
    const std::size_t h = std::size_t{1} << d;
    nodes = ceil_div(n, 2 * h);
    blelloch_up<<<grid(nodes), B, 0, stream>>>(a, n, h, nodes, op);
    GUTF8_PRIM_LAUNCHED();
  }
  for (int d = levels - 1; d >= 1; --d) {
    const std::size_t h = std::size_t{1} << d;
    nodes = ceil_div(n, 2 * h);
    blelloch_down<<<grid(nodes), B, 0, stream>>>(a, h, nodes, op);
    GUTF8_PRIM_LAUNCHED();
  }
  nodes = ceil_div(n, 2);
  blelloch_down0<<<grid(nodes), B, 0, stream>>>(a, in, out, n, nodes, op, exclusive, init);
  GUTF8_PRIM_LAUNCHED();
  return cudaSuccess;
}

}  // namespace gutf8::prim::detail
