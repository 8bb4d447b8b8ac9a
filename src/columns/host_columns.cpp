// The CPU backend of the string-column operations. Rows are split across threads by bytes;
// runs of non-null rows are validated as one text and accepted when every row starts on a
// sequence start (then no row can end inside one either), so clean rows cost one fast scan;
// a run with an error is scanned again row by row with the exact codec (src/codec).
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "columns/arrow_io.hpp"
#include "cpu/scan.hpp"
#include "gutf8/columns.hpp"
#include "gutf8/prim/cpu.hpp"

namespace gutf8 {
namespace internal::columns {
namespace {

using u8 = std::uint8_t;
using u64 = std::uint64_t;
using cpu::mode;

enum class row_state : u8 { null, valid, invalid };

template <class Off>
struct rows {
  using count_type = Off;
  static constexpr bool large = sizeof(Off) == 8;
  const u8* data = nullptr;
  const Off* offsets = nullptr;  // offsets[i] is where row i starts
  const u8* validity = nullptr;
  std::int64_t bit0 = 0;  // validity bit of row 0
  std::int64_t length = 0;

  [[nodiscard]] bool is_null(std::int64_t i) const noexcept { return validity != nullptr && !bit(validity, bit0 + i); }
  [[nodiscard]] u64 begin(std::int64_t i) const noexcept { return static_cast<u64>(offsets[i]); }
  [[nodiscard]] u64 size(std::int64_t i) const noexcept { return static_cast<u64>(offsets[i + 1] - offsets[i]); }
  [[nodiscard]] const u8* at(std::int64_t i) const noexcept { return data + begin(i); }
};

template <class Off>
rows<Off> checked_rows(const string_array& s, std::int64_t data_bytes) {
  const Off* off = static_cast<const Off*>(s.offsets);
  rows<Off> r{s.data, off == nullptr ? nullptr : off + s.offset, s.validity, s.offset, s.length};
  if (s.length == 0) return r;
  const Off* o = r.offsets;
  if (o[0] < 0) bad_offsets(0, o[0], o[1], data_bytes);
  for (std::int64_t i = 0; i < s.length; ++i)
    if (o[i + 1] < o[i]) bad_offsets(i, o[i], o[i + 1], data_bytes);
  if (data_bytes >= 0 && o[s.length] > data_bytes) {
    const std::int64_t row = std::upper_bound(o, o + s.length + 1, static_cast<Off>(data_bytes)) - o - 1;
    bad_offsets(row, o[row], o[row + 1], data_bytes);
  }
  if (s.data == nullptr && o[s.length] != o[0])
    throw error(errc::invalid_argument, "gutf8 columns: the data buffer is missing");
  return r;
}

// What one non-null row holds (code_points of a clean row: only when asked for).
struct row_facts {
  u64 bytes = 0;
  u64 kept_bytes = 0;  // bytes of well-formed sequences
  u64 code_points = 0;
  u64 errors = 0;
  u64 first_error = 0;
  error_kind kind = error_kind::none;

