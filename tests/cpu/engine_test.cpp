// The input engine (src/engine/): inputs of every kind through CPU workers and workers that take
// runs of many pieces as the GPU lanes do (here CPU processors that read their runs with pread, so
// the mix runs without a GPU), finishing in forced orders, failing on purpose, give per input
// exactly what the one-shot API gives for that input alone: output, summary, first error with
// line and column, stats; in input order.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <tuple>
#include <utility>

#include "check.hpp"
#include "codec/boundary.hpp"
#include "engine_support.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
using internal::engine_tuning;
using internal::piece_run;

struct mix {
  const char* name;
  unsigned cpu_workers;
  std::vector<std::uint64_t> batch_pieces;  // one batch worker each
};

const mix mixes[] = {
    {"cpu only", 3, {}},
    {"batches only", 0, {5, 7}},
    {"cpu and batches", 2, {4, 9}},
};

run_config config_for(operation op, error_policy p, std::uint64_t piece_bytes, read_method read = read_method::map) {
  run_config c;
  c.stream.operation = op;
  c.stream.policy = p;
  c.stream.backend.backend = backend::cpu;
  c.piece_bytes = piece_bytes;
  c.piece_growth = 1;  // pieces of exactly this size on any machine (GrownPieces* tests grow them)
  c.chunk_bytes = std::max<std::uint64_t>(piece_bytes, 16);
  c.read = read;
  return c;
}

engine_tuning tuning_for(const mix& m, std::uint64_t seed, bool delays) {
  engine_tuning t;
  t.cpu_workers = m.cpu_workers;
  const std::vector<std::uint64_t> batches = m.batch_pieces;
  t.extra_workers = [batches](const internal::run_context& run, std::size_t first) {
    std::vector<std::unique_ptr<internal::worker>> w;
    for (const std::uint64_t n : batches) w.push_back(std::make_unique<batch_worker>(run, first + w.size(), n));
    return w;
  };
  if (delays) {
    // Runs that start on an odd piece wait a little: later runs overtake earlier ones.
    t.hooks.before_publish = [seed](const internal::worker&, const internal::job&, const piece_run& r) {
      if ((r.first + seed) % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(200 + 37 * (r.first % 5)));
    };
  }
  return t;
}

kept_run run_inputs(const std::vector<input>& inputs, const run_config& config, const engine_tuning& tuning = {}) {
  kept_run kept;
  internal::run_engine(inputs, config, kept, tuning);
  EXPECT_TRUE(kept.order_kept);
  return kept;
}

outcome got_of(const kept_run& k, std::size_t index) {
  const auto it = k.by_input.find(index);
  if (it == k.by_input.end() || !it->second.report) return {};
  return outcome{it->second.out, it->second.report->stats};
}

std::vector<std::string> texts(std::mt19937_64& g, operation op) {
  if (op == operation::encode)
    return {random_utf32(g, 5003, 0.0), random_utf32(g, 4001, 0.01) + "\x41\x00", random_utf32(g, 997, 0.3)};
  std::string late = random_text(g, 12007, 0.0);
  late += "\xE2\x82";  // the only error, far into the input: its line counts every piece before
  late += random_text(g, 501, 0.0) + "\n" + random_text(g, 100, 0.0);
  return {random_text(g, 20011, 0.0), random_text(g, 15013, 0.01), random_text(g, 4999, 0.3) + "\xF0\x9F",
          late, std::string(4000, '\x80') + "\xC3"};
}

bool stops(operation op, error_policy p, const outcome& whole) {
  return op != operation::validate && op != operation::stats && p == error_policy::strict && !whole.stats.input.valid();
}

