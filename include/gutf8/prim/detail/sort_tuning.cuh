// Tuning of the onesweep sort of 32-bit key / 32-bit value pairs, apart from the algorithm
// (radix_sort_onesweep.cuh): the candidates bench_prim --sweep times against CUB, and which of
// them the default sort runs at each size (bench/results/prim_tuning.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tuning.cuh"
#include "type_list.cuh"

namespace gutf8::prim::detail {

// onesweep_shape (8-bit digits, Threads x Items keys a tile, MinBlocks caps registers) plus:
// ValuesEarly: a tile loads its values before its look-back (their latency hides behind it, at
// the cost of registers held across it), else after; HistThreads: block size of the one-read
// histogram of every digit; Window: status words a digit thread reads per look-back step;
// StreamIn: evict-first loads of the keys and values (each read once a pass), so that L2 keeps
// the scattered writes and the status words.
template <int Threads, int Items, int MinBlocks, bool ValuesEarly = true, int HistThreads = 256, int Window = 4,
          bool StreamIn = false>
struct onesweep_pairs_shape : onesweep_shape<std::uint32_t, Threads, Items, MinBlocks, Window> {
  static constexpr bool values_early = ValuesEarly;
  static constexpr int hist_threads = HistThreads;
  static constexpr bool stream_in = StreamIn;
  static std::string name() {
    // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "literal" + std::string
    std::string s = "t";
    for (const auto& piece : {std::to_string(Threads), std::string("i"), std::to_string(Items), std::string("b"),
                              std::to_string(MinBlocks), std::string(ValuesEarly ? "_early" : "_late")})
      s += piece;
    if (HistThreads != 256) {
      s += "_h";
      s += std::to_string(HistThreads);
    }
    if (Window != 4) {
      s += "_w";
      s += std::to_string(Window);
    }
    if (StreamIn) s += "_cs";
    return s;
  }
};

template <int Threads, int Items, int HistThreads = 256, int Window = 4, bool StreamIn = false>
using onesweep_pairs_late = onesweep_pairs_shape<Threads, Items, 2, false, HistThreads, Window, StreamIn>;

using sort_pairs_candidates_u32 = type_list<
    onesweep_pairs_shape<512, 16, 2>, onesweep_pairs_shape<512, 16, 2, true, 512>, onesweep_pairs_shape<256, 16, 4>,
    onesweep_pairs_shape<384, 20, 2>, onesweep_pairs_late<384, 24>,
    // around 384 x 24 with late values, the fastest from 2^25 pairs on
    onesweep_pairs_shape<384, 24, 2>, onesweep_pairs_shape<384, 24, 2, true, 256, 4, true>, onesweep_pairs_late<384, 20>,
    onesweep_pairs_late<384, 22>, onesweep_pairs_late<384, 26>, onesweep_pairs_late<384, 28>,
    onesweep_pairs_late<384, 24, 512>, onesweep_pairs_late<384, 24, 1024>, onesweep_pairs_late<384, 24, 256, 2>,
    onesweep_pairs_late<384, 24, 256, 8>, onesweep_pairs_late<384, 24, 256, 4, true>,
    onesweep_pairs_late<384, 24, 512, 8, true>>;

// The default sort of u32 pairs: the first band whose max_n >= n (the last covers every n).
template <std::size_t MaxN, class Shape>
struct sort_band {
  static constexpr std::size_t max_n = MaxN;
  using shape = Shape;
};
// Up to 14 Mi pairs: 8192-key tiles, values loaded before the look-back; beyond: 10752-key tiles,
// values loaded after it (bench/results/prim_tuning.md).
using sort_pairs_default_bands_u32 = type_list<sort_band<std::size_t{7} << 21, onesweep_pairs_shape<512, 16, 2>>,
                                               sort_band<~std::size_t{0}, onesweep_pairs_late<384, 28>>>;

}  // namespace gutf8::prim::detail
