// Bit-plane classification of a string column's bytes as one flat text in which every row start
// breaks the links between bytes (lane_planes.cuh gives the flat classification): a byte at a row
// start never continues a sequence of the row before, and a lead never takes bytes of the next
// row, so a sequence cut by a row's end is an error unit of that row, exactly what the one-shot
// API reports for the row alone. Also the per-byte "kept" mask of a slab from the row starts in
// it and the state of the row it begins in. __host__ __device__: tests/cpu/column_rows_test.cpp
// checks it against classify_reference on each row alone.
//
// rs: bit i = a row starts at byte i of the slab; ahead_rs: bits 0..2 = row starts at the 3
// bytes after it.
#pragma once

#include "utf8/lane_planes.cuh"

namespace gutf8::kern {

// Stage 1 of a slab with row starts as link breaks (the result feeds behind_link / starts /
// coverage as usual). Equivalent to classify_slab on a text where a byte at a row start is no
// continuation byte and a lead never sees past a row start.
GUTF8_HD slab_class classify_rows(const u32 (&P)[8], u32 ahead, u32 rs, u32 ahead_rs) {
  slab_class c = classify_slab(P, ahead);
  const u32 next1 = funnel_r(rs, ahead_rs, 1), next2 = funnel_r(rs, ahead_rs, 2), next3 = funnel_r(rs, ahead_rs, 3);
  const u32 h3 = P[7] & P[6] & P[5], h4 = h3 & P[4];
  c.C &= ~rs;
  c.S1 &= ~next1;
  c.T2 &= ~next1;
  c.T3 &= ~next1;
  // A lead's sequence is complete only if no row starts inside its length.
  c.wf &= ~(P[7] & (next1 | (h3 & next2) | (h4 & next3)));
  return c;
}

// behind_link of the 4 bytes y before a slab (classify_rows), their row starts in bits 28..31
// of rs_top; own_ahead / own_rs: the slab's ahead_link and row starts.
template <bool Detail = false>
GUTF8_HD u32 behind_link_word_rows(u32 y, u32 own_ahead, u32 rs_top, u32 own_rs) {
  u32 Q[8];
  word_planes_top(y, Q);
  return behind_link<Detail>(classify_rows(Q, own_ahead, rs_top & 0xF0000000u, own_rs & 7u));
}

// The bytes of a slab that belong to kept rows: rs = row starts in it, drop = those of them
// whose row is not kept, dropped_before = whether the row the slab begins in is not kept.
GUTF8_HD u32 kept_bytes(u32 rs, u32 drop, bool dropped_before) {
  u32 keep = 0, from = 0;
  bool dropped = dropped_before;
  for (u32 left = rs; left != 0; left &= left - 1) {
    const u32 at = static_cast<u32>(lowest_bit(left));
    if (!dropped) keep |= below_bit(at) & ~below_bit(from);
    dropped = ((drop >> at) & 1u) != 0;
    from = at;
  }
  if (!dropped) keep |= ~below_bit(from);
  return keep;
}

// Whether the row the next slab begins in is kept, given this slab's rs / drop and the state
// it began in.
GUTF8_HD bool dropped_after(u32 rs, u32 drop, bool dropped_before) {
  return rs == 0 ? dropped_before : ((drop >> highest_bit(rs)) & 1u) != 0;
}

}  // namespace gutf8::kern