// A pipe whose write end a thread feeds in uneven writes; the read end is the input.
class feeding_pipe {
 public:
  explicit feeding_pipe(std::string text) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_ = fds[0];
    writer_ = std::jthread([text = std::move(text), fd = fds[1]] {
      std::size_t at = 0, step = 1;
      while (at < text.size()) {
        const std::size_t n = std::min(step, text.size() - at);
        const ssize_t w = ::write(fd, text.data() + at, n);
        if (w <= 0) break;  // the reader is gone
        at += static_cast<std::size_t>(w);
        step = step * 7 % 5003 + 1;
      }
      ::close(fd);
    });
  }
  feeding_pipe(const feeding_pipe&) = delete;
  feeding_pipe& operator=(const feeding_pipe&) = delete;
  ~feeding_pipe() {
    ::close(read_);
    writer_.join();
  }
  [[nodiscard]] int fd() const { return read_; }

 private:
  int read_ = -1;
  std::jthread writer_;
};

// ------------------------------------------------------------------------ one input ----

TEST(Engine, EveryMixAndOrderEqualsOneShot) {
  auto g = rng(51);
  for (const auto& [op, p] : operations_and_policies)
    for (const std::string& in : texts(g, op)) {
      const outcome whole = one_shot(op, p, in);
      const temp_file f(in);
      for (const mix& m : mixes)
        for (const std::uint64_t piece : {std::uint64_t{16}, std::uint64_t{61}, std::uint64_t{1000}, std::uint64_t{4099}})
          for (const bool delays : {false, true}) {
            SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", " << in.size() << " bytes, "
                                            << m.name << ", pieces of " << piece << (delays ? ", delayed" : ""));
            // Pieces of 61 bytes are copied out with pread, the others scanned in place.
            const run_config c = config_for(op, p, piece, piece == 61 ? read_method::copy : read_method::map);
            const kept_run r = run_inputs({input::file(f.path())}, c, tuning_for(m, g(), delays));
            EXPECT_TRUE(same(got_of(r, 0), whole));
            ASSERT_TRUE(r.by_input.at(0).report);
            EXPECT_EQ(r.by_input.at(0).report->stopped, stops(op, p, whole));
          }
    }
}

// The committing thread woken for a batch of results rather than for each: every batch (one, a
// few, more than the pieces in flight), order and worker mix gives the one-shot result, also for
// operations with output, where a caller may set a batch too.
TEST(Engine, ResultsBatchesEqualOneShot) {
  auto g = rng(63);
  const std::pair<operation, error_policy> ops[] = {{operation::validate, error_policy::strict},
                                                    {operation::stats, error_policy::strict},
                                                    {operation::decode, error_policy::replace}};
  for (const auto& [op, p] : ops)
    for (const std::string& in : texts(g, op)) {
      const outcome whole = one_shot(op, p, in);
      const temp_file f(in);
      for (const mix& m : {mixes[0], mixes[2]})
        for (const std::size_t batch : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1000}})
          for (const std::uint64_t piece : {std::uint64_t{61}, std::uint64_t{1000}}) {
            SCOPED_TRACE(testing::Message() << name(op) << ", " << in.size() << " bytes, " << m.name << ", batches of "
                                            << batch << ", pieces of " << piece);
            run_config c = config_for(op, p, piece);
            c.results_batch = batch;
            c.pieces_ahead = 5;  // fewer in flight than some batches: workers that wait wake the committer
            EXPECT_EQ(plan_run(c).results_batch, batch);
            const kept_run r = run_inputs({input::file(f.path()), input::file(f.path())}, c, tuning_for(m, g(), true));
            EXPECT_TRUE(same(got_of(r, 0), whole));
            EXPECT_TRUE(same(got_of(r, 1), whole));
          }
    }
}

