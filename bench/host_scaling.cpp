// Where the host path's time goes as threads are added: the CPU block processor alone over a
// regular file, read in each of the ways an input engine could read it, with nothing else (no
// scheduler, no commit). Set beside the whole CLI and a peer's run, it separates the scanner's
// scaling from the pipeline's.
//
//   bench_host_scaling --file F [--op validate|decode] [--threads 1,2,4,8,16] [--chunk-mib 2,8]
//                      [--modes memory,whole,populate,segments,pread] [--lines 0|1] [--reps 5]
//                      [--isa avx512|avx2|portable]
//
// memory:   an anonymous copy of the file, filled before timing (the scanner and DRAM alone)
// whole:    one map of the whole file made inside each timed run, chunks scanned in place
// populate: the same, each chunk's pages mapped with MADV_POPULATE_READ before it is scanned
// segments: 64 MiB maps made on demand and unmapped when their chunks are done, populated per
//           chunk (what the file pipeline's mapped reads did)
// pread:    each thread copies its chunk into its own buffer with pread, then scans it
// Prints CSV: mode,op,chunk_mib,threads,median_s,gb_per_s (GB/s of input, median of reps).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codec/block.hpp"
#include "codec/boundary.hpp"
#include "cpu/cpu_block.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::internal;

std::vector<std::uint64_t> numbers(const std::string& list) {
  std::vector<std::uint64_t> v;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) v.push_back(std::stoull(item));
  return v;
}

std::vector<std::string> words(const std::string& list) {
  std::vector<std::string> v;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) v.push_back(item);
  return v;
}

struct job {
  operation op;
  bool lines;
  cpu_tuning tuning;
  std::uint64_t size;
  std::uint64_t chunk;
  [[nodiscard]] std::uint64_t chunks() const { return (size + chunk - 1) / chunk; }
};

// Scans chunk k of the input whose bytes [from, to) are at p (p[0] is byte `from`).
std::uint64_t scan(block_processor& proc, const job& j, std::uint64_t k, const std::uint8_t* p,
                   std::uint64_t from, std::uint64_t to, std::uint8_t* out) {
  const std::uint64_t begin_nominal = k * j.chunk, end_nominal = std::min(j.size, (k + 1) * j.chunk);
  const auto size = static_cast<std::size_t>(to - from);
  const auto cut = [&](std::uint64_t nominal) {
    return nominal >= j.size ? size : unit_start_at_or_after(p, static_cast<std::size_t>(nominal - from), size, false);
  };
  const std::size_t begin = k == 0 ? 0 : cut(begin_nominal);
  block_request rq;
  rq.op = j.op;
  rq.data = p + begin;
  rq.size = size - begin;
  rq.end = cut(end_nominal) - begin;
  rq.at_end = to == j.size;
  rq.count_lines = j.lines;
  rq.out = out;
  return proc.process(rq).errors;
}

class populated_map {
 public:
  populated_map(int fd, std::uint64_t offset, std::uint64_t length) : length_(length) {
    base_ = static_cast<std::uint8_t*>(::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset)));
    if (base_ == MAP_FAILED) {
      std::perror("mmap");
      std::exit(3);
    }
  }
  ~populated_map() { ::munmap(base_, length_); }
  populated_map(const populated_map&) = delete;
  populated_map& operator=(const populated_map&) = delete;
  [[nodiscard]] const std::uint8_t* data() const { return base_; }
  void populate(std::uint64_t at, std::uint64_t length) const {
    const std::uint64_t page = 4096, from = at / page * page;
    (void)::madvise(base_ + from, at + length - from, MADV_POPULATE_READ);
  }

 private:
  std::uint8_t* base_;
  std::uint64_t length_;
};

constexpr std::uint64_t window_lead = 3, window_tail = 7, segment_bytes = std::uint64_t{64} << 20;

