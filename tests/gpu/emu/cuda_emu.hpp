// A tiny CPU emulation of the CUDA execution model, enough to run the gutf8 UTF-8 kernels
// (kernels/utf8/*.cuh, kernels/prim/*.cuh) on a machine without a GPU: every CUDA thread is a
// std::thread, blocks run one after another in blockIdx order (so decoupled look-back never
// waits), __syncthreads is a block barrier, warp shuffles / votes / redux exchange through a
// per-warp slot array between two warp barriers, __shared__ variables are function statics
// (shared by the threads of the one running block), "device memory" is host memory.
// Development aid only (slow: use small inputs); not part of the CMake build.
// Include this header BEFORE any kernel header.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace emu {

struct warp_ctx {
  std::barrier<> bar{32};
  std::uint64_t slot[32] = {};
};
struct block_ctx {
  explicit block_ctx(unsigned threads) : bar(static_cast<std::ptrdiff_t>(threads)) {
    for (unsigned w = 0; w < (threads + 31) / 32; ++w) warps.push_back(std::make_unique<warp_ctx>());
  }
  std::barrier<> bar;
  std::vector<std::unique_ptr<warp_ctx>> warps;
};
struct thread_ctx {
  uint3 tid{}, bid{};
  dim3 bdim{}, gdim{};
  block_ctx* block = nullptr;
};
inline thread_local thread_ctx ctx;

inline unsigned lane() { return ctx.tid.x & 31u; }
inline warp_ctx& warp() { return *ctx.block->warps[ctx.tid.x / 32]; }

template <class T>
T exchange(T v, int src) {
  static_assert(sizeof(T) <= 8);
  warp_ctx& w = warp();
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  w.slot[lane()] = bits;
  w.bar.arrive_and_wait();
  const std::uint64_t got = w.slot[src];
  w.bar.arrive_and_wait();
  T r;
  std::memcpy(&r, &got, sizeof(T));
  return r;
}

template <class Kernel, class... Args>
void launch(dim3 grid, dim3 block, Kernel kernel, Args... args) {
  for (unsigned b = 0; b < grid.x; ++b) {
    block_ctx bc(block.x);
    std::vector<std::thread> threads;
    threads.reserve(block.x);
    for (unsigned t = 0; t < block.x; ++t) {
      threads.emplace_back([&, t] {
        ctx.tid = uint3{t, 0, 0};
        ctx.bid = uint3{b, 0, 0};
        ctx.bdim = block;
        ctx.gdim = grid;
        ctx.block = &bc;
        kernel(args...);
      });
    }
    for (auto& th : threads) th.join();
  }
}

}  // namespace emu

#define threadIdx (::emu::ctx.tid)
#define blockIdx (::emu::ctx.bid)
#define blockDim (::emu::ctx.bdim)
#define gridDim (::emu::ctx.gdim)
#undef __shared__
#define __shared__ static
#undef __launch_bounds__
#define __launch_bounds__(...)

inline void __syncthreads() { ::emu::ctx.block->bar.arrive_and_wait(); }

template <class T>
T __shfl_sync(unsigned, T v, int src, int = 32) {
  return ::emu::exchange(v, src & 31);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned d, int = 32) {
  const int l = static_cast<int>(::emu::lane());
  const T r = ::emu::exchange(v, l >= static_cast<int>(d) ? l - static_cast<int>(d) : l);
  return r;
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned d, int = 32) {
  const unsigned l = ::emu::lane();
  return ::emu::exchange(v, static_cast<int>(l + d < 32 ? l + d : l));
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int m, int = 32) {
  return ::emu::exchange(v, static_cast<int>(::emu::lane() ^ static_cast<unsigned>(m)));
}
inline unsigned __ballot_sync(unsigned, int p) {
  ::emu::warp_ctx& w = ::emu::warp();
  w.slot[::emu::lane()] = p ? 1 : 0;
  w.bar.arrive_and_wait();
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= static_cast<unsigned>(w.slot[i]) << i;
  w.bar.arrive_and_wait();
  return r;
}
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned m, int p) { return __ballot_sync(m, p) == 0xFFFFFFFFu; }
template <class F>
unsigned emu_redux(unsigned v, F f) {
  ::emu::warp_ctx& w = ::emu::warp();
  w.slot[::emu::lane()] = v;
  w.bar.arrive_and_wait();
  unsigned r = static_cast<unsigned>(w.slot[0]);
  for (int i = 1; i < 32; ++i) r = f(r, static_cast<unsigned>(w.slot[i]));
  w.bar.arrive_and_wait();
  return r;
}
inline unsigned __reduce_add_sync(unsigned, unsigned v) {
  return emu_redux(v, [](unsigned a, unsigned b) { return a + b; });
}
inline unsigned __reduce_min_sync(unsigned, unsigned v) {
  return emu_redux(v, [](unsigned a, unsigned b) { return a < b ? a : b; });
}
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
  return emu_redux(v, [](unsigned a, unsigned b) { return a > b ? a : b; });
}

template <class T, class U>
T atomicAdd(T* p, U v) {
  return std::atomic_ref<T>(*p).fetch_add(static_cast<T>(v));
}
template <class T, class U>
T atomicMin(T* p, U u) {
  const T v = static_cast<T>(u);
  std::atomic_ref<T> a(*p);
  T cur = a.load();
  while (v < cur && !a.compare_exchange_weak(cur, v)) {
  }
  return cur;
}
template <class T, class U>
T atomicMax(T* p, U u) {
  const T v = static_cast<T>(u);
  std::atomic_ref<T> a(*p);
  T cur = a.load();
  while (v > cur && !a.compare_exchange_weak(cur, v)) {
  }
  return cur;
}
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
template <class T>
T __ldg(const T* p) {
  return *p;
}