// A stream (a pipe fed in uneven writes) cut into chunks by its reader: every chunk size and
// worker mix gives the one-shot result.
TEST(Engine, PipesEqualOneShot) {
  auto g = rng(61);
  for (const auto& [op, p] : operations_and_policies)
    for (const std::string& in : texts(g, op)) {
      const outcome whole = one_shot(op, p, in);
      for (const mix& m : mixes)
        for (const std::uint64_t chunk : {std::uint64_t{16}, std::uint64_t{61}, std::uint64_t{4099}}) {
          SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", " << in.size() << " bytes, " << m.name
                                          << ", chunks of " << chunk);
          const feeding_pipe pipe(in);
          run_config c = config_for(op, p, 1000);
          c.chunk_bytes = chunk;
          const kept_run r = run_inputs({input::descriptor(pipe.fd(), "pipe")}, c, tuning_for(m, g(), true));
          EXPECT_TRUE(same(got_of(r, 0), whole));
        }
    }
}

// The bytes before a descriptor's offset (standard input that others have read from) are not the
// input, and the offset is left after the bytes the run consumed.
TEST(Engine, DescriptorStartsAtItsOffset) {
  auto g = rng(52);
  const std::string in = random_text(g, 9001, 0.02);
  const temp_file f(in, "\xE2\x82 skipped\n\xFF");
  const outcome whole = one_shot(operation::decode, error_policy::replace, in);
  for (const mix& m : mixes) {
    ASSERT_EQ(::lseek(f.fd(), 12, SEEK_SET), 12);
    const run_config c = config_for(operation::decode, error_policy::replace, 100);
    EXPECT_TRUE(same(got_of(run_inputs({input::descriptor(f.fd(), "f")}, c, tuning_for(m, 1, true)), 0), whole));
    EXPECT_EQ(::lseek(f.fd(), 0, SEEK_CUR), static_cast<off_t>(12 + in.size())) << m.name;
  }
}

TEST(Engine, TopCodePointsEqualAStream) {
  auto g = rng(53);
  const std::string in = random_text(g, 30011, 0.01);
  stream s(stream_config{operation::stats, error_policy::strict, true, {.backend = backend::cpu}});
  std::vector<std::byte> none;
  s.feed(bytes(in), none);
  s.finish(none);
  const temp_file f(in);
  for (const mix& m : mixes)
    for (const std::uint64_t piece : {std::uint64_t{997}, std::uint64_t{1} << 20}) {  // pieces, and read whole
      run_config c = config_for(operation::stats, error_policy::strict, piece);
      c.stream.histogram = true;
      c.top = 20;
      const kept_run r = run_inputs({input::file(f.path())}, c, tuning_for(m, 2, true));
      ASSERT_TRUE(r.by_input.at(0).report) << m.name;
      EXPECT_EQ(r.by_input.at(0).report->top, s.top(20)) << m.name;
      EXPECT_EQ(r.by_input.at(0).report->stats, s.stats()) << m.name;
    }
}

// What pieces cannot carry (an error list, another text form, a BOM) runs as one stream over the
// bytes, for every kind of input.
TEST(Engine, ConfigsThatNeedEveryByteRunAsOneStream) {
  auto g = rng(62);
  const std::string in = random_text(g, 70001, 0.01);
  run_config lists = config_for(operation::validate, error_policy::replace, 1000);
  lists.stream.max_listed_errors = 10;
  run_config utf16 = config_for(operation::decode, error_policy::replace, 1000);
  utf16.stream.form = text_form::utf16le;
  run_config bom = utf16;
  bom.stream.form = text_form::utf32be;
  bom.stream.bom = true;
  for (const run_config* c : {&lists, &utf16, &bom}) {
    stream s(c->stream);
    std::vector<std::byte> want;
    s.feed(bytes(in), want);
    s.finish(want);
    const temp_file f(in);
    const feeding_pipe pipe(in);
    const std::vector<input> inputs{input::file(f.path()), input::descriptor(pipe.fd(), "pipe"),
                                    input::memory(bytes(in), "memory")};
    const kept_run r = run_inputs(inputs, *c);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      SCOPED_TRACE(inputs[i].name());
      ASSERT_TRUE(r.by_input.at(i).report);
      EXPECT_TRUE(same_bytes(r.by_input.at(i).out, std::string(reinterpret_cast<const char*>(want.data()), want.size())));
      EXPECT_EQ(r.by_input.at(i).report->stats, s.stats());
      const auto listed = s.listed_errors();
      EXPECT_EQ(r.by_input.at(i).report->listed_errors, std::vector<error_unit>(listed.begin(), listed.end()));
    }
  }
}

