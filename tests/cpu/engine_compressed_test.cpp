// Compressed inputs and outputs through the input engine (src/engine/compressed.*): every format, in
// one member or several (characters and errors cut across members, members made by the standard
// tools and by gutf8's own part compressor), as a file, in memory and through a pipe, for every
// operation and policy, give what the one-shot API gives for the decompressed text; outputs
// compressed by the run decompress with the standard tools to the one-shot output; a corrupt or
// truncated input fails alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "check.hpp"
#include "compress/compressor.hpp"
#include "compress_support.hpp"
#include "engine/buffers.hpp"
#include "engine_support.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
namespace cz = gutf8::internal::compress;
using test::compress::all_formats;
using test::compress::tool_compress;

// The text in `members` members cut inside characters: by the format's tool, or by gutf8's part
// compressor (gzip members that record their size, zstd and lz4 frames with their content size).
std::string members(cz::format f, const std::string& text, std::size_t count, bool own) {
  const auto pieces = test::compress::cut(text, test::compress::inside_characters(text, count - 1));
  std::string all;
  cz::part_compressor pc(f);
  for (const std::string& p : pieces) {
    if (!own) {
      all += tool_compress(f, p);
      continue;
    }
    std::vector<std::uint8_t> out;
    pc.append(test::compress::ubytes(p), out);
    all.append(reinterpret_cast<const char*>(out.data()), out.size());
  }
  return all;
}

// A pipe whose write end a thread fills in uneven writes.
class fed_pipe {
 public:
  explicit fed_pipe(std::string bytes) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_ = fds[0];
    writer_ = std::jthread([bytes = std::move(bytes), fd = fds[1]] {
      for (std::size_t at = 0, step = 3; at < bytes.size(); step = step * 7 % 4001 + 1) {
        const ssize_t w = ::write(fd, bytes.data() + at, std::min(step, bytes.size() - at));
        if (w <= 0) break;
        at += static_cast<std::size_t>(w);
      }
      ::close(fd);
    });
  }
  fed_pipe(const fed_pipe&) = delete;
  fed_pipe& operator=(const fed_pipe&) = delete;
  ~fed_pipe() {
    ::close(read_);
    writer_.join();
  }
  [[nodiscard]] int fd() const { return read_; }

 private:
  int read_ = -1;
  std::jthread writer_;
};

run_config config_for(operation op, error_policy p, std::uint64_t chunk) {
  run_config c;
  c.stream.operation = op;
  c.stream.policy = p;
  c.stream.backend.backend = backend::cpu;
  c.piece_bytes = 1000;
  c.chunk_bytes = chunk;
  return c;
}

kept_run run_inputs(const std::vector<input>& inputs, const run_config& config) {
  internal::engine_tuning t;
  t.cpu_workers = 3;
  kept_run kept;
  internal::run_engine(inputs, config, kept, t);
  EXPECT_TRUE(kept.order_kept);
  return kept;
}

outcome got_of(const kept_run& k, std::size_t index) {
  const auto it = k.by_input.find(index);
  if (it == k.by_input.end() || !it->second.report) return {};
  return outcome{it->second.out, it->second.report->stats};
}

// Texts whose errors and characters fall on members' seams: UTF-8, or UTF-32 for encode.
std::vector<std::string> texts(std::mt19937_64& g, operation op) {
  if (op == operation::encode) return {random_utf32(g, 3001, 0.0), random_utf32(g, 2003, 0.02)};
  std::string late = random_text(g, 9007, 0.0) + "\xE2\x82" + random_text(g, 700, 0.0) + "\n";
  return {random_text(g, 13001, 0.0), random_text(g, 7013, 0.02), late, std::string(300, '\x80') + "\xF0\x9F"};
}

// Every input form of one compressed text gives the one-shot outcome of the text.
void expect_every_source(const std::string& compressed, cz::format f, const outcome& want, const run_config& c) {
  const temp_file file(compressed);
  const fed_pipe pipe(compressed);
  const std::vector<input> ins{input::file(file.path()), input::memory(std::as_bytes(std::span(compressed)), "mem"),
                               input::descriptor(pipe.fd(), "pipe")};
  const kept_run r = run_inputs(ins, c);
  for (std::size_t i = 0; i < ins.size(); ++i) {
    SCOPED_TRACE(ins[i].name());
    EXPECT_TRUE(same(got_of(r, i), want));
    ASSERT_TRUE(r.by_input.at(i).report);
    EXPECT_EQ(r.by_input.at(i).report->compressed, static_cast<compression>(f));
  }
}

