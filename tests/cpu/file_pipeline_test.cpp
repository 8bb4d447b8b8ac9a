// The file pipeline (src/file/): a regular file through CPU workers and workers that take runs of
// many pieces as the GPU lanes do (here CPU processors that read their runs with pread, so the mix
// runs without a GPU), finishing in forced orders, failing on purpose, gives exactly what the
// one-shot API gives for the whole file: output, summary, first error with line and column, stats.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <utility>

#include "check.hpp"
#include "codec/boundary.hpp"
#include "codec/stream_core.hpp"
#include "cpu/cpu_block.hpp"
#include "file/process_file.hpp"
#include "file_pipeline_support.hpp"
#include "gutf8/file.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
using internal::file_run_tuning;
using internal::file_work;
using internal::file_worker;
using internal::piece_run;
using internal::run_result;

// Takes runs of `pieces` pieces, copies them out with pread as a GPU lane fills its buffer, and
// processes them on a single-thread CPU processor; fails as told after `fail_after` runs.
class batch_worker final : public file_worker {
 public:
  enum class failure { none, give_back, fatal };
  batch_worker(const file_work& work, std::uint64_t pieces, failure fail = failure::none, int fail_after = 0)
      : work_(work), pieces_(pieces), fail_(fail), fail_after_(fail_after),
        processor_(internal::make_cpu_processor(1)),
        histogram_(work.histogram ? internal::code_space : 0, 0) {}

  [[nodiscard]] std::uint64_t run_pieces() const noexcept override { return pieces_; }
  [[nodiscard]] std::span<const std::uint64_t> histogram() const noexcept override { return histogram_; }

  run_result process(const piece_run& run) override {
    if (fail_ != failure::none && runs_++ == fail_after_) {
      const auto why = std::make_exception_ptr(error(errc::device_failure, "planted device failure"));
      if (fail_ == failure::give_back) throw internal::run_given_back(why);
      std::rethrow_exception(why);
    }
    auto out = std::make_shared<std::vector<std::uint8_t>>(run_output_bytes(work_, run));
    // The output lives until the committer hands it back.
    return process_copied_run(work_, *processor_, histogram_, run, out->empty() ? nullptr : out->data(),
                              [out] {});
  }

 private:
  file_work work_;
  std::uint64_t pieces_;
  failure fail_;
  int fail_after_;
  int runs_ = 0;
  std::unique_ptr<internal::block_processor> processor_;
  std::vector<std::uint64_t> histogram_;
};

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

struct run_outcome {
  outcome got;
  file_report report;
};

run_outcome run(const temp_file& f, std::uint64_t offset, operation op, error_policy p, std::uint64_t piece_bytes,
                file_run_tuning tuning, bool histogram = false, std::size_t top_n = 0, bool map = true) {
  file_config config;
  config.map_file = map;
  config.stream.operation = op;
  config.stream.policy = p;
  config.stream.histogram = histogram;
  config.stream.backend.backend = backend::cpu;
  config.piece_bytes = piece_bytes;
  run_outcome r;
  const output_sink sink = [&](std::span<const std::byte> bytes) {
    r.got.out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return true;
  };
  r.report = internal::run_file(f.fd(), offset, config, sink, {}, top_n, tuning);
  r.got.stats = r.report.stats;
  return r;
}

file_run_tuning tuning_for(const mix& m, std::uint64_t seed, bool delays) {
  file_run_tuning t;
  t.cpu_workers = m.cpu_workers;
  const std::vector<std::uint64_t> batches = m.batch_pieces;
  t.extra_workers = [batches](const file_work& work) {
    std::vector<std::unique_ptr<file_worker>> w;
    for (const std::uint64_t n : batches) w.push_back(std::make_unique<batch_worker>(work, n));
    return w;
  };
  if (delays) {
    // Runs that start on an odd piece wait a little: later runs overtake earlier ones.
    t.hooks.before_publish = [seed](const file_worker&, const piece_run& r) {
      if ((r.first + seed) % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(200 + 37 * (r.first % 5)));
    };
  }
  return t;
}

