// Test helpers for the string-column API: Arrow string arrays built from rows (with slices,
// offsets not from 0 and junk under null rows), results read back, and the oracle: the
// one-shot host API applied to each row alone.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu/generators.hpp"
#include "gutf8/codec.hpp"
#include "gutf8/columns.hpp"

namespace gutf8::test {

using row = std::optional<std::string>;

// Appends `count` rows of random_text of 0..max_bytes bytes: null at null_rate, else dirty (with
// `defects` of their bytes bad) at dirty_rate, else clean.
inline void add_random_rows(std::vector<row>& rows, std::mt19937_64& g, int count, std::size_t max_bytes,
                            double null_rate, double dirty_rate, double defects) {
  std::uniform_int_distribution<std::size_t> size(0, max_bytes);
  std::bernoulli_distribution null(null_rate), dirty(dirty_rate);
  for (int i = 0; i < count; ++i)
    rows.push_back(null(g) ? std::nullopt : row(random_text(g, size(g), dirty(g) ? defects : 0.0)));
}

struct arrow_layout {
  bool large = false;        // int64 offsets
  bool binary = true;        // z / Z, else u / U
  std::int64_t slice = 0;    // rows in front of the slice (array.offset)
  std::int64_t base = 0;     // junk bytes in front of the first row's data
  std::string under_null = "\xE2\x82";  // bytes stored under each null row: never to be read
  bool view = false;         // utf8_view / binary_view (vu / vz); `large` and `base` do not apply
  int view_buffers = 2;      // views: the variadic data buffers that long rows are spread over
};

// A borrowed Arrow string array (its release callback only marks it released).
class arrow_strings {
 public:
  explicit arrow_strings(const std::vector<row>& rows, arrow_layout l = {}) : layout_(l) {
    std::vector<row> all;
    for (std::int64_t k = 0; k < l.slice; ++k)  // outside the slice: must not matter
      all.push_back(k % 3 == 1 ? std::nullopt : row(std::string("\xF0\x9F", k % 3 == 0 ? 2 : 1)));
    all.insert(all.end(), rows.begin(), rows.end());
    all.push_back(std::string("\x80\xBF"));  // after the slice
    data_.assign(static_cast<std::size_t>(l.base), '\xC3');
    validity_.assign((all.size() + 7) / 8 + 1, 0);
    for (std::size_t i = 0; i < all.size(); ++i) {
      push_offset(static_cast<std::int64_t>(data_.size()));
      if (all[i]) validity_[i / 8] = static_cast<std::uint8_t>(validity_[i / 8] | 1u << (i % 8));
      data_ += all[i] ? *all[i] : l.under_null;
    }
    push_offset(static_cast<std::int64_t>(data_.size()));
    std::int64_t nulls = 0;
    for (const row& r : rows) nulls += r ? 0 : 1;
    buffers_[0] = validity_.data();
    buffers_[1] = l.large ? static_cast<const void*>(off64_.data()) : off32_.data();
    buffers_[2] = data_.data();
    array_ = {static_cast<std::int64_t>(rows.size()), nulls, l.slice, 3, 0, buffers_, nullptr, nullptr,
              [](ArrowArray* a) { a->release = nullptr; }, nullptr};
    schema_ = {l.large ? (l.binary ? "Z" : "U") : (l.binary ? "z" : "u"), "", nullptr, ARROW_FLAG_NULLABLE, 0,
               nullptr, nullptr, [](ArrowSchema* s) { s->release = nullptr; }, nullptr};
    if (l.view) make_views(all);
  }
  arrow_strings(const arrow_strings&) = delete;
  arrow_strings& operator=(const arrow_strings&) = delete;

  [[nodiscard]] const ArrowArray& array() const noexcept { return array_; }
  [[nodiscard]] ArrowArray& array() noexcept { return array_; }
  [[nodiscard]] ArrowSchema& schema() noexcept { return schema_; }
  [[nodiscard]] const ArrowSchema& schema() const noexcept { return schema_; }
  [[nodiscard]] std::int64_t data_bytes() const noexcept { return static_cast<std::int64_t>(data_.size()); }
  [[nodiscard]] const std::string& data() const noexcept { return data_; }
  [[nodiscard]] const std::vector<std::uint8_t>& validity() const noexcept { return validity_; }
  // Sets the offset of slot (array.offset + i), to make bad offsets.
  void set_offset(std::int64_t i, std::int64_t v) {
    const auto slot = static_cast<std::size_t>(layout_.slice + i);
    if (layout_.large) off64_[slot] = v; else off32_[slot] = static_cast<std::int32_t>(v);
  }
  [[nodiscard]] std::vector<std::int64_t> offsets() const {  // every slot, as int64
    return layout_.large ? off64_ : std::vector<std::int64_t>(off32_.begin(), off32_.end());
  }
  // Views: every slot (16 bytes each), the view of slot (array.offset + i) to make bad views, and
  // data buffer k replaced (by nullptr: a missing buffer).
  [[nodiscard]] const std::vector<std::uint8_t>& views() const noexcept { return views_; }
  [[nodiscard]] std::uint8_t* view(std::int64_t i) { return views_.data() + 16 * (layout_.slice + i); }
  void set_view_buffer(std::size_t k, const void* p) { view_buffers_[2 + k] = p; }