  [[nodiscard]] bool valid() const noexcept { return errors == 0; }
  [[nodiscard]] u64 output_bytes(on_invalid p) const noexcept {
    return p == on_invalid::replace ? kept_bytes + 3 * errors : p == on_invalid::drop ? kept_bytes : 0;
  }
  [[nodiscard]] u64 characters(on_invalid p) const noexcept {
    return code_points + (p == on_invalid::replace ? errors : 0);
  }
};

cpu::scan_request request_on(const u8* p, u64 n, cpu::isa level) {
  cpu::scan_request j;
  j.in = p;
  j.end = n;
  j.limit = n;
  j.at_end = true;
  j.level = level;
  return j;
}

row_facts scan_row(const u8* p, u64 n, cpu::isa level) {
  const cpu::segment_result s = cpu::scan_utf8<mode::stats, error_policy::replace>(request_on(p, n, level));
  row_facts f{n, 0, 0, s.errors, s.first_error, s.first_kind};
  for (unsigned k = 0; k < 4; ++k) {
    f.code_points += s.by_length[k];
    f.kept_bytes += (k + 1) * s.by_length[k];
  }
  return f;
}

// Code points of well-formed text: the bytes that are not continuation bytes (10xxxxxx),
// eight at a time (bit 7 set and bit 6 clear).
u64 continuation_free_bytes(const u8* p, u64 n) noexcept {
  constexpr u64 high_bits = 0x8080808080808080ull;
  u64 continuations = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    u64 w;
    std::memcpy(&w, p + i, 8);
    const u64 ones = (w & ~(w << 1) & high_bits) >> 7;  // 1 in each continuation byte
    continuations += ones * 0x0101010101010101ull >> 56;    // their sum (no popcnt needed)
  }
  for (; i < n; ++i) continuations += (p[i] & 0xC0u) == 0x80u;
  return n - continuations;
}

// Where the first error unit of [p, p + n) read as one text starts, or n: the scan stops at it.
u64 first_error_at(const u8* p, u64 n, cpu::isa level) {
  if (n == 0) return 0;
  const cpu::segment_result s = cpu::scan_utf8<mode::validate, error_policy::strict>(request_on(p, n, level));
  return s.errors == 0 ? n : s.first_error;
}

// The end of the segment of non-null rows from i whose bytes follow each other in memory (the
// offset layouts always; a view column's long rows where they were written in order), with the
// end of its bytes; about max_bytes long, so a segment's bytes stay in cache for its rows' work.
template <class Rows>
std::int64_t segment_end(const Rows& r, std::int64_t i, std::int64_t hi, const u8*& end) {
  constexpr u64 max_bytes = u64{1} << 18;
  const u8* begin = r.at(i);
  end = begin + r.size(i);
  std::int64_t b = i + 1;
  for (; b < hi && !r.is_null(b) && static_cast<u64>(end - begin) < max_bytes; ++b) {
    const u64 n = r.size(b);
    if (n == 0) continue;
    if (r.at(b) != end) break;
    end += n;
  }
  return b;
}

// The first row of [k, b) that one validation of the bytes from row k on cannot prove valid, or
// b: the row holding the first error unit, or the last non-empty row before one that starts
// inside a sequence (that row is cut short; the next is not valid alone either). Every row
// before it is a whole number of characters of a valid text, so valid on its own.
template <class Rows>
std::int64_t unproven_row(const Rows& r, std::int64_t k, std::int64_t b, const u8* end, cpu::isa level) {
  while (k < b && r.size(k) == 0) ++k;  // an empty view row's bytes are not in the segment
  if (k == b) return b;
  const u8* from = r.at(k);
  const u8* bad = from + first_error_at(from, static_cast<u64>(end - from), level);
  std::int64_t last_text = k;  // a row starting with a continuation byte fails the scan itself
  for (std::int64_t j = k; j < b; ++j) {
    const u64 n = r.size(j);
    if (n == 0) continue;
    if (j > k && detail::is_continuation(*r.at(j))) return last_text;
    if (r.at(j) + n > bad) return j;
    last_text = j;
  }
  return b;
}

// Sets states[lo, hi) and calls on_row(i, facts) for every non-null row. Each segment of rows is
// validated as one text that stops at its first error; rows before the first row it cannot
// prove valid are valid, that row is scanned alone, and validation goes on after it.
template <class Rows, class OnRow>
void analyze(const Rows& r, std::int64_t lo, std::int64_t hi, bool count, u8* states, const OnRow& on_row) {
  const cpu::isa level = cpu::best_isa();
  std::int64_t i = lo;
  while (i < hi) {
    if (r.is_null(i)) {
      states[i++] = static_cast<u8>(row_state::null);
      continue;
    }
    const u8* end = nullptr;
    const std::int64_t b = segment_end(r, i, hi, end);
    while (i < b) {
      const std::int64_t stop = unproven_row(r, i, b, end, level);
      for (; i < stop; ++i) {
        const u64 n = r.size(i);
        states[i] = static_cast<u8>(row_state::valid);
        on_row(i, row_facts{n, n, count ? continuation_free_bytes(r.at(i), n) : 0, 0, 0, error_kind::none});
      }
      if (i == b) break;
      const row_facts f = scan_row(r.at(i), r.size(i), level);
      states[i] = static_cast<u8>(f.valid() ? row_state::valid : row_state::invalid);
      on_row(i, f);
      ++i;
    }
  }
}

// The rows of a view array (utf8_view / binary_view); each view is checked as it is read.
struct view_rows {
  using count_type = std::int32_t;
  static constexpr bool large = false;
  view_array v;
  std::int64_t length = 0;
  std::vector<const u8*> starts;  // row i's bytes (checked views)
  std::vector<std::int32_t> sizes;

