#include "device_run.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gutf8/codec.hpp"
#include "cuda/cuda_resources.hpp"
#include "utf8/utf8_rules.hpp"
#include "gutf8/device.hpp"
#include "reports.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace gutf8_py {
namespace {

gutf8::error_policy policy_of(std::string_view errors) {
  if (errors == "strict") return gutf8::error_policy::strict;
  if (errors == "replace") return gutf8::error_policy::replace;
  if (errors == "drop" || errors == "ignore") return gutf8::error_policy::drop;
  throw nb::value_error("errors must be 'strict', 'replace' or 'drop'");
}

struct device_free {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
using device_block = std::unique_ptr<void, device_free>;

device_block device_alloc(std::size_t bytes) {
  void* p = nullptr;
  gutf8::cuda::check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return device_block(p);
}

// The result of one device call: output (owned, on the device) and the summary on the host.
struct device_result {
  device_block out;
  gutf8::device::device_summary summary{};
};

// op: "validate", "decode", "repair" or "encode"; in: device pointer of n bytes.
device_result call(std::string_view op, const std::byte* in, std::uint64_t n, gutf8::error_policy policy,
                   cudaStream_t stream) {
  namespace dev = gutf8::device;
  device_result r;
  std::size_t out_bytes = 0;
  if (op == "decode") out_bytes = gutf8::max_decoded_size(n) * sizeof(char32_t);
  else if (op == "repair") out_bytes = gutf8::max_repaired_size(n);
  else if (op == "encode") out_bytes = gutf8::max_encoded_size(n);
  else if (op != "validate") throw nb::value_error("unknown device operation");
  if (op != "validate") r.out = device_alloc(out_bytes);  // empty input still gets its (empty) device array
  const device_block d_summary = device_alloc(sizeof(dev::device_summary));
  auto* summary = static_cast<dev::device_summary*>(d_summary.get());
  const auto launch = [&](void* temp, std::size_t& temp_bytes) {
    if (op == "decode")
      return dev::decode(temp, temp_bytes, in, n, static_cast<char32_t*>(r.out.get()), summary, policy, true,
                         dev::decoder::fused, stream);
    if (op == "repair")
      return dev::repair(temp, temp_bytes, in, n, static_cast<char8_t*>(r.out.get()), summary, policy, true,
                           stream);
    if (op == "encode")
      return dev::encode(temp, temp_bytes, in, n, static_cast<char8_t*>(r.out.get()), summary, policy, true,
                         dev::encoder::fused, stream);
    return dev::validate(temp, temp_bytes, in, n, summary, true, stream);
  };
  std::size_t temp_bytes = 0;
  gutf8::cuda::check(launch(nullptr, temp_bytes), "gutf8 device size query");
  const device_block temp = device_alloc(temp_bytes);
  gutf8::cuda::check(launch(temp.get(), temp_bytes), "gutf8 device call");
  gutf8::cuda::check(cudaMemcpyAsync(&r.summary, summary, sizeof r.summary, cudaMemcpyDeviceToHost, stream),
                     "cudaMemcpyAsync summary");
  gutf8::cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return r;
}

// Length of the error unit at `offset` of device input (4 bytes read back).
std::uint64_t unit_length(const std::byte* in, std::uint64_t n, std::uint64_t offset, unsigned unit) {
  if (offset >= n) return unit;
  if (unit != 1) return offset + unit > n ? n - offset : unit;
  std::uint8_t window[4] = {};
  const std::uint64_t got = n - offset < 4 ? n - offset : 4;
  gutf8::cuda::check(cudaMemcpy(window, in + offset, got, cudaMemcpyDeviceToHost), "cudaMemcpy error unit");
  return gutf8::detail::error_unit_length(window, got);
}

// The GPU that owns a pointer (device, managed or mapped memory); 0 when CUDA cannot say.
int device_of(std::uintptr_t ptr) {
  cudaPointerAttributes a{};
  if (ptr == 0 || cudaPointerGetAttributes(&a, reinterpret_cast<const void*>(ptr)) != cudaSuccess) {
    (void)cudaGetLastError();  // not a sticky error: clear it for the calls that follow
    return 0;
  }
  return a.device;
}

nb::tuple device_call(std::string_view op, std::uintptr_t ptr, std::uint64_t n, int device, std::uintptr_t stream_handle,
                      std::string_view errors) {
  const auto policy = policy_of(errors);
  const auto* in = reinterpret_cast<const std::byte*>(ptr);
  const auto stream = reinterpret_cast<cudaStream_t>(stream_handle);
  const unsigned unit = op == "encode" ? 4 : 1;
  device_result r;
  gutf8::summary s;
  std::uint64_t length = 0;
  {
    nb::gil_scoped_release unlocked;
    const gutf8::cuda::device_scope scope(device);
    r = call(op, in, n, policy, stream);
    s = gutf8::device::to_summary(r.summary, unit);
    if (s.first_error) length = unit_length(in, n, s.first_error->offset, unit);
  }
  gutf8_py::summary report = summary_of(s);
  if (report.first) report.first->length = length;
  if (!r.out) return nb::make_tuple(nb::none(), report);
  const bool wide = op == "decode";
  const std::size_t count = r.summary.written;
  void* data = r.out.get();
  nb::capsule owner(data, [](void* p) noexcept { cudaFree(p); });
  (void)r.out.release();
  const nb::dlpack::dtype dtype = wide ? nb::dtype<std::uint32_t>() : nb::dtype<std::uint8_t>();
  nb::ndarray<nb::device::cuda> out(data, {count}, owner, {}, dtype, nb::device::cuda::value, device);
  return nb::make_tuple(out, report);
}

// (pointer, bytes, device) of a C-contiguous DLPack tensor in CUDA memory.
nb::tuple dlpack_view(nb::ndarray<nb::ro, nb::c_contig, nb::device::cuda> a) {
  return nb::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), a.nbytes(), a.device_id());
}

}  // namespace

void bind_device(nb::module_& m) {
  m.def("device_call", &device_call, "op"_a, "ptr"_a, "nbytes"_a, "device"_a, "stream"_a, "errors"_a);
  m.def("dlpack_view", &dlpack_view, "array"_a);
  m.def("device_of", &device_of, "ptr"_a);
}

}  // namespace gutf8_py