// ------------------------------------------------------------------ many inputs ----

// Big, small, empty, unreadable, vanished files, directories, pipes and memory, mixed: each input
// gives what it gives alone, in input order, and an input that cannot be read is reported in its
// place while the others go on.
TEST(Engine, ManyInputsEqualEachAlone) {
  auto g = rng(63);
  const temp_dir dir;
  for (const auto& [op, p] : operations_and_policies) {
    const bool utf32 = op == operation::encode;
    std::vector<std::string> text{utf32 ? random_utf32(g, 30011, 0.01) : random_text(g, 30011, 0.01),
                                  utf32 ? random_utf32(g, 100, 0.0) : random_text(g, 97, 0.05),
                                  std::string{},
                                  utf32 ? random_utf32(g, 9001, 0.0) : random_text(g, 9001, 0.0) + "\xE2\x82",
                                  utf32 ? random_utf32(g, 4001, 0.2) : random_text(g, 4001, 0.2)};
    for (std::size_t k = 0; k < text.size(); ++k) std::ofstream(dir.path() / ("f" + std::to_string(k)), std::ios::binary) << text[k];
    for (const unsigned threads : {1u, 2u, 3u, 5u}) {
      SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", " << threads << " threads");
      std::vector<input> inputs;
      std::vector<std::optional<std::size_t>> text_of;  // the text each input holds; none: unreadable
      for (std::size_t k = 0; k < text.size(); ++k) {
        inputs.push_back(input::file(dir.path() / ("f" + std::to_string(k))));
        text_of.push_back(k);
      }
      inputs.push_back(input::file(dir.path() / "missing"));
      text_of.push_back(std::nullopt);
      inputs.push_back(input::file(dir.path()));  // a directory
      text_of.push_back(std::nullopt);
      inputs.push_back(input::memory(bytes(text[0]), "memory"));
      text_of.push_back(0);
      const feeding_pipe pipe(text[4]);
      inputs.push_back(input::descriptor(pipe.fd(), "pipe"));
      text_of.push_back(4);
      inputs.push_back(input::file(dir.path() / "f1"));  // the same file twice
      text_of.push_back(1);
      engine_tuning t;
      t.cpu_workers = threads;
      if (threads == 3) t = tuning_for(mixes[2], g(), true);
      const kept_run r = run_inputs(inputs, config_for(op, p, 1000), t);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        SCOPED_TRACE(inputs[i].name());
        if (!text_of[i]) {
          ASSERT_TRUE(r.by_input.at(i).failure);
          EXPECT_EQ(r.by_input.at(i).code, errc::io_failure);
          continue;
        }
        EXPECT_TRUE(same(got_of(r, i), one_shot(op, p, text[*text_of[i]])));
      }
    }
  }
}

// Hundreds of small files, more than the small inputs' budget, sizes on both sides of the largest
// counted as small (a 32nd of a piece) and falling after rising (a worker reads them into one
// buffer it keeps), with a pipe among them: each equals its one-shot run, in order.
TEST(Engine, ManySmallFilesEqualEachAlone) {
  auto g = rng(65);
  const temp_dir dir;
  constexpr std::uint64_t piece = 4096;  // small: up to 128 bytes
  for (const auto& [op, p] : operations_and_policies) {
    const bool utf32 = op == operation::encode;
    std::vector<std::string> text;
    std::vector<input> inputs;
    for (std::size_t k = 0; k < 301; ++k) {
      const std::size_t size = (k * 37 + 5) % 197;  // 0..196: 125..131 and 0 among them
      text.push_back(utf32 ? random_utf32(g, size / 4, k % 11 == 0 ? 0.2 : 0.0)
                           : random_text(g, size, k % 11 == 0 ? 0.2 : 0.0));
      const auto path = dir.path() / std::to_string(k);
      std::ofstream(path, std::ios::binary) << text.back();
      inputs.push_back(input::file(path));
    }
    for (const unsigned threads : {1u, 2u, 3u}) {
      SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", " << threads << " threads");
      const feeding_pipe pipe(text[150]);
      inputs[150] = input::descriptor(pipe.fd(), "pipe");
      engine_tuning t;
      t.cpu_workers = threads;
      if (threads == 3 && op != operation::encode) t = tuning_for(mixes[2], g(), true);
      const kept_run r = run_inputs(inputs, config_for(op, p, piece), t);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        SCOPED_TRACE(inputs[i].name());
        EXPECT_TRUE(same(got_of(r, i), one_shot(op, p, text[i])));
      }
    }
  }
}

