// Random mixed valid/invalid inputs against the oracle, for every operation and policy;
// round trips; several threads against one.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "check.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;

std::vector<std::size_t> sizes(std::mt19937_64& g) {
  std::vector<std::size_t> s = boundary_sizes(16, 5);
  for (int k = 0; k < 6; ++k) s.push_back(pick(g, 20, 6000));
  return s;
}

constexpr double defect_rates[] = {0.0, 0.002, 0.03, 0.3, 1.0};

TEST(RandomUtf8, EveryOperationMatchesReference) {
  auto g = rng(1);
  for (const double rate : defect_rates)
    for (const std::size_t size : sizes(g)) {
      const std::string in = random_text(g, size, rate);
      SCOPED_TRACE(testing::Message() << "defect rate " << rate);
      for (const operation op : utf8_operations)
        for (const error_policy p : policies) expect_reference(op, p, in, one_shot(op, p, in));
    }
}

// Inputs dense in continuation bytes and leads: long sequences, cut sequences, and
// continuation runs that stress the window path and the thread split rule.
std::string adversarial(std::mt19937_64& g, std::size_t size) {
  static constexpr unsigned char alphabet[] = {0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xDF, 0xE0,
                                               0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xC0, 'a',  '\n'};
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>(alphabet[pick(g, 0, std::size(alphabet) - 1)]);
  return s;
}

TEST(RandomUtf8, AdversarialBytesMatchReference) {
  auto g = rng(2);
  for (const std::size_t size : sizes(g)) {
    const std::string in = adversarial(g, size);
    for (const operation op : utf8_operations)
      for (const error_policy p : policies) expect_reference(op, p, in, one_shot(op, p, in));
  }
}

// The one-shot API takes the best path; here every path this CPU has, on text with and
// without defects, with its sequences cut at every chunk boundary by the random sizes.
TEST(RandomUtf8, EveryScannerPathMatchesReference) {
  auto g = rng(10);
  for (const cpu::isa level : isa_levels())
    for (int round = 0; round < 40; ++round) {
      const std::size_t size = pick(g, 1, 3000);
      const std::string in =
          round % 4 == 3 ? adversarial(g, size) : random_text(g, size, defect_rates[round % 4]);
      SCOPED_TRACE(testing::Message() << name(level) << ", round " << round);
      for (const operation op : utf8_operations)
        for (const error_policy p : policies) expect_reference(op, p, in, on_isa(op, p, in, level));
    }
}

// One defect at every offset of text made of long ASCII runs (longer than the 4 blocks
// the AVX-512 path skips at once) and multi-byte script, so
// it lands before, on and after every block boundary of every path (16, 32 and 64 bytes),
// in ASCII blocks after a cut sequence and in sequences that straddle two blocks.
TEST(RandomUtf8, OneDefectAtEveryOffsetOnEveryScannerPath) {
  auto g = rng(12);
  const std::string base = std::string(400, 'a') + random_text(g, 170, 0.0) + std::string(400, 'b');
  const std::string defects[] = {"\x80", "\xE2\x82", "\xF0\x9F", "\xED\xA0\x80", "\xC1"};
  for (const cpu::isa level : isa_levels())
    for (const std::string& defect : defects)
      for (std::size_t at = 0; at + defect.size() <= base.size(); at += level == cpu::isa::portable ? 7 : 1) {
        std::string in = base;
        in.replace(at, defect.size(), defect);
        SCOPED_TRACE(testing::Message() << name(level) << ", defect at " << at);
        for (const operation op : utf8_operations)
          for (const error_policy p : policies) expect_reference(op, p, in, on_isa(op, p, in, level));
        if (HasFailure()) return;
      }
}

