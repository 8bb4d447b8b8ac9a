// The units of one row of a string column, decided inside the row alone: shared by the column
// kernels (utf8/columns.cuh) and their host-side tests, so the segment logic runs on a CPU too.
#pragma once

#include <cstdint>

#include "gutf8/detail/utf8_rules.hpp"
#include "gutf8/types.hpp"

namespace gutf8::kern::columns {

using u8 = std::uint8_t;
using u64 = std::uint64_t;

struct unit {
  u64 length;
  error_kind kind;  // none: a well-formed sequence
};

// The unit starting at s[i] of a row of n bytes: a sequence or one maximal subpart.
GUTF8_HD unit next_unit(const u8* s, u64 n, u64 i) {
  const u8 lead = s[i];
  const unsigned need = detail::sequence_length(lead);
  if (need == 0) return {1, detail::reason_for(lead, 0, lead)};
  for (unsigned k = 1; k < need; ++k) {
    if (i + k >= n) return {k, error_kind::truncated_at_end};
    if (!detail::continues(lead, k, s[i + k])) return {k, detail::reason_for(lead, k, s[i + k])};
  }
  return {need, error_kind::none};
}

// Does s[p] start a unit? A continuation byte does not when it continues, acceptably, a lead
// at most 3 bytes back in the same row.
GUTF8_HD bool starts_unit(const u8* s, u64 p) {
  if (!detail::is_continuation(s[p])) return true;
  for (u64 d = 1; d <= 3 && d <= p; ++d) {
    const u8 lead = s[p - d];
    if (detail::is_continuation(lead)) continue;
    if (detail::sequence_length(lead) <= d) return true;
    for (u64 m = 1; m <= d; ++m)
      if (!detail::continues(lead, static_cast<unsigned>(m), s[p - d + m])) return true;
    return false;
  }
  return true;
}

// Bytes [from, to) of the segment: from its first unit start to the first unit start at or
// after its end (its units may run past the segment, never past the row).
struct segment_span {
  u64 from, to;
};
GUTF8_HD segment_span span_of(const u8* row, u64 n, u64 k, u64 segment_bytes) {
  u64 from = k * segment_bytes;
  const u64 end = from + segment_bytes < n ? from + segment_bytes : n;
  while (from < end && !starts_unit(row, from)) ++from;
  if (from == end) return {end, end};  // no unit starts here (segments under 4 bytes)
  u64 to = end;
  while (to < n && !starts_unit(row, to)) ++to;
  return {from, to};
}

}  // namespace gutf8::kern::columns
