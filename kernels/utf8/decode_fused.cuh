// Fused UTF-8 -> UTF-32 decoder: one pass, each input byte read once. 8 KiB tiles (tile.cuh):
//   1. classify the tile with bit planes; which bytes start output units under the policy
//      (replace: every unit start, U+FFFD for error units; drop: well-formed starts; strict: the
//      well-formed starts before the first error, stop flag in the scan value);
//   2. rank: block scan of 32-bit flagged counts, then the tile's offset by decoupled look-back
//      with one packed 64-bit word per tile (lookback.cuh);
//   3. while warp 0 looks back, each warp prepares its output at warp-local slots, in one of two
//      ways chosen per warp by how many units a lane must decode one by one:
//      * few (ASCII-heavy text): lanes stage their code points (whole words of ASCII units four
//        at a time, other units one by one through a branch-free decoder), then the warp stores
//        its contiguous output range with aligned 16-byte stores;
//      * many (CJK, emoji): lanes only list their units' byte positions; after the look-back lane
//        j decodes slots j, j + 32, ...: every lane does the same work whatever its bytes hold,
//        the shared-memory reads of neighbouring slots hit distinct banks, the stores coalesce.
//      An all-ASCII warp skips both and widens its bytes straight from the shared copy.
#pragma once

#include "utf8/tile_rank.cuh"

