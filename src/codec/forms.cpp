#include "codec/forms.hpp"

#include <cstring>

namespace gutf8::internal {
namespace {

constexpr bool is_utf16(text_form f) { return f == text_form::utf16le || f == text_form::utf16be; }
constexpr bool big_endian(text_form f) { return f == text_form::utf32be || f == text_form::utf16be; }

std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

void store32(std::uint8_t* p, std::uint32_t v, bool big) {
  for (int i = 0; i < 4; ++i) p[big ? 3 - i : i] = static_cast<std::uint8_t>(v >> (8 * i));
}

void store16(std::uint8_t* p, std::uint32_t v, bool big) {
  p[big ? 1 : 0] = static_cast<std::uint8_t>(v);
  p[big ? 0 : 1] = static_cast<std::uint8_t>(v >> 8);
}

constexpr std::uint32_t rejected_value = 0xFFFFFFFF;  // above U+10FFFF: one UTF-32 error unit

}  // namespace

std::size_t utf32le_to_form(std::uint8_t* data, std::size_t bytes, text_form form) noexcept {
  if (form == text_form::utf32le) return bytes;
  const bool big = big_endian(form);
  if (!is_utf16(form)) {
    for (std::size_t i = 0; i + 4 <= bytes; i += 4) store32(data + i, load_le32(data + i), big);
    return bytes;
  }
  // Front to back: each value becomes 2 or 4 bytes, so the writes never pass the reads.
  std::size_t w = 0;
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
    const std::uint32_t v = load_le32(data + i);
    if (v < 0x10000) {
      store16(data + w, v, big);
      w += 2;
    } else {
      store16(data + w, 0xD800 + ((v - 0x10000) >> 10), big);
      store16(data + w + 2, 0xDC00 + ((v - 0x10000) & 0x3FF), big);
      w += 4;
    }
  }
  return w;
}

std::size_t write_bom(text_form form, std::uint8_t* out) noexcept {
  const bool big = big_endian(form);
  if (is_utf16(form)) {
    store16(out, 0xFEFF, big);
    return 2;
  }
  store32(out, 0xFEFF, big);
  return 4;
}

void form_reader::read(std::span<const std::uint8_t> chunk, bool at_end) {
  values_.clear();
  sizes_.clear();
  kinds_.clear();
  base_ = consumed_;
  if (is_utf16(form_)) read_utf16(chunk, at_end);
  else read_utf32be(chunk, at_end);
  all_four_ = consumed_ - base_ == 4 * values_.size();
}

void form_reader::push(std::uint32_t value, std::uint8_t size, error_kind kind) {
  values_.push_back(value);
  sizes_.push_back(size);
  kinds_.push_back(kind);
  consumed_ += size;
}

// CPython's 'utf-16-le'/'utf-16-be' units: a high surrogate followed by a low one is a code point;
// any other surrogate is one unit of 2 bytes; at the end, a high surrogate with 0 or 1 more byte
// is one unit, and a single odd byte is one.
void form_reader::read_utf16(std::span<const std::uint8_t> chunk, bool at_end) {
  const bool big = form_ == text_form::utf16be;
  const std::size_t total = carried_ + chunk.size();
  const auto byte = [&](std::size_t j) { return j < carried_ ? carry_[j] : chunk[j - carried_]; };
  const auto unit = [&](std::size_t j) {
    const std::uint32_t first = byte(j), second = byte(j + 1);
    return big ? first << 8 | second : second << 8 | first;
  };
  std::size_t j = 0;
  while (total - j >= 2) {
    const std::uint32_t u = unit(j);
    if (u < 0xD800 || u > 0xDFFF) {
      push(u, 2);
      j += 2;
    } else if (u >= 0xDC00) {
      push(u, 2, error_kind::unpaired_surrogate);
      j += 2;
    } else if (total - j < 4) {
      break;  // a high surrogate waits for the next chunk
    } else if (const std::uint32_t low = unit(j + 2); low >= 0xDC00 && low <= 0xDFFF) {
      push(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00), 4);
      j += 4;
    } else {
      push(u, 2, error_kind::unpaired_surrogate);
      j += 2;
    }
  }
  const std::size_t rest = total - j;
  if (at_end && rest != 0) {
    push(0xD800, static_cast<std::uint8_t>(rest), rest == 1 ? error_kind::odd_length : error_kind::truncated_at_end);
    j = total;
  }
  std::uint8_t kept[3];
  for (std::size_t k = 0; j + k < total; ++k) kept[k] = byte(j + k);
  carried_ = total - j;
  std::memcpy(carry_, kept, carried_);
}

// Values out of range pass through: the UTF-32 codec rejects them with its own reasons.
void form_reader::read_utf32be(std::span<const std::uint8_t> chunk, bool at_end) {
  const std::size_t total = carried_ + chunk.size();
  const auto byte = [&](std::size_t j) -> std::uint32_t { return j < carried_ ? carry_[j] : chunk[j - carried_]; };
  std::size_t j = 0;
  for (; total - j >= 4; j += 4) push(byte(j) << 24 | byte(j + 1) << 16 | byte(j + 2) << 8 | byte(j + 3), 4);
  const std::size_t rest = total - j;
  if (at_end && rest != 0) {
    push(rejected_value, static_cast<std::uint8_t>(rest), error_kind::ragged_tail);
    j = total;
  }
  std::uint8_t kept[3];
  for (std::size_t k = 0; j + k < total; ++k) kept[k] = static_cast<std::uint8_t>(byte(j + k));
  carried_ = total - j;
  std::memcpy(carry_, kept, carried_);
}

std::span<const std::uint8_t> form_reader::utf32() const noexcept {
  return {reinterpret_cast<const std::uint8_t*>(values_.data()), 4 * values_.size()};
}

std::size_t form_reader::max_utf32(std::size_t n) const noexcept {
  const std::size_t unit = is_utf16(form_) ? 2 : 4;  // the fewest input bytes of a value, but the last
  return 4 * ((carried_ + n) / unit + 1);
}

std::uint64_t form_reader::input_offset(std::size_t p) const noexcept {
  if (all_four_) return base_ + p;
  std::uint64_t offset = base_;
  for (std::size_t k = 0; k < p / 4 && k < sizes_.size(); ++k) offset += sizes_[k];
  return offset;
}

error_kind form_reader::kind_at(std::size_t p) const noexcept {
  return p / 4 < kinds_.size() ? kinds_[p / 4] : error_kind::none;
}

}  // namespace gutf8::internal
