#include "cli/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <sys/ioctl.h>
#include <unistd.h>
#include <vector>

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

struct unit_scale {
  const char* name;
  double divisor;
};

// The largest unit in which `bytes` is at least `least` (human_bytes: 1; the bar: 10, so that
// "1006.0 / 1024.0 MiB" moves in visible steps where "1.0 / 1.0 GiB" would stand still).
unit_scale scale_for(std::uint64_t bytes, double least = 1) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double divisor = 1;
  std::size_t unit = 0;
  while (double(bytes) / (divisor * 1024) >= least && unit + 1 < std::size(units)) {
    divisor *= 1024;
    ++unit;
  }
  return {units[unit], divisor};
}

std::string in_unit(std::uint64_t bytes, unit_scale scale) {
  if (scale.divisor == 1) return format("%llu", static_cast<unsigned long long>(bytes));
  return format("%.1f", double(bytes) / scale.divisor);
}

}  // namespace

std::string progress_text(std::uint64_t done, std::optional<std::uint64_t> total,
                          steady_clock::duration elapsed, unsigned columns) {
  std::vector<std::string> fields;
  if (total && *total > 0) {
    const unit_scale scale = scale_for(*total, 10);
    const double fraction = std::min(1.0, double(done) / double(*total));
    fields.push_back(in_unit(done, scale) + " / " + in_unit(*total, scale) + ' ' + scale.name);
    fields.push_back(format("%3.0f%%", 100 * fraction));
    fields.push_back(rate(done, elapsed));
    if (done > 0 && fraction < 1) {
      const auto eta =
          static_cast<unsigned long long>(std::ceil(seconds(elapsed) * (1 - fraction) / fraction));
      fields.push_back(format("ETA %llu:%02llu", eta / 60, eta % 60));
    }
  } else {
    fields.push_back(human_bytes(done));
    fields.push_back(rate(done, elapsed));
  }
  const std::size_t room = columns > 1 ? columns - 1 : 0;
  std::string text;
  for (const auto& field : fields) {
    const std::size_t needed = text.size() + (text.empty() ? 0 : 2) + field.size();
    if (!text.empty() && needed > room) break;
    if (!text.empty()) text += "  ";
    text += field;
  }
  return text.substr(0, room);
}

std::string human_bytes(std::uint64_t bytes) {
  const unit_scale scale = scale_for(bytes);
  return in_unit(bytes, scale) + ' ' + scale.name;
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
  // Appended part by part: GCC 12 gives a false -Wrestrict for "literal" + string.
  std::string line = "\r";
  line += progress_text(done_, total_, now - start_, terminal_columns());
  line += "\033[K";
  write_stderr(line);
  shown_ = true;
}

// Asked at each redraw, so a resized window is followed.
unsigned progress_bar::terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

void progress_bar::clear() {
  if (!shown_) return;
  write_stderr("\r\033[K");
  shown_ = false;
}

std::string stage_times::report() const {
  const auto total = steady_clock::now() - start;
  std::string text = format("read and process %.3f s (CPU workers %s; ", seconds(process), human_bytes(cpu_bytes).c_str());
  text += format("H2D %.3f s, kernels %.3f s, D2H %.3f s, staging %.3f s; ", h2d, kernels, d2h, staging);
  text += human_bytes(gpu_bytes);
  if (gpu_startup > 0) text += format(" on the GPU after a start-up of %.3f s", gpu_startup);
  else text += " on the GPU";
  if (gpu_decompressed != 0) text += ", " + human_bytes(gpu_decompressed) + " of text decompressed there";
  text += format("), write %.3f s; ", seconds(write));
  return text + human_bytes(bytes) + format(" in %.3f s, ", seconds(total)) + rate(bytes, total);
}

}  // namespace gutf8::cli