 private:
  // Views over layout.view_buffers data buffers (long rows take turns, junk between them); a null
  // row's view is junk that would read out of bounds.
  void make_views(const std::vector<row>& all) {
    const auto buffers = static_cast<std::size_t>(layout_.view_buffers);
    view_data_.assign(buffers, std::string());
    views_.assign(all.size() * 16, 0);
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::uint8_t* v = views_.data() + 16 * i;
      const std::int32_t junk[4] = {1000, 0x41414141, 99, 1 << 30};
      if (!all[i]) {
        std::memcpy(v, junk, 16);
        continue;
      }
      const std::string& r = *all[i];
      const auto n = static_cast<std::int32_t>(r.size());
      std::memcpy(v, &n, 4);
      if (n <= 12) {
        std::memcpy(v + 4, r.data(), r.size());
        continue;
      }
      std::string& buf = view_data_[i % buffers];
      buf += "\xF0\x9F";  // junk that would complete or cut a neighbour
      const auto at = static_cast<std::int32_t>(buf.size()), index = static_cast<std::int32_t>(i % buffers);
      buf += r;
      std::memcpy(v + 4, r.data(), 4);
      std::memcpy(v + 8, &index, 4);
      std::memcpy(v + 12, &at, 4);
    }
    view_sizes_.clear();
    view_buffers_ = {validity_.data(), views_.data()};
    for (const std::string& d : view_data_) {
      view_sizes_.push_back(static_cast<std::int64_t>(d.size()));
      view_buffers_.push_back(d.data());
    }
    view_buffers_.push_back(view_sizes_.data());
    array_.n_buffers = static_cast<std::int64_t>(view_buffers_.size());
    array_.buffers = view_buffers_.data();
    schema_.format = layout_.binary ? "vz" : "vu";
  }
  std::vector<std::uint8_t> views_;
  std::vector<std::string> view_data_;
  std::vector<std::int64_t> view_sizes_;
  std::vector<const void*> view_buffers_;

  void push_offset(std::int64_t v) {
    off64_.push_back(v);
    off32_.push_back(static_cast<std::int32_t>(v));
  }
  arrow_layout layout_;
  std::string data_;
  std::vector<std::uint8_t> validity_;
  std::vector<std::int64_t> off64_;
  std::vector<std::int32_t> off32_;
  const void* buffers_[3]{};
  ArrowArray array_{};
  ArrowSchema schema_{};
};

inline bool arrow_bit(const void* bits, std::int64_t i) {
  return bits == nullptr || (static_cast<const std::uint8_t*>(bits)[i >> 3] >> (i & 7) & 1u);
}

// Reads a host result back (checks the Arrow invariants the readers rely on).
inline std::vector<row> views_of(const ArrowArray& a) {
  EXPECT_GE(a.n_buffers, 3);  // validity, views, the data buffers, their sizes
  const std::int64_t data_count = a.n_buffers - 3;
  const auto* sizes = static_cast<const std::int64_t*>(a.buffers[a.n_buffers - 1]);
  std::vector<row> out;
  std::int64_t nulls = 0;
  for (std::int64_t i = a.offset; i < a.offset + a.length; ++i) {
    const auto* v = static_cast<const std::uint8_t*>(a.buffers[1]) + 16 * i;
    std::int32_t n = 0, index = 0, at = 0;
    std::memcpy(&n, v, 4);
    if (!arrow_bit(a.buffers[0], i)) {
      ++nulls;
      out.emplace_back(std::nullopt);
      continue;
    }
    if (n <= 12) {
      out.emplace_back(std::string(reinterpret_cast<const char*>(v + 4), static_cast<std::size_t>(n)));
      continue;
    }
    std::memcpy(&index, v + 8, 4);
    std::memcpy(&at, v + 12, 4);
    EXPECT_TRUE(index >= 0 && index < data_count) << "buffer index of row " << i;
    if (index < 0 || index >= data_count) continue;
    EXPECT_LE(std::int64_t{at} + n, sizes[index]);
    const auto* data = static_cast<const char*>(a.buffers[2 + index]) + at;
    EXPECT_EQ(std::memcmp(v + 4, data, 4), 0) << "prefix of row " << i;
    out.emplace_back(std::string(data, static_cast<std::size_t>(n)));
  }
  EXPECT_EQ(a.null_count, nulls);
  return out;
}

