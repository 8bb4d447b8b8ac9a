// Validate by screening, one warp over one run of consecutive warp tiles (the kernel around it is
// kernel_validate_screen.cuh). A lane owns B consecutive 32-byte slabs of a warp tile, so a
// warp tile is B KiB; links between a lane's own slabs stay in registers, links between lanes go
// by shuffle. Each warp tile takes one of three ways, the same in every lane:
//   ASCII    all its bytes (and any lead cut by its start) are ASCII: its LFs, by SWAR;
//   screen   bit planes, the validity screen (lane_screen.cuh), LFs; counted exactly only where
//            the screen flags a byte;
//   exact    bit planes and the exact classification (lane_planes.cuh) without the screen: the
//            run's first and last warp tiles, the guarded ones at the input's ends, and every
//            warp tile after one that held an error, so that text with errors costs the exact
//            count alone and not the screen as well.
// The warp tile after a screened one that passed gets the lead flags of its last 4 bytes from lane
// 31 (one shuffle a word, wrapped to lane 0); after an exact warp tile lane 0 derives them from the
// raw 4 bytes. A warp tile the screen flags takes its bytes again (its planes are not kept live
// across the screen) and is counted exactly.
// Which error units the screen of a warp tile misses: a flag at a byte depends on it and the 3
// bytes before it only and means that an error unit starts among those 4, so the units of a
// warp tile flagged nowhere in it are (a) a sequence cut by its end, flagged in the next warp tile's
// first 3 bytes, which counts it from the raw 4 bytes (tail_error_starts), and (b) stray
// continuations first in it after a lead whose second byte is out of range, flagged only in the
// warp tile before, where that lead is an error unit: hence the exact count after an error.
//
// The walk is written against a warp policy W (lane(), up / down / idx shuffles, any(), 16- and
// 4-byte aligned loads) so that tests/gpu/screen_walk_host_test.cpp runs this very code on the
// host with 32 threads a warp.
#pragma once

#include <type_traits>

#include "utf8/lane_screen.cuh"

namespace gutf8::kern {

// One lane's counts over its warp's run (offsets relative to the run's start).
struct screen_totals {
  u32 errors = 0, first = ~0u, lf = 0, last_lf_p1 = 0;
};

// A warp's run: its first byte at `rin`, position `run` from the aligned start of the input
// (bytes before the input read as 0); bytes at positions >= limit are not counted. Warp tiles
// [first_fast, fast) lie in the input with the 4 bytes after them (16-byte loads); the others
// are read with `guarded` words.
struct screen_run {
  const u8* rin;
  u64 run, limit;
  u32 warp_tiles, first_fast, fast;
};

// The run of the warp owning warp tiles [warp_tile0, warp_tile_end) of B KiB, laid from in - head (the 16-byte
// aligned address at or below the input); bytes of the input at and after `counted` are not
// counted.
template <u32 B>
GUTF8_HD screen_run screen_run_of(const u8* in, u32 head, u64 counted, u64 warp_tile0, u64 warp_tile_end);

template <u32 B>
struct screen_walk {
  static constexpr u32 span = 32 * B;          // a lane's bytes: B slabs
  static constexpr u32 warp_tile = 32 * span;  // a warp's bytes a step
  static constexpr u32 ring = 1 + 2 / B;       // warp tiles loaded at once: 2 KiB ahead of the one counted
  using lane_words = u32[B][8];

  screen_totals t;
  u32 last_lf = 0;         // 1 + the run offset of the lane's bytes in its last warp tile with an LF
  u32 carry = 0;           // prev_exact: the exact behind link into lane 0 (lane_planes.cuh)
  lead_link link;          // lane 0, after a screened warp tile: the lead flags of its last 4 bytes
  bool prev_exact = true;  // the warp tile before was counted exactly, or was ASCII
  bool link_stale = true;  // lane 0's link is not that of the warp tile before
  bool dirty = true;       // count the next warp tile exactly (a run's first; after an error)

