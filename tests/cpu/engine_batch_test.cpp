// Small inputs settled in batches (src/engine/batches.hpp), as the GPU lanes do under
// backend::cuda, here on a CPU processor so that it runs without a GPU: every input's report is
// what validating it alone gives, whatever its neighbours in the batch (inputs that would join
// into valid text, sequences cut at an input's end, continuation bytes at its start, NUL bytes,
// a BOM, empty inputs), and batches stay within their count and bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "check.hpp"
#include "engine/batches.hpp"
#include "engine_support.hpp"

namespace {

using namespace std::string_literals;
using namespace gutf8;
using namespace gutf8::test;
using internal::job;
using internal::run_result;

// A CPU processor that counts the blocks it is given.
class counting_processor final : public internal::block_processor {
 public:
  internal::block_result process(const internal::block_request& rq) override {
    ++blocks;
    return inner_->process(rq);
  }
  int blocks = 0;

 private:
  std::unique_ptr<internal::block_processor> inner_ = internal::make_cpu_processor(1);
};

run_config validate_config() {
  run_config c;
  c.stream.operation = operation::validate;
  c.stream.backend.backend = backend::cpu;
  return c;
}

// Texts each invalid alone whose neighbours would complete them if nothing stood between.
const std::vector<std::string> tricky = {
    "\xF0\x9F\x98",  "\x80",  // a 4-byte sequence cut in two
    "abc\xE2",       "\x82\xAC tail",
    "\xC3",          "\xA9",
    "",              "plain ASCII\n",
    "\xEF\xBB\xBF" "BOM then text",  // a BOM is text to validate
    "NUL\0inside"s,  "\xED\xA0\x80",  // a surrogate
    "caf\xC3\xA9",   "\xF4\x90\x80\x80",
    "line 1\nline 2\n\xFF",  "\xE2\x82\xAC\xE2\x82\xAC",
};

struct batch_of_jobs {
  std::vector<std::unique_ptr<job>> owned;
  std::vector<job*> jobs;
  explicit batch_of_jobs(const std::vector<std::string>& texts) {
    for (const std::string& t : texts) {
      owned.push_back(std::make_unique<job>(owned.size()));
      owned.back()->in = std::make_unique<internal::whole_input>(std::span(reinterpret_cast<const std::uint8_t*>(t.data()), t.size()));
      jobs.push_back(owned.back().get());
    }
  }
};

std::uint64_t joined_size(const std::vector<std::string>& texts) {
  std::uint64_t n = 0;
  for (const std::string& t : texts) n += t.size() + 1;
  return n;
}

// Each input's report from the batch equals validating it alone; the blocks run are one a stretch
// of the batch from its start or after an invalid input, and one an invalid input alone.
void expect_settled_alone(const std::vector<std::string>& texts) {
  const run_config config = validate_config();
  batch_of_jobs b(texts);
  std::vector<std::uint8_t> buffer(joined_size(texts));
  counting_processor processor;
  int alone = 0;
  const std::vector<run_result> got = internal::settle_batch(processor, buffer, b.jobs, config, [&](job& j) {
    ++alone;
    return internal::process_whole(processor, static_cast<internal::whole_input&>(*j.in).bytes(), config);
  });
  ASSERT_EQ(got.size(), texts.size());
  int invalid = 0;
  int blocks = 0;  // a block for each stretch from the start or after an invalid input, unless empty
  const auto stretch = [&](std::size_t from) {
    std::uint64_t n = texts.size() - from - 1;  // separators
    for (std::size_t k = from; k < texts.size(); ++k) n += texts[k].size();
    blocks += n != 0 ? 1 : 0;
  };
  stretch(0);
  for (std::size_t k = 0; k < texts.size(); ++k) {
    SCOPED_TRACE("input " + std::to_string(k));
    ASSERT_TRUE(got[k].report);
    const outcome want = one_shot(operation::validate, error_policy::strict, texts[k]);
    EXPECT_TRUE(same(outcome{{}, got[k].report->stats}, want));
    EXPECT_EQ(got[k].outcome.result.consumed, texts[k].size());
    EXPECT_TRUE(got[k].output.empty());
    if (want.stats.input.valid()) continue;
    ++invalid;
    if (k + 1 < texts.size()) stretch(k + 1);
  }
  EXPECT_EQ(alone, invalid);
  EXPECT_EQ(processor.blocks, blocks + invalid);
}

TEST(SettleBatch, EachInputAsAlone) {
  expect_settled_alone(tricky);
  for (std::size_t k = 0; k + 1 < tricky.size(); ++k) expect_settled_alone({tricky[k], tricky[k + 1]});
  expect_settled_alone({"x"});
  expect_settled_alone({"\x80"});
}

TEST(SettleBatch, AllValidIsOneBlock) {
  auto g = rng(441);
  std::vector<std::string> texts;
  for (const std::size_t size : {0, 1, 2, 3, 63, 64, 65, 4095, 4097, 20011}) texts.push_back(random_text(g, size, 0.0));
  expect_settled_alone(texts);
  std::vector<std::string> empties(5);
  expect_settled_alone(empties);
}

TEST(SettleBatch, RandomMixes) {
  auto g = rng(442);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> texts;
    const std::size_t n = 1 + g() % 17;
    for (std::size_t k = 0; k < n; ++k) {
      const double rate = g() % 4 == 0 ? 0.01 : 0.0;
      std::string t = random_text(g, g() % 3001, rate);
      if (g() % 7 == 0 && !t.empty()) t.pop_back();  // may cut a sequence at the end
      texts.push_back(std::move(t));
    }
    expect_settled_alone(texts);
  }
}

