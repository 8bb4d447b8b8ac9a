// Tuning of the look-back scan of 4-byte values, apart from the algorithm (scan_lookback.cuh):
// the candidate shapes and look-back pacings that bench_prim --sweep times against CUB and
// Thrust, and which of them the default scan runs at each size (bench/results/prim_tuning.md).
#pragma once

#include <cstddef>
#include <string>

#include "type_list.cuh"

namespace gutf8::prim::detail {

// Threads threads of Items items each, moved as runs of Vec consecutive items (one access a run;
// Vec = 16 / sizeof(T) is a 16-byte access); Streaming: evict-first loads and stores (.cs), as
// the scan never reads its output back.
template <int Threads, int Items, int Vec, bool Streaming = false>
struct lookback_scan_shape {
  static_assert(Threads % 32 == 0 && Items % Vec == 0, "whole warps, whole runs");
  static constexpr int threads = Threads;
  static constexpr int vec = Vec;
  static constexpr int vectors = Items / Vec;
  static constexpr int items = Items;
  static constexpr int tile = Threads * Items;
  static constexpr bool streaming = Streaming;
};

// How a tile's look-back is paced (CUB's delay constructors): first_ns before its first read of
// the predecessors' words (they are being written), spin_ns between re-reads of words not yet
// published; polling L2 less often leaves it to the tiles that publish. Only grids of
// min_tiles or more tiles wait (small grids finish before a sleep would pay off).
struct lookback_pacing {
  unsigned first_ns = 0;
  unsigned spin_ns = 0;
  unsigned min_tiles = 500;
};

// One candidate: a shape and a pacing (the pacing is a kernel argument: shapes share kernels).
template <class Shape, unsigned FirstNs = 0, unsigned SpinNs = 0>
struct scan_tuning {
  using shape = Shape;
  static constexpr lookback_pacing pacing{FirstNs, SpinNs};
  static std::string name() {
    // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "literal" + std::string
    std::string s = "t";
    for (const auto& piece : {std::to_string(Shape::threads), std::string("i"), std::to_string(Shape::items),
                              std::string("v"), std::to_string(Shape::vec)})
      s += piece;
    if (Shape::streaming) s += "cs";
    if (FirstNs || SpinNs) {
      s += "_d";
      s += std::to_string(FirstNs);
      s += '-';
      s += std::to_string(SpinNs);
    }
    return s;
  }
};

// Items per thread are for 4-byte values (Vec 4 = 16-byte runs, 2 = 8-byte runs).
template <class Shape>
using scan_paced = type_list<scan_tuning<Shape>, scan_tuning<Shape, 450, 350>, scan_tuning<Shape, 1245, 648>>;

using scan_shapes_u32 = type_list<
    lookback_scan_shape<128, 20, 4>, lookback_scan_shape<128, 24, 4>, lookback_scan_shape<256, 16, 4>,
    lookback_scan_shape<256, 20, 4>, lookback_scan_shape<256, 24, 4>, lookback_scan_shape<512, 16, 4>,
    lookback_scan_shape<128, 24, 2>, lookback_scan_shape<256, 16, 2>, lookback_scan_shape<128, 20, 4, true>,
    lookback_scan_shape<128, 24, 4, true>, lookback_scan_shape<256, 16, 4, true>,
    lookback_scan_shape<256, 20, 4, true>, lookback_scan_shape<256, 24, 4, true>,
    lookback_scan_shape<512, 16, 4, true>, lookback_scan_shape<512, 24, 4, true>>;

// Every candidate: each shape with each pacing.
using scan_candidates_u32 = flat_map_t<scan_shapes_u32, scan_paced>;

// The default scan of 4-byte values: the first band whose max_n >= n (the last covers every n).
template <std::size_t MaxN, class Tuning>
struct scan_band {
  static constexpr std::size_t max_n = MaxN;
  using tuning = Tuning;
};
// One shape, 512 x 16 with evict-first accesses (8192-item tiles); up to 2^22 items short look-back
// pauses, beyond CUB's sm90 pauses (bench/results/prim_tuning.md).
using scan_default_bands_u32 =
    type_list<scan_band<std::size_t{1} << 22, scan_tuning<lookback_scan_shape<512, 16, 4, true>, 450, 350>>,
              scan_band<~std::size_t{0}, scan_tuning<lookback_scan_shape<512, 16, 4, true>, 1245, 648>>>;

}  // namespace gutf8::prim::detail