  GUTF8_HD void count(u32 err, u32 at) {
    t.errors += static_cast<u32>(popc(err));
    const u32 f = at + static_cast<u32>(lowest_bit(err));
    if (err && f < t.first) t.first = f;
  }

  GUTF8_HD void add_lfs(u32 lfs, u32 rel) {
    t.lf += lfs;
    if (lfs) last_lf = rel + 1;
  }

  // An ASCII warp tile: its LFs (128 per byte that is not one).
  GUTF8_HD void ascii(const lane_words& x, u32 rel) {
    u32 not_lf = 0;
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b)
      GUTF8_UNROLL
      for (int k = 0; k < 8; ++k)
        not_lf = byte_dot(((x[b][k] ^ 0x0A0A0A0Au) + 0x7F7F7F7Fu) & lane_hi, 0x01010101u) + not_lf;
    add_lfs(span - (not_lf >> 7), rel);
    carry = 0;
    link = {};
    prev_exact = true;
    link_stale = false;
    dirty = false;
  }

  // The screen of a warp tile whose planes are P; returns whether a lane flagged a byte, with tail:
  // lane 0's first 3 bytes were flagged.
  template <class W, class PrevWord>
  GUTF8_HD bool screen(const W& w, const u32 (&P)[B][8], const u32 (&inr)[B], PrevWord prev_word, bool& tail) {
    // The last slab first (its link goes to the next lane), then the others in order, each
    // taking the link of the one before: only one slab's lead flags are live at a time.
    const lead_flags last = lead_flags_of(P[B - 1]);
    const lead_link mine = link_of(last);
    const u32 from = (w.lane() + 31) & 31u;  // lane 0 takes lane 31's: the next warp tile's link
    const lead_link next{w.idx(mine.lefg, from), w.idx(mine.g2, from)};
    lead_link before = next;
    if (w.lane() == 0) before = link_stale ? link_of(lead_flags_of_word(prev_word())) : link;
    link = next;
    link_stale = false;
    u32 flagged = 0;
    GUTF8_UNROLL
    for (u32 b = 0; b + 1 < B; ++b) {
      const lead_flags own = lead_flags_of(P[b]);
      const u32 f = screen_slab(P[b], own, flags_of(before)) & inr[b];
      if (b == 0) tail = (f & 7u) != 0;
      flagged |= f;
      before = link_of(own);
    }
    const u32 f = screen_slab(P[B - 1], last, flags_of(before)) & inr[B - 1];
    if (B == 1) tail = (f & 7u) != 0;
    return w.any((flagged | f) != 0);
  }