class EngineCompressed : public testing::TestWithParam<cz::format> {};

TEST_P(EngineCompressed, EveryOperationEqualsOneShotOfTheText) {
  const cz::format f = GetParam();
  auto g = rng(71 + static_cast<int>(f));
  for (const operation op : {operation::validate, operation::decode, operation::encode, operation::repair}) {
    for (const std::string& text : texts(g, op)) {
      for (const auto& [count, own] : {std::pair{1, false}, {3, false}, {4, true}}) {
        const std::string compressed = members(f, text, count, own);
        for (const auto& [o, p] : operations_and_policies) {
          if (o != op && !(op == operation::validate && o == operation::stats)) continue;
          const outcome want = one_shot(o, p, text);
          for (const std::uint64_t chunk : {std::uint64_t{61}, std::uint64_t{4099}}) {
            SCOPED_TRACE(testing::Message() << name(o) << '/' << name(p) << ", " << text.size() << " bytes in "
                                            << count << (own ? " own" : " tool") << " members, chunks of " << chunk);
            expect_every_source(compressed, f, want, config_for(o, p, chunk));
          }
        }
      }
    }
  }
}

// Error lists need every byte in one stream: a compressed input is then read in order.
TEST_P(EngineCompressed, ListedErrorsCountInTheText) {
  const cz::format f = GetParam();
  auto g = rng(91);
  const std::string text = random_text(g, 6007, 0.03);
  run_config c = config_for(operation::validate, error_policy::strict, 997);
  c.stream.max_listed_errors = 5;
  const temp_file file(members(f, text, 3, true));
  const kept_run r = run_inputs({input::file(file.path())}, c);
  ASSERT_TRUE(r.by_input.at(0).report);
  const auto& listed = r.by_input.at(0).report->listed_errors;
  const std::vector<error_unit> want = list_errors(bytes(text), 5);
  ASSERT_EQ(listed.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(listed[i], want[i]);
}

// A damaged input fails alone, naming the compressed position; the inputs after it go on.
TEST_P(EngineCompressed, CorruptAndTruncatedInputsFailAlone) {
  const cz::format f = GetParam();
  auto g = rng(93);
  const std::string text = random_text(g, 5003, 0.0);
  const std::string good = members(f, text, 2, false);
  const std::string truncated = good.substr(0, good.size() - 7);
  const temp_file a(truncated), b(good);
  for (const operation op : {operation::validate, operation::repair}) {
    const kept_run r = run_inputs({input::file(a.path()), input::file(b.path())}, config_for(op, error_policy::replace, 1021));
    ASSERT_TRUE(r.by_input.at(0).failure);
    EXPECT_EQ(r.by_input.at(0).code, errc::io_failure);
    EXPECT_NE(r.by_input.at(0).failure->find("compressed byte"), std::string::npos) << *r.by_input.at(0).failure;
    EXPECT_TRUE(same(got_of(r, 1), one_shot(op, error_policy::replace, text)));
  }
}

// Outputs compressed by the run decompress with the format's tool to the one-shot output; an input
// without output gives an empty file of the format.
TEST_P(EngineCompressed, CompressedOutputsDecompressWithTheTool) {
  const cz::format f = GetParam();
  auto g = rng(97);
  for (const std::string& text : {random_text(g, 20011, 0.01), std::string()}) {
    const std::string compressed = members(cz::format::gzip, text, text.empty() ? 1 : 3, true);
    for (const std::uint64_t chunk : {std::uint64_t{61}, std::uint64_t{65539}}) {
      run_config c = config_for(operation::repair, error_policy::replace, chunk);
      c.compress_output.format = static_cast<compression>(f);
      const temp_file plain(text), packed(compressed);
      const kept_run r = run_inputs({input::file(plain.path()), input::file(packed.path())}, c);
      const std::string want = one_shot(operation::repair, error_policy::replace, text).out;
      for (std::size_t i = 0; i < 2; ++i) {
        const auto verdict = test::compress::tool_decompress(f, r.by_input.at(i).out);
        EXPECT_TRUE(verdict.ok) << "input " << i << ", chunks of " << chunk;
        EXPECT_TRUE(same_bytes(verdict.text, want)) << "input " << i << ", chunks of " << chunk;
      }
    }
  }
}

// Members of 1 to 5 bytes: parts shorter than a character, continuations alone, errors that span
// several parts, in gutf8's own members of every format.
TEST_P(EngineCompressed, TinyMembersEqualOneShot) {
  const cz::format f = GetParam();
  auto g = rng(101);
  const std::string text = random_text(g, 397, 0.05) + "\xF0\x9F\x98" + std::string(7, '\x80') + "\xE2\x82\xAC\xF4";
  std::string compressed;
  cz::part_compressor pc(f);
  for (std::size_t at = 0, k = 0; at < text.size(); ++k) {
    const std::size_t n = std::min<std::size_t>(1 + k * 7 % 5, text.size() - at);
    std::vector<std::uint8_t> out;
    pc.append(test::compress::ubytes(text.substr(at, n)), out);
    compressed.append(reinterpret_cast<const char*>(out.data()), out.size());
    at += n;
  }
  for (const auto& [o, p] : operations_and_policies) {
    if (o == operation::encode) continue;
    // Small chunks group few parts into one task: most seams fall between tasks.
    for (const std::uint64_t chunk : {std::uint64_t{16}, std::uint64_t{61}}) {
      SCOPED_TRACE(testing::Message() << name(o) << '/' << name(p) << ", chunks of " << chunk);
      expect_every_source(compressed, f, one_shot(o, p, text), config_for(o, p, chunk));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, EngineCompressed, testing::ValuesIn(all_formats), test::compress::param_name);

// Bytes as they are: a compressed file validated as its bytes (decompress = false).
TEST(EngineCompressedOff, BytesAsTheyAre) {
  const std::string compressed = members(cz::format::zstd, "h\xC3\xA9llo w\xC3\xB6rld\n", 1, false);
  run_config c = config_for(operation::validate, error_policy::strict, 4099);
  c.decompress = false;
  const temp_file file(compressed);
  const kept_run r = run_inputs({input::file(file.path())}, c);
  EXPECT_TRUE(same(got_of(r, 0), one_shot(operation::validate, error_policy::strict, compressed)));
  EXPECT_EQ(r.by_input.at(0).report->compressed, compression::none);
}

TEST(EngineCompressedOff, TextAtCountsInTheText) {
  auto g = rng(99);
  const std::string text = random_text(g, 9001, 0.0);
  const std::string compressed = members(cz::format::xz, text, 2, false);
  const temp_file file(compressed);
  for (const std::uint64_t at : {std::uint64_t{0}, std::uint64_t{4507}, std::uint64_t{8995}}) {
    const auto got = text_at(input::file(file.path()), at, 10);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(got.data()), got.size()), text.substr(at, 10));
  }
  const auto raw = text_at(input::file(file.path()), 0, 6, false);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(raw.data()), raw.size()), compressed.substr(0, 6));
}

