// The properties the fuzz targets check, one function per target. Each returns an empty
// string when the library agrees with the oracles, or a description of the first few
// disagreements. Shared by the libFuzzer entry points (tests/fuzz/fuzz_*.cpp, which abort on a
// non-empty answer) and by tests/cpu/regression_test.cpp, which replays the seed corpus and
// every recorded finding (tests/fuzz/corpus/<target>/) in the ordinary test suite.
//
// Oracles: tests/support/reference.hpp (UTF-8 units, Tables 3-7/3-8) for validate / stats /
// decode / repair, plus the error kind and UTF-32 encoder written below from the SPEC and
// include/gutf8/types.hpp. Nothing here calls library code to compute an expectation.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "codec/stream_core.hpp"
#include "cpu/cpu_block.hpp"
#include "gutf8/gutf8.hpp"
#include "support/reference.hpp"

namespace gutf8::fuzz {

using bytes_view = std::span<const std::uint8_t>;

// ------------------------------------------------------------------ reporting ----

class report {
 public:
  template <class A, class B>
  void eq(const std::string& what, const A& got, const B& want) {
    if (got == want) return;
    std::ostringstream os;
    os << what << ": got " << show(got) << ", want " << show(want);
    add(os.str());
  }
  void bytes_eq(const std::string& what, const std::string& got, const std::string& want) {
    if (got == want) return;
    std::size_t k = 0;
    while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
    std::ostringstream os;
    os << what << ": " << got.size() << " bytes vs " << want.size() << " expected, first difference at "
       << k << " (" << hex_around(got, k) << " vs " << hex_around(want, k) << ")";
    add(os.str());
  }
  void add(const std::string& line) {
    if (++count_ <= 12) text_ += line + '\n';
  }
  void context(std::string c) { context_ = std::move(c); }
  [[nodiscard]] std::string str() const {
    if (count_ == 0) return {};
    return context_ + ": " + std::to_string(count_) + " disagreement(s)\n" + text_;
  }

