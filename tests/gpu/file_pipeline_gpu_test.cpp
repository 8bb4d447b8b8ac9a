// The file pipeline with real GPU lanes (src/file/workers.hpp): GPU only, GPUs beside CPU workers,
// several lanes on one GPU standing for several GPUs, GPU faults mid-file, too little GPU memory;
// every result byte-identical to the CPU workers alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "file/process_file.hpp"
#include "gpu_harness.hpp"
#include "gutf8/error.hpp"
#include "gutf8/file.hpp"

namespace gutf8::test::gpu {
namespace {

using internal::file_run_tuning;
using internal::piece_run;

class temp_file {
 public:
  explicit temp_file(const bytes& content) {
    char name[] = "/tmp/gutf8_file_gpu_XXXXXX";
    fd_ = ::mkstemp(name);
    path_ = name;
    EXPECT_EQ(::write(fd_, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  }
  ~temp_file() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

struct result {
  std::string out;
  file_report report;
};

result run(const temp_file& f, operation op, error_policy p, backend b, file_run_tuning t,
           std::vector<int> devices = {}, std::uint64_t memory_limit = 0,
           std::shared_ptr<gpu_lane_cache> lanes = nullptr) {
  file_config config;
  config.gpu_lanes = std::move(lanes);
  config.stream.operation = op;
  config.stream.policy = p;
  config.stream.histogram = op == operation::stats;
  config.stream.backend.backend = b;
  config.stream.backend.device_memory_limit = memory_limit;
  config.devices = std::move(devices);
  config.piece_bytes = std::size_t{256} << 10;
  result r;
  r.report = internal::run_file(
      f.fd(), 0, config,
      [&](std::span<const std::byte> s) {
        r.out.append(reinterpret_cast<const char*>(s.data()), s.size());
        return true;
      },
      {}, op == operation::stats ? 50 : 0, t);
  return r;
}

file_run_tuning small_runs() {
  file_run_tuning t;
  t.gpu_run_bytes = std::uint64_t{4} << 20;  // 16 pieces a run: many runs per file
  t.force_gpus = true;                       // auto: the GPUs always join
  return t;
}

file_run_tuning cpu_only() {
  file_run_tuning t;
  t.cpu_workers = 4;
  return t;
}

void expect_same(const result& got, const result& want, const std::string& what) {
  EXPECT_EQ(got.report.stats, want.report.stats) << what;
  EXPECT_EQ(got.report.top, want.report.top) << what;
  EXPECT_EQ(got.report.stopped, want.report.stopped) << what;
  EXPECT_TRUE(got.out == want.out) << what << ": output differs (" << got.out.size() << " vs " << want.out.size()
                                   << " bytes)";
}

const std::pair<operation, error_policy> cases[] = {
    {operation::validate, error_policy::strict}, {operation::stats, error_policy::strict},
    {operation::decode, error_policy::strict},   {operation::decode, error_policy::replace},
    {operation::decode, error_policy::drop},     {operation::sanitize, error_policy::replace},
    {operation::sanitize, error_policy::drop},   {operation::encode, error_policy::replace},
    {operation::encode, error_policy::strict}};

bytes input_for(std::mt19937_64& g, operation op, double rate) {
  if (op == operation::encode) return random_utf32(g, (5u << 20) + 11, script::mixed, rate / 4);
  bytes t = random_text(g, (21u << 20) + 13, script::mixed);
  corrupt(g, t, rate);
  return t;
}

TEST(FilePipelineGpu, GpuOnlyAndMixedEqualCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(81);
  for (const auto& [op, p] : cases)
    for (const double rate : {0.0, 0.000002, 0.001}) {
      const temp_file f(input_for(g, op, rate));
      const std::string what = std::string(internal::output_width(op) ? "transcode " : "count ") +
                               std::to_string(int(op)) + "/" + name(p) + " rate " + std::to_string(rate);
      const result want = run(f, op, p, backend::cpu, cpu_only());
      expect_same(run(f, op, p, backend::cuda, small_runs()), want, what + ", GPU only");
      file_run_tuning mixed = small_runs();
      mixed.cpu_workers = 3;
      expect_same(run(f, op, p, backend::auto_select, mixed), want, what + ", GPU and CPU");
      // CPU pieces made slow: the GPU's runs finish first and wait for the commit.
      mixed.hooks.before_publish = [](const internal::file_worker&, const piece_run& r) {
        if (r.count == 1 && r.first % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
      };
      const result slow_cpu = run(f, op, p, backend::auto_select, mixed);
      expect_same(slow_cpu, want, what + ", slow CPU");
      EXPECT_GT(slow_cpu.report.timings.gpu_bytes + slow_cpu.report.timings.cpu_bytes, 0u);
    }
}

// Four lanes on GPU 0 named twice stand for two GPUs; --device all finds the real ones.
TEST(FilePipelineGpu, SeveralDevicesAndAll) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(82);
  const temp_file f(input_for(g, operation::decode, 0.0001));
  const result want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  expect_same(run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {0, 0}), want,
              "device 0 twice");
  file_config config;
  config.stream = {operation::decode, error_policy::replace, false, {.backend = backend::cuda}};
  config.all_devices = true;
  config.piece_bytes = std::size_t{256} << 10;
  std::string out;
  const file_report r = internal::run_file(
      f.fd(), 0, config,
      [&](std::span<const std::byte> s) {
        out.append(reinterpret_cast<const char*>(s.data()), s.size());
        return true;
      },
      {}, 0, small_runs());
  EXPECT_EQ(r.stats, want.report.stats);
  EXPECT_TRUE(out == want.out);
  EXPECT_EQ(r.timings.gpu_bytes, r.stats.input.bytes);
}

// The page cache page-locked in place or copied from a map instead of pread, and 1 or 4 lanes a GPU.
TEST(FilePipelineGpu, RegisteredFeedAndMoreLanes) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(85);
  for (const auto& [op, p] : cases) {
    const temp_file f(input_for(g, op, 0.0002));
    const result want = run(f, op, p, backend::cpu, cpu_only());
    file_run_tuning t = small_runs();
    t.lane.feed = internal::gpu_feed::register_;
    t.lanes_per_gpu = 4;
    expect_same(run(f, op, p, backend::cuda, t), want, "registered feed, 4 lanes, op " + std::to_string(int(op)));
    t.lane.feed = internal::gpu_feed::copy_mapped;
    t.lanes_per_gpu = 1;
    expect_same(run(f, op, p, backend::cuda, t), want, "mapped copies, 1 lane, op " + std::to_string(int(op)));
  }
}

// A GPU that fails mid-file: under auto the CPU workers finish its runs; under cuda the run fails
// with the GPU's error and what was written before it is the output's beginning.
TEST(FilePipelineGpu, FaultMidFile) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(83);
  const temp_file f(input_for(g, operation::decode, 0.0005));
  const result want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  for (const int after : {0, 2}) {
    file_run_tuning t = small_runs();
    t.cpu_workers = 2;
    // Slow CPU pieces: the GPU lanes start CUDA and take runs before the CPU is through the file.
    t.hooks.before_publish = [](const internal::file_worker&, const piece_run& r) {
      if (r.count == 1) std::this_thread::sleep_for(std::chrono::milliseconds(15));
    };
    t.lane.before_run = [after, runs = std::make_shared<std::atomic<int>>(0)](const piece_run&) {
      if ((*runs)++ >= after) throw error(errc::device_failure, "planted GPU fault");
    };
    const result r = run(f, operation::decode, error_policy::replace, backend::auto_select, t);
    expect_same(r, want, "auto, fault after " + std::to_string(after));
    EXPECT_TRUE(r.report.timings.gpu_failed);
    t.cpu_workers.reset();
    t.hooks = {};
    try {
      run(f, operation::decode, error_policy::replace, backend::cuda, t);
      ADD_FAILURE() << "cuda: the planted fault did not end the run";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::device_failure);
    }
  }
}

TEST(FilePipelineGpu, OutOfMemory) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(84);
  const temp_file f(input_for(g, operation::decode, 0.0001));
  const result want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  file_run_tuning t = small_runs();
  t.cpu_workers = 2;
  const result r = run(f, operation::decode, error_policy::replace, backend::auto_select, t, {}, 4096);
  expect_same(r, want, "auto under a 4 KiB GPU memory cap");
  EXPECT_EQ(r.report.timings.gpu_bytes, 0u);
  try {
    run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 4096);
    ADD_FAILURE() << "cuda under a 4 KiB cap ran";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
  }
}

