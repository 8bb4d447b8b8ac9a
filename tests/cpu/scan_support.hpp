// One scan of a single ISA path called directly (no block processor), with a guard after the
// output's room that shows a write beyond it; and the comparison of two such scans.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/scan.hpp"

namespace gutf8::test {

struct scanned {
  cpu::segment_result r;
  std::string out;
  bool past_room = false;  // a byte was written beyond the room given
};

// One scan of the units that start in [0, end) of in, with `room` output bytes (0: plenty,
// 4 bytes an input byte, what decode needs at most).
template <cpu::mode M, error_policy P>
scanned scan_on(const std::string& in, std::size_t end, cpu::isa level, std::size_t room = 0) {
  constexpr std::size_t guard = 256;
  const std::size_t size = room != 0 ? room : 4 * in.size() + 4;
  std::vector<std::uint8_t> out(size + guard, 0xA5);
  cpu::scan_request j;
  j.in = reinterpret_cast<const std::uint8_t*>(in.data());
  j.end = end;
  j.limit = in.size();
  j.at_end = true;
  j.out = out.data();
  j.out_limit = out.data() + size;
  j.level = level;
  scanned s{cpu::scan_utf8<M, P>(j), {}, false};
  s.out.assign(reinterpret_cast<const char*>(out.data()), s.r.written);
  s.past_room = std::any_of(out.begin() + static_cast<std::ptrdiff_t>(size), out.end(),
                            [](std::uint8_t b) { return b != 0xA5; });
  return s;
}

inline testing::AssertionResult same(const scanned& got, const scanned& want) {
  const cpu::segment_result &a = got.r, &b = want.r;
  if (a.consumed == b.consumed && a.written == b.written && a.errors == b.errors && a.first_error == b.first_error &&
      a.first_kind == b.first_kind && a.stopped == b.stopped && a.by_length == b.by_length && got.out == want.out &&
      !got.past_room)
    return testing::AssertionSuccess();
  return testing::AssertionFailure() << "consumed " << a.consumed << "/" << b.consumed << ", written " << a.written
                                     << "/" << b.written << ", errors " << a.errors << "/" << b.errors << ", first "
                                     << a.first_error << "/" << b.first_error << ", by_length " << a.by_length[0]
                                     << " " << a.by_length[1] << " " << a.by_length[2] << " " << a.by_length[3]
                                     << " / " << b.by_length[0] << " " << b.by_length[1] << " " << b.by_length[2]
                                     << " " << b.by_length[3] << ", output same " << (got.out == want.out)
                                     << ", past its room " << got.past_room;
}

}  // namespace gutf8::test