// One timed run of `mode` with `threads` threads; returns seconds.
double run_once(const std::string& mode, int fd, const job& j, unsigned threads, const std::uint8_t* memory) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<populated_map> whole;
  if (mode == "whole" || mode == "populate") whole = std::make_unique<populated_map>(fd, 0, j.size);
  // segments: one map per 64 MiB, made by the first chunk that needs it, unmapped by the last.
  const std::uint64_t per_segment = std::max<std::uint64_t>(1, segment_bytes / j.chunk);
  const std::uint64_t segments = (j.chunks() + per_segment - 1) / per_segment;
  std::vector<std::unique_ptr<populated_map>> maps(segments);
  std::vector<std::uint64_t> left(segments);
  for (std::uint64_t s = 0; s < segments; ++s) left[s] = std::min(per_segment, j.chunks() - s * per_segment);
  std::mutex m;
  std::atomic<std::uint64_t> next{0}, errors{0};
  const std::size_t out_bytes = output_width(j.op) * (j.chunk + window_lead + window_tail) + 4;
  const auto work = [&] {
    auto proc = make_cpu_processor(1, j.tuning);
    std::vector<std::uint8_t> buffer, out(out_bytes);
    for (std::uint64_t k; (k = next++) < j.chunks();) {
      const std::uint64_t from = k * j.chunk < window_lead ? 0 : k * j.chunk - window_lead;
      const std::uint64_t to = std::min(j.size, (k + 1) * j.chunk + window_tail);
      std::uint8_t* o = j.op == operation::decode ? out.data() : nullptr;
      if (mode == "memory") {
        errors += scan(*proc, j, k, memory + from, from, to, o);
      } else if (whole) {
        if (mode == "populate") whole->populate(from, to - from);
        errors += scan(*proc, j, k, whole->data() + from, from, to, o);
      } else if (mode == "pread") {
        buffer.resize(to - from);
        if (::pread(fd, buffer.data(), to - from, static_cast<off_t>(from)) != static_cast<ssize_t>(to - from)) std::exit(3);
        errors += scan(*proc, j, k, buffer.data(), from, to, o);
      } else {  // segments
        const std::uint64_t s = k / per_segment;
        const std::uint64_t seg_from = s * segment_bytes < 4096 ? 0 : s * segment_bytes - 4096;
        const populated_map* map = nullptr;
        {
          std::lock_guard lock(m);
          if (!maps[s]) maps[s] = std::make_unique<populated_map>(fd, seg_from, std::min(j.size, (s + 1) * segment_bytes + 4096) - seg_from);
          map = maps[s].get();
        }
        map->populate(from - seg_from, to - from);
        errors += scan(*proc, j, k, map->data() + (from - seg_from), from, to, o);
        std::lock_guard lock(m);
        if (--left[s] == 0) maps[s].reset();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  whole.reset();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (errors.load() == UINT64_MAX) std::puts("");  // keeps the scan's result alive
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> arg{{"op", "validate"}, {"threads", "1,2,4,8,16"}, {"chunk-mib", "2,8"},
                                         {"modes", "memory,whole,populate,segments,pread"}, {"lines", "0"}, {"reps", "5"}};
  for (int i = 1; i + 1 < argc; i += 2) arg[std::string(argv[i]).substr(2)] = argv[i + 1];
  if (!arg.contains("file")) {
    std::fprintf(stderr, "usage: bench_host_scaling --file F [options] (see the source)\n");
    return 2;
  }
  const int fd = ::open(arg["file"].c_str(), O_RDONLY);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size == 0) {
    std::fprintf(stderr, "bench_host_scaling: cannot read %s\n", arg["file"].c_str());
    return 3;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const operation op = arg["op"] == "decode" ? operation::decode : operation::validate;
  const std::vector<std::string> modes = words(arg["modes"]);
  std::vector<std::uint8_t> memory;
  if (std::ranges::find(modes, "memory") != modes.end()) {
    memory.resize(size);
    for (std::uint64_t at = 0; at < size;) {  // one read returns at most ~2 GiB
      const ssize_t n = ::pread(fd, memory.data() + at, size - at, static_cast<off_t>(at));
      if (n <= 0) return 3;
      at += static_cast<std::uint64_t>(n);
    }
  }
  const int reps = std::stoi(arg["reps"]);
  std::printf("mode,op,chunk_mib,threads,median_s,gb_per_s\n");
  for (const std::uint64_t mib : numbers(arg["chunk-mib"]))
    for (const std::string& mode : modes)
      for (const std::uint64_t threads : numbers(arg["threads"])) {
        cpu_tuning tuning;
        if (arg.contains("isa")) tuning.level = arg["isa"] == "avx2" ? cpu::isa::avx2 : arg["isa"] == "portable" ? cpu::isa::portable : cpu::isa::avx512;
        const job j{op, arg["lines"] == "1", tuning, size, mib << 20};
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) times.push_back(run_once(mode, fd, j, static_cast<unsigned>(threads), memory.data()));
        std::ranges::sort(times);
        const double median = times[times.size() / 2];
        std::printf("%s,%s,%llu,%llu,%.5f,%.2f\n", mode.c_str(), arg["op"].c_str(), static_cast<unsigned long long>(mib),
                    static_cast<unsigned long long>(threads), median, static_cast<double>(size) / median / 1e9);
        std::fflush(stdout);
      }
  return 0;
}
