// The other text forms (UTF-32BE, UTF-16LE/BE) around the UTF-32LE codec, on the host, so that
// every backend and the streaming path share them: decode's UTF-32LE output is rewritten in place,
// encode's input is read into UTF-32LE values, one per code point or per error unit (SPEC §3b).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gutf8/types.hpp"

namespace gutf8::internal {

// Rewrites `bytes` bytes of UTF-32LE scalar values at data into `form`, in place (never longer);
// returns the new length.
std::size_t utf32le_to_form(std::uint8_t* data, std::size_t bytes, text_form form) noexcept;

// U+FEFF in `form` at out (room for 4 bytes); returns its length.
std::size_t write_bom(text_form form, std::uint8_t* out) noexcept;

// Reads encode's input in `form` chunk by chunk into UTF-32LE values. A code point becomes its
// value; an error unit becomes one value the UTF-32 codec rejects as one unit (a surrogate or
// 0xFFFFFFFF), whose input size and kind are kept to report it in the input's terms. A unit split
// across chunks is carried.
class form_reader {
 public:
  explicit form_reader(text_form form) : form_(form) {}

  // Converts chunk (at_end: and ends the input); the values are then in utf32().
  void read(std::span<const std::uint8_t> chunk, bool at_end);
  [[nodiscard]] std::span<const std::uint8_t> utf32() const noexcept;
  // UTF-32 bytes that reading n more input bytes may produce at most.
  [[nodiscard]] std::size_t max_utf32(std::size_t n) const noexcept;
  // Input offset of the UTF-32 byte position p (a multiple of 4) of the last read's values.
  [[nodiscard]] std::uint64_t input_offset(std::size_t p) const noexcept;
  // Why the value at UTF-32 byte position p of the last read stands for an error, in the input's
  // terms; none when the UTF-32 codec's own reason holds (a UTF-32BE value out of range).
  [[nodiscard]] error_kind kind_at(std::size_t p) const noexcept;

 private:
  void push(std::uint32_t value, std::uint8_t size, error_kind kind = error_kind::none);
  void read_utf16(std::span<const std::uint8_t> chunk, bool at_end);
  void read_utf32be(std::span<const std::uint8_t> chunk, bool at_end);

  text_form form_;
  std::uint8_t carry_[3]{};
  std::size_t carried_ = 0;
  std::uint64_t base_ = 0;      // input bytes before the last read's values
  std::uint64_t consumed_ = 0;  // input bytes up to the end of the last read's values
  std::vector<std::uint32_t> values_;
  std::vector<std::uint8_t> sizes_;  // input bytes of each value
  std::vector<error_kind> kinds_;    // per value
  bool all_four_ = true;             // every value of the last read took 4 input bytes
};

}  // namespace gutf8::internal