 private:
  template <class T>
  static std::string show(const T& v) {
    if constexpr (std::is_same_v<T, error_kind>) {
      return std::to_string(static_cast<int>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else {
      std::ostringstream os;
      os << v;
      return os.str();
    }
  }
  static std::string hex_around(const std::string& s, std::size_t k) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string h;
    for (std::size_t i = k >= 6 ? k - 6 : 0; i < std::min(s.size(), k + 6); ++i) {
      if (i == k) h += '|';
      h += digits[static_cast<unsigned char>(s[i]) >> 4];
      h += digits[static_cast<unsigned char>(s[i]) & 15];
      h += ' ';
    }
    return h;
  }
  std::size_t count_ = 0;
  std::string text_, context_;
};

inline std::string hex(bytes_view in, std::size_t limit = 64) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string h;
  for (std::size_t i = 0; i < std::min(in.size(), limit); ++i) {
    h += digits[in[i] >> 4];
    h += digits[in[i] & 15];
    h += ' ';
  }
  if (in.size() > limit) h += "... (" + std::to_string(in.size()) + " bytes)";
  return h;
}

// ------------------------------------------------------------------- oracles ----

inline ref::policy ref_policy(error_policy p) {
  return p == error_policy::strict ? ref::policy::strict
         : p == error_policy::drop ? ref::policy::drop
                                   : ref::policy::replace;
}

// The error_kind of an invalid UTF-8 unit, from the definitions in include/gutf8/types.hpp:
// a byte that is never a lead is stray (80..BF) or invalid (C0, C1, F5..FF); a lead whose second
// byte is a continuation byte outside the lead's range is overlong (E0, F0), a surrogate (ED) or
// too large (F4); a sequence the input ends inside is truncated_at_end; anything else truncated.
inline error_kind utf8_kind(bytes_view in, const ref::unit& u) {
  const std::uint8_t lead = in[u.offset];
  if (lead >= 0x80 && lead <= 0xBF) return error_kind::stray_continuation;
  if (lead == 0xC0 || lead == 0xC1 || lead >= 0xF5) return error_kind::invalid_byte;
  if (lead < 0x80) return error_kind::none;  // ASCII is never an error
  if (u.cut_by_end) return error_kind::truncated_at_end;
  const std::size_t next = u.offset + 1;
  if (u.length == 1 && next < in.size() && in[next] >= 0x80 && in[next] <= 0xBF) {
    if (lead == 0xE0 || lead == 0xF0) return error_kind::overlong;
    if (lead == 0xED) return error_kind::surrogate;
    if (lead == 0xF4) return error_kind::too_large;
  }
  return error_kind::truncated;
}

// UTF-8 of a scalar value, written here from the bit layout (independent of ref::utf8_of).
inline void put_utf8(std::string& s, std::uint32_t v) {
  if (v <= 0x7F) {
    s += static_cast<char>(v);
    return;
  }
  const int len = v <= 0x7FF ? 2 : v <= 0xFFFF ? 3 : 4;
  static constexpr std::uint8_t lead_bits[] = {0, 0, 0xC0, 0xE0, 0xF0};
  char buf[4];
  for (int k = len - 1; k > 0; --k) {
    buf[k] = static_cast<char>(0x80 | (v & 0x3F));
    v >>= 6;
  }
  buf[0] = static_cast<char>(lead_bits[len] | v);
  s.append(buf, static_cast<std::size_t>(len));
}

// The encode oracle (UTF-32LE bytes in): SPEC §1. A value above 0x10FFFF or in D800..DFFF is
// one error unit; 1..3 trailing bytes are one error unit at the end. Lines and columns of the
// first error count code points (README, "Decisions").
struct encode_expectation {
  std::string out;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;  // consumed: the whole input, or (strict) the first error's offset
  std::optional<error_position> first;
};

inline encode_expectation expect_encode(bytes_view in, error_policy p) {
  encode_expectation e;
  e.bytes = in.size();
  std::uint64_t line = 1, column = 1;
  for (std::size_t i = 0; i < in.size(); i += 4) {
    error_kind kind = error_kind::none;
    std::uint32_t v = 0;
    if (in.size() - i < 4) {
      kind = error_kind::ragged_tail;
    } else {
      std::memcpy(&v, &in[i], 4);  // little-endian host (types.hpp asserts it)
      if (v > 0x10FFFF) kind = error_kind::too_large;
      else if (v >= 0xD800 && v <= 0xDFFF) kind = error_kind::surrogate;
    }
    if (kind != error_kind::none) {
      if (!e.first) e.first = error_position{i, line, column, kind};
      if (p == error_policy::strict) {
        e.errors = 1;
        e.bytes = i;
        break;
      }
      ++e.errors;
      if (p == error_policy::replace) e.out += "\xEF\xBF\xBD";
    } else {
      put_utf8(e.out, v);
    }
    if (kind == error_kind::none && v == 0x0A) {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return e;
}

// --------------------------------------------------------------- runners ----

struct outcome {
  std::string out;
  text_stats stats;
};

// The whole input as one block through a CPU stream core (as the one-shot API does), on the given
// scanner path and thread count.
inline outcome run_stream_core(operation op, error_policy p, bytes_view in, unsigned threads,
                           internal::cpu_tuning tuning) {
  internal::stream_core s(stream_config{op, p, false, {}}, internal::make_cpu_processor(threads, tuning), true);
  std::vector<std::uint8_t> out(std::max<std::size_t>(s.max_output(in.size()), 1));
  const std::size_t n = s.feed(in, true, out.data());
  return {std::string(reinterpret_cast<const char*>(out.data()), n), s.stats()};
}

// The public one-shot API (best scanner path, default options but the CPU backend).
inline outcome run_one_shot(operation op, error_policy p, bytes_view in) {
  const auto b = std::as_bytes(in);
  options opt;
  opt.backend = backend::cpu;
  outcome o;
  switch (op) {
    case operation::validate:
      o.stats.input = validate(b, opt);
      break;
    case operation::stats:
      o.stats = stats(b, opt);
      break;
    case operation::decode: {
      std::vector<char32_t> buf(max_decoded_size(in.size()) + 1);
      const transcode_result r = decode(b, std::span(buf).first(buf.size() - 1), p, opt);
      o.out.assign(reinterpret_cast<const char*>(buf.data()), 4 * r.written);
      o.stats.input = r.input;
      break;
    }
    case operation::encode:
    case operation::repair: {
      const std::size_t room = op == operation::encode ? max_encoded_size(in.size()) : max_repaired_size(in.size());
      std::vector<char8_t> buf(room + 1);
      const transcode_result r = op == operation::encode ? encode(b, std::span(buf).first(room), p, opt)
                                                         : repair(b, std::span(buf).first(room), p, opt);
      o.out.assign(reinterpret_cast<const char*>(buf.data()), r.written);
      o.stats.input = r.input;
      break;
    }
  }
  return o;
}

inline const char* name(operation op) {
  constexpr const char* names[] = {"validate", "decode", "encode", "repair", "stats"};
  return names[static_cast<int>(op)];
}
inline const char* name(error_policy p) {
  constexpr const char* names[] = {"strict", "replace", "drop"};
  return names[static_cast<int>(p)];
}
inline const char* name(cpu::isa level) {
  constexpr const char* names[] = {"portable", "avx2", "avx512"};
  return names[static_cast<int>(level)];
}

inline std::vector<cpu::isa> isa_levels() {
  std::vector<cpu::isa> levels{cpu::isa::portable};
  if (cpu::best_isa() >= cpu::isa::avx2) levels.push_back(cpu::isa::avx2);
  if (cpu::best_isa() >= cpu::isa::avx512) levels.push_back(cpu::isa::avx512);
  return levels;
}

inline constexpr std::pair<operation, error_policy> utf8_cases[] = {
    {operation::validate, error_policy::replace}, {operation::stats, error_policy::replace},
    {operation::decode, error_policy::strict},    {operation::decode, error_policy::replace},
    {operation::decode, error_policy::drop},      {operation::repair, error_policy::strict},
    {operation::repair, error_policy::replace}, {operation::repair, error_policy::drop},
};
inline constexpr error_policy all_policies[] = {error_policy::strict, error_policy::replace, error_policy::drop};

inline void same_summary(report& r, const std::string& what, const summary& got, const summary& want) {
  r.eq(what + " bytes", got.bytes, want.bytes);
  r.eq(what + " errors", got.errors, want.errors);
  r.eq(what + " has first error", got.first_error.has_value(), want.first_error.has_value());
  if (got.first_error && want.first_error) {
    r.eq(what + " first offset", got.first_error->offset, want.first_error->offset);
    r.eq(what + " first line", got.first_error->line, want.first_error->line);
    r.eq(what + " first column", got.first_error->column, want.first_error->column);
    r.eq(what + " first kind", got.first_error->kind, want.first_error->kind);
  }
}

// ------------------------------------------------------ target: UTF-8 vs oracle ----

// A UTF-8 input against the oracle: every operation and policy, on every scanner path, one
// thread; the public one-shot API; and several threads with tiny split thresholds.
inline std::string check_utf8(bytes_view in) {
  report r;
  r.context("utf8 input [" + hex(in) + "]");
  const std::vector<ref::unit> units = ref::units(in);
  const ref::unit* first_bad = nullptr;
  for (const ref::unit& u : units)
    if (!u.valid) {
      first_bad = &u;
      break;
    }
  std::optional<error_position> first;
  if (first_bad) {
    const auto [line, column] = ref::line_column(in, first_bad->offset);
    first = error_position{first_bad->offset, line, column, utf8_kind(in, *first_bad)};
  }
  std::array<ref::expected, 3> want;
  for (const error_policy p : all_policies)
    want[static_cast<int>(p)] = ref::expect(in, units, ref_policy(p));

  const auto check = [&](const std::string& where, operation op, error_policy p, const outcome& o) {
    const ref::expected& e = want[static_cast<int>(p)];
    const std::string what = where + " " + name(op) + " " + name(p);
    const bool stops = p == error_policy::strict && (op == operation::decode || op == operation::repair);
    summary s;
    s.bytes = stops ? e.strict_bytes : in.size();
    s.errors = stops ? std::min<std::uint64_t>(e.errors, 1) : e.errors;
    s.first_error = first;
    same_summary(r, what, o.stats.input, s);
    if (op == operation::decode) {
      r.bytes_eq(what + " output", o.out,
                 std::string(reinterpret_cast<const char*>(e.decoded.data()), 4 * e.decoded.size()));
    } else if (op == operation::repair) {
      r.bytes_eq(what + " output", o.out, e.repaired);
    } else {
      r.eq(what + " output bytes", o.out.size(), std::size_t{0});
    }
    if (op == operation::stats) {
      for (int l = 0; l < 4; ++l)
        r.eq(what + " sequences of length " + std::to_string(l + 1), o.stats.by_length[l], e.by_length[l]);
      r.eq(what + " code points", o.stats.code_points,
           e.by_length[0] + e.by_length[1] + e.by_length[2] + e.by_length[3]);
      r.eq(what + " lines", o.stats.lines, e.lines);
    }
  };

  for (const auto& [op, p] : utf8_cases) {
    for (const cpu::isa level : isa_levels()) {
      internal::cpu_tuning tuning;
      tuning.level = level;
      check(name(level), op, p, run_stream_core(op, p, in, 1, tuning));
    }
    check("one-shot", op, p, run_one_shot(op, p, in));
  }
  // Split across 2 or 3 threads at unit boundaries (cpu_block.cpp), with tiny thresholds. One
  // case per input, chosen by its size: starting threads costs more than the scan itself.
  if (in.size() >= 48) {
    internal::cpu_tuning tiny{32, 11};
    tiny.level = isa_levels()[in.size() % isa_levels().size()];
    const auto& [op, p] = utf8_cases[(in.size() / 3) % std::size(utf8_cases)];
    const unsigned threads = 2 + in.size() % 2;
    check(std::to_string(threads) + " threads " + name(tiny.level), op, p, run_stream_core(op, p, in, threads, tiny));
  }
  return r.str();
}

// ------------------------------------------------- target: encode and round trips ----

inline std::string as_string(bytes_view in) { return {reinterpret_cast<const char*>(in.data()), in.size()}; }
inline bytes_view as_view(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The input as UTF-32LE against the encode oracle (every policy and path); then round trips:
//   * valid UTF-8 (the input with each error unit replaced, by the oracle) -> decode -> encode
//     gives that UTF-8 back, and its UTF-32 (the oracle's) encodes to it;
//   * the input's scalar values (bad ones dropped by the oracle) -> encode -> decode gives
//     those values back.
inline std::string check_encode(bytes_view in) {
  report r;
  r.context("encode input [" + hex(in) + "]");
  for (const error_policy p : all_policies) {
    const encode_expectation e = expect_encode(in, p);
    summary s{e.bytes, e.errors, e.first};
    const auto check = [&](const std::string& where, const outcome& o) {
      const std::string what = where + " encode " + name(p);
      same_summary(r, what, o.stats.input, s);
      r.bytes_eq(what + " output", o.out, e.out);
    };
    for (const cpu::isa level : isa_levels()) {
      internal::cpu_tuning tuning;
      tuning.level = level;
      check(name(level), run_stream_core(operation::encode, p, in, 1, tuning));
    }
    check("one-shot", run_one_shot(operation::encode, p, in));
    if (in.size() >= 64 && p == all_policies[in.size() / 4 % 3]) {  // one policy per input
      internal::cpu_tuning tiny{32, 11};
      tiny.level = isa_levels()[in.size() % isa_levels().size()];
      const unsigned threads = 2 + in.size() % 2;
      check(std::to_string(threads) + " threads " + name(tiny.level), run_stream_core(operation::encode, p, in, threads, tiny));
    }
  }

  // Round trip 1: valid UTF-8 through decode then encode.
  const ref::expected replaced = ref::expect(in, ref::policy::replace);
  const std::string& text = replaced.repaired;
  const outcome decoded = run_one_shot(operation::decode, error_policy::strict, as_view(text));
  r.eq("round trip: valid text decodes without error", decoded.stats.input.errors, std::uint64_t{0});
  r.bytes_eq("round trip: decode of valid text",
             decoded.out,
             std::string(reinterpret_cast<const char*>(replaced.decoded.data()), 4 * replaced.decoded.size()));
  const outcome back = run_one_shot(operation::encode, error_policy::strict, as_view(decoded.out));
  r.eq("round trip: re-encode errors", back.stats.input.errors, std::uint64_t{0});
  r.bytes_eq("round trip: decode then encode", back.out, text);

  // Round trip 2: scalar values through encode then decode.
  const encode_expectation dropped = expect_encode(in, error_policy::drop);
  std::string scalars;  // the input's 4-byte values that are scalar values, in order
  for (std::size_t i = 0; i + 4 <= in.size(); i += 4) {
    std::uint32_t v;
    std::memcpy(&v, &in[i], 4);
    if (v <= 0x10FFFF && (v < 0xD800 || v > 0xDFFF)) scalars.append(reinterpret_cast<const char*>(&in[i]), 4);
  }
  const outcome enc = run_one_shot(operation::encode, error_policy::strict, as_view(scalars));
  r.eq("round trip: scalar values encode without error", enc.stats.input.errors, std::uint64_t{0});
  r.bytes_eq("round trip: encode of scalar values", enc.out, dropped.out);
  const outcome dec = run_one_shot(operation::decode, error_policy::strict, as_view(enc.out));
  r.eq("round trip: encoded text is valid", dec.stats.input.errors, std::uint64_t{0});
  r.bytes_eq("round trip: encode then decode", dec.out, scalars);
  return r.str();
}

// ------------------------------------------------- target: stream vs one-shot ----

// Input layout: byte 0 = header; (header & 15) chunk-length bytes; the rest is the text.
//   header bit 4: feed_into/finish_into (caller memory) instead of feed/finish (vector)
//   header bit 6: 2 threads instead of 1
// (The histogram / top() is left to tests/cpu: one top() scans 0x110000 counters, which would
// make this target ten times slower.)
// Chunk lengths are used in turn, cycling; 0 feeds an empty chunk (if every length is 0, the
// text goes in 1 byte at a time).
struct stream_input {
  std::uint8_t header = 0;
  std::vector<std::size_t> lengths;
  bytes_view text;
};

inline stream_input parse_stream_input(bytes_view data) {
  stream_input s;
  if (data.empty()) return s;
  s.header = data[0];
  const std::size_t m = std::min<std::size_t>(s.header & 15u, data.size() - 1);
  for (std::size_t k = 0; k < m; ++k) s.lengths.push_back(data[1 + k]);
  s.text = data.subspan(1 + m);
  if (s.lengths.empty() || std::all_of(s.lengths.begin(), s.lengths.end(), [](std::size_t n) { return n == 0; }))
    s.lengths.push_back(1);
  return s;
}

inline std::string check_stream(bytes_view data) {
  const stream_input si = parse_stream_input(data);
  report r;
  std::string lengths;
  for (std::size_t n : si.lengths) lengths += std::to_string(n) + ' ';
  r.context("stream header " + std::to_string(si.header) + ", chunk lengths [ " + lengths + "], text [" +
            hex(si.text) + "]");
  const bool into = si.header & 16u;
  options opt;
  opt.backend = backend::cpu;
  opt.threads = si.header & 64u ? 2 : 1;

  std::vector<std::pair<operation, error_policy>> cases(std::begin(utf8_cases), std::end(utf8_cases));
  for (const error_policy p : all_policies) cases.emplace_back(operation::encode, p);
  for (const auto& [op, p] : cases) {
    const std::string what = std::string(name(op)) + " " + name(p);
    stream st(stream_config{op, p, false, opt});
    std::string out;
    bool stopped_seen = false;
    const auto take = [&](bytes_view chunk, bool last) {
      const auto b = std::as_bytes(chunk);
      if (into) {
        std::vector<std::byte> buf(st.max_output(last ? 0 : chunk.size()) + 1);
        const std::size_t n = last ? st.finish_into(std::span(buf).first(buf.size() - 1))
                                   : st.feed_into(b, std::span(buf).first(buf.size() - 1));
        out.append(reinterpret_cast<const char*>(buf.data()), n);
      } else {
        std::vector<std::byte> v;
        const bool going = last ? st.finish(v) : st.feed(b, v);
        if (going == st.stopped()) r.add(what + ": feed/finish result disagrees with stopped()");
        out.append(reinterpret_cast<const char*>(v.data()), v.size());
      }
      if (stopped_seen && !st.stopped()) r.add(what + ": stopped() went back to false");
      stopped_seen = st.stopped();
    };
    for (std::size_t i = 0, k = 0; i < si.text.size(); ++k) {
      const std::size_t n = std::min(si.lengths[k % si.lengths.size()], si.text.size() - i);
      take(si.text.subspan(i, n), false);
      i += n;
    }
    take({}, true);

    const outcome whole = run_one_shot(op, p, si.text);
    r.bytes_eq(what + " streamed output", out, whole.out);
    same_summary(r, what + " streamed", st.stats().input, whole.stats.input);
    r.eq(what + " streamed code points", st.stats().code_points, whole.stats.code_points);
    r.eq(what + " streamed lines", st.stats().lines, whole.stats.lines);
    for (int l = 0; l < 4; ++l)
      r.eq(what + " streamed length " + std::to_string(l + 1), st.stats().by_length[l], whole.stats.by_length[l]);
    const bool stops = p == error_policy::strict && op != operation::validate && op != operation::stats;
    r.eq(what + " stopped()", st.stopped(), stops && whole.stats.input.errors > 0);
  }
  return r.str();
}

}  // namespace gutf8::fuzz