std::vector<std::string> inputs(std::mt19937_64& g, operation op) {
  if (op == operation::encode)
    return {random_utf32(g, 5003, 0.0), random_utf32(g, 4001, 0.01) + "\x41\x00", random_utf32(g, 997, 0.3)};
  std::string late = random_text(g, 12007, 0.0);
  late += "\xE2\x82";  // the only error, far into the file: its line counts every piece before
  late += random_text(g, 501, 0.0) + "\n" + random_text(g, 100, 0.0);
  return {random_text(g, 20011, 0.0), random_text(g, 15013, 0.01), random_text(g, 4999, 0.3) + "\xF0\x9F",
          late, std::string(4000, '\x80') + "\xC3"};
}

TEST(FilePipeline, EveryMixAndOrderEqualsOneShot) {
  auto g = rng(51);
  for (const auto& [op, p] : operations_and_policies)
    for (const std::string& in : inputs(g, op)) {
      const outcome whole = one_shot(op, p, in);
      const temp_file f(in);
      for (const mix& m : mixes)
        for (const std::uint64_t piece : {std::uint64_t{16}, std::uint64_t{61}, std::uint64_t{1000}, std::uint64_t{4099}})
          for (const bool delays : {false, true}) {
            SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", " << in.size() << " bytes, "
                                            << m.name << ", pieces of " << piece << (delays ? ", delayed" : ""));
            // Pieces of 61 bytes are copied out with pread, the others scanned in mapped segments.
            const run_outcome r = run(f, 0, op, p, piece, tuning_for(m, g(), delays), false, 0, piece != 61);
            EXPECT_TRUE(same(r.got, whole));
            EXPECT_EQ(r.report.stopped, op != operation::validate && op != operation::stats &&
                                             p == error_policy::strict && !whole.stats.input.valid());
          }
    }
}

// The bytes before `offset` (standard input that others have read from) are not the input.
TEST(FilePipeline, StartsAtTheOffset) {
  auto g = rng(52);
  const std::string in = random_text(g, 9001, 0.02);
  const temp_file f(in, "\xE2\x82 skipped\n\xFF");
  const outcome whole = one_shot(operation::decode, error_policy::replace, in);
  for (const mix& m : mixes)
    EXPECT_TRUE(same(run(f, 12, operation::decode, error_policy::replace, 100, tuning_for(m, 1, true)).got, whole));
}

TEST(FilePipeline, TopCodePointsEqualAStream) {
  auto g = rng(53);
  const std::string in = random_text(g, 30011, 0.01);
  stream s(stream_config{operation::stats, error_policy::strict, true, {.backend = backend::cpu}});
  std::vector<std::byte> none;
  s.feed(bytes(in), none);
  s.finish(none);
  const temp_file f(in);
  for (const mix& m : mixes) {
    const run_outcome r = run(f, 0, operation::stats, error_policy::strict, 997, tuning_for(m, 2, true), true, 20);
    EXPECT_EQ(r.report.top, s.top(20)) << m.name;
    EXPECT_EQ(r.report.stats, s.stats()) << m.name;
  }
}

// A worker that fails mid-file and gives its run back (a GPU lane under backend::auto_select): the
// others do its pieces, and nothing of it shows twice or goes missing.
TEST(FilePipeline, RunsGivenBackAreDoneByTheOthers) {
  auto g = rng(54);
  for (const auto& [op, p] : operations_and_policies) {
    const std::string in = op == operation::encode ? random_utf32(g, 6007, 0.01) : random_text(g, 24007, 0.01);
    const outcome whole = one_shot(op, p, in);
    const temp_file f(in);
    for (const int fail_after : {0, 1, 3}) {
      SCOPED_TRACE(testing::Message() << name(op) << '/' << name(p) << ", fails after " << fail_after << " runs");
      file_run_tuning t;
      t.cpu_workers = 2;
      t.extra_workers = [fail_after](const file_work& work) {
        std::vector<std::unique_ptr<file_worker>> w;
        w.push_back(std::make_unique<batch_worker>(work, 6, batch_worker::failure::give_back, fail_after));
        w.push_back(std::make_unique<batch_worker>(work, 3, batch_worker::failure::give_back, fail_after + 1));
        return w;
      };
      EXPECT_TRUE(same(run(f, 0, op, p, 128, t).got, whole));
    }
  }
}