// More inputs than descriptors: the run opens at most what the limit allows, whatever their number.
TEST(Engine, TenThousandInputsUnderSixtyFourDescriptors) {
  const temp_dir dir;
  std::vector<input> inputs;
  std::vector<std::string> text;
  auto g = rng(64);
  for (std::size_t k = 0; k < 10007; ++k) {
    const auto path = dir.path() / std::to_string(k);
    text.push_back(random_text(g, 1 + k % 97, k % 13 == 0 ? 0.05 : 0.0));
    std::ofstream(path, std::ios::binary) << text.back();
    inputs.push_back(input::file(path));
  }
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit low = before;
  low.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  kept_run r;
  {
    run_config c = config_for(operation::validate, error_policy::replace, 1000);
    c.stream.backend.threads = 4;
    internal::run_engine(inputs, c, r, {});
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
  EXPECT_TRUE(r.order_kept);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    ASSERT_FALSE(r.by_input.at(k).failure) << k << ": " << *r.by_input.at(k).failure;
    EXPECT_EQ(r.by_input.at(k).report->stats.input, one_shot(operation::validate, error_policy::strict, text[k]).stats.input) << k;
  }
}

// ------------------------------------------------------------------- failures ----

// A worker that fails mid-file and gives its run back (a GPU lane under backend::auto_select): the
// others do its pieces, and nothing of it shows twice or goes missing.
TEST(Engine, RunsGivenBackAreDoneByTheOthers) {
  auto g = rng(54);
  for (const auto& [op, p] : operations_and_policies) {
    const std::string in = op == operation::encode ? random_utf32(g, 6007, 0.01) : random_text(g, 24007, 0.01);
    const outcome whole = one_shot(op, p, in);
    const temp_file f(in);
    for (const int fail_after : {0, 1, 3}) {
      SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", fails after " << fail_after << " runs");
      engine_tuning t;
      t.cpu_workers = 2;
      t.extra_workers = [fail_after](const internal::run_context& run, std::size_t first) {
        std::vector<std::unique_ptr<internal::worker>> w;
        w.push_back(std::make_unique<batch_worker>(run, first, 6, batch_worker::failure::give_back, fail_after));
        w.push_back(std::make_unique<batch_worker>(run, first + 1, 3, batch_worker::failure::give_back, fail_after + 1));
        return w;
      };
      t.force_gpus = true;
      EXPECT_TRUE(same(got_of(run_inputs({input::file(f.path())}, config_for(op, p, 128), t), 0), whole));
    }
  }
}

// Every worker gives up: the run fails with a clear error instead of waiting forever.
TEST(Engine, NoWorkerLeftIsAnError) {
  auto g = rng(55);
  const temp_file f(random_text(g, 5000, 0.0));
  engine_tuning t;
  t.cpu_workers = 0;
  t.extra_workers = [](const internal::run_context& run, std::size_t first) {
    std::vector<std::unique_ptr<internal::worker>> w;
    w.push_back(std::make_unique<batch_worker>(run, first, 4, batch_worker::failure::give_back, 2));
    return w;
  };
  kept_run kept;
  EXPECT_THROW(internal::run_engine(std::vector{input::file(f.path())}, config_for(operation::validate, error_policy::strict, 100),
                                    kept, t),
               error);
}