// Multi-byte text at every phase against the steps of the validate walks (AVX2: 64 bytes, AVX-512:
// pairs of 64-byte vectors), with one defect around 320 (AVX-512: in the pair's second vector) or
// 384 (a step of both): the walk hands over from the last unit start before the failing step,
// which a sequence cut by the step before may have moved back by 1, 2 or 3 bytes.
TEST(RandomUtf8, SequencesCutAtEveryStepBeforeADefect) {
  std::string text;
  while (text.size() < 600) text += "\xE2\x82\xAC\xF0\x9F\x98\x80\xC3\xA9";  // 3 + 4 + 2 bytes
  constexpr std::size_t defects[] = {317, 318, 319, 320, 321, 322, 323, 381, 382, 383, 384, 385, 386, 387};
  for (const cpu::isa level : isa_levels())
    for (std::size_t shift = 0; shift < 73; ++shift)
      for (const std::size_t at : defects) {
        std::string in = std::string(shift, 'a') + text;
        in[at] = 'x';
        SCOPED_TRACE(testing::Message() << name(level) << ", shift " << shift << ", defect at " << at);
        expect_reference(operation::validate, error_policy::replace, in,
                         on_isa(operation::validate, error_policy::replace, in, level));
        if (HasFailure()) return;
      }
}

// Every size up to 300 bytes (the AVX-512 validate walk steps 128 bytes at a time) of multi-byte
// text cut anywhere, so that its end may cut a sequence, with and without a stray continuation
// byte among its last 5 bytes.
TEST(RandomUtf8, EverySizeAroundTheStepsOnEveryScannerPath) {
  auto g = rng(16);
  const std::string text = random_text(g, 400, 0.0);
  for (const cpu::isa level : isa_levels())
    for (std::size_t size = 1; size <= 300; ++size) {
      std::string in = text.substr(0, size);
      for (const bool defect : {false, true}) {
        if (defect) in[size - 1 - std::min(size - 1, size % 5)] = '\x80';
        SCOPED_TRACE(testing::Message() << name(level) << ", " << size << " bytes, defect " << defect);
        for (const operation op : {operation::validate, operation::decode})
          expect_reference(op, error_policy::replace, in, on_isa(op, error_policy::replace, in, level));
      }
      if (HasFailure()) return;
    }
}

// Single defects between clean stretches of 3.5 to 5 KB, longer than the clean run after which
// the AVX-512 unit windows (64 in a row of 64 bytes) hand back to the vector or validate steps,
// so those resume at every phase.
TEST(RandomUtf8, CleanStretchesBetweenDefectsOnEveryScannerPath) {
  auto g = rng(15);
  for (int round = 0; round < 4; ++round) {
    std::string in;
    while (in.size() < 60000) {
      in += random_text(g, pick(g, 3500, 5000), 0.0);
      in += random_defect(g);
    }
    for (const cpu::isa level : isa_levels())
      for (const operation op : utf8_operations) {
        SCOPED_TRACE(testing::Message() << name(level) << ", round " << round);
        expect_reference(op, error_policy::replace, in, on_isa(op, error_policy::replace, in, level));
      }
    if (HasFailure()) return;
  }
}

// Bursts of errors between clean stretches of every length, so that the AVX-512 repair
// windows start, run and hand back to the block path at every phase. The error kinds
// the fast paths report must be those of the portable path's byte-at-a-time walk.
TEST(RandomUtf8, ErrorBurstsOnEveryScannerPath) {
  auto g = rng(14);
  constexpr double burst_rates[] = {0.01, 0.05, 0.3};
  for (int round = 0; round < 12; ++round) {
    std::string in;
    while (in.size() < 20000) {
      in += random_text(g, pick(g, 0, 700), 0.0);
      in += random_text(g, pick(g, 1, 400), burst_rates[pick(g, 0, 2)]);
    }
    SCOPED_TRACE(testing::Message() << "round " << round);
    for (const operation op : utf8_operations)
      for (const error_policy p : policies) {
        const outcome portable = on_isa(op, p, in, cpu::isa::portable);
        expect_reference(op, p, in, portable);
        for (const cpu::isa level : isa_levels()) {
          const outcome o = on_isa(op, p, in, level);
          expect_reference(op, p, in, o);
          ASSERT_TRUE(o.stats.input.first_error && portable.stats.input.first_error);
          EXPECT_EQ(o.stats.input.first_error->kind, portable.stats.input.first_error->kind) << name(level);
        }
        if (HasFailure()) return;
      }
  }
}

