// CPU codec throughput: gutf8 against utfcpp and iconv, on mixed-script text and ASCII.
// Inputs: corpus/sample/{mixed,ascii}.txt tiled to 16 MiB when present (found from this
// file's path, or GUTF8_CORPUS_DIR), otherwise generated mixed-script text; and the mixed
// text with 1% of its bytes overwritten by random bytes 80..FF (the error-repair paths).
// Reproduce: bench_cpu_codec --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <iconv.h>
#include <utf8.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../utf8_append.hpp"
#include "gutf8/gutf8.hpp"

namespace {

// 16 MiB by default (memory-bound on small VMs); GUTF8_BENCH_KIB sets another size, e.g.
// 1536 to time the code on data in a 2 MiB L2. Much smaller inputs repeat too often: the
// branch predictor learns where their errors are, and mispredictions vanish from the timing.
const std::size_t target_size = [] {
  const char* kib = std::getenv("GUTF8_BENCH_KIB");
  return kib != nullptr ? std::size_t{1024} * std::strtoull(kib, nullptr, 10) : std::size_t{16} << 20;
}();

std::filesystem::path corpus_dir() {
  if (const char* dir = std::getenv("GUTF8_CORPUS_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "corpus" / "sample";
}

using gutf8::bench::append_utf8;

// Words from several scripts separated by spaces and newlines, like multilingual prose.
std::string generated_mixed() {
  std::mt19937_64 g(42);
  constexpr std::pair<char32_t, char32_t> scripts[] = {{'a', 'z'},        {0xE0, 0xFF},   {0x3B1, 0x3C9},
                                                       {0x430, 0x44F},    {0x5D0, 0x5EA}, {0x4E00, 0x9FFF},
                                                       {0x1F600, 0x1F64F}};
  std::string s;
  while (s.size() < target_size) {
    const auto& [lo, hi] = scripts[g() % std::size(scripts)];
    for (std::size_t words = 1 + g() % 12; words-- > 0;) {
      for (std::size_t n = 1 + g() % 8; n-- > 0;) append_utf8(s, std::uint32_t(lo + g() % (hi - lo + 1)));
      s += g() % 10 == 0 ? '\n' : ' ';
    }
  }
  return s;
}

std::string tiled(const char* name, std::string (*fallback)()) {
  std::ifstream file(corpus_dir() / name, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  const std::string sample = text.str();
  if (!file || sample.empty()) return fallback();
  std::string s;
  s.reserve(target_size + sample.size());
  while (s.size() < target_size) s += sample;
  std::size_t n = target_size;  // at a sequence start, so that the tiles stay well-formed
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s;
}

std::string generated_ascii() {
  std::string s = generated_mixed();
  for (char& c : s)
    if (static_cast<unsigned char>(c) >= 0x80) c = 'x';
  return s;
}

// Argument of every benchmark: which text.
enum text_kind : int { mixed_text = 0, ascii_text = 1, invalid_text = 2 };
constexpr const char* kind_names[] = {"mixed", "ascii", "mixed-1pct-invalid"};

std::string with_defects(std::string s) {
  std::mt19937_64 g(7);
  for (char& c : s)
    if (g() % 100 == 0) c = static_cast<char>(0x80 | (g() & 0x7F));
  return s;
}

const std::string& input(std::int64_t kind) {
  static const std::string mixed = tiled("mixed.txt", generated_mixed);
  static const std::string plain = tiled("ascii.txt", generated_ascii);
  static const std::string invalid = with_defects(mixed);
  return kind == ascii_text ? plain : kind == invalid_text ? invalid : mixed;
}

// Strict decoding would stop at the first error of the invalid text.
gutf8::error_policy policy_for(std::int64_t kind) {
  return kind == invalid_text ? gutf8::error_policy::replace : gutf8::error_policy::strict;
}

void label(benchmark::State& state, const std::string& in) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size()));
  state.SetLabel(kind_names[state.range(0)]);
}

gutf8::options threads(unsigned n) {
  gutf8::options o;
  o.backend = gutf8::backend::cpu;
  o.threads = n;
  return o;
}

void gutf8_decode(benchmark::State& state, unsigned n) {
  const std::string& in = input(state.range(0));
  std::vector<char32_t> out(in.size());
  for (auto _ : state) {
    const auto r =
        gutf8::decode(gutf8::as_bytes(in), std::span(out), policy_for(state.range(0)), threads(n));
    benchmark::DoNotOptimize(r.written);
    benchmark::ClobberMemory();
  }
  label(state, in);
}
void BM_gutf8_decode(benchmark::State& state) { gutf8_decode(state, 1); }
void BM_gutf8_decode_all_threads(benchmark::State& state) { gutf8_decode(state, 0); }

void BM_utfcpp_utf8to32(benchmark::State& state) {
  const std::string& in = input(state.range(0));
  std::vector<char32_t> out(in.size());
  for (auto _ : state) {
    char32_t* end = utf8::utf8to32(in.begin(), in.end(), out.data());
    benchmark::DoNotOptimize(end);
    benchmark::ClobberMemory();
  }
  label(state, in);
}

void BM_iconv_utf8_to_utf32le(benchmark::State& state) {
  const std::string& in = input(state.range(0));
  std::vector<char> out(4 * in.size());
  const iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    state.SkipWithError("iconv_open failed");
    return;
  }
  for (auto _ : state) {
    char* src = const_cast<char*>(in.data());
    char* dst = out.data();
    std::size_t left = in.size(), room = out.size();
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
    if (iconv(cd, &src, &left, &dst, &room) == static_cast<std::size_t>(-1))
      state.SkipWithError("iconv failed");
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  iconv_close(cd);
  label(state, in);
}

void BM_gutf8_validate(benchmark::State& state) {
  const std::string& in = input(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(gutf8::validate(gutf8::as_bytes(in), threads(1)).errors);
  label(state, in);
}

void BM_utfcpp_is_valid(benchmark::State& state) {
  const std::string& in = input(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(utf8::is_valid(in.begin(), in.end()));
  label(state, in);
}

void BM_gutf8_repair(benchmark::State& state) {
  const std::string& in = input(state.range(0));
  std::u8string out(gutf8::max_repaired_size(in.size()), u8'\0');
  for (auto _ : state) {
    const auto r =
        gutf8::repair(gutf8::as_bytes(in), std::span(out), gutf8::error_policy::replace, threads(1));
    benchmark::DoNotOptimize(r.written);
  }
  label(state, in);
}

void BM_gutf8_stats(benchmark::State& state) {
  const std::string& in = input(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(gutf8::stats(gutf8::as_bytes(in), threads(1)).code_points);
  label(state, in);
}

// Encode is measured per UTF-8 byte of the text it produces, so rows compare directly.
const std::u32string& wide(bool ascii) {
  static const std::u32string mixed = gutf8::decode(input(false), gutf8::error_policy::replace);
  static const std::u32string plain = gutf8::decode(input(true), gutf8::error_policy::replace);
  return ascii ? plain : mixed;
}

void BM_gutf8_encode(benchmark::State& state) {
  const std::u32string& in = wide(state.range(0) == ascii_text);
  const auto bytes = std::as_bytes(std::span(in.data(), in.size()));
  std::u8string out(gutf8::max_encoded_size(bytes.size()), u8'\0');
  for (auto _ : state) {
    const auto r = gutf8::encode(bytes, std::span(out), gutf8::error_policy::strict, threads(1));
    benchmark::DoNotOptimize(r.written);
  }
  label(state, input(state.range(0)));
}

void BM_utfcpp_utf32to8(benchmark::State& state) {
  const std::u32string& in = wide(state.range(0) == ascii_text);
  std::string out(4 * in.size(), '\0');
  for (auto _ : state) {
    char* end = utf8::utf32to8(in.begin(), in.end(), out.data());
    benchmark::DoNotOptimize(end);
    benchmark::ClobberMemory();
  }
  label(state, input(state.range(0)));
}

}  // namespace

// Argument: a text_kind.
BENCHMARK(BM_gutf8_decode)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_utfcpp_utf8to32)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_iconv_utf8_to_utf32le)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gutf8_decode_all_threads)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_gutf8_validate)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_utfcpp_is_valid)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gutf8_repair)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gutf8_stats)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gutf8_encode)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_utfcpp_utf32to8)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
