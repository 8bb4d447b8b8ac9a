// Where an input may be cut so that each side can be processed on its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "utf8/utf8_rules.hpp"

namespace gutf8::internal {

// A unit start at or after q in p[0, limit) (limit itself when none comes before it). A byte
// that is not a continuation byte always starts a unit; a continuation byte preceded by three
// continuation bytes does too, since a lead takes at most three. So at most three steps are
// needed, and the answer depends only on the bytes q - 3 .. q + 2: p must begin at the start
// of the input or at least three bytes before q, and two callers that see the same bytes
// around q agree on the cut. Monotone in q. UTF-32 input is cut at a multiple of 4.
inline std::size_t unit_start_at_or_after(const std::uint8_t* p, std::size_t q, std::size_t limit,
                                          bool utf32) noexcept {
  if (utf32) return q / 4 * 4;
  const auto cont = [p](std::size_t k) { return detail::is_continuation(p[k]); };
  while (q < limit && cont(q) && !(q >= 3 && cont(q - 1) && cont(q - 2) && cont(q - 3))) ++q;
  return q;
}

}  // namespace gutf8::internal
