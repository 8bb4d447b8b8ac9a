// CPU string-column throughput (gutf8/columns.hpp), one thread and all threads, on the columns
// of bench/columns_data.hpp. bytes_per_second counts the column's data bytes, items its rows.
// Reproduce: bench_cpu_columns --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// (bench/columns_cpu.py runs it beside pyarrow and CPython on the same bytes).
#include <benchmark/benchmark.h>

#include <thread>

#include "../columns_data.hpp"
#include "gutf8/columns.hpp"

namespace {

using namespace gutf8;

const std::vector<bench::column_data>& columns() {
  static const std::vector<bench::column_data> all = bench::bench_columns();
  return all;
}

template <class Op>
void run(benchmark::State& state, const bench::column_data& c, unsigned threads, const Op& op) {
  const bench::arrow_view v(c);
  column_options opt;
  opt.threads = threads;
  for (auto _ : state) benchmark::DoNotOptimize(op(v, opt));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(c.data.size()));
  state.SetItemsProcessed(state.iterations() * c.rows());
}

void register_all() {
  const unsigned all = std::max(1u, std::thread::hardware_concurrency());
  for (const bench::column_data& c : columns()) {
    for (const unsigned threads : {1u, all}) {
      const std::string suffix = "/" + c.name + "/threads:" + std::to_string(threads);
      const auto add = [&](const char* op_name, auto op) {
        benchmark::RegisterBenchmark((op_name + suffix).c_str(), [&c, threads, op](benchmark::State& s) {
          run(s, c, threads, op);
        })->Unit(benchmark::kMillisecond)->UseRealTime();
      };
      add("is_valid", [](const bench::arrow_view& v, const column_options& o) {
        return is_valid(v.array, v.schema, o).invalid_rows;
      });
      add("make_valid_replace", [](const bench::arrow_view& v, const column_options& o) {
        return make_valid(v.array, v.schema, error_policy::replace, o).length();
      });
      add("cast_to_utf8_null", [](const bench::arrow_view& v, const column_options& o) {
        return cast_to_utf8(v.array, v.schema, on_invalid::null, o).length();
      });
      add("count_code_points_replace", [](const bench::arrow_view& v, const column_options& o) {
        return count_code_points(v.array, v.schema, on_invalid::replace, o).length();
      });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
