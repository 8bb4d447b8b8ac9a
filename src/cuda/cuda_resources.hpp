// RAII owners for CUDA resources and the one path that turns a CUDA error into
// gutf8::error with context; internal (the CUDA backend, the Python binding, tests, benchmarks).
// Device-API entry points return cudaError_t instead of throwing.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "gutf8/error.hpp"

namespace gutf8::cuda {

[[noreturn]] inline void raise(cudaError_t status, const char* context) {
  const errc code = status == cudaErrorMemoryAllocation ? errc::out_of_memory
                    : (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
                        ? errc::no_device
                        : errc::device_failure;
  throw error(code, std::string(context) + ": " + cudaGetErrorString(status) + " (" +
                        cudaGetErrorName(status) + ")");
}

inline void check(cudaError_t status, const char* context) {
  if (status != cudaSuccess) raise(status, context);
}

// After a kernel launch: launch-configuration errors surface through cudaGetLastError.
inline void check_launch(const char* kernel_name) { check(cudaGetLastError(), kernel_name); }

// Set once a kernel did not finish by its deadline (a GPU lane's nvCOMP batch on a corrupt frame):
// cudaFree and cudaFreeHost wait for the whole device, so from then on memory is left to the
// process's exit. Process-wide, as the CUDA context whose state it records.
inline std::atomic<bool>& device_abandoned() noexcept {
  static std::atomic<bool> abandoned{false};
  return abandoned;
}

namespace detail {
struct device_free {
  void operator()(void* p) const noexcept {
    if (!device_abandoned().load(std::memory_order_relaxed)) cudaFree(p);
  }
};
struct host_free {
  void operator()(void* p) const noexcept {
    if (!device_abandoned().load(std::memory_order_relaxed)) cudaFreeHost(p);
  }
};
// Owns a CUDA handle (a pointer type) and destroys it with its runtime call.
template <class Handle, cudaError_t (*Destroy)(Handle)>
struct handle_destroy {
  void operator()(Handle h) const noexcept { Destroy(h); }
};
template <class Handle, cudaError_t (*Destroy)(Handle)>
using unique_handle = std::unique_ptr<std::remove_pointer_t<Handle>, handle_destroy<Handle, Destroy>>;
}  // namespace detail

// Device memory for n objects of T (uninitialised).
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : size_(n) {
    void* p = nullptr;
    if (n != 0) check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
    ptr_.reset(p);
  }
  [[nodiscard]] T* data() const noexcept { return static_cast<T*>(ptr_.get()); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  void upload(std::span<const T> host, cudaStream_t s = nullptr) {
    check(cudaMemcpyAsync(data(), host.data(), host.size_bytes(), cudaMemcpyHostToDevice, s),
          "cudaMemcpyAsync H2D");
  }
  void download(std::span<T> host, cudaStream_t s = nullptr) const {
    check(cudaMemcpyAsync(host.data(), data(), host.size_bytes(), cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync D2H");
  }

 private:
  std::unique_ptr<void, detail::device_free> ptr_;
  std::size_t size_ = 0;
};

// Page-locked host memory for n objects of T, so copies can overlap kernels.
template <class T>
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t n) : size_(n) {
    void* p = nullptr;
    if (n != 0) check(cudaMallocHost(&p, n * sizeof(T)), "cudaMallocHost");
    ptr_.reset(p);
  }
  [[nodiscard]] T* data() const noexcept { return static_cast<T*>(ptr_.get()); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<T> span() const noexcept { return {data(), size_}; }

 private:
  std::unique_ptr<void, detail::host_free> ptr_;
  std::size_t size_ = 0;
};

// A memory pool on the current device that keeps what is freed to it for the next allocation
// (release threshold: everything), as RMM's pool resource does: after the first allocations,
// stream-ordered ones from it map no memory. Destroyed with its memory; allocations from it must
// be freed first.
class memory_pool {
 public:
  memory_pool() {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location = {cudaMemLocationTypeDevice, device};
    cudaMemPool_t p = nullptr;
    check(cudaMemPoolCreate(&p, &props), "cudaMemPoolCreate");
    p_.reset(p);
    auto keep_all = ~std::uint64_t{0};
    check(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep_all), "cudaMemPoolSetAttribute");
  }
  [[nodiscard]] cudaMemPool_t get() const noexcept { return p_.get(); }

 private:
  detail::unique_handle<cudaMemPool_t, cudaMemPoolDestroy> p_;
};

// Whether the current device serves stream-ordered allocations (cudaMallocAsync).
inline bool stream_ordered_memory() {
  int device = 0, supported = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device), "cudaDeviceGetAttribute");
  return supported != 0;
}