inline std::vector<row> strings_of(const ArrowArray& a, const ArrowSchema& s) {
  const std::string format = s.format;
  if (format == "vu") return views_of(a);
  EXPECT_TRUE(format == "u" || format == "U") << format;
  EXPECT_EQ(a.n_buffers, 3);
  std::vector<row> out;
  std::int64_t nulls = 0;
  const auto* data = static_cast<const char*>(a.buffers[2]);
  for (std::int64_t i = a.offset; i < a.offset + a.length; ++i) {
    const std::int64_t b = format == "U" ? static_cast<const std::int64_t*>(a.buffers[1])[i]
                                         : static_cast<const std::int32_t*>(a.buffers[1])[i];
    const std::int64_t e = format == "U" ? static_cast<const std::int64_t*>(a.buffers[1])[i + 1]
                                         : static_cast<const std::int32_t*>(a.buffers[1])[i + 1];
    EXPECT_LE(b, e);
    if (!arrow_bit(a.buffers[0], i)) {
      ++nulls;
      out.emplace_back(std::nullopt);
    } else {
      out.emplace_back(std::string(data + b, static_cast<std::size_t>(e - b)));
    }
  }
  EXPECT_EQ(a.null_count, nulls);
  return out;
}

inline std::vector<std::optional<std::int64_t>> ints_of(const ArrowArray& a, const ArrowSchema& s) {
  const std::string format = s.format;
  std::vector<std::optional<std::int64_t>> out;
  std::int64_t nulls = 0;
  for (std::int64_t i = a.offset; i < a.offset + a.length; ++i) {
    if (!arrow_bit(a.buffers[0], i)) {
      ++nulls;
      out.emplace_back(std::nullopt);
    } else if (format == "l") {
      out.emplace_back(static_cast<const std::int64_t*>(a.buffers[1])[i]);
    } else if (format == "i") {
      out.emplace_back(static_cast<const std::int32_t*>(a.buffers[1])[i]);
    } else if (format == "C") {
      out.emplace_back(static_cast<const std::uint8_t*>(a.buffers[1])[i]);
    } else {
      ADD_FAILURE() << "format " << format;
    }
  }
  EXPECT_EQ(a.null_count, nulls);
  return out;
}

inline std::vector<std::optional<bool>> bools_of(const ArrowArray& a, const ArrowSchema& s) {
  EXPECT_STREQ(s.format, "b");
  std::vector<std::optional<bool>> out;
  for (std::int64_t i = a.offset; i < a.offset + a.length; ++i)
    out.push_back(arrow_bit(a.buffers[0], i) ? std::optional<bool>(arrow_bit(a.buffers[1], i)) : std::nullopt);
  return out;
}

// ---- the oracle: the one-shot host API on each row alone ----
inline summary row_summary(const std::string& r) { return gutf8::validate(as_bytes(r)); }
inline std::string row_repaired(const std::string& r, error_policy p) {
  const std::u8string s = gutf8::repair(r, p);
  return {reinterpret_cast<const char*>(s.data()), s.size()};
}
inline std::int64_t row_chars(const std::string& r, error_policy p) {
  const text_stats t = gutf8::stats(as_bytes(r));
  return static_cast<std::int64_t>(t.code_points + (p == error_policy::replace ? t.input.errors : 0));
}

struct expected_validity {
  std::vector<std::optional<bool>> valid;
  std::vector<std::optional<std::int64_t>> error_offsets, error_kinds;
  std::int64_t invalid_rows = 0;
  std::optional<row_error> first;
};

inline expected_validity expect_validity(const std::vector<row>& rows) {
  expected_validity e;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i]) {
      e.valid.emplace_back(std::nullopt);
      e.error_offsets.emplace_back(std::nullopt);
      e.error_kinds.emplace_back(std::nullopt);
      continue;
    }
    const summary s = row_summary(*rows[i]);
    e.valid.emplace_back(s.valid());
    if (s.valid()) {
      e.error_offsets.emplace_back(std::nullopt);
      e.error_kinds.emplace_back(std::nullopt);
      continue;
    }
    ++e.invalid_rows;
    e.error_offsets.emplace_back(static_cast<std::int64_t>(s.first_error->offset));
    e.error_kinds.emplace_back(static_cast<std::int64_t>(s.first_error->kind));
    if (!e.first) e.first = row_error{static_cast<std::int64_t>(i), s.first_error->offset, s.first_error->kind};
  }
  return e;
}

// What cast_to_utf8 / make_valid must give for each row.
inline std::vector<row> expect_cast(const std::vector<row>& rows, on_invalid p) {
  std::vector<row> out;
  for (const row& r : rows) {
    if (!r || row_summary(*r).valid()) {
      out.push_back(r);
    } else if (p == on_invalid::null) {
      out.emplace_back(std::nullopt);
    } else {
      out.emplace_back(row_repaired(*r, p == on_invalid::replace ? error_policy::replace : error_policy::drop));
    }
  }
  return out;
}

inline std::vector<std::optional<std::int64_t>> expect_counts(const std::vector<row>& rows, on_invalid p) {
  std::vector<std::optional<std::int64_t>> out;
  for (const row& r : rows) {
    if (!r || (p == on_invalid::null && !row_summary(*r).valid()))
      out.emplace_back(std::nullopt);
    else
      out.emplace_back(row_chars(*r, p == on_invalid::replace ? error_policy::replace : error_policy::drop));
  }
  return out;
}

}  // namespace gutf8::test