// Input that ends where readable memory ends (an inaccessible page follows): no path may
// read past the end of its input, as when the CLI scans the last page of a mapped file.
TEST(RandomUtf8, NoPathReadsPastTheInput) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t room = 4 * page;
  void* area = ::mmap(nullptr, room + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(area, MAP_FAILED);
  auto* bytes = static_cast<char*>(area);
  ASSERT_EQ(::mprotect(bytes + room, page, PROT_NONE), 0);
  auto g = rng(13);
  for (const cpu::isa level : isa_levels())
    for (const std::size_t size : {1, 15, 63, 64, 65, 79, 80, 81, 127, 128, 129, 200, 1000, 4000})
      for (const double rate : {0.0, 0.01}) {
        const std::string text = random_text(g, size, rate);
        std::memcpy(bytes + room - size, text.data(), size);
        const std::string_view in(bytes + room - size, size);  // ends at the inaccessible page
        SCOPED_TRACE(testing::Message() << name(level) << ", " << size << " bytes");
        for (const operation op : utf8_operations)
          for (const error_policy p : policies) {
            internal::cpu_tuning tuning;
            tuning.level = level;
            internal::stream_core s(stream_config{op, p, false, {}}, internal::make_cpu_processor(1, tuning), true);
            std::vector<std::uint8_t> out(s.max_output(size));
            const std::size_t n =
                s.feed({reinterpret_cast<const std::uint8_t*>(in.data()), size}, true, out.data());
            expect_reference(op, p, text, {std::string(reinterpret_cast<const char*>(out.data()), n), s.stats()});
          }
      }
  ::munmap(area, room + page);
}

// Histogram counts must not double-count a chunk that falls back to the exact path.
TEST(RandomUtf8, HistogramOnEveryScannerPath) {
  auto g = rng(11);
  for (const double rate : {0.0, 0.01, 0.2}) {
    const std::string in = random_text(g, 30011, rate);
    std::vector<std::uint64_t> expected(0x110000);
    for (const ref::unit& u : ref::units(in))
      if (u.valid) ++expected[u.code_point];
    for (const cpu::isa level : isa_levels()) {
      internal::cpu_tuning tuning;
      tuning.level = level;
      internal::stream_core s(stream_config{operation::stats, error_policy::strict, true, {}},
                          internal::make_cpu_processor(1, tuning), true);
      s.feed(ubytes(in), true, nullptr);
      std::vector<std::uint64_t> got(0x110000);
      for (const code_point_count& c : s.top(0x110000)) got[c.code_point] = c.count;
      EXPECT_TRUE(got == expected) << name(level) << ", defect rate " << rate;
    }
  }
}

TEST(RandomUtf32, EncodeMatchesReference) {
  auto g = rng(3);
  for (const double rate : defect_rates)
    for (const std::size_t count : sizes(g))
      for (std::size_t ragged = 0; ragged < 4; ++ragged) {
        std::string in = random_utf32(g, count / 4, rate);
        for (std::size_t k = 0; k < ragged; ++k) in += char(pick(g, 0, 255));
        for (const error_policy p : policies)
          expect_reference(operation::encode, p, in, one_shot(operation::encode, p, in));
      }
}

TEST(RandomUtf32, EncodeOnEveryScannerPath) {
  auto g = rng(12);
  for (const cpu::isa level : isa_levels())
    for (int round = 0; round < 60; ++round) {
      std::string in = random_utf32(g, pick(g, 0, 900), defect_rates[round % 5]);
      in.append(round % 4, 'q');  // ragged tails too
      for (const error_policy p : policies)
        expect_reference(operation::encode, p, in, on_isa(operation::encode, p, in, level));
    }
}

