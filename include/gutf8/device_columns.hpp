// String columns on a CUDA device: the operations of gutf8/columns.hpp on an Arrow C Device
// Data Interface array (ARROW_DEVICE_CUDA or ARROW_DEVICE_CUDA_MANAGED) with every buffer in
// device memory (for the view types utf8_view / binary_view the views, the data buffers and the
// variadic sizes buffer too; `buffers` itself is the host array of their pointers). Same results
// as the host API, row for row, in the same layouts (a view column's repair is utf8_view, its
// counts int32; tests/gpu/columns_gpu_test.cpp).
//
// A view array's views are checked on the device (as the host checks them, null rows' views never
// read) and its rows gathered into one contiguous large_binary layout before the walk: a copy of
// the rows' bytes in temporary device memory (bytes that several rows share are copied for each).
// Its counts and repairs are made from the large walk's results.
//
// Conventions (unlike the flat device API in gutf8/device.hpp, results here are whole Arrow
// arrays that own their memory):
//   * the work runs on `stream`, after the input's sync_event (when it has one), and may go on
//     after the call returns: the input must stay alive and unchanged until `stream` has done it
//     (e.g. until a result's sync_event, or a synchronisation of `stream`);
//   * results and temporaries are stream-ordered allocations on `stream` from `pool` (null: the
//     device's current pool; plain cudaMalloc where the device has no pools). Pass a pool that
//     keeps freed memory (gutf8::cuda::memory_pool, RMM's, CuPy's) to repeat calls without
//     mapping memory each time. The current device must be the array's device_id;
//   * each result's sync_event points to a cudaEvent_t recorded on `stream` when the call ends;
//     releasing a result frees its memory in stream order after that event (on the releasing
//     thread's default stream): work of your own that reads a result must be done first;
//   * a call synchronises `stream` where it must learn a size on the host (the offsets' ends,
//     warp tile and output byte totals, the invalid row count) or raise;
//   * bad input and CUDA failures throw gutf8::error before any result is handed out.
#pragma once

#include <cuda_runtime.h>

#include "gutf8/columns.hpp"

namespace gutf8::device {

row_validity is_valid(const ArrowDeviceArray& array, const ArrowSchema& schema,
                      const column_options& opt = {}, cudaStream_t stream = nullptr, cudaMemPool_t pool = nullptr);
void validate(const ArrowDeviceArray& array, const ArrowSchema& schema, const column_options& opt = {},
              cudaStream_t stream = nullptr, cudaMemPool_t pool = nullptr);
column make_valid(const ArrowDeviceArray& array, const ArrowSchema& schema, error_policy policy,
                  const column_options& opt = {}, cudaStream_t stream = nullptr, cudaMemPool_t pool = nullptr);
column cast_to_utf8(const ArrowDeviceArray& array, const ArrowSchema& schema, on_invalid policy,
                    const column_options& opt = {}, cudaStream_t stream = nullptr, cudaMemPool_t pool = nullptr);
column count_code_points(const ArrowDeviceArray& array, const ArrowSchema& schema, on_invalid policy,
                        const column_options& opt = {}, cudaStream_t stream = nullptr, cudaMemPool_t pool = nullptr);

}  // namespace gutf8::device
