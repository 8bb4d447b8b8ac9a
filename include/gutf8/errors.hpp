// Every error unit of UTF-8 text, not only the first: for diagnostics such as
// `gutf8 validate --list-errors`. The units are those of SPEC §1 (maximal subparts), found by a
// byte walk that carries a sequence split across chunks, so the list never depends on chunking.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gutf8/types.hpp"

namespace gutf8 {

// One error unit: where it starts, why, and its bytes (a maximal subpart has 1 to 3).
struct error_unit {
  error_position at;                 // offset, 1-based line and byte column, kind
  std::uint8_t length = 0;           // bytes in the unit
  std::array<std::uint8_t, 3> bytes{};
  friend bool operator==(const error_unit&, const error_unit&) = default;
};

// Walks UTF-8 fed in chunks of any size and calls the visitor for each error unit, in order.
// The visitor returns false to stop the walk (later feeds then do nothing).
class error_walker {
 public:
  using visitor = std::function<bool(const error_unit&)>;
  explicit error_walker(visitor v);

  void feed(std::span<const std::byte> chunk);
  // Ends the input: a carried incomplete sequence is one unit (truncated_at_end).
  void finish();
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }

 private:
  void step(std::uint8_t b);
  void emit(error_kind kind);
  std::size_t skip_ascii(std::span<const std::uint8_t> data);

  visitor visit_;
  std::uint64_t offset_ = 0;      // of the next byte fed
  std::uint64_t newlines_ = 0;    // LF bytes before offset_
  std::uint64_t line_start_ = 0;  // offset just after the last of them
  std::array<std::uint8_t, 3> pending_{};  // an incomplete sequence, all acceptable so far
  std::uint8_t pending_length_ = 0;
  std::uint8_t needed_ = 0;       // its full length
  bool stopped_ = false;
};

// The first `max` error units of a whole text (all of them by default).
std::vector<error_unit> list_errors(std::span<const std::byte> text, std::size_t max = SIZE_MAX);

}  // namespace gutf8