namespace gutf8::kern {

inline constexpr u32 decode_tile = tile_bytes;

// A warp takes the balanced path when some lane has more than this many units to decode one by
// one (not in whole ASCII words): the staging loop runs as long as its busiest lane. Measured on
// the H200 (bench/results/codec_tuning.md): 12 keeps ASCII-heavy warps on the staging path (8 cost
// the ascii corpus 8 %) and CJK / mixed warps on the balanced one (16 cost CJK 7 %).
inline constexpr u32 balance_above = 12;

template <error_policy P>
__device__ __forceinline__ u32 output_starts(u32 start, u32 wf) {
  if constexpr (P == error_policy::replace) return start;
  else if constexpr (P == error_policy::drop) return wf;
  else return wf & below_lowest(start & ~wf);
}

// Zero-extends the 4 bytes of x to 4 code points.
__device__ __forceinline__ uint4 widen4(u32 x) {
  return make_uint4(byte_perm(x, 0, 0x4440u), byte_perm(x, 0, 0x4441u), byte_perm(x, 0, 0x4442u),
                    byte_perm(x, 0, 0x4443u));
}

// The balanced path's first half, one lane: the warp-relative byte position of each of its units
// (bit 15 when Flagged: an error unit) at consecutive slots from `slot`. Two per iteration: the
// loop runs as long as the warp's busiest lane.
template <bool Flagged>
__device__ __forceinline__ void list_unit_positions(u16* slot, u32 units, u32 errors, u32 lane_first_byte) {
  const auto entry = [&](u32 p) {
    u32 e = lane_first_byte + p;
    if constexpr (Flagged) e |= ((errors >> p) & 1u) << 15;
    return static_cast<u16>(e);
  };
  while (units) {
    const u32 p1 = static_cast<u32>(lowest_bit(units));
    units &= units - 1;
    slot[0] = entry(p1);
    if (units) {
      slot[1] = entry(static_cast<u32>(lowest_bit(units)));
      units &= units - 1;
    }
    slot += 2;
  }
}

// Its second half, one warp: slot j's code point to dst[j] for j < count, lane j taking slots
// j, j + 32, ... (wb: the warp's bytes, 4 readable after them, 4-byte aligned). Flagged entries
// become U+FFFD.
template <bool Flagged>
__device__ __forceinline__ void decode_listed_units(const u16* slots, const u8* wb, u32 count, u32* dst) {
  const auto unit = [&](u32 e) {
    // The unit's 4 bytes: the aligned word pair holding them (position bits 2..9: the flag bit
    // and the byte in the word drop out), funnel-shifted by 8 * position (taken mod 32).
    const u32* w = reinterpret_cast<const u32*>(wb + (e & 0x3FCu));
    const u32 c = decode_unit(funnel_r(w[0], w[1], e << 3));
    if constexpr (Flagged) return (e & 0x8000u) ? 0xFFFDu : c;
    else return c;
  };
  // Two slots per iteration: independent read-decode chains.
  for (u32 j = threadIdx.x & 31u; j < count; j += 64) {
    const bool two = j + 32 < count;
    const u32 e1 = slots[j], e2 = slots[two ? j + 32 : j];
    const u32 c1 = unit(e1), c2 = unit(e2);
    dst[j] = c1;
    if (two) dst[j + 32] = c2;
  }
}

template <error_policy P, bool Vec>
__global__ void __launch_bounds__(tile_threads)
    decode_fused_kernel(const u8* in, u64 n, u32* out, accum* acc, u64* states, u32 last_tile) {
  __shared__ __align__(16) u32 in_sh[shared_tile_words];
  __shared__ __align__(16) u32 st_sh[tile_warps][stage_u32_words];  // code points or positions
  __shared__ utf8_tile_shared sh;

  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, tile = blockIdx.x;
  const u64 base = u64{tile} * tile_bytes;
  lane_class<false> L;
  begin_utf8_tile<Vec, false>(in, n, base, acc, sh, L);
  share_tile_bytes(in_sh, L);

  const u32 err = L.start & ~L.wf;
  const u32 outb = output_starts<P>(L.start, L.wf);
  const tile_scan s = block_scan_flag(stop_flagged<P>(static_cast<u32>(popc(outb)), err), sh.rank.wt);
  add_lane_stats(sh.rank.ts, err, L.lf);
  const u64 agg = publish_tile_aggregate(states, tile, s);

  // Stage the code points, or on the balanced path the unit positions, at warp-local slots (before
  // the look-back: its latency overlaps this work): the global offset is only needed by the stores.
  u32* st = st_sh[warp];
  const bool live = !L.warp_ascii && !(s.excl & stop32);
  const u32 k = s.excl - s.wexcl;  // the lane's first slot
  const u32 asc = outb & ~L.hi;
  u32 bulk = asc & (asc >> 1) & (asc >> 2) & (asc >> 3) & 0x11111111u;  // words of 4 ASCII units
  u32 rest = outb & ~(bulk * 0xFu);
  const bool balanced = !L.warp_ascii && __reduce_max_sync(full_mask, live ? static_cast<u32>(popc(rest)) : 0u) > balance_above;
  // Replace: only a warp with error units pays for flagging them.
  const bool flagged = P == error_policy::replace && balanced && __any_sync(full_mask, live && (outb & ~L.wf));
  if (balanced) {
    if (live) {
      u16* slots = reinterpret_cast<u16*>(st) + k;
      if (flagged) list_unit_positions<true>(slots, outb, outb & ~L.wf, lane * lane_bytes);
      else list_unit_positions<false>(slots, outb, 0, lane * lane_bytes);
    }
  } else if (live && outb) {
    const u32* lin = in_sh + threadIdx.x * (lane_bytes / 4);
    if (bulk == 0x11111111u) {  // 32 ASCII units: slots k .. k+31 cross at most one pad
      const u32 c = 32 - (k & 31);  // slots before the pad
      u32* s0p = st + stage_slot(k);
      u32* s1p = s0p + 1;
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const uint4 v = widen4(L.x[q]);
        (4 * q < static_cast<int>(c) ? s0p : s1p)[4 * q] = v.x;
        (4 * q + 1 < static_cast<int>(c) ? s0p : s1p)[4 * q + 1] = v.y;
        (4 * q + 2 < static_cast<int>(c) ? s0p : s1p)[4 * q + 2] = v.z;
        (4 * q + 3 < static_cast<int>(c) ? s0p : s1p)[4 * q + 3] = v.w;
      }
      bulk = 0;
      rest = 0;
    }
    const u32 kt = k + static_cast<u32>(popc(outb));  // one past the lane's last slot
    while (bulk) {
      const u32 q = static_cast<u32>(lowest_bit(bulk));  // 4 * word index
      bulk &= bulk - 1;
      const u32 r = kt - static_cast<u32>(popc(outb >> q));
      const uint4 v = widen4(lin[q >> 2]);
      st[stage_slot(r)] = v.x;
      st[stage_slot(r + 1)] = v.y;
      st[stage_slot(r + 2)] = v.z;
      st[stage_slot(r + 3)] = v.w;
    }
    // Other well-formed units, two per iteration (independent chains).
    u32 m = rest & L.wf;
    while (m) {
      const u32 p1 = static_cast<u32>(lowest_bit(m));
      m &= m - 1;
      const bool two = m != 0;
      const u32 p2 = two ? static_cast<u32>(lowest_bit(m)) : p1;
      m &= m - 1;
      const u32 c1 = decode_unit(read4(lin, p1));
      const u32 c2 = decode_unit(read4(lin, p2));
      st[stage_slot(kt - static_cast<u32>(popc(outb >> p1)))] = c1;
      if (two) st[stage_slot(kt - static_cast<u32>(popc(outb >> p2)))] = c2;
    }
    if constexpr (P == error_policy::replace) {
      u32 e = rest & ~L.wf;
      while (e) {
        const u32 p = static_cast<u32>(lowest_bit(e));
        e &= e - 1;
        st[stage_slot(kt - static_cast<u32>(popc(outb >> p)))] = 0xFFFDu;
      }
    }
  }

  const warp_output w = place_warp_output(lane, s, agg, sh.rank, states, tile, last_tile, acc, base);
  if (w.stopped) return;

  const u32 s0 = static_cast<u32>((reinterpret_cast<std::uintptr_t>(out) >> 2) + w.first) & 3u;
  u32* dst = out + (w.first - s0);
  if (L.warp_ascii) {  // every byte is a unit: widen the warp's first w.count bytes
    const u32* win = in_sh + warp * (warp_bytes / 4);
    write_warp_range(
        dst, s0, w.count, [&](u32 b) { return widen4(read4(win, b)); }, [&](u32 b) { return read4(win, b) & 0xFFu; });
    return;
  }
  __syncwarp();
  if (balanced) {
    const auto* slots = reinterpret_cast<const u16*>(st);
    const u8* wb = reinterpret_cast<const u8*>(in_sh) + warp * warp_bytes;
    if (flagged) decode_listed_units<true>(slots, wb, w.count, out + w.first);
    else decode_listed_units<false>(slots, wb, w.count, out + w.first);
  } else {
    write_staged_u32(st, s0, w.count, dst);
  }
}

}  // namespace gutf8::kern