TEST(SettleBatch, OnlyValidateWithoutAnErrorList) {
  run_config c = validate_config();
  EXPECT_TRUE(internal::batch_settles(c));
  c.stream.max_listed_errors = 10;
  EXPECT_FALSE(internal::batch_settles(c));
  for (const operation op : {operation::stats, operation::decode, operation::repair, operation::encode}) {
    c = validate_config();
    c.stream.operation = op;
    EXPECT_FALSE(internal::batch_settles(c)) << name(op);
  }
}

// ---------------------------------------------------------------- through the engine ----

struct batch_log {
  std::mutex m;
  std::vector<std::vector<std::uint64_t>> sizes;  // each batch's input sizes
};

// A GPU lane's part on the CPU: takes whole inputs in batches and settles them with one block,
// the rest as batch_worker does.
class batching_worker final : public internal::worker {
 public:
  batching_worker(const internal::run_context& run, std::size_t id, std::shared_ptr<batch_log> log)
      : worker(run, id), inner_(run, id, 4), log_(std::move(log)), processor_(internal::make_cpu_processor(1)) {
    traits_ = inner_.traits();
    traits_.opens = false;
    traits_.batch_inputs = run.plan.gpu_batch_inputs;
    traits_.batch_bytes = run.plan.gpu_batch_bytes;
  }
  [[nodiscard]] const internal::worker_traits& traits() const noexcept override { return traits_; }
  run_result process(job& j, const internal::piece_run& run) override { return inner_.process(j, run); }
  std::vector<run_result> process_batch(std::span<job* const> jobs) override {
    {
      std::lock_guard lock(log_->m);
      auto& s = log_->sizes.emplace_back();
      for (const job* j : jobs) s.push_back(static_cast<const internal::whole_input&>(*j->in).bytes().size());
    }
    std::vector<std::uint8_t> buffer(traits_.batch_bytes);
    return internal::settle_batch(*processor_, buffer, jobs, run_.config,
                                  [&](job& j) { return inner_.process(j, internal::piece_run{0, 1}); });
  }

 private:
  batch_worker inner_;
  internal::worker_traits traits_;
  std::shared_ptr<batch_log> log_;
  std::unique_ptr<internal::block_processor> processor_;
};

std::vector<std::string> many_inputs(std::mt19937_64& g, std::uint64_t budget) {
  std::vector<std::string> texts = tricky;
  // Around the batch's bytes: an input with its separator fits exactly, or is one byte over.
  for (const std::uint64_t size : {budget - 2, budget - 1, budget, budget + 1}) texts.push_back(random_text(g, size, 0.0));
  texts.push_back(random_text(g, 40009, 0.0));   // a big file: pieces
  texts.push_back(random_text(g, 30011, 0.01));  // ... with errors
  for (int k = 0; k < 150; ++k) {
    std::string t = random_text(g, g() % 400, k % 9 == 0 ? 0.02 : 0.0);
    if (k % 13 == 0 && !t.empty()) t.pop_back();
    texts.push_back(std::move(t));
  }
  std::shuffle(texts.begin(), texts.end(), g);
  return texts;
}

TEST(EngineBatch, SmallInputsInBatchesEqualEachAlone) {
  auto g = rng(443);
  constexpr std::uint64_t budget = 1000;
  const std::vector<std::string> texts = many_inputs(g, budget);
  std::vector<std::unique_ptr<temp_file>> files;
  std::vector<input> inputs;
  for (const std::string& t : texts) {
    files.push_back(std::make_unique<temp_file>(t));
    inputs.push_back(input::file(files.back()->path()));
  }
  inputs.push_back(input::file("/nonexistent/gutf8"));
  for (const std::size_t most : {std::size_t{2}, std::size_t{7}, std::size_t{64}}) {
    SCOPED_TRACE("at most " + std::to_string(most) + " inputs a batch");
    run_config config = validate_config();
    config.piece_bytes = 4096;
    internal::engine_tuning t;
    run_plan plan = plan_run(config);
    plan.gpu_only = true;  // the CPU workers open, the batching worker processes
    plan.gpu_batch_inputs = most;
    plan.gpu_batch_bytes = budget;
    plan.ahead = 96;
    plan.small_ahead = 8 * 96;
    t.plan = plan;
    t.cpu_workers = 2;
    auto log = std::make_shared<batch_log>();
    t.extra_workers = [log](const internal::run_context& run, std::size_t first) {
      std::vector<std::unique_ptr<internal::worker>> w;
      w.push_back(std::make_unique<batching_worker>(run, first, log));
      return w;
    };
    // The first result waits: meanwhile the CPU workers open inputs for the batches after it.
    t.hooks.before_publish = [](const internal::worker&, const job& j, const internal::piece_run&) {
      if (j.index == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    };
    kept_run kept;
    internal::run_engine(inputs, config, kept, t);
    EXPECT_TRUE(kept.order_kept);
    for (std::size_t k = 0; k < texts.size(); ++k) {
      ASSERT_TRUE(kept.by_input[k].report) << "input " << k;
      EXPECT_TRUE(same(outcome{kept.by_input[k].out, kept.by_input[k].report->stats},
                       one_shot(operation::validate, error_policy::strict, texts[k])))
          << "input " << k << " of " << texts[k].size() << " bytes";
    }
    EXPECT_TRUE(kept.by_input[texts.size()].failure);
    std::size_t largest = 0;
    for (const auto& sizes : log->sizes) {
      std::uint64_t bytes = 0;
      for (const std::uint64_t s : sizes) bytes += s + 1;
      EXPECT_LE(bytes, budget);
      EXPECT_LE(sizes.size(), most);
      EXPECT_GE(sizes.size(), 2u);
      largest = std::max(largest, sizes.size());
    }
    EXPECT_GE(largest, std::min<std::size_t>(most, 3)) << "the batches stayed small";
  }
}

}  // namespace