// Every worker gives up: the run fails with a clear error instead of waiting forever.
TEST(FilePipeline, NoWorkerLeftIsAnError) {
  auto g = rng(55);
  const temp_file f(random_text(g, 5000, 0.0));
  file_run_tuning t;
  t.cpu_workers = 0;
  t.extra_workers = [](const file_work& work) {
    std::vector<std::unique_ptr<file_worker>> w;
    w.push_back(std::make_unique<batch_worker>(work, 4, batch_worker::failure::give_back, 2));
    return w;
  };
  EXPECT_THROW(run(f, 0, operation::validate, error_policy::strict, 100, t), error);
}

// A failure that is not given back ends the run; the output before the failed run was written, in
// order, and nothing after it.
TEST(FilePipeline, FatalFailureKeepsTheOutputBeforeIt) {
  auto g = rng(56);
  const std::string in = random_text(g, 40009, 0.001);
  const outcome whole = one_shot(operation::decode, error_policy::replace, in);
  const temp_file f(in);
  // The failing worker alone, so that the failure surely comes, at its third run (pieces 10..14).
  file_run_tuning t;
  t.cpu_workers = 0;
  t.extra_workers = [](const file_work& work) {
    std::vector<std::unique_ptr<file_worker>> w;
    w.push_back(std::make_unique<batch_worker>(work, 5, batch_worker::failure::fatal, 2));
    return w;
  };
  std::string written;
  file_config config;
  config.stream = {operation::decode, error_policy::replace, false, {.backend = backend::cpu}};
  config.piece_bytes = 256;
  const output_sink sink = [&](std::span<const std::byte> b) {
    written.append(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  };
  try {
    internal::run_file(f.fd(), 0, config, sink, {}, 0, t);
    ADD_FAILURE() << "the planted failure did not end the run";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::device_failure);
    EXPECT_NE(std::string(e.what()).find("planted"), std::string::npos);
  }
  const outcome before = one_shot(operation::decode, error_policy::replace,
                                  in.substr(0, internal::unit_start_at_or_after(
                                                   reinterpret_cast<const std::uint8_t*>(in.data()), 10 * 256,
                                                   in.size(), false)));
  EXPECT_EQ(written, before.out);
}

// The sink ends the run (a closed pipe): the report covers what was committed, nothing more.
TEST(FilePipeline, SinkEndsTheRun) {
  auto g = rng(57);
  const std::string in = random_text(g, 30011, 0.01);
  const temp_file f(in);
  file_config config;
  config.stream = {operation::sanitize, error_policy::replace, false, {.backend = backend::cpu, .threads = 3}};
  config.piece_bytes = 512;
  std::string written;
  const file_report r = internal::run_file(f.fd(), 0, config,
                                           [&](std::span<const std::byte> b) {
                                             written.append(reinterpret_cast<const char*>(b.data()), b.size());
                                             return written.size() < 2000;
                                           },
                                           {}, 0, {});
  EXPECT_TRUE(r.sink_ended);
  EXPECT_LT(r.stats.input.bytes, in.size());
  const outcome prefix = one_shot(operation::sanitize, error_policy::replace, in.substr(0, r.stats.input.bytes));
  EXPECT_EQ(written, prefix.out);
}

// A file that shrinks while it is read is an I/O failure, whether its pages are mapped or copied.
TEST(FilePipeline, ShrinkingFileIsAnIoFailure) {
  auto g = rng(58);
  for (const bool map : {true, false}) {
    const temp_file f(random_text(g, 1 << 20, 0.0));
    file_run_tuning t;
    t.cpu_workers = 1;
    std::atomic<bool> cut{false};
    const int fd = f.fd();
    t.hooks.before_publish = [&cut, fd](const file_worker&, const piece_run&) {
      if (!cut.exchange(true)) {
        EXPECT_EQ(::ftruncate(fd, 1000), 0);
      }
    };
    try {
      run(f, 0, operation::validate, error_policy::strict, 4096, t, false, 0, map);
      ADD_FAILURE() << "no error for a file that shrank (map " << map << ")";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::io_failure) << e.what();
    }
  }
}

