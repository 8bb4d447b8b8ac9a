// Device inputs for the Python package (CUDA builds only): UTF-8 or UTF-32 already in GPU memory
// runs through the device API (include/gutf8/device.hpp) and the result stays on the GPU.
#pragma once

#include <cuda_runtime.h>
#include <nanobind/nanobind.h>

#include "cuda/cuda_resources.hpp"

namespace gutf8_py {

// Adds _gutf8.device_call and _gutf8.dlpack_view to the module.
void bind_device(nanobind::module_& m);

}  // namespace gutf8_py
