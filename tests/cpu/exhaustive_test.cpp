// Every input of 1, 2 and 3 bytes, and every 4-byte input that starts with F0..F4, as a
// whole input on its own: validity, error count, first error (offset, cut-by-end) and the
// replace/drop decodes against the oracle. Then the same sequences back to back, so that
// the 16-byte vector path sees them too. Split by lead byte so ctest can run them in
// parallel; each case also spreads its work over the hardware threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "check.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;

std::string hex(const std::uint8_t* p, std::size_t n) {
  std::string s;
  char buf[4];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02X ", p[i]);
    s += buf;
  }
  return s;
}

// What the library must report for one input, from the oracle's units.
struct verdict {
  std::uint64_t errors = 0;
  std::size_t first = SIZE_MAX;
  bool cut = false;
  char32_t replaced[4]{}, dropped[4]{};
  std::size_t n_replaced = 0, n_dropped = 0;
};

verdict oracle(const std::uint8_t* in, std::size_t n) {
  verdict v;
  for (const ref::unit& u : ref::units(std::span(in, n))) {
    if (u.valid) {
      v.replaced[v.n_replaced++] = u.code_point;
      v.dropped[v.n_dropped++] = u.code_point;
      continue;
    }
    if (v.errors++ == 0) v.first = u.offset, v.cut = u.cut_by_end;
    v.replaced[v.n_replaced++] = U'\uFFFD';
  }
  return v;
}

// Empty when the library agrees with the oracle on this input.
std::string check(const std::uint8_t* in, std::size_t n) {
  const verdict want = oracle(in, n);
  const auto span = std::as_bytes(std::span(in, n));
  options one;
  one.threads = 1;
  const auto same_errors = [&want](const summary& s) {
    return s.errors == want.errors &&
           (s.errors == 0 || (s.first_error->offset == want.first &&
                              (s.first_error->kind == error_kind::truncated_at_end) == want.cut));
  };
  // validate is a separate instantiation of the scanner; the 84M 4-byte inputs skip it
  // (their replace and drop decodes report the same count and first error) to save time.
  if (n < 4 && !same_errors(validate(span, one))) return "validate: error count or first error";
  char32_t out[4];
  const transcode_result r = decode(span, std::span(out, n), error_policy::replace, one);
  if (r.written != want.n_replaced || !std::equal(out, out + r.written, want.replaced)) return "replace";
  if (!same_errors(r.input)) return "replace: error count or first error";
  const transcode_result d = decode(span, std::span(out, n), error_policy::drop, one);
  if (!same_errors(d.input)) return "drop: error count or first error";
  if (d.written != want.n_dropped || !std::equal(out, out + d.written, want.dropped)) return "drop";
  return {};
}

// Runs check() on every input `prefix_byte b1 .. bn` with the first byte in [lo, hi].
void exhaustive(unsigned lo, unsigned hi, std::size_t length) {
  const std::size_t tails = std::size_t{1} << (8 * (length - 1));
  const std::size_t work = (hi - lo + 1) * 256;  // (lead, next byte) pairs, or leads alone
  std::atomic<std::size_t> next{0};
  std::mutex lock;
  std::vector<std::string> failures;
  const auto worker = [&] {
    std::uint8_t in[4];
    for (std::size_t item; (item = next++) < work;) {
      const std::size_t lead = lo + item / 256, second = item % 256;
      if (length == 1 && second != 0) continue;
      const std::size_t rest = length == 1 ? 1 : tails / 256;
      for (std::size_t t = 0; t < rest; ++t) {
        in[0] = std::uint8_t(lead);
        if (length > 1) in[1] = std::uint8_t(second);
        for (std::size_t k = 2; k < length; ++k) in[k] = std::uint8_t(t >> (8 * (length - 1 - k)));
        if (std::string why = check(in, length); !why.empty()) {
          const std::scoped_lock guard(lock);
          if (failures.size() < 10) failures.push_back(hex(in, length) + ": " + why);
        }
      }
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned k = 1; k < std::max(1u, std::thread::hardware_concurrency()); ++k) pool.emplace_back(worker);
  worker();
  pool.clear();
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

TEST(Exhaustive, OneAndTwoBytes) {
  exhaustive(0x00, 0xFF, 1);
  exhaustive(0x00, 0xFF, 2);
}
TEST(Exhaustive, ThreeBytes_00_7F) { exhaustive(0x00, 0x7F, 3); }
TEST(Exhaustive, ThreeBytes_80_DF) { exhaustive(0x80, 0xDF, 3); }
TEST(Exhaustive, ThreeBytes_E0_EF) { exhaustive(0xE0, 0xEF, 3); }
TEST(Exhaustive, ThreeBytes_F0_FF) { exhaustive(0xF0, 0xFF, 3); }
TEST(Exhaustive, FourBytes_F0) { exhaustive(0xF0, 0xF0, 4); }
TEST(Exhaustive, FourBytes_F1) { exhaustive(0xF1, 0xF1, 4); }
TEST(Exhaustive, FourBytes_F2) { exhaustive(0xF2, 0xF2, 4); }
TEST(Exhaustive, FourBytes_F3) { exhaustive(0xF3, 0xF3, 4); }
TEST(Exhaustive, FourBytes_F4) { exhaustive(0xF4, 0xF4, 4); }

// The same sequences back to back in blocks of 64 KiB-ish: units now run across the
// sequences, and the window path meets every lead/continuation pattern.
void back_to_back(const std::string& block) {
  const std::vector<ref::unit> units = ref::units(block);
  for (const cpu::isa level : isa_levels()) {
    SCOPED_TRACE(name(level));
    for (const operation op : {operation::validate, operation::decode})
      expect_reference(op, error_policy::replace, block, on_isa(op, error_policy::replace, block, level),
                       &units);
  }
}

TEST(Exhaustive, ThreeByteSequencesBackToBack) {
  for (unsigned lead = 0; lead < 256; lead += 1) {
    std::string block;
    for (unsigned t = 0; t < 65536; ++t) {
      block += char(lead);
      block += char(t >> 8);
      block += char(t & 0xFF);
      if (t % 7 == 0) block += 'a';  // ASCII between some, so that windows also validate
    }
    back_to_back(block);
  }
}

TEST(Exhaustive, FourByteSequencesBackToBack) {
  constexpr unsigned char thirds[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                      0xA0, 0xBF, 0xC2, 0xE0, 0xF0, 0xF4, 0xFF};
  for (unsigned lead = 0xF0; lead <= 0xF4; ++lead)
    for (const unsigned char third : thirds) {
      std::string block;
      for (unsigned t = 0; t < 65536; ++t) {
        block += char(lead);
        block += char(t >> 8);
        block += char(third);
        block += char(t & 0xFF);
      }
      back_to_back(block);
    }
}

}  // namespace
