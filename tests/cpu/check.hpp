// Runs an operation through the one-shot API or an internal stream core and compares what it
// reports with the oracle (tests/support/reference.hpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "codec/stream_core.hpp"
#include "cpu/cpu_block.hpp"
#include "generators.hpp"
#include "gutf8/gutf8.hpp"

namespace gutf8::test {

struct outcome {
  std::string out;   // output bytes (UTF-32LE for decode)
  text_stats stats;  // stats.input is the summary every operation reports
  friend bool operator==(const outcome&, const outcome&) = default;
};

// Equal byte strings, or where they part (GoogleTest would print megabytes otherwise).
inline testing::AssertionResult same_bytes(const std::string& got, const std::string& want) {
  if (got == want) return testing::AssertionSuccess();
  const auto k = static_cast<std::size_t>(
      std::mismatch(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(std::min(got.size(), want.size())),
                    want.begin())
          .first -
      got.begin());
  auto f = testing::AssertionFailure()
           << "sizes " << got.size() << " vs " << want.size() << ", first difference at byte " << k << ":";
  for (const std::string* s : {&got, &want}) {
    f << " [";
    for (std::size_t i = k >= 8 ? k - 8 : 0; i < std::min(s->size(), k + 8); ++i)
      f << (i == k ? " |" : " ") << std::hex << int(static_cast<unsigned char>((*s)[i])) << std::dec;
    f << " ]";
  }
  return f;
}

inline std::string show(const summary& s) {
  std::ostringstream os;
  os << "{bytes " << s.bytes << ", errors " << s.errors;
  if (s.first_error)
    os << ", first at " << s.first_error->offset << " line " << s.first_error->line << " column "
       << s.first_error->column << " kind " << int(s.first_error->kind);
  os << "}";
  return os.str();
}

inline testing::AssertionResult same(const outcome& got, const outcome& want) {
  if (got == want) return testing::AssertionSuccess();
  auto f = testing::AssertionFailure()
           << "summary " << show(got.stats.input) << " vs " << show(want.stats.input) << "; code points "
           << got.stats.code_points << " vs " << want.stats.code_points << "; lines " << got.stats.lines
           << " vs " << want.stats.lines;
  if (const auto bytes_same = same_bytes(got.out, want.out); !bytes_same)
    f << "; output " << bytes_same.message();
  return f;
}

inline constexpr operation utf8_operations[] = {operation::validate, operation::stats, operation::decode,
                                                operation::repair};
inline constexpr error_policy policies[] = {error_policy::strict, error_policy::replace, error_policy::drop};
// Every operation with every policy it distinguishes (validate and stats never stop).
inline constexpr std::pair<operation, error_policy> operations_and_policies[] = {
    {operation::validate, error_policy::strict}, {operation::stats, error_policy::strict},
    {operation::decode, error_policy::strict},   {operation::decode, error_policy::replace},
    {operation::decode, error_policy::drop},     {operation::repair, error_policy::strict},
    {operation::repair, error_policy::replace}, {operation::repair, error_policy::drop},
    {operation::encode, error_policy::strict},   {operation::encode, error_policy::replace},
    {operation::encode, error_policy::drop}};

inline const char* name(operation op) {
  constexpr const char* names[] = {"validate", "decode", "encode", "repair", "stats"};
  return names[static_cast<int>(op)];
}
inline const char* name(error_policy p) {
  constexpr const char* names[] = {"strict", "replace", "drop"};
  return names[static_cast<int>(p)];
}

inline outcome one_shot(operation op, error_policy p, const std::string& in, const options& opt = {}) {
  outcome o;
  const auto take = [&o](const auto& buffer, const transcode_result& r, std::size_t unit) {
    o.out.assign(reinterpret_cast<const char*>(buffer.data()), r.written * unit);
    o.stats.input = r.input;
  };
  switch (op) {
    case operation::validate:
      o.stats.input = validate(bytes(in), opt);
      break;
    case operation::stats:
      o.stats = stats(bytes(in), opt);
      break;
    case operation::decode: {
      std::u32string buffer(max_decoded_size(in.size()), U'\0');
      take(buffer, decode(bytes(in), std::span(buffer), p, opt), 4);
      break;
    }
    case operation::encode: {
      std::u8string buffer(max_encoded_size(in.size()), u8'\0');
      take(buffer, encode(bytes(in), std::span(buffer), p, opt), 1);
      break;
    }
    case operation::repair: {
      std::u8string buffer(max_repaired_size(in.size()), u8'\0');
      take(buffer, repair(bytes(in), std::span(buffer), p, opt), 1);
      break;
    }
  }
  return o;
}

// The whole input as one block through an internal stream core, with CPU tuning that makes
// even small inputs run on several threads.
inline outcome on_threads(operation op, error_policy p, const std::string& in, unsigned threads,
                          internal::cpu_tuning tuning) {
  internal::stream_core s(stream_config{op, p, false, {}}, internal::make_cpu_processor(threads, tuning), true);
  std::vector<std::uint8_t> out(s.max_output(in.size()));
  const std::size_t n = s.feed(ubytes(in), true, out.data());
  return {std::string(reinterpret_cast<const char*>(out.data()), n), s.stats()};
}

// Every scanner path this CPU can run, best last.
inline std::vector<cpu::isa> isa_levels() {
  std::vector<cpu::isa> levels{cpu::isa::portable};
  if (cpu::best_isa() >= cpu::isa::avx2) levels.push_back(cpu::isa::avx2);
  if (cpu::best_isa() >= cpu::isa::avx512) levels.push_back(cpu::isa::avx512);
  return levels;
}
inline const char* name(cpu::isa level) {
  constexpr const char* names[] = {"portable", "avx2", "avx512"};
  return names[static_cast<int>(level)];
}

// One thread, the given scanner path.
inline outcome on_isa(operation op, error_policy p, const std::string& in, cpu::isa level) {
  internal::cpu_tuning tuning;
  tuning.level = level;
  return on_threads(op, p, in, 1, tuning);
}

inline ref::policy ref_policy(error_policy p) {
  return p == error_policy::strict ? ref::policy::strict
         : p == error_policy::drop ? ref::policy::drop
                                   : ref::policy::replace;
}

inline void expect_first_error(const summary& got, std::optional<std::size_t> offset,
                               std::pair<std::uint64_t, std::uint64_t> line_column) {
  ASSERT_EQ(got.first_error.has_value(), offset.has_value());
  if (!offset) return;
  EXPECT_EQ(got.first_error->offset, *offset);
  EXPECT_EQ(got.first_error->line, line_column.first);
  EXPECT_EQ(got.first_error->column, line_column.second);
}

// units: the oracle's split of a UTF-8 input when the caller already has it.
inline void expect_reference(operation op, error_policy p, const std::string& in, const outcome& o,
                             const std::vector<ref::unit>* units = nullptr) {
  SCOPED_TRACE(testing::Message() << name(op) << " " << name(p) << ", " << in.size() << " bytes");
  const bool stops = p == error_policy::strict && op != operation::validate && op != operation::stats;
  const summary& got = o.stats.input;
  if (op == operation::encode) {
    const ref::expected_encode e = ref::expect_encode(ubytes(in), ref_policy(p));
    EXPECT_TRUE(same_bytes(o.out, e.encoded));
    EXPECT_EQ(got.errors, stops ? std::min<std::uint64_t>(e.errors, 1) : e.errors);
    EXPECT_EQ(got.bytes, stops ? e.strict_bytes : in.size());
    expect_first_error(got, e.first_error, {e.line, e.column});
    if (e.first_error && got.first_error) {
      EXPECT_EQ(got.first_error->kind == error_kind::ragged_tail, in.size() - *e.first_error < 4);
    }
    return;
  }
  const ref::expected e =
      units ? ref::expect(ubytes(in), *units, ref_policy(p)) : ref::expect(in, ref_policy(p));
  EXPECT_EQ(got.errors, stops ? std::min<std::uint64_t>(e.errors, 1) : e.errors);
  EXPECT_EQ(got.bytes, stops ? e.strict_bytes : in.size());
  expect_first_error(got, e.first_error,
                     e.first_error ? ref::line_column(ubytes(in), *e.first_error)
                                   : std::pair<std::uint64_t, std::uint64_t>{});
  if (e.first_error && got.first_error) {
    EXPECT_EQ(got.first_error->kind == error_kind::truncated_at_end, e.first_cut_by_end);
  }
  if (op == operation::decode)
    EXPECT_TRUE(same_bytes(
        o.out, std::string(reinterpret_cast<const char*>(e.decoded.data()), 4 * e.decoded.size())));
  else if (op == operation::repair)
    EXPECT_TRUE(same_bytes(o.out, e.repaired));
  else
    EXPECT_TRUE(o.out.empty());
  if (op == operation::stats) {
    for (int l = 0; l < 4; ++l) EXPECT_EQ(o.stats.by_length[l], e.by_length[l]) << "length " << l + 1;
    EXPECT_EQ(o.stats.code_points, e.by_length[0] + e.by_length[1] + e.by_length[2] + e.by_length[3]);
    EXPECT_EQ(o.stats.lines, e.lines);
  }
}

}  // namespace gutf8::test