  [[nodiscard]] bool is_null(std::int64_t i) const noexcept { return v.validity != nullptr && !bit(v.validity, v.offset + i); }
  [[nodiscard]] u64 size(std::int64_t i) const noexcept { return static_cast<u64>(sizes[static_cast<std::size_t>(i)]); }
  [[nodiscard]] const u8* at(std::int64_t i) const noexcept { return starts[static_cast<std::size_t>(i)]; }
};

view_rows checked_views(const view_array& v) {
  view_rows r{v, v.length, std::vector<const u8*>(static_cast<std::size_t>(v.length)),
              std::vector<std::int32_t>(static_cast<std::size_t>(v.length))};
  for (std::int64_t i = 0; i < v.length; ++i) {
    if (r.is_null(i)) continue;
    const u8* view = v.views + view_bytes * (v.offset + i);
    std::int32_t n = 0, index = 0, at = 0;
    std::memcpy(&n, view, 4);
    std::memcpy(&index, view + 8, 4);
    std::memcpy(&at, view + 12, 4);
    const detail::view_fault fault = detail::check_view(n, index, at, v.data_count, v.data_sizes, v.data);
    if (fault != detail::view_fault::none) bad_view(i, fault);
    r.sizes[static_cast<std::size_t>(i)] = n;
    r.starts[static_cast<std::size_t>(i)] =
        n <= inline_view_bytes ? view + 4 : static_cast<const u8*>(v.data[index]) + at;
  }
  return r;
}

// A view column's rows lie apart (polars keeps each long row after its Parquet length), so
// they are gathered into one text with an ASCII byte after each: no sequence runs from one
// row into the next, and a row that starts inside a sequence fails there, so every row before
// the text's first error unit is valid on its own. The row holding it is scanned alone, and the
// validation goes on after it. Rows longer than a gathered text are validated where they are.
template <class OnRow>
void analyze(const view_rows& r, std::int64_t lo, std::int64_t hi, bool count, u8* states, const OnRow& on_row) {
  constexpr std::size_t max_bytes = std::size_t{1} << 18;
  const cpu::isa level = cpu::best_isa();
  const auto valid = [&](std::int64_t k) {
    const u64 n = r.size(k);
    states[k] = static_cast<u8>(row_state::valid);
    on_row(k, row_facts{n, n, count ? continuation_free_bytes(r.at(k), n) : 0, 0, 0, error_kind::none});
  };
  const auto alone = [&](std::int64_t k) {
    const row_facts f = scan_row(r.at(k), r.size(k), level);
    states[k] = static_cast<u8>(f.valid() ? row_state::valid : row_state::invalid);
    on_row(k, f);
  };
  std::vector<u8> text;
  std::vector<std::pair<std::int64_t, std::size_t>> gathered;  // (row, where it starts in text)
  for (std::int64_t i = lo; i < hi;) {
    text.clear();
    gathered.clear();
    for (; i < hi && text.size() < max_bytes; ++i) {
      const u64 n = r.size(i);
      if (r.is_null(i)) states[i] = static_cast<u8>(row_state::null);
      else if (n > max_bytes / 2 && first_error_at(r.at(i), n, level) == n) valid(i);
      else if (n > max_bytes / 2) alone(i);
      else {
        gathered.emplace_back(i, text.size());
        text.insert(text.end(), r.at(i), r.at(i) + n);
        text.push_back(0);
      }
    }
    for (std::size_t k = 0; k < gathered.size();) {
      const std::size_t from = gathered[k].second;
      const std::size_t bad = from + first_error_at(text.data() + from, text.size() - from, level);
      for (; k < gathered.size() && gathered[k].second + r.size(gathered[k].first) <= bad; ++k) valid(gathered[k].first);
      if (k < gathered.size()) alone(gathered[k++].first);
    }
  }
}

std::vector<std::int64_t> split_rows(const view_rows& r, unsigned threads) {
  constexpr std::int64_t min_rows = 1 << 14;
  if (threads == 0) threads = prim::cpu::hardware_threads();
  const auto parts = static_cast<unsigned>(std::clamp<std::int64_t>(r.length / min_rows, 1, threads));
  std::vector<std::int64_t> bounds(parts + 1);
  for (unsigned p = 0; p <= parts; ++p) bounds[p] = r.length * p / parts;
  return bounds;
}

// Row ranges of about equal work (bytes plus a per-row cost), one per thread.
template <class Off>
std::vector<std::int64_t> split_rows(const rows<Off>& r, unsigned threads) {
  constexpr u64 row_cost = 8, min_work = u64{1} << 18;
  const auto work = [&](std::int64_t i) { return r.begin(i) - r.begin(0) + row_cost * static_cast<u64>(i); };
  const u64 total = r.length == 0 ? 0 : work(r.length);
  if (threads == 0) threads = prim::cpu::hardware_threads();
  const auto parts = static_cast<unsigned>(std::clamp<u64>(total / min_work, 1, threads));
  std::vector<std::int64_t> bounds(parts + 1, r.length);
  bounds[0] = 0;
  for (unsigned p = 1; p < parts; ++p) {
    const u64 target = total / parts * p;
    std::int64_t lo = bounds[p - 1], hi = r.length;
    while (lo < hi) {  // first row whose work reaches the target
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (work(mid) < target) lo = mid + 1; else hi = mid;
    }
    bounds[p] = lo;
  }
  return bounds;
}

template <class Body>
void for_parts(const std::vector<std::int64_t>& bounds, const Body& body) {
  prim::cpu::parallel_parts(static_cast<unsigned>(bounds.size() - 1),
                            [&](unsigned p) { body(bounds[p], bounds[p + 1]); });
}

template <class Rows, class OnRow>
std::vector<u8> analyze_all(const Rows& r, const std::vector<std::int64_t>& parts, bool count, const OnRow& on_row) {
  std::vector<u8> states(static_cast<std::size_t>(r.length));
  for_parts(parts, [&](std::int64_t lo, std::int64_t hi) { analyze(r, lo, hi, count, states.data(), on_row); });
  return states;
}

template <class Rows>
std::optional<row_error> first_invalid(const Rows& r, const std::vector<u8>& states) {
  const auto it = std::find(states.begin(), states.end(), static_cast<u8>(row_state::invalid));
  if (it == states.end()) return std::nullopt;
  const std::int64_t row = it - states.begin();
  const row_facts f = scan_row(r.at(row), r.size(row), cpu::best_isa());
  return row_error{row, f.first_error, f.kind};
}

template <class T>
buffer values_buffer(std::int64_t n) {
  buffer b = host_buffer(static_cast<std::size_t>(n) * sizeof(T));
  std::memset(b.get(), 0, static_cast<std::size_t>(n) * sizeof(T));  // null slots read as 0
  return b;
}

// The validity bitmap of a result whose row i is non-null when keep(state) says so.
template <class Keep>
std::pair<buffer, std::int64_t> result_validity(const std::vector<u8>& states, const Keep& keep) {
  auto [bits, nulls] = host_bitmap(static_cast<std::int64_t>(states.size()),
                                   [&](std::int64_t i) { return keep(static_cast<row_state>(states[i])); });
  if (nulls == 0) return {no_buffer(), 0};
  return {std::move(bits), nulls};
}

column primitive_column(const char* format, const std::vector<u8>& states, buffer values, auto keep) {
  auto [validity, nulls] = result_validity(states, keep);
  array_parts p;
  p.format = format;
  p.length = static_cast<std::int64_t>(states.size());
  p.null_count = nulls;
  p.buffers.push_back(std::move(validity));
  p.buffers.push_back(std::move(values));
  return make_column(std::move(p));
}

bool not_null(row_state s) { return s != row_state::null; }

template <class Rows>
row_validity is_valid_rows(const Rows& r, const column_options& opt) {
  const auto parts = split_rows(r, opt.threads);
  buffer offsets = opt.first_errors ? values_buffer<std::int64_t>(r.length) : no_buffer();
  buffer kinds = opt.first_errors ? values_buffer<u8>(r.length) : no_buffer();
  auto* error_at = static_cast<std::int64_t*>(offsets.get());
  auto* error_kinds = static_cast<u8*>(kinds.get());
  const std::vector<u8> states = analyze_all(r, parts, false, [&](std::int64_t i, const row_facts& f) {
    if (error_at == nullptr || f.valid()) return;
    error_at[i] = static_cast<std::int64_t>(f.first_error);
    error_kinds[i] = static_cast<u8>(f.kind);
  });
  row_validity out;
  out.first = first_invalid(r, states);
  out.invalid_rows = std::count(states.begin(), states.end(), static_cast<u8>(row_state::invalid));
  buffer bits = host_bitmap(r.length, [&](std::int64_t i) { return states[i] == static_cast<u8>(row_state::valid); }).first;
  out.valid = primitive_column("b", states, std::move(bits), not_null);
  if (opt.first_errors) {
    const auto invalid = [](row_state s) { return s == row_state::invalid; };
    out.error_offsets = primitive_column("l", states, std::move(offsets), invalid);
    out.error_kinds = primitive_column("C", states, std::move(kinds), invalid);
  }
  return out;
}

template <class Rows>
column count_rows(const Rows& r, on_invalid policy, const column_options& opt) {
  using Off = typename Rows::count_type;
  const auto parts = split_rows(r, opt.threads);
  buffer values = values_buffer<Off>(r.length);
  auto* counts = static_cast<Off*>(values.get());
  const std::vector<u8> states = analyze_all(r, parts, true, [&](std::int64_t i, const row_facts& f) {
    counts[i] = static_cast<Off>(f.characters(policy));  // a row of n bytes has at most n characters
  });
  if (policy == on_invalid::raise)
    if (const auto e = first_invalid(r, states)) raise_invalid(*e);
  const bool null_invalid = policy == on_invalid::null;
  return primitive_column(Rows::large ? "l" : "i", states, std::move(values),
                          [&](row_state s) { return s == row_state::valid || (s == row_state::invalid && !null_invalid); });
}

// Writes row i's repair at out (exactly its sized output).
void repair_row(const u8* in, u64 n, u8* out, u64 out_bytes, on_invalid policy) {
  cpu::scan_request j = request_on(in, n, cpu::best_isa());
  j.out = out;
  j.out_limit = out + out_bytes;
  if (policy == on_invalid::replace)
    cpu::scan_utf8<mode::repair, error_policy::replace>(j);
  else
    cpu::scan_utf8<mode::repair, error_policy::drop>(j);
}

template <class Off>
column repair_rows(const rows<Off>& r, on_invalid policy, const column_options& opt) {
  const auto parts = split_rows(r, opt.threads);
  std::vector<std::int64_t> at(static_cast<std::size_t>(r.length) + 1, 0);
  const std::vector<u8> states = analyze_all(r, parts, false, [&](std::int64_t i, const row_facts& f) {
    at[i] = static_cast<std::int64_t>(f.valid() ? f.bytes : f.output_bytes(policy));
  });
  if (policy == on_invalid::raise)
    if (const auto e = first_invalid(r, states)) raise_invalid(*e);
  prim::cpu::exclusive_scan(at.data(), at.data(), at.size(), std::int64_t{0}, std::plus<>{}, opt.threads);
  const std::int64_t total = at.back();
  if (total > std::numeric_limits<Off>::max())
    throw error(errc::output_too_small, "gutf8 columns: the repaired column holds " + std::to_string(total) +
                                            " bytes, more than int32 offsets address (use large_utf8)");
  buffer data = host_buffer(static_cast<std::size_t>(total));
  buffer offsets = host_buffer((at.size()) * sizeof(Off));
  auto* out = static_cast<u8*>(data.get());
  auto* out_offsets = static_cast<Off*>(offsets.get());
  for_parts(parts, [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t run = lo;  // start of the pending run of valid rows, copied at once
    const auto flush = [&](std::int64_t end) {
      if (end > run) std::memcpy(out + at[run], r.at(run), static_cast<std::size_t>(at[end] - at[run]));
    };
    for (std::int64_t i = lo; i < hi; ++i) {
      out_offsets[i] = static_cast<Off>(at[i]);
      const auto s = static_cast<row_state>(states[i]);
      if (s == row_state::valid) continue;
      flush(i);
      run = i + 1;
      if (s == row_state::invalid && at[i + 1] > at[i])
        repair_row(r.at(i), r.size(i), out + at[i], static_cast<u64>(at[i + 1] - at[i]), policy);
    }
    flush(hi);
  });
  out_offsets[r.length] = static_cast<Off>(total);
  const bool null_invalid = policy == on_invalid::null;
  auto [validity, nulls] = result_validity(states, [&](row_state s) {
    return s == row_state::valid || (s == row_state::invalid && !null_invalid);
  });
  array_parts p;
  p.format = sizeof(Off) == 8 ? "U" : "u";
  p.length = r.length;
  p.null_count = nulls;
  p.buffers.push_back(std::move(validity));
  p.buffers.push_back(std::move(offsets));
  p.buffers.push_back(std::move(data));
  return make_column(std::move(p));
}

// A utf8_view cast result: valid rows, and invalid ones unless the policy makes them null, with
// its views and data buffers (their sizes go last, as Arrow's C interface wants).
column view_result(const std::vector<u8>& states, on_invalid policy, buffer views, std::vector<buffer> data,
                   const std::vector<std::int64_t>& sizes) {
  const bool null_invalid = policy == on_invalid::null;
  auto [validity, nulls] = result_validity(states, [&](row_state st) {
    return st == row_state::valid || (st == row_state::invalid && !null_invalid);
  });
  buffer size_buffer = host_buffer(sizes.size() * sizeof(std::int64_t));
  std::memcpy(size_buffer.get(), sizes.data(), sizes.size() * sizeof(std::int64_t));
  array_parts p;
  p.format = "vu";
  p.length = static_cast<std::int64_t>(states.size());
  p.null_count = nulls;
  p.buffers.push_back(std::move(validity));
  p.buffers.push_back(std::move(views));
  for (buffer& b : data) p.buffers.push_back(std::move(b));
  p.buffers.push_back(std::move(size_buffer));
  return make_column(std::move(p));
}

// A view column's repair is a view column (utf8_view) with buffers of its own: rows of at most
// 12 bytes inline, longer ones in one data buffer.
column repair_rows(const view_rows& r, on_invalid policy, const column_options& opt) {
  const auto parts = split_rows(r, opt.threads);
  const auto n = static_cast<std::size_t>(r.length);
  std::vector<std::int64_t> size(n, 0), at(n + 1, 0);
  const std::vector<u8> states = analyze_all(r, parts, false, [&](std::int64_t i, const row_facts& f) {
    size[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(f.valid() ? f.bytes : f.output_bytes(policy));
  });
  if (policy == on_invalid::raise)
    if (const auto e = first_invalid(r, states)) raise_invalid(*e);
  for (std::size_t i = 0; i < n; ++i) at[i] = size[i] > inline_view_bytes ? size[i] : 0;
  prim::cpu::exclusive_scan(at.data(), at.data(), at.size(), std::int64_t{0}, std::plus<>{}, opt.threads);
  const std::int64_t total = at.back();
  if (total > std::numeric_limits<std::int32_t>::max())
    throw error(errc::output_too_small, "gutf8 columns: the repaired view column's long rows hold " +
                                            std::to_string(total) + " bytes, more than one int32-addressed buffer");
  buffer views = host_buffer(n * view_bytes);
  buffer data = host_buffer(static_cast<std::size_t>(total));
  auto* out_views = static_cast<u8*>(views.get());
  auto* out_data = static_cast<u8*>(data.get());
  for_parts(parts, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const auto k = static_cast<std::size_t>(i);
      u8* view = out_views + view_bytes * i;
      std::memset(view, 0, view_bytes);
      const auto s = static_cast<row_state>(states[k]);
      const auto length = static_cast<std::int32_t>(size[k]);
      std::memcpy(view, &length, 4);
      if (length == 0) continue;
      u8* dst = length <= inline_view_bytes ? view + 4 : out_data + at[k];
      if (s == row_state::valid) std::memcpy(dst, r.at(i), size[k]);
      else repair_row(r.at(i), r.size(i), dst, static_cast<u64>(size[k]), policy);
      if (length <= inline_view_bytes) continue;
      const auto offset = static_cast<std::int32_t>(at[k]);
      std::memcpy(view + 4, dst, 4);  // the prefix; buffer index 0
      std::memcpy(view + 12, &offset, 4);
    }
  });
  std::vector<buffer> own;
  own.push_back(std::move(data));
  return view_result(states, policy, std::move(views), std::move(own), {total});
}

// The data buffers a shared-view result borrows from its input, in the input's order.
struct shared_data {
  std::vector<const void*> buffers;
  std::vector<std::int64_t> sizes;
};

shared_data shared_of(const view_rows& r) {
  const auto n = static_cast<std::size_t>(r.v.data_count);
  return {std::vector<const void*>(r.v.data, r.v.data + n),
          std::vector<std::int64_t>(r.v.data_sizes, r.v.data_sizes + n)};
}
shared_data shared_of(const rows<std::int32_t>& r) {
  if (r.data == nullptr) return {};  // no bytes: every row is empty
  return {{r.data}, {r.length == 0 ? 0 : static_cast<std::int64_t>(r.begin(r.length))}};
}

// Writes the view of valid row i as it is in the input: a view input's own view, or one into
// the offset input's data buffer (index 0).
void shared_view(const view_rows& r, std::int64_t i, u8* view) {
  std::memcpy(view, r.v.views + view_bytes * (r.v.offset + i), view_bytes);
}
void shared_view(const rows<std::int32_t>& r, std::int64_t i, u8* view) {
  const auto n = static_cast<std::int32_t>(r.size(i));
  std::memcpy(view, &n, 4);
  if (n <= inline_view_bytes) {
    std::memset(view + 4, 0, view_bytes - 4);  // Arrow: an inline view's padding is zero
    std::memcpy(view + 4, r.at(i), static_cast<std::size_t>(n));
    return;
  }
  const std::int32_t index = 0, offset = r.offsets[i];
  std::memcpy(view + 4, r.at(i), 4);
  std::memcpy(view + 8, &index, 4);
  std::memcpy(view + 12, &offset, 4);
}

// Writes the view of repaired row i (size bytes): inline, or at `at` of the repairs buffer
// (index `index`, after the shared ones).
void repaired_view(const u8* in, u64 n, std::int64_t size, u8* repairs, std::int64_t at, std::int32_t index,
                   on_invalid policy, u8* view) {
  const auto length = static_cast<std::int32_t>(size);
  std::memcpy(view, &length, 4);
  if (length == 0) return;
  u8* dst = length <= inline_view_bytes ? view + 4 : repairs + at;
  repair_row(in, n, dst, static_cast<u64>(size), policy);
  if (length <= inline_view_bytes) return;
  const auto offset = static_cast<std::int32_t>(at);
  std::memcpy(view + 4, dst, 4);
  std::memcpy(view + 8, &index, 4);
  std::memcpy(view + 12, &offset, 4);
}

// Where each repaired row longer than a view holds goes: buffers of at most 2 GiB (a view
// addresses its bytes with int32), filled in row order.
struct repair_places {
  std::vector<std::int32_t> buffer;
  std::vector<std::int64_t> at;
  std::vector<std::int64_t> buffer_bytes{0};
};

repair_places place_repairs(const std::vector<std::int64_t>& size) {
  constexpr std::int64_t cap = std::numeric_limits<std::int32_t>::max();
  repair_places p{std::vector<std::int32_t>(size.size(), 0), std::vector<std::int64_t>(size.size(), 0)};
  for (std::size_t i = 0; i < size.size(); ++i) {
    if (size[i] <= inline_view_bytes) continue;
    if (size[i] > cap)
      throw error(errc::output_too_small, "gutf8 columns: a repaired row holds " + std::to_string(size[i]) +
                                              " bytes, more than a view addresses");
    if (p.buffer_bytes.back() > cap - size[i]) p.buffer_bytes.push_back(0);
    p.buffer[i] = static_cast<std::int32_t>(p.buffer_bytes.size() - 1);
    p.at[i] = p.buffer_bytes.back();
    p.buffer_bytes.back() += size[i];
  }
  return p;
}

// A utf8_view result whose valid rows keep the input's bytes in place (borrowed buffers) and
// whose repaired rows go to new buffers after them.
template <class Rows>
column repair_sharing(const Rows& r, on_invalid policy, const column_options& opt) {
  const auto parts = split_rows(r, opt.threads);
  const auto n = static_cast<std::size_t>(r.length);
  std::vector<std::int64_t> size(n, 0);  // of repaired rows
  const std::vector<u8> states = analyze_all(r, parts, false, [&](std::int64_t i, const row_facts& f) {
    if (!f.valid()) size[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(f.output_bytes(policy));
  });
  if (policy == on_invalid::raise)
    if (const auto e = first_invalid(r, states)) raise_invalid(*e);
  const repair_places places = place_repairs(size);
  shared_data shared = shared_of(r);
  const auto first = static_cast<std::int32_t>(shared.buffers.size());
  buffer views = host_buffer(n * view_bytes);
  std::vector<buffer> repairs;
  std::vector<u8*> repair_data;
  for (const std::int64_t bytes : places.buffer_bytes) {
    repairs.push_back(host_buffer(static_cast<std::size_t>(bytes)));
    repair_data.push_back(static_cast<u8*>(repairs.back().get()));
  }
  auto* out_views = static_cast<u8*>(views.get());
  for_parts(parts, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const auto k = static_cast<std::size_t>(i);
      u8* view = out_views + view_bytes * i;
      const auto st = static_cast<row_state>(states[k]);
      if (st == row_state::valid) {
        shared_view(r, i, view);
        continue;
      }
      std::memset(view, 0, view_bytes);
      if (st == row_state::invalid && policy != on_invalid::null) {
        const std::int32_t b = places.buffer[k];
        repaired_view(r.at(i), r.size(i), size[k], repair_data[static_cast<std::size_t>(b)], places.at[k], first + b,
                      policy, view);
      }
    }
  });
  std::vector<buffer> data;
  for (const void* b : shared.buffers) data.push_back(buffer(const_cast<void*>(b), [](void*) {}));  // borrowed
  for (buffer& b : repairs) data.push_back(std::move(b));
  shared.sizes.insert(shared.sizes.end(), places.buffer_bytes.begin(), places.buffer_bytes.end());
  return view_result(states, policy, std::move(views), std::move(data), shared.sizes);
}