// A failure that is not the input's ends the run; the output before the failed run was given, in
// order, and nothing after it; inputs before it were reported whole.
TEST(Engine, FatalFailureKeepsTheOutputBeforeIt) {
  auto g = rng(56);
  const std::string first = random_text(g, 201, 0.01);  // under a piece: read whole, one run
  const std::string in = random_text(g, 40009, 0.001);
  const temp_file f0(first);
  const temp_file f(in);
  // The failing worker alone, so that the failure surely comes, at its third run of the second input
  // (the first input is read whole: one run).
  engine_tuning t;
  t.cpu_workers = 0;
  t.extra_workers = [](const internal::run_context& run, std::size_t first_id) {
    std::vector<std::unique_ptr<internal::worker>> w;
    w.push_back(std::make_unique<batch_worker>(run, first_id, 5, batch_worker::failure::fatal, 3));
    return w;
  };
  kept_run kept;
  const run_config config = config_for(operation::decode, error_policy::replace, 1000);
  const std::uint64_t piece = plan_run(config).pieces_of(in.size());  // decode's: from a quarter of the config's
  try {
    internal::run_engine(std::vector{input::file(f0.path()), input::file(f.path())}, config, kept, t);
    ADD_FAILURE() << "the planted failure did not end the run";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::device_failure);
    EXPECT_NE(std::string(e.what()).find("planted"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(same(got_of(kept, 0), one_shot(operation::decode, error_policy::replace, first)));
  const outcome before = one_shot(operation::decode, error_policy::replace,
                                  in.substr(0, internal::unit_start_at_or_after(
                                                   reinterpret_cast<const std::uint8_t*>(in.data()), 10 * piece,
                                                   in.size(), false)));
  EXPECT_TRUE(same_bytes(kept.by_input[1].out, before.out));
  EXPECT_FALSE(kept.by_input[1].report);
}

// The observer ends the run (a closed pipe): the input's report covers what was committed.
TEST(Engine, ObserverEndsTheRun) {
  auto g = rng(57);
  const std::string in = random_text(g, 30011, 0.01);
  const temp_file f(in);
  kept_run kept;
  kept.keep_going = [](std::size_t, const std::string& out) { return out.size() < 2000; };
  run_config c = config_for(operation::repair, error_policy::replace, 512);
  c.stream.backend.threads = 3;
  const run_report r = internal::run_engine(std::vector{input::file(f.path()), input::file(f.path())}, c, kept, {});
  EXPECT_TRUE(r.ended_early);
  ASSERT_TRUE(kept.by_input[0].report);
  const std::uint64_t done = kept.by_input[0].report->stats.input.bytes;
  EXPECT_LT(done, in.size());
  EXPECT_EQ(kept.by_input[0].out, one_shot(operation::repair, error_policy::replace, in.substr(0, done)).out);
  EXPECT_FALSE(kept.by_input.contains(1));
}

// A file that shrinks while it is read is that input's failure, whether its pages are mapped
// (paged in ahead or not) or copied; the next input still runs.
TEST(Engine, ShrinkingFileIsThatInputsFailure) {
  auto g = rng(58);
  for (const read_method read : {read_method::map, read_method::map_faulted, read_method::copy}) {
    const temp_file f(random_text(g, 1 << 20, 0.0));
    const std::string next = random_text(g, 777, 0.01);
    const temp_file f2(next);
    engine_tuning t;
    t.cpu_workers = 1;
    std::atomic<bool> cut{false};
    const int fd = f.fd();
    t.hooks.before_publish = [&cut, fd](const internal::worker&, const internal::job&, const piece_run&) {
      if (!cut.exchange(true)) {
        EXPECT_EQ(::ftruncate(fd, 1000), 0);
      }
    };
    const kept_run r = run_inputs({input::file(f.path()), input::file(f2.path())},
                                  config_for(operation::validate, error_policy::strict, 4096, read), t);
    ASSERT_TRUE(r.by_input.at(0).failure) << "no error for a file that shrank (read " << static_cast<int>(read) << ")";
    EXPECT_EQ(r.by_input.at(0).code, errc::io_failure);
    EXPECT_TRUE(same(got_of(r, 1), one_shot(operation::validate, error_policy::strict, next)));
  }
}

// A mapped file cut inside the page its last window ends in (that page still there, the bytes past
// the cut gone) is that input's failure, not a scan of what the page holds past the file's end.
TEST(Engine, FileCutInsideItsLastPageIsThatInputsFailure) {
  auto g = rng(64);
  for (const std::uint64_t cut : {std::uint64_t{15400}, std::uint64_t{15499}, std::uint64_t{12289}}) {
    const temp_file f(random_text(g, 15500, 0.0).substr(0, 15500));
    ASSERT_EQ(::lseek(f.fd(), 0, SEEK_END), 15500);
    engine_tuning t;
    t.cpu_workers = 1;
    std::atomic<bool> done{false};
    const int fd = f.fd();
    t.hooks.before_publish = [&done, fd, cut](const internal::worker&, const internal::job&, const piece_run&) {
      if (!done.exchange(true)) {
        EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(cut)), 0);
      }
    };
    // Pieces of 5000 bytes: the last window, [14997, 15500), ends inside the page at 12288.
    const kept_run r = run_inputs({input::file(f.path())}, config_for(operation::validate, error_policy::strict, 5000), t);
    ASSERT_TRUE(r.by_input.at(0).failure) << "no error for a file cut at " << cut;
    EXPECT_EQ(r.by_input.at(0).code, errc::io_failure);
  }
}

