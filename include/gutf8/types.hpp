// Vocabulary shared by every gutf8 backend: error policies, error kinds and
// the positions/summaries the codec reports. Backend-neutral and allocation-free.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gutf8 {

static_assert(std::endian::native == std::endian::little,
              "gutf8 reads and writes UTF-32LE as host-order char32_t");

// What happens to an error unit (SPEC §1: one maximal subpart, or one bad UTF-32 value).
enum class error_policy : std::uint8_t {
  strict,   // stop at the first error unit
  replace,  // each error unit becomes U+FFFD
  drop,     // each error unit is removed
};

// Why a byte (UTF-8) or a value (UTF-32) starts an error unit. Used for messages only:
// the error *units* never depend on the kind.
enum class error_kind : std::uint8_t {
  none,
  stray_continuation,  // 80..BF where no sequence expects one
  invalid_byte,        // C0, C1, F5..FF: can never appear in UTF-8
  overlong,            // E0 80..9F, F0 80..8F
  surrogate,           // ED A0..BF (UTF-8) or D800..DFFF (UTF-32)
  too_large,           // F4 90..BF (UTF-8) or above 0x10FFFF (UTF-32)
  truncated,           // a sequence cut short by a byte that cannot continue it
  truncated_at_end,    // a sequence cut off by the end of the input
  ragged_tail,         // UTF-32 input whose length is not a multiple of 4
  unpaired_surrogate,  // UTF-16 input: a surrogate without its partner
  odd_length,          // UTF-16 input whose length is odd (the last byte)
};

// The form of decode's output and encode's input (SPEC §3b): UTF-32 or UTF-16, either byte
// order. No BOM is implied: a BOM in the input is the character U+FEFF, as iconv and CPython
// read the forms with an explicit byte order ("UTF-16LE", 'utf-16-le').
enum class text_form : std::uint8_t { utf32le, utf32be, utf16le, utf16be };

// "UTF-32LE", "UTF-16BE", ...
std::string_view name_of(text_form form) noexcept;

// Human-readable reason used after "invalid UTF-8 at byte N (...): ".
std::string_view describe(error_kind kind) noexcept;

// Where an error unit starts. line and column are 1-based; column counts bytes from the
// start of the line (so it is exact for any input, valid or not).
struct error_position {
  std::uint64_t offset = 0;
  std::uint64_t line = 1;
  std::uint64_t column = 1;
  error_kind kind = error_kind::none;
  friend bool operator==(const error_position&, const error_position&) = default;
};

// The outcome of any pass over the input.
struct summary {
  std::uint64_t bytes = 0;       // input bytes consumed
  std::uint64_t errors = 0;      // error units seen (strict: 0 or 1)
  std::optional<error_position> first_error;
  [[nodiscard]] bool valid() const noexcept { return errors == 0; }
  friend bool operator==(const summary&, const summary&) = default;
};

// What `gutf8 stats` reports. Lines count LF bytes, as `wc -l` does.
struct text_stats {
  summary input;
  std::uint64_t code_points = 0;                // well-formed sequences
  std::uint64_t lines = 0;
  std::array<std::uint64_t, 4> by_length{};     // well-formed sequences of 1, 2, 3, 4 bytes
  friend bool operator==(const text_stats&, const text_stats&) = default;
};

// How many units a one-shot call wrote and where it stopped.
struct transcode_result {
  summary input;
  std::size_t written = 0;       // output units: char32_t for decode, bytes otherwise
  [[nodiscard]] bool ok() const noexcept { return input.valid(); }
};

inline constexpr char32_t replacement_character = U'\uFFFD';

}  // namespace gutf8
