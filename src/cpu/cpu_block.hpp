// The CPU block processor: scans a block with cpu/scan.hpp, splitting large blocks at
// unit boundaries across threads (one segment each) and merging the segments into one block_result.
#pragma once

#include <cstddef>
#include <memory>

#include "codec/block.hpp"
#include "cpu/isa.hpp"

namespace gutf8::internal {

struct cpu_tuning {
  std::size_t parallel_threshold = std::size_t{1} << 20;  // smaller blocks use one thread
  std::size_t min_segment = std::size_t{1} << 18;         // no thread gets less than this
  cpu::isa level = cpu::best_isa();                       // lower it to test other paths
};

// threads == 0: all hardware threads.
std::unique_ptr<block_processor> make_cpu_processor(unsigned threads, cpu_tuning tuning = {});

}  // namespace gutf8::internal