template <class F>
auto with_rows(const ArrowArray& array, const ArrowSchema& schema, const column_options& opt, const F& f) {
  if (is_view(schema)) return f(checked_views(describe_view(array, schema)));
  const string_array s = describe(array, schema);
  if (s.large) return f(checked_rows<std::int64_t>(s, opt.data_bytes));
  return f(checked_rows<std::int32_t>(s, opt.data_bytes));
}

}  // namespace
}  // namespace internal::columns

using namespace internal::columns;

row_validity is_valid(const ArrowArray& array, const ArrowSchema& schema, const column_options& opt) {
  return with_rows(array, schema, opt, [&](const auto& r) { return is_valid_rows(r, opt); });
}

void validate(const ArrowArray& array, const ArrowSchema& schema, const column_options& opt) {
  column_options no_details = opt;
  no_details.first_errors = false;
  const row_validity v = is_valid(array, schema, no_details);
  if (v.first) raise_invalid(*v.first);
}

column make_valid(const ArrowArray& array, const ArrowSchema& schema, error_policy policy, const column_options& opt) {
  if (policy == error_policy::strict)
    throw error(errc::invalid_argument, "gutf8 columns: make_valid repairs (replace or drop), it cannot be strict");
  return cast_to_utf8(array, schema, policy == error_policy::replace ? on_invalid::replace : on_invalid::drop, opt);
}

column cast_to_utf8(const ArrowArray& array, const ArrowSchema& schema, on_invalid policy, const column_options& opt) {
  return with_rows(array, schema, opt, [&](const auto& r) { return repair_rows(r, policy, opt); });
}

column cast_sharing_input(const ArrowArray& array, const ArrowSchema& schema, on_invalid policy,
                          const column_options& opt) {
  if (is_view(schema)) return repair_sharing(checked_views(describe_view(array, schema)), policy, opt);
  const string_array s = describe(array, schema);
  if (s.large) throw error(errc::invalid_argument, "gutf8 columns: a view result cannot point into large offsets");
  return repair_sharing(checked_rows<std::int32_t>(s, opt.data_bytes), policy, opt);
}

column count_code_points(const ArrowArray& array, const ArrowSchema& schema, on_invalid policy,
                        const column_options& opt) {
  return with_rows(array, schema, opt, [&](const auto& r) { return count_rows(r, policy, opt); });
}

}  // namespace gutf8