  // The exact count of a warp tile whose planes are P. tail: lane 0 may hold error units of the
  // screened warp tile before.
  template <class W, class PrevWord, class NextWord>
  GUTF8_HD void exact(const W& w, const u32 (&P)[B][8], u32 rel, const u32 (&inr)[B], PrevWord prev_word,
                      NextWord next_word, bool tail) {
    const u32 lane = w.lane();
    const u32 own_ahead = ahead_link(P[0]);
    u32 ahead = w.down(own_ahead);
    if (lane == 31) ahead = ahead_link_word(next_word());
    slab_class c[B];
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) c[b] = classify_slab(P[b], b + 1 < B ? ahead_link(P[b + 1 < B ? b + 1 : b]) : ahead);
    const u32 bl = behind_link(c[B - 1]);
    u32 up = w.up(bl);
    const u32 y = lane == 0 && !prev_exact ? prev_word() : 0u;
    if (lane == 0) up = prev_exact ? carry : behind_link_word(y, own_ahead);
    carry = w.idx(bl, 31);
    bool found = false;
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) {
      const u32 err = starts(c[b], b == 0 ? up : behind_link(c[b == 0 ? 0 : b - 1])) & ~c[b].wf & inr[b];
      count(err, rel + 32 * b);
      found = found || err != 0;
    }
    if (lane == 0 && !prev_exact && tail) count(tail_error_starts(y, own_ahead) >> 28, rel - 4);
    prev_exact = true;
    dirty = w.any(found);
  }

  // One warp tile: x = the lane's bytes at run offset rel, inr = those below the limit; must: counted
  // exactly whatever the screen says. prev_word() / next_word(): the 4 bytes before lane 0's / after
  // lane 31's; reload(x): the lane's bytes again (each only when needed: a warp tile the screen flags
  // takes its bytes again rather than keeping its planes live across the screen).
  template <class W, class PrevWord, class NextWord, class Reload>
  GUTF8_HD void step(const W& w, const lane_words& x, u32 rel, const u32 (&inr)[B], bool must, PrevWord prev_word,
                     NextWord next_word, Reload reload) {
    u32 any = 0;
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b)
      GUTF8_UNROLL
      for (int k = 0; k < 8; ++k) any |= x[b][k];
    // After a screened warp tile a lead cut by this one's start makes it non-ASCII.
    if (!w.any((any & lane_hi) != 0 || (w.lane() == 0 && !prev_exact && link.lefg != 0))) {
      ascii(x, rel);
      return;
    }
    u32 P[B][8];
    u32 lfs = 0;
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) {
      to_planes_mux(x[b], P[b]);
      lfs += static_cast<u32>(popc(lf_mask(P[b]) & inr[b]));
    }
    add_lfs(lfs, rel);
    if (dirty || must) {
      link_stale = true;
      exact(w, P, rel, inr, prev_word, next_word, true);
      return;
    }
    bool tail = false;
    if (!screen(w, P, inr, prev_word, tail)) {
      prev_exact = false;
      return;
    }
    u32 y[B][8];
    reload(y);
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) to_planes_mux(y[b], P[b]);
    exact(w, P, rel, inr, prev_word, next_word, tail);
  }

  // Lane 0's link into the run's first warp tile (the warp tile before is another warp's).
  template <class Guarded>
  GUTF8_HD void begin(u32 lane, const screen_run& r, Guarded guarded) {
    const u32 first_word = guarded(r.run + lane * span);
    const u32 prev = (lane == 0 && r.run != 0) ? guarded(r.run - 4) : 0u;
    carry = behind_link_word(prev, ahead_link_word(first_word));
  }

  // The lane's last LF: its bytes read again.
  template <class Guarded>
  GUTF8_HD void find_last_lf(const screen_run& r, Guarded guarded) {
    if (last_lf == 0) return;
    const u32 rel = last_lf - 1;
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) {
      u32 lanes[8];
      GUTF8_UNROLL
      for (int k = 0; k < 8; ++k) lanes[k] = lf_lanes(guarded(r.run + rel + 32 * b + 4 * k));
      const u32 m = lanes_to_mask8(lanes) & range_mask(r.run + rel + 32 * b, r.limit);
      if (m) t.last_lf_p1 = rel + 32 * b + static_cast<u32>(highest_bit(m)) + 1;
    }
  }
};

template <u32 B>
GUTF8_HD screen_run screen_run_of(const u8* in, u32 head, u64 counted, u64 warp_tile0, u64 warp_tile_end) {
  constexpr u64 warp_tile = screen_walk<B>::warp_tile;
  screen_run r;
  r.run = warp_tile0 * warp_tile;
  r.rin = in - head + r.run;
  r.limit = head + counted;
  r.warp_tiles = static_cast<u32>(warp_tile_end - warp_tile0);
  r.first_fast = r.run == 0 && head != 0 ? 1 : 0;
  // Warp tiles below `fast` are in range with their 4-byte halo and below the limit (limit <= head + n).
  const u64 ok = (r.limit >= r.run + 4 ? (r.limit - r.run - 4) : 0) / warp_tile;
  r.fast = static_cast<u32>(ok < r.warp_tiles ? ok : r.warp_tiles);
  return r;
}