// A worker's outputs come back for reuse: a buffer handed back serves the next request it holds, a
// request none holds gets a fresh one, the largest `keep` idle ones are kept, and a hand-back that
// outlives the recycler frees its buffer.
TEST(EngineRecycledOutputs, HandedBackBuffersServeTheNextRequests) {
  std::function<void()> late;
  {
    internal::recycled_outputs outputs(2);
    EXPECT_EQ(outputs.acquire(0).first, nullptr);
    auto [a, give_a] = outputs.acquire(1000);
    std::fill_n(a, 1000, std::uint8_t{0x5A});
    give_a();
    auto [b, give_b] = outputs.acquire(1100);  // within the eighth more that a was made with
    EXPECT_EQ(b, a);
    EXPECT_EQ(b[999], 0x5A) << "the same memory, not cleared";
    auto [c, give_c] = outputs.acquire(999);  // none idle: fresh (999 + 124 bytes)
    EXPECT_NE(c, a);
    give_c();
    give_b();
    auto [d, give_d] = outputs.acquire(17);  // the smallest idle one that holds it
    EXPECT_EQ(d, c);
    give_d();
    auto [x, give_x] = outputs.acquire(5003);
    auto [y, give_y] = outputs.acquire(6007);
    auto [z, give_z] = outputs.acquire(7001);
    for (std::uint8_t* p : {x, y, z}) EXPECT_TRUE(p != a && p != c);
    give_x();
    give_z();
    give_y();  // five idle: the two largest stay (x, the smallest that would hold 5003, is gone)
    auto [e, give_e] = outputs.acquire(5003);
    EXPECT_EQ(e, y);
    auto [f, give_f] = outputs.acquire(5003);
    EXPECT_EQ(f, z);
    auto [g, give_g] = outputs.acquire(1);  // none idle: fresh
    EXPECT_TRUE(g != y && g != z);
    give_e();
    give_f();
    late = std::move(give_g);
  }
  late();  // after the recycler: frees (ASan: no leak, no use after free)
}

}  // namespace
