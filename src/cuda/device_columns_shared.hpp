// What the two sources of the device column operations share: device_columns.cu (the string
// layouts, and every operation's walk) and device_column_views.cu (the view layouts, gathered
// into a string layout first). Launch shapes, and the helpers device_columns.cu lends, so that
// view results are allocated, scanned and handed out exactly as its own are.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "columns/arrow_io.hpp"
#include "cuda/cuda_resources.hpp"
#include "device_launch.cuh"
#include "gutf8/prim/scan.cuh"
#include "utf8/warp_column_rows.cuh"

namespace gutf8::device::shared {

using kern::u64;
using kern::columns::column_block_threads;
using kern::columns::column_grid;
using kern::columns::grid_for_warp_tiles;
using gutf8::internal::columns::buffer;

// A thread per item, column_block_threads a block.
inline unsigned grid_for(u64 threads) {
  return static_cast<unsigned>(std::max<u64>(1, (threads + column_block_threads - 1) / column_block_threads));
}

template <class Kernel, class... Args>
void launch(const char* name, Kernel kernel, u64 threads, cudaStream_t stream, Args... args) {
  if (threads == 0) return;
  kernel<<<grid_for(threads), column_block_threads, 0, stream>>>(args...);
  cuda::check_launch(name);
}

// A result's buffers after its validity, in Arrow order.
template <class... B>
std::vector<buffer> buffers_of(B&&... b) {
  std::vector<buffer> v;
  (v.push_back(std::forward<B>(b)), ...);
  return v;
}

// One launch of a column walk: column_waves waves of as many blocks as Kernel's occupancy lets
// every SM hold (cached per kernel: device_launch.cuh), each warp over warp_tiles_per_warp
// warp tiles (Kernel's last parameter).
template <auto Kernel, class... Args>
void walk(const char* name, u64 warp_tiles, cudaStream_t stream, Args... args) {
  static_assert(column_block_threads == kern::block_threads, "blocks_per_sm asks for blocks of block_threads");
  const column_grid g = grid_for_warp_tiles(warp_tiles, device::launch::resident_blocks<Kernel>() * kern::column_waves);
  Kernel<<<g.blocks, column_block_threads, 0, stream>>>(args..., g.warp_tiles_per_warp);
  cuda::check_launch(name);
}

// The device memory of one call: results and temporaries from one pool, in the order of the
// call's stream. A result released during the call goes back on that stream; one released after
// it (on the releasing thread's default stream) after `done`, which is recorded on the call's
// stream when the call ends, however it ends.
class call_memory {
 public:
  call_memory(cudaStream_t stream, cudaMemPool_t pool)
      : pool_(pool), ordered_(cuda::stream_ordered_memory()), state_(std::make_shared<state>()) {
    cuda::check(cudaEventCreateWithFlags(&state_->done, cudaEventDisableTiming), "cudaEventCreate");
    state_->stream = stream;
  }
  ~call_memory() {
    cudaEventRecord(state_->done, state_->stream);
    state_->ended = true;
  }
  call_memory(const call_memory&) = delete;
  call_memory& operator=(const call_memory&) = delete;

  [[nodiscard]] cudaStream_t stream() const noexcept { return state_->stream; }

  template <class T>
  [[nodiscard]] cuda::stream_buffer<T> temp(std::size_t n) const {
    return cuda::stream_buffer<T>(n, stream(), pool_);
  }

  // Memory that a result array owns and frees on release.
  [[nodiscard]] buffer result(std::size_t bytes) const {
    void* p = nullptr;
    bytes = std::max<std::size_t>(bytes, 1);
    if (!ordered_) {
      cuda::check(cudaMalloc(&p, bytes), "cudaMalloc (column result)");
      return buffer(p, [](void* q) { cuda::detail::device_free{}(q); });
    }
    if (pool_ != nullptr)
      cuda::check(cudaMallocFromPoolAsync(&p, bytes, pool_, stream()), "cudaMallocFromPoolAsync (column result)");
    else
      cuda::check(cudaMallocAsync(&p, bytes, stream()), "cudaMallocAsync (column result)");
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    return buffer(p, [s = state_, device](void* q) { s->free(q, device); });
  }

  // The Device Data Interface's sync_event of a result: a cudaEvent_t*, the call's `done`.
  [[nodiscard]] buffer sync_event() const {
    return buffer(&state_->done, [held = state_](void*) {});
  }

 private:
  struct state {
    cudaEvent_t done = nullptr;
    cudaStream_t stream = nullptr;  // the call's; frees use it only while the call runs
    bool ended = false;
    state() = default;
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() {
      if (done != nullptr) cudaEventDestroy(done);
    }
    void free(void* q, int device) const {
      if (!ended) {
        cudaFreeAsync(q, stream);
        return;
      }
      int current = device;
      cudaGetDevice(&current);
      if (current != device) cudaSetDevice(device);
      cudaStreamWaitEvent(cudaStreamPerThread, done, 0);
      cudaFreeAsync(q, cudaStreamPerThread);
      if (current != device) cudaSetDevice(current);
    }
  };

  cudaMemPool_t pool_;
  bool ordered_;
  std::shared_ptr<state> state_;
};

// In place, on the call's stream (gutf8::prim).
inline void exclusive_sum_in_place(const call_memory& mem, u64* d, u64 n) {
  std::size_t temp_bytes = 0;
  cuda::check(prim::exclusive_sum(nullptr, temp_bytes, d, d, n, mem.stream()), "prim::exclusive_sum (size)");
  const auto temp = mem.temp<std::byte>(temp_bytes);
  cuda::check(prim::exclusive_sum(temp.data(), temp_bytes, d, d, n, mem.stream()), "prim::exclusive_sum");
}

// One value from device memory; synchronises the stream.
template <class T>
T download_one(const T* d, cudaStream_t stream) {
  T v{};
  cuda::check(cudaMemcpyAsync(&v, d, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync D2H");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return v;
}

// A CUDA column over `rest` after its validity, its sync_event the call's (device_columns.cu).
column result_column(const call_memory& mem, const char* format, u64 rows, std::pair<buffer, std::int64_t> validity,
                     std::vector<buffer> rest);

}  // namespace gutf8::device::shared