// A GPU lane cache on runs without GPU lanes stays empty and changes nothing
// (tests/gpu/engine_gpu_test.cpp has the lanes).
TEST(Engine, GpuLaneCacheIdleWithoutGpuLanes) {
  auto g = rng(60);
  const std::string in = random_text(g, 90001, 0.001);
  const temp_file f(in);
  run_config c = config_for(operation::repair, error_policy::replace, std::size_t{2} << 20);
  c.stream.backend.threads = 2;
  c.gpu_lanes = std::make_shared<gpu_lane_cache>(2);
  kept_run kept;
  const run_report r = run(std::vector{input::file(f.path())}, c, kept);
  EXPECT_TRUE(same(got_of(kept, 0), one_shot(operation::repair, error_policy::replace, in)));
  EXPECT_EQ(r.cpu_bytes, in.size());
  EXPECT_EQ(r.gpu_bytes, 0u);
  EXPECT_EQ(c.gpu_lanes->idle(), 0u);
  EXPECT_EQ(c.gpu_lanes->built(), 0u);
}

TEST(Engine, PlanSaysWhatTheRunWillDo) {
  run_config c;
  c.stream.backend = {.backend = backend::cpu, .threads = 3};
  const run_plan p = plan_run(c);
  EXPECT_EQ(p.cpu_workers, 3u);
  EXPECT_EQ(p.lanes_per_gpu, 0u);
  EXPECT_EQ(p.piece_bytes, c.piece_bytes);
  EXPECT_TRUE(p.pieces);
  EXPECT_NE(p.describe().find("3 CPU workers"), std::string::npos) << p.describe();
  c.piece_bytes = 15;
  EXPECT_THROW(plan_run(c), error);
}