TEST(RandomUtf32, AsciiHeavyEncode) {  // the 16-values-at-once path, with rare defects
  auto g = rng(4);
  for (const std::size_t count : sizes(g)) {
    std::string in;
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t v = pick(g, 0, 99) == 0 ? random_scalar(g) : pick(g, 0, 0x7F);
      if (pick(g, 0, 499) == 0) v = 0xDC00;
      for (int k = 0; k < 4; ++k) in += char(v >> (8 * k) & 0xFF);
    }
    for (const error_policy p : policies)
      expect_reference(operation::encode, p, in, one_shot(operation::encode, p, in));
  }
}

TEST(RoundTrip, DecodeThenEncode) {
  auto g = rng(5);
  for (const std::size_t size : sizes(g)) {
    const std::string text = random_text(g, size, 0.0);
    summary info;
    const std::u32string wide = gutf8::decode(text, error_policy::strict, &info);
    ASSERT_TRUE(info.valid());
    EXPECT_EQ(str(gutf8::encode(wide, error_policy::strict, &info)), text);
    EXPECT_TRUE(info.valid());
  }
}

TEST(RoundTrip, EncodeThenDecode) {
  auto g = rng(6);
  for (const std::size_t count : sizes(g)) {
    std::u32string wide;
    for (std::size_t i = 0; i < count; ++i) wide += random_scalar(g);
    const std::u8string narrow = gutf8::encode(wide, error_policy::strict);
    EXPECT_EQ(gutf8::decode(str(narrow), error_policy::strict), wide);
  }
}

TEST(RoundTrip, RepairedIsValidAndIdempotent) {
  auto g = rng(7);
  for (const std::size_t size : sizes(g)) {
    const std::string text = random_text(g, size, 0.1);
    for (const error_policy p : {error_policy::replace, error_policy::drop}) {
      const std::string clean = str(gutf8::repair(text, p));
      EXPECT_TRUE(gutf8::validate(bytes(clean)).valid());
      EXPECT_EQ(str(gutf8::repair(clean, p)), clean);
    }
  }
}

// Small thresholds so that inputs of a few KiB split across threads; every split point
// lands somewhere different relative to the sequences.
TEST(Threads, SplitBlocksEqualOneThread) {
  auto g = rng(8);
  for (int round = 0; round < 12; ++round) {
    internal::cpu_tuning tiny{64, 17};
    tiny.level = isa_levels()[static_cast<std::size_t>(round) % isa_levels().size()];
    const std::size_t size = pick(g, 200, 40000);
    const std::string in =
        round % 3 == 0 ? adversarial(g, size) : random_text(g, size, round % 2 ? 0.001 : 0.05);
    for (const operation op :
         {operation::validate, operation::stats, operation::decode, operation::repair, operation::encode})
      for (const error_policy p : policies) {
        const outcome single = on_threads(op, p, in, 1, tiny);
        expect_reference(op, p, in, single);
        for (const unsigned threads : {2u, 3u, 7u}) {
          SCOPED_TRACE(testing::Message() << threads << " threads, " << name(op) << " " << name(p) << ", "
                                          << name(tiny.level));
          EXPECT_TRUE(same(on_threads(op, p, in, threads, tiny), single));
        }
      }
  }
}

// The public API with its default thresholds: inputs past 1 MiB take several threads.
TEST(Threads, LargeInputThroughPublicApi) {
  auto g = rng(9);
  const std::string in = random_text(g, (1u << 20) + (3u << 18) + 12345, 0.0005);
  for (const operation op : {operation::validate, operation::stats, operation::decode, operation::repair})
    for (const error_policy p : policies) {
      options one;
      one.threads = 1;
      const outcome single = one_shot(op, p, in, one);
      expect_reference(op, p, in, single);
      for (const unsigned threads : {2u, 3u}) {
        options many;
        many.threads = threads;
        EXPECT_TRUE(same(one_shot(op, p, in, many), single))
            << threads << " threads " << name(op) << " " << name(p);
      }
    }
}

}  // namespace
