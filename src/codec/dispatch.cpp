// Backend selection: the one place that knows which block processors exist.
//   cpu:         the CPU processor (cpu/cpu_block.hpp).
//   cuda:        the GPU processor (codec/gpu_backend.hpp), started now: no GPU, a bad
//                options::device or too little memory is a gutf8::error at once.
//   auto_select: the CPU for inputs known to be smaller than auto_gpu_threshold() (codec/auto_model.hpp);
//                otherwise a lazy GPU processor that sends a block to the GPU when the input is known
//                to be large (size_hint) or the block itself is, and falls back to the CPU for good
//                when CUDA cannot start. Small inputs never pay for the CUDA start-up.
#include "codec/auto_model.hpp"
#include "codec/block.hpp"
#include "codec/gpu_backend.hpp"
#include "cpu/cpu_block.hpp"
#include "gutf8/error.hpp"
#include "gutf8/prim/cpu.hpp"
#include "gutf8/version.hpp"

namespace gutf8::internal {
namespace {

// auto_select with a large size_hint still keeps tiny blocks (a small --chunk-size, the last
// bytes of a file) on the CPU: a transfer is not worth it below this.
constexpr std::size_t auto_min_gpu_block = std::size_t{64} << 10;

// The threshold for the CPU backend these options would run.
std::uint64_t threshold_of(const options& opt) {
  const unsigned threads = opt.threads != 0 ? opt.threads : prim::cpu::hardware_threads();
  return auto_gpu_threshold(threads);
}

bool auto_may_use_gpu(const options& opt) {
  return GUTF8_HAVE_CUDA && threshold_of(opt) != UINT64_MAX &&
         (opt.size_hint == 0 || opt.size_hint >= threshold_of(opt));
}

}  // namespace

std::unique_ptr<block_processor> make_processor(const options& opt) {
  switch (opt.backend) {
    case backend::cuda:
      return make_gpu_processor(opt, make_cpu_processor(opt.threads));
    case backend::auto_select:
      if (auto_may_use_gpu(opt)) {
        gpu_tuning tuning;
        tuning.lazy = true;
        const std::uint64_t threshold = threshold_of(opt);
        tuning.min_gpu_block =
            opt.size_hint >= threshold ? auto_min_gpu_block : static_cast<std::size_t>(threshold);
        return make_gpu_processor(opt, make_cpu_processor(opt.threads), tuning);
      }
      break;
    case backend::cpu:
      break;
  }
  return make_cpu_processor(opt.threads);
}

bool gpu_selected(const options& opt) {
  switch (opt.backend) {
    case backend::cuda:
      return cuda_available();
    case backend::auto_select:
      return opt.size_hint >= threshold_of(opt) && auto_may_use_gpu(opt) && cuda_available();
    case backend::cpu:
      break;
  }
  return false;
}

}  // namespace gutf8::internal
