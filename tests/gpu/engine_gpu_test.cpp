// The input engine with real GPU lanes (src/engine/lanes.hpp): GPU only, GPUs beside CPU workers,
// several lanes on one GPU standing for several GPUs, lanes shared by many inputs of a run, GPU
// faults mid-file and mid-run, too little GPU memory; every result byte-identical to the CPU
// workers alone.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/run.hpp"
#include "gpu_harness.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/error.hpp"

namespace gutf8::test::gpu {
namespace {

using internal::engine_tuning;
using internal::piece_run;

class temp_file {
 public:
  explicit temp_file(const bytes& content) {
    char name[] = "/tmp/gutf8_engine_gpu_XXXXXX";
    fd_ = ::mkstemp(name);
    path_ = name;
    EXPECT_EQ(::write(fd_, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  }
  ~temp_file() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

struct one {
  std::string out;
  std::optional<input_report> report;
  std::optional<std::string> failure;
};

struct result : run_observer {
  std::map<std::size_t, one> inputs;
  run_report report;
  bool output(std::size_t i, std::span<const std::byte> b) override {
    inputs[i].out.append(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  }
  void done(std::size_t i, const input_report& r) override { inputs[i].report = r; }
  void failed(std::size_t i, const error& e) override { inputs[i].failure = e.what(); }
};

struct setup {
  engine_tuning tuning;
  std::uint64_t gpu_run_bytes = std::uint64_t{4} << 20;  // 16 pieces a run: many runs per file
  unsigned lanes_per_gpu = 0;                           // 0: the plan's
};

run_config config_of(operation op, error_policy p, backend b, std::vector<int> devices, std::uint64_t memory_limit,
                     std::shared_ptr<gpu_lane_cache> lanes) {
  run_config config;
  config.gpu_lanes = std::move(lanes);
  config.stream.operation = op;
  config.stream.policy = p;
  config.stream.histogram = op == operation::stats;
  config.stream.backend.backend = b;
  config.stream.backend.device_memory_limit = memory_limit;
  config.devices = std::move(devices);
  config.piece_bytes = std::size_t{256} << 10;
  config.top = op == operation::stats ? 50 : 0;
  config.read = read_method::map;
  return config;
}

std::unique_ptr<result> run_all(const std::vector<input>& inputs, const run_config& config, setup s) {
  run_plan plan = plan_run(config);
  plan.gpu_run_bytes = s.gpu_run_bytes;
  if (s.lanes_per_gpu != 0 && plan.lanes_per_gpu != 0) plan.lanes_per_gpu = s.lanes_per_gpu;
  s.tuning.plan = plan;
  auto r = std::make_unique<result>();
  r->report = internal::run_engine(inputs, config, *r, s.tuning);
  return r;
}

std::unique_ptr<result> run(const temp_file& f, operation op, error_policy p, backend b, setup s,
                            std::vector<int> devices = {}, std::uint64_t memory_limit = 0,
                            std::shared_ptr<gpu_lane_cache> lanes = nullptr) {
  return run_all({input::file(f.path())}, config_of(op, p, b, std::move(devices), memory_limit, std::move(lanes)), s);
}

setup small_runs() {
  setup s;
  s.tuning.force_gpus = true;  // auto: the GPUs always join
  return s;
}

setup cpu_only() {
  setup s;
  s.tuning.cpu_workers = 4;
  return s;
}

void expect_same(const one& got, const one& want, const std::string& what) {
  if (want.failure) {  // an input the CPU could not read either
    EXPECT_TRUE(got.failure) << what;
    return;
  }
  ASSERT_TRUE(got.report) << what << (got.failure ? ": " + *got.failure : std::string(": no report"));
  ASSERT_TRUE(want.report) << what;
  EXPECT_EQ(got.report->stats, want.report->stats) << what;
  EXPECT_EQ(got.report->top, want.report->top) << what;
  EXPECT_EQ(got.report->stopped, want.report->stopped) << what;
  EXPECT_TRUE(got.out == want.out) << what << ": output differs (" << got.out.size() << " vs " << want.out.size()
                                   << " bytes)";
}

void expect_same(const result& got, const result& want, const std::string& what) {
  ASSERT_EQ(got.inputs.size(), want.inputs.size()) << what;
  for (const auto& [i, w] : want.inputs) expect_same(got.inputs.at(i), w, what + ", input " + std::to_string(i));
}

const std::pair<operation, error_policy> cases[] = {
    {operation::validate, error_policy::strict}, {operation::stats, error_policy::strict},
    {operation::decode, error_policy::strict},   {operation::decode, error_policy::replace},
    {operation::decode, error_policy::drop},     {operation::repair, error_policy::replace},
    {operation::repair, error_policy::drop},   {operation::encode, error_policy::replace},
    {operation::encode, error_policy::strict}};

bytes input_for(std::mt19937_64& g, operation op, double rate, std::size_t size = (21u << 20) + 13) {
  if (op == operation::encode) return random_utf32(g, size / 4, script::mixed, rate / 4);
  bytes t = random_text(g, size, script::mixed);
  corrupt(g, t, rate);
  return t;
}

TEST(EngineGpu, GpuOnlyAndMixedEqualCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(81);
  for (const auto& [op, p] : cases)
    for (const double rate : {0.0, 0.000002, 0.001}) {
      const temp_file f(input_for(g, op, rate));
      const std::string what = "op " + std::to_string(int(op)) + "/" + name(p) + " rate " + std::to_string(rate);
      const auto want = run(f, op, p, backend::cpu, cpu_only());
      expect_same(*run(f, op, p, backend::cuda, small_runs()), *want, what + ", GPU only");
      setup mixed = small_runs();
      mixed.tuning.cpu_workers = 3;
      expect_same(*run(f, op, p, backend::auto_select, mixed), *want, what + ", GPU and CPU");
      // CPU pieces made slow: the GPU's runs finish first and wait for the commit.
      mixed.tuning.hooks.before_publish = [](const internal::worker&, const internal::job&, const piece_run& r) {
        if (r.count == 1 && r.first % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
      };
      const auto slow_cpu = run(f, op, p, backend::auto_select, mixed);
      expect_same(*slow_cpu, *want, what + ", slow CPU");
      EXPECT_GT(slow_cpu->report.gpu_bytes + slow_cpu->report.cpu_bytes, 0u);
    }
}

// One run over many inputs: small and big files, empty and missing ones, a pipe, memory; the lanes
// are made once and shared by every input, and each input gives what the CPU gives it.
TEST(EngineGpu, LanesSharedByTheInputsOfARun) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(87);
  for (const auto& [op, p] : cases) {
    const std::string what = "op " + std::to_string(int(op)) + "/" + name(p);
    std::vector<std::unique_ptr<temp_file>> files;
    for (const std::size_t size : {std::size_t{9} << 20, std::size_t{5000}, std::size_t{0}, std::size_t{133},
                                   (std::size_t{3} << 20) + 7})
      files.push_back(std::make_unique<temp_file>(input_for(g, op, 0.0005, size)));
    const bytes in_memory = input_for(g, op, 0.001, 70001);
    const auto inputs = [&] {
      std::vector<input> v;
      for (const auto& f : files) v.push_back(input::file(f->path()));
      v.push_back(input::file("/nonexistent/gutf8"));
      v.push_back(input::memory(std::as_bytes(std::span(in_memory)), "memory"));
      return v;
    };
    const auto cache = std::make_shared<gpu_lane_cache>(8);
    const auto want = run_all(inputs(), config_of(op, p, backend::cpu, {}, 0, nullptr), cpu_only());
    const auto gpu = run_all(inputs(), config_of(op, p, backend::cuda, {}, 0, cache), small_runs());
    expect_same(*gpu, *want, what + ", GPU only");
    EXPECT_EQ(cache->built(), plan_run(config_of(op, p, backend::cuda, {}, 0, cache)).lanes_per_gpu) << what;
    EXPECT_TRUE(gpu->inputs.at(5).failure) << what;
    setup mixed = small_runs();
    mixed.tuning.cpu_workers = 3;
    expect_same(*run_all(inputs(), config_of(op, p, backend::auto_select, {}, 0, nullptr), mixed), *want, what + ", mixed");
  }
}

// Four lanes on GPU 0 named twice stand for two GPUs; --device all finds the real ones.
TEST(EngineGpu, SeveralDevicesAndAll) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(82);
  const temp_file f(input_for(g, operation::decode, 0.0001));
  const auto want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  expect_same(*run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {0, 0}), *want,
              "device 0 twice");
  run_config config = config_of(operation::decode, error_policy::replace, backend::cuda, {}, 0, nullptr);
  config.all_devices = true;
  const auto r = run_all({input::file(f.path())}, config, small_runs());
  expect_same(*r, *want, "all devices");
  EXPECT_EQ(r->report.gpu_bytes, r->inputs.at(0).report->stats.input.bytes);
}

TEST(EngineGpu, OneAndFourLanesAGpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(85);
  for (const auto& [op, p] : cases) {
    const temp_file f(input_for(g, op, 0.0002));
    const auto want = run(f, op, p, backend::cpu, cpu_only());
    for (const unsigned lanes : {1u, 4u}) {
      setup s = small_runs();
      s.lanes_per_gpu = lanes;
      expect_same(*run(f, op, p, backend::cuda, s), *want, std::to_string(lanes) + " lanes, op " + std::to_string(int(op)));
    }
  }
}

// A GPU that fails mid-file: under auto the CPU workers finish its runs; under cuda the run fails
// with the GPU's error and what was written before it is the output's beginning.
TEST(EngineGpu, FaultMidFile) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(83);
  const temp_file f(input_for(g, operation::decode, 0.0005));
  const auto want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  for (const int after : {0, 2}) {
    setup s = small_runs();
    s.tuning.cpu_workers = 2;
    // Slow CPU pieces: the GPU lanes start CUDA and take runs before the CPU is through the file.
    s.tuning.hooks.before_publish = [](const internal::worker&, const internal::job&, const piece_run& r) {
      if (r.count == 1) std::this_thread::sleep_for(std::chrono::milliseconds(15));
    };
    s.tuning.lane.before_run = [after, runs = std::make_shared<std::atomic<int>>(0)](const internal::job&, const piece_run&) {
      if ((*runs)++ >= after) throw error(errc::device_failure, "planted GPU fault");
    };
    const auto r = run(f, operation::decode, error_policy::replace, backend::auto_select, s);
    expect_same(*r, *want, "auto, fault after " + std::to_string(after));
    EXPECT_TRUE(r->report.gpu_failed);
    s.tuning.cpu_workers.reset();
    s.tuning.hooks = {};
    try {
      run(f, operation::decode, error_policy::replace, backend::cuda, s);
      ADD_FAILURE() << "cuda: the planted fault did not end the run";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::device_failure);
    }
  }
}

// A GPU fault in the middle of a run over many inputs: under auto every input is still right;
// under cuda the run ends with the fault, the inputs before it reported whole.
TEST(EngineGpu, FaultMidRunOfManyInputs) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(88);
  std::vector<std::unique_ptr<temp_file>> files;
  for (int k = 0; k < 12; ++k)
    files.push_back(std::make_unique<temp_file>(input_for(g, operation::repair, 0.001, k % 3 == 0 ? (5u << 20) + k : 3000u + k)));
  std::vector<input> inputs;
  for (const auto& f : files) inputs.push_back(input::file(f->path()));
  const auto want = run_all(inputs, config_of(operation::repair, error_policy::replace, backend::cpu, {}, 0, nullptr), cpu_only());
  setup s = small_runs();
  s.tuning.cpu_workers = 2;
  s.tuning.lane.before_run = [runs = std::make_shared<std::atomic<int>>(0)](const internal::job&, const piece_run&) {
    if ((*runs)++ >= 3) throw error(errc::device_failure, "planted GPU fault");
  };
  const auto r = run_all(inputs, config_of(operation::repair, error_policy::replace, backend::auto_select, {}, 0, nullptr), s);
  expect_same(*r, *want, "auto, a fault mid-run");
  s.tuning.cpu_workers.reset();
  auto got = std::make_unique<result>();
  try {
    run_plan plan = plan_run(config_of(operation::repair, error_policy::replace, backend::cuda, {}, 0, nullptr));
    plan.gpu_run_bytes = s.gpu_run_bytes;
    s.tuning.plan = plan;
    internal::run_engine(inputs, config_of(operation::repair, error_policy::replace, backend::cuda, {}, 0, nullptr), *got, s.tuning);
    ADD_FAILURE() << "cuda: the planted fault did not end the run";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::device_failure);
  }
  for (const auto& [i, one] : got->inputs)
    if (one.report) expect_same(one, want->inputs.at(i), "cuda, before the fault, input " + std::to_string(i));
}