// A big file's pieces double while every worker keeps 16 or more: up to twice for decode by
// default, as far as the caller allows otherwise (a power of two, 1 to 64), never under GPU lanes
// (which take runs of pieces of the plan's size).
TEST(Engine, PiecesGrowOnBigFiles) {
  run_config c;
  c.stream.backend = {.backend = backend::cpu, .threads = 4};
  const std::uint64_t mib = 1 << 20;
  for (const auto& [op, growth, asked] :
       {std::tuple{operation::validate, 1u, std::optional<std::size_t>{}}, std::tuple{operation::stats, 1u, std::optional<std::size_t>{}},
        std::tuple{operation::decode, 2u, std::optional<std::size_t>{}}, std::tuple{operation::repair, 1u, std::optional<std::size_t>{}},
        std::tuple{operation::validate, 4u, std::optional<std::size_t>{4}}, std::tuple{operation::decode, 2u, std::optional<std::size_t>{3}}}) {
    c.stream.operation = op;
    c.piece_growth = asked;
    const run_plan p = plan_run(c);
    SCOPED_TRACE(testing::Message() << name(op) << ", asked " << asked.value_or(0));
    EXPECT_EQ(p.piece_growth, growth);
    const std::uint64_t piece = p.piece_bytes, wanted = 16 * 4;
    EXPECT_EQ(p.pieces_of(3 * mib), piece);
    EXPECT_EQ(p.pieces_of(wanted * 2 * piece - 1), piece);  // one piece short of doubling
    EXPECT_EQ(p.pieces_of(wanted * 2 * piece), std::min<std::uint64_t>(2, growth) * piece);
    EXPECT_EQ(p.pieces_of(std::uint64_t{1} << 40), growth * piece);
    EXPECT_EQ(p.describe().find("doubling to at most") != std::string::npos, growth > 1) << p.describe();
  }
  c.stream.operation = operation::decode;
  for (const std::size_t bad : {std::size_t{0}, std::size_t{65}}) {
    c.piece_growth = bad;
    EXPECT_THROW(plan_run(c), error) << bad;
  }
  c.piece_growth = 4;
  c.stream.backend.backend = backend::cuda;  // lanes: no growth
  EXPECT_EQ(plan_run(c).pieces_of(std::uint64_t{1} << 40), plan_run(c).piece_bytes);
}

// Grown pieces give the same reports and output as the plan's: errors on and around every grown
// cut, with output (decode) and without, scanned in place and copied out, several workers.
TEST(Engine, GrownPiecesEqualOneShot) {
  auto g = rng(71);
  for (const auto& [op, p] : {std::pair{operation::validate, error_policy::strict},
                              std::pair{operation::stats, error_policy::replace},
                              std::pair{operation::decode, error_policy::replace},
                              std::pair{operation::decode, error_policy::strict}}) {
    run_config c = config_for(op, p, 64);
    c.stream.backend.threads = 3;
    c.piece_growth = 4;
    const run_plan plan = plan_run(c);
    std::string in = random_text(g, 3 * 16 * plan.piece_bytes * plan.piece_growth * 2 + 37, 0.0);
    const std::uint64_t grown = plan.pieces_of(in.size());
    ASSERT_EQ(grown, plan.piece_bytes * plan.piece_growth);
    for (std::uint64_t cut = grown; cut + 2 < in.size(); cut += grown * 7) in[cut - 1 + g() % 3] = '\xC3';
    const outcome whole = one_shot(op, p, in);
    // First a file in pieces of the plan's size: a worker's output buffers must fit the grown ones.
    const std::string small = random_text(g, 5 * plan.piece_bytes + 3, 0.01);
    ASSERT_EQ(plan.pieces_of(small.size()), plan.piece_bytes);
    const temp_file f(in), f0(small);
    for (const read_method read : {read_method::map, read_method::copy}) {
      SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << (read == read_method::map ? ", map" : ", copy"));
      c.read = read;
      const kept_run r = run_inputs({input::file(f0.path()), input::file(f.path()), input::file(f.path())}, c);
      EXPECT_TRUE(same(got_of(r, 0), one_shot(op, p, small)));
      EXPECT_TRUE(same(got_of(r, 1), whole));
      EXPECT_TRUE(same(got_of(r, 2), whole));
    }
  }
}

}  // namespace
