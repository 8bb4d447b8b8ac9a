#include "cli/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unistd.h>

#include "cli/io.hpp"

namespace gutf8::cli {
namespace {

using namespace std::chrono_literals;
constexpr auto first_draw_after = 500ms;
constexpr auto redraw_interval = 100ms;

double seconds(steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }


std::string format(const char* fmt, auto... args) {
  char buffer[128];
  const int n = std::snprintf(buffer, sizeof buffer, fmt, args...);
  return n > 0 ? std::string(buffer, std::min<std::size_t>(std::size_t(n), sizeof buffer - 1)) : "";
}

std::string rate(std::uint64_t bytes, steady_clock::duration elapsed) {
  const double s = seconds(elapsed);
  return s > 0 ? format("%.2f GB/s", double(bytes) / s / 1e9) : std::string("-- GB/s");
}

}  // namespace

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = double(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? format("%llu B", static_cast<unsigned long long>(bytes))
                   : format("%.1f %s", value, units[unit]);
}

bool progress_bar::wanted(bool enabled_by_options) {
  return enabled_by_options && ::isatty(STDERR_FILENO) == 1;
}

void progress_bar::start(std::optional<std::uint64_t> total) {
  enabled_ = true;
  total_ = total;
  start_ = steady_clock::now();
}

void progress_bar::advance(std::uint64_t bytes) {
  done_ += bytes;
  if (!enabled_) return;
  const auto now = steady_clock::now();
  if (now - start_ < first_draw_after || now - last_draw_ < redraw_interval) return;
  draw(now);
}

void progress_bar::draw(steady_clock::time_point now) {
  last_draw_ = now;
  const auto elapsed = now - start_;
  // Appended piece by piece: GCC 12 gives a false -Wrestrict for "literal" + string.
  std::string line = "\r";
  line += human_bytes(done_);
  if (total_ && *total_ > 0) {
    const double fraction = std::min(1.0, double(done_) / double(*total_));
    line += " / ";
    line += human_bytes(*total_);
    line += format(" %3.0f%%  ", 100 * fraction);
    line += rate(done_, elapsed);
    if (done_ > 0 && fraction < 1) {
      const auto eta =
          static_cast<unsigned long long>(std::ceil(seconds(elapsed) * (1 - fraction) / fraction));
      line += format("  ETA %llu:%02llu", eta / 60, eta % 60);
    }
  } else {
    line += "  ";
    line += rate(done_, elapsed);
  }
  write_stderr(line + "\033[K");
  shown_ = true;
}

void progress_bar::clear() {
  if (!shown_) return;
  write_stderr("\r\033[K");
  shown_ = false;
}

std::string stage_times::report() const {
  const auto total = steady_clock::now() - start;
  std::string text = format("read %.3f s, process %.3f s", seconds(read), seconds(process));
  if (workers > 1) text += format(" (summed over %u workers)", workers);
  text += format(" (H2D %.3f s, kernels %.3f s, D2H %.3f s, staging %.3f s; ", h2d, kernels, d2h,
                 staging);
  text += human_bytes(gpu_bytes);
  if (gpu_startup > 0) text += format(" on the GPU after a start-up of %.3f s", gpu_startup);
  else text += " on the GPU";
  text += format("), write %.3f s; ", seconds(write));
  return text + human_bytes(bytes) + format(" in %.3f s, ", seconds(total)) + rate(bytes, total);
}

}  // namespace gutf8::cli