// Lanes kept in a gpu_lane_cache serve the next runs of the same shape: no lane built again, the
// output still the CPU workers', each report's GPU bytes that run's own; runs at the same time
// take different lanes; a lane that failed is not kept; another memory limit is another shape.
TEST(FilePipelineGpu, KeptLanesServeLaterRuns) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(86);
  const auto lanes = std::make_shared<gpu_lane_cache>(8);
  std::size_t built = 0;
  for (const auto& [op, p] : cases) {
    const std::string what = "op " + std::to_string(int(op)) + "/" + name(p);
    for (int again = 0; again < 2; ++again) {
      const bytes in = input_for(g, op, 0.0003);
      const temp_file f(in);
      const result r = run(f, op, p, backend::cuda, small_runs(), {}, 0, lanes);
      expect_same(r, run(f, op, p, backend::cpu, cpu_only()), what + (again ? ", lanes kept" : ", lanes built"));
      // This run's GPU bytes and copies, not the kept processors' sums since they were built.
      EXPECT_LE(r.report.timings.gpu.gpu_bytes, in.size()) << what;
      EXPECT_GT(r.report.timings.gpu.gpu_bytes, 0u) << what;
      if (p != error_policy::strict) {
        EXPECT_EQ(r.report.timings.gpu_bytes, in.size()) << what;
      }
      if (again) {
        EXPECT_EQ(lanes->built(), built) << what << ": the second run built lanes";
      }
      built = lanes->built();
      EXPECT_GT(lanes->idle(), 0u) << what;
    }
  }
  EXPECT_LE(lanes->idle(), 8u);

  const temp_file f(input_for(g, operation::decode, 0.0001));
  const result want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  {
    std::vector<std::thread> at_once;
    std::vector<result> got(3);
    for (std::size_t i = 0; i < got.size(); ++i)
      at_once.emplace_back([&, i] { got[i] = run(f, operation::decode, error_policy::replace, backend::cuda,
                                                small_runs(), {}, 0, lanes); });
    for (std::thread& t : at_once) t.join();
    for (const result& r : got) expect_same(r, want, "three runs at once on one cache");
  }
  const std::size_t before_fault = lanes->idle();
  built = lanes->built();
  file_run_tuning faulty = small_runs();
  faulty.lane.before_run = [](const piece_run&) { throw error(errc::device_failure, "planted GPU fault"); };
  EXPECT_THROW(run(f, operation::decode, error_policy::replace, backend::cuda, faulty, {}, 0, lanes), error);
  EXPECT_LT(lanes->idle(), before_fault) << "the lane that failed was kept";
  EXPECT_EQ(lanes->built(), built);
  expect_same(run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 0, lanes), want,
              "after a fault");

  lanes->clear();
  EXPECT_EQ(lanes->idle(), 0u);
  built = lanes->built();
  expect_same(run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 512u << 20, lanes),
              want, "a memory limit");
  EXPECT_GT(lanes->built(), built);
  built = lanes->built();
  expect_same(run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 0, lanes), want,
              "no limit after a limit");
  EXPECT_GT(lanes->built(), built) << "a lane of another memory limit served the run";
}

}  // namespace
}  // namespace gutf8::test::gpu