// The public entry's default copies with pread: a file cut short under it is an io_failure, and
// never a SIGBUS in a worker (mapped pages that vanish), which would end a Python interpreter.
TEST(FilePipeline, DefaultReadsSurviveAShrinkingFile) {
  auto g = rng(60);
  const temp_file f(random_text(g, 1 << 20, 0.0));
  file_config config;
  EXPECT_FALSE(config.map_file);
  config.stream = {operation::validate, error_policy::strict, false, {.backend = backend::cpu, .threads = 2}};
  config.piece_bytes = 4096;  // workers run at most a few pieces ahead of the first commit
  bool cut = false;
  const auto cut_after_first_commit = [&](std::uint64_t) {
    if (!std::exchange(cut, true)) {
      EXPECT_EQ(::truncate(f.path().c_str(), 1000), 0);
    }
  };
  try {
    process_file(f.path(), config, {}, cut_after_first_commit);
    ADD_FAILURE() << "no error for a file that shrank";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::io_failure) << e.what();
  }
}

// What the pieces cannot serve is refused before any work, on an empty file as on any other.
TEST(FilePipeline, ConfigsThatNeedTheBytesAreRefused) {
  for (const std::string& in : {std::string{}, std::string("abc\xff")}) {
    const temp_file f(in);
    file_config lists, utf16, bom;
    lists.stream = {operation::validate, error_policy::replace, false, {.backend = backend::cpu}};
    lists.stream.max_listed_errors = 10;
    utf16.stream = {operation::decode, error_policy::replace, false, {.backend = backend::cpu}};
    utf16.stream.form = text_form::utf16le;
    bom.stream = utf16.stream;
    bom.stream.form = text_form::utf32le;
    bom.stream.bom = true;
    for (const file_config* c : {&lists, &utf16, &bom}) {
      try {
        process_file(f.path(), *c);
        ADD_FAILURE() << "accepted a config that needs the bytes (" << in.size() << " bytes)";
      } catch (const error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument) << e.what();
      }
    }
  }
}

TEST(FilePipeline, PublicEntryOnAPath) {
  auto g = rng(59);
  const std::string in = random_text(g, 70001, 0.01);
  const temp_file f(in);
  file_config config;
  config.stream = {operation::validate, error_policy::strict, false, {.backend = backend::cpu, .threads = 2}};
  const file_report r = process_file(f.path(), config);
  EXPECT_EQ(r.stats.input, one_shot(operation::validate, error_policy::strict, in).stats.input);
  EXPECT_EQ(r.timings.cpu_bytes, in.size());
  EXPECT_EQ(r.timings.gpu_bytes, 0u);
  EXPECT_THROW(process_file("/nonexistent/gutf8", config), error);
}

// A GPU lane cache on runs without GPU lanes stays empty and changes nothing
// (tests/gpu/file_pipeline_gpu_test.cpp: KeptLanesServeLaterRuns has the lanes).
TEST(FilePipeline, GpuLaneCacheIdleWithoutGpuLanes) {
  auto g = rng(60);
  const std::string in = random_text(g, 90001, 0.001);
  const temp_file f(in);
  file_config config;
  config.stream = {operation::sanitize, error_policy::replace, false, {.backend = backend::cpu, .threads = 2}};
  config.gpu_lanes = std::make_shared<gpu_lane_cache>(2);
  std::string out;
  const file_report r = process_file(f.path(), config, [&](std::span<const std::byte> b) {
    out.append(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  });
  const auto want = one_shot(operation::sanitize, error_policy::replace, in);
  EXPECT_EQ(r.stats.input, want.stats.input);
  EXPECT_TRUE(out == want.out);
  EXPECT_EQ(config.gpu_lanes->idle(), 0u);
  EXPECT_EQ(config.gpu_lanes->built(), 0u);
  config.gpu_lanes->clear();
  EXPECT_EQ(config.gpu_lanes->idle(), 0u);
}

// The device list the CLI's --device and bench_file_pipeline's --devices read.
TEST(FilePipeline, DeviceLists) {
  EXPECT_TRUE(parse_device_list("all").all);
  EXPECT_TRUE(parse_device_list("all").devices.empty());
  EXPECT_EQ(parse_device_list("3").devices, std::vector<int>{3});
  EXPECT_EQ(parse_device_list("1,0,7").devices, (std::vector<int>{1, 0, 7}));
  EXPECT_FALSE(parse_device_list("0").all);
  for (const char* bad : {"", "x", "-1", "-0", "+1", "1,", ",1", "1,,2", "1.5", " 1", "99999999999", "all,1", "ALL"}) {
    SCOPED_TRACE(bad);
    try {
      parse_device_list(bad);
      ADD_FAILURE() << "accepted";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument) << e.what();
    }
  }
}

}  // namespace