// Stream-ordered device memory for n objects of T (uninitialised): taken from `pool` (null: the
// device's current pool) in the order of `s` and given back in that order when this goes; plain
// cudaMalloc / cudaFree where the device has no memory pools.
template <class T>
class stream_buffer {
 public:
  stream_buffer(std::size_t n, cudaStream_t s, cudaMemPool_t pool = nullptr)
      : size_(n), stream_(s), ordered_(stream_ordered_memory()) {
    if (n == 0) return;
    void* p = nullptr;
    const std::size_t bytes = n * sizeof(T);
    if (!ordered_)
      check(cudaMalloc(&p, bytes), "cudaMalloc");
    else if (pool != nullptr)
      check(cudaMallocFromPoolAsync(&p, bytes, pool, s), "cudaMallocFromPoolAsync");
    else
      check(cudaMallocAsync(&p, bytes, s), "cudaMallocAsync");
    p_ = static_cast<T*>(p);
  }
  ~stream_buffer() {
    if (p_ == nullptr) return;
    if (ordered_)
      cudaFreeAsync(p_, stream_);
    else
      detail::device_free{}(p_);
  }
  stream_buffer(stream_buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), size_(o.size_), stream_(o.stream_), ordered_(o.ordered_) {}
  stream_buffer& operator=(stream_buffer&&) = delete;
  stream_buffer(const stream_buffer&) = delete;
  stream_buffer& operator=(const stream_buffer&) = delete;
  [[nodiscard]] T* data() const noexcept { return p_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  T* p_ = nullptr;
  std::size_t size_;
  cudaStream_t stream_;
  bool ordered_;
};

class stream {
 public:
  stream() {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    s_.reset(s);
  }
  [[nodiscard]] cudaStream_t get() const noexcept { return s_.get(); }
  operator cudaStream_t() const noexcept { return s_.get(); }  // NOLINT: reads like CUB's stream args
  void synchronize() const { check(cudaStreamSynchronize(get()), "cudaStreamSynchronize"); }

 private:
  detail::unique_handle<cudaStream_t, cudaStreamDestroy> s_;
};

class event {
 public:
  event() {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate");
    e_.reset(e);
  }
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_.get(); }
  void record(cudaStream_t s = nullptr) { check(cudaEventRecord(get(), s), "cudaEventRecord"); }
  void synchronize() const { check(cudaEventSynchronize(get()), "cudaEventSynchronize"); }
  // Milliseconds from `start` to this event (both recorded and complete).
  [[nodiscard]] float elapsed_since(const event& start) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.get(), get()), "cudaEventElapsedTime");
    return ms;
  }

 private:
  detail::unique_handle<cudaEvent_t, cudaEventDestroy> e_;
};

// Makes `device` current for a scope and gives the thread its previous current device back after it.
class device_scope {
 public:
  explicit device_scope(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~device_scope() { cudaSetDevice(previous_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

// Why no GPU is usable, or an empty string when one is.
inline std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky state so later probes start clean
    return std::string("CUDA runtime reports ") + cudaGetErrorName(status) + ": " +
           cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device present";
  return {};
}

}  // namespace gutf8::cuda