TEST(EngineGpu, OutOfMemory) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(84);
  const temp_file f(input_for(g, operation::decode, 0.0001));
  const auto want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  setup s = small_runs();
  s.tuning.cpu_workers = 2;
  const auto r = run(f, operation::decode, error_policy::replace, backend::auto_select, s, {}, 4096);
  expect_same(*r, *want, "auto under a 4 KiB GPU memory cap");
  EXPECT_EQ(r->report.gpu_bytes, 0u);
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
TEST(EngineGpu, KeptLanesServeLaterRuns) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(86);
  const auto lanes = std::make_shared<gpu_lane_cache>(8);
  std::size_t built = 0;
  for (const auto& [op, p] : cases) {
    const std::string what = "op " + std::to_string(int(op)) + "/" + name(p);
    for (int again = 0; again < 2; ++again) {
      const bytes in = input_for(g, op, 0.0003);
      const temp_file f(in);
      const auto r = run(f, op, p, backend::cuda, small_runs(), {}, 0, lanes);
      expect_same(*r, *run(f, op, p, backend::cpu, cpu_only()), what + (again ? ", lanes kept" : ", lanes built"));
      // This run's GPU bytes and copies, not the kept processors' sums since they were built.
      EXPECT_LE(r->report.gpu.gpu_bytes, in.size()) << what;
      EXPECT_GT(r->report.gpu.gpu_bytes, 0u) << what;
      if (p != error_policy::strict) {
        EXPECT_EQ(r->report.gpu_bytes, in.size()) << what;
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
  const auto want = run(f, operation::decode, error_policy::replace, backend::cpu, cpu_only());
  {
    std::vector<std::thread> at_once;
    std::vector<std::unique_ptr<result>> got(3);
    for (std::size_t i = 0; i < got.size(); ++i)
      at_once.emplace_back([&, i] { got[i] = run(f, operation::decode, error_policy::replace, backend::cuda,
                                                small_runs(), {}, 0, lanes); });
    for (std::thread& t : at_once) t.join();
    for (const auto& r : got) expect_same(*r, *want, "three runs at once on one cache");
  }
  const std::size_t before_fault = lanes->idle();
  built = lanes->built();
  setup faulty = small_runs();
  faulty.tuning.lane.before_run = [](const internal::job&, const piece_run&) { throw error(errc::device_failure, "planted GPU fault"); };
  EXPECT_THROW(run(f, operation::decode, error_policy::replace, backend::cuda, faulty, {}, 0, lanes), error);
  EXPECT_LT(lanes->idle(), before_fault) << "the lane that failed was kept";
  EXPECT_EQ(lanes->built(), built);
  expect_same(*run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 0, lanes), *want,
              "after a fault");

  lanes->clear();
  EXPECT_EQ(lanes->idle(), 0u);
  built = lanes->built();
  expect_same(*run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 512u << 20, lanes),
              *want, "a memory limit");
  EXPECT_GT(lanes->built(), built);
  built = lanes->built();
  expect_same(*run(f, operation::decode, error_policy::replace, backend::cuda, small_runs(), {}, 0, lanes), *want,
              "no limit after a limit");
  EXPECT_GT(lanes->built(), built) << "a lane of another memory limit served the run";
}