// Warp tiles i .. r.fast - 1 of a warp's run (in range with their 4-byte halo, below the limit),
// ring - 1 warp tiles loaded ahead of the one counted. lo: the lane's offset in a warp tile.
template <u32 B, class W>
GUTF8_HD void screen_walk_fast(const W& w, const screen_run& r, screen_walk<B>& s, u32 i, u32 lo) {
  using walk = screen_walk<B>;
  u32 all[B];
  GUTF8_UNROLL
  for (u32 b = 0; b < B; ++b) all[b] = ~0u;
  u32 left = r.fast - i;  // counted down: the loop keeps no 64-bit bound
  // 1 where the run's last warp tile is the loop's. A shuffle's value: the compiler recomputed the
  // comparison from the run's bounds at every warp tile rather than keep it in a register.
  const u32 must_left = w.idx(r.fast == r.warp_tiles ? 1u : 0u, 0);
  const u8* p = r.rin + u64{i} * walk::warp_tile + lo;  // the lane's bytes of the warp tile counted
  u32 rel = i * walk::warp_tile + lo;
  u32 xs[walk::ring][B][8];
  const auto load = [&](const u8* at, u32 (&x)[B][8]) {
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) w.load32(at + 32 * b, x[b]);
  };
  GUTF8_UNROLL
  for (u32 k = 0; k + 1 < walk::ring; ++k)
    if (k < left) load(p + k * walk::warp_tile, xs[k]);
  // Ring slot k: loads the warp tile ring - 1 ahead into the slot before it, counts its own.
  const auto ring_step = [&](auto k) {
    constexpr u32 slot = decltype(k)::value;
    if (left >= walk::ring) load(p + (walk::ring - 1) * walk::warp_tile, xs[(slot + walk::ring - 1) % walk::ring]);
    s.step(w, xs[slot], rel, all, left == must_left, [&] { return w.word(p - 4); },
           [&] { return w.word(p + walk::span); }, [&](u32(&y)[B][8]) { load(p, y); });
    p += walk::warp_tile;
    rel += walk::warp_tile;
    return --left != 0;
  };
  for (;;) {
    if (!ring_step(std::integral_constant<u32, 0>{})) break;
    if (!ring_step(std::integral_constant<u32, 1>{})) break;
    if constexpr (walk::ring > 2)
      if (!ring_step(std::integral_constant<u32, 2>{})) break;
  }
}

// One warp's run; returns the lane's counts. guarded(p): the 4 bytes at position p from the
// aligned start, those outside the input read as 0.
template <u32 B, class W, class Guarded>
GUTF8_HD screen_totals screen_walk_run(const W& w, const screen_run& r, Guarded guarded) {
  using walk = screen_walk<B>;
  const u32 lo = w.lane() * walk::span;
  walk s;
  s.begin(w.lane(), r, guarded);
  auto visit_guarded = [&](u32 i) {  // the input's start when not aligned, its end
    const u32 rel = i * walk::warp_tile + lo;
    const u64 pos = r.run + rel;
    u32 x[B][8], inr[B];
    GUTF8_UNROLL
    for (u32 b = 0; b < B; ++b) {
      GUTF8_UNROLL
      for (int k = 0; k < 8; ++k) x[b][k] = guarded(pos + 32 * b + 4 * k);
      inr[b] = range_mask(pos + 32 * b, r.limit);
    }
    s.step(w, x, rel, inr, true, [&] { return guarded(pos - 4); }, [&] { return guarded(pos + walk::span); },
           [&](u32(&y)[B][8]) {
             GUTF8_UNROLL
             for (u32 b = 0; b < B; ++b)
               GUTF8_UNROLL
               for (int k = 0; k < 8; ++k) y[b][k] = guarded(pos + 32 * b + 4 * k);
           });
  };

  u32 i = 0;
  if (r.first_fast) visit_guarded(i++);
  if (i < r.fast) {
    screen_walk_fast<B>(w, r, s, i, lo);
    i = r.fast;
  }
  for (; i < r.warp_tiles; ++i) visit_guarded(i);  // the end of the input
  s.find_last_lf(r, guarded);
  return s.t;
}

}  // namespace gutf8::kern