// Many small files under cuda validate: the lanes settle them in batches (engine/batches.hpp),
// and every input still gets what the CPU gives it alone: valid, invalid, empty, cut at its end,
// a continuation byte at its start (its neighbour would complete it), a BOM, big files between
// them; more inputs than a batch takes; every byte done by the GPU lanes. A fault mid-run ends a
// cuda run with the fault, the inputs before it reported whole.
TEST(EngineGpu, SmallFilesInBatchesEqualCpu) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(89);
  std::vector<bytes> texts;
  const auto text = [](std::string_view s) { return bytes(s.begin(), s.end()); };
  for (const char* t : {"\xF0\x9F\x98", "\x80 rest", "abc\xE2", "\x82\xAC", "", "\xEF\xBB\xBF" "BOM", "\xC3"})
    texts.push_back(text(t));
  texts.push_back(input_for(g, operation::validate, 0.0, (5u << 20) + 3));
  texts.push_back(input_for(g, operation::validate, 0.0001, (2u << 20) + 1));
  const run_plan plan = plan_run(config_of(operation::validate, error_policy::strict, backend::cuda, {}, 0, nullptr));
  ASSERT_GT(plan.gpu_batch_inputs, 1u);
  for (std::size_t k = 0; k < 3 * plan.gpu_batch_inputs + 5; ++k) {
    bytes t = input_for(g, operation::validate, k % 11 == 0 ? 0.01 : 0.0, 200 + g() % 20000);
    if (k % 17 == 0) t.pop_back();  // may end inside a sequence
    texts.push_back(std::move(t));
  }
  std::shuffle(texts.begin() + 9, texts.end(), g);
  std::vector<std::unique_ptr<temp_file>> files;
  std::vector<input> inputs;
  std::uint64_t total = 0;
  for (const bytes& t : texts) {
    files.push_back(std::make_unique<temp_file>(t));
    inputs.push_back(input::file(files.back()->path()));
    total += t.size();
  }
  const auto config = [](backend b) { return config_of(operation::validate, error_policy::strict, b, {}, 0, nullptr); };
  const auto want = run_all(inputs, config(backend::cpu), cpu_only());
  const auto got = run_all(inputs, config(backend::cuda), small_runs());
  expect_same(*got, *want, "validate, cuda");
  EXPECT_EQ(got->report.gpu_bytes, total);
  EXPECT_EQ(got->report.cpu_bytes, 0u);

  setup s = small_runs();
  s.tuning.lane.before_run = [runs = std::make_shared<std::atomic<int>>(0)](const internal::job&, const piece_run&) {
    if ((*runs)++ >= 100) throw error(errc::device_failure, "planted GPU fault");
  };
  auto faulted = std::make_unique<result>();
  try {
    run_plan p = plan_run(config(backend::cuda));
    p.gpu_run_bytes = s.gpu_run_bytes;
    s.tuning.plan = p;
    internal::run_engine(inputs, config(backend::cuda), *faulted, s.tuning);
    ADD_FAILURE() << "cuda: the planted fault did not end the run";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::device_failure);
  }
  for (const auto& [i, one] : faulted->inputs)
    if (one.report) expect_same(one, want->inputs.at(i), "cuda, before the fault, input " + std::to_string(i));
}

}  // namespace
}  // namespace gutf8::test::gpu
