// gutf8 stats: counts per file, and over several files a total (as wc), as text for people or
// JSON Lines.
// Errors in the input are counted, not failed on: stats exits 0 for invalid text.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>

#include "cli/commands.hpp"
#include "cli/json.hpp"
#include "utf8/utf8_rules.hpp"

namespace gutf8::cli {
namespace {

// Whether showing the character itself helps: not for controls, whitespace, invisible
// format characters, combining marks (they would attach to the column before), private
// use or noncharacters. Everything else is assumed to have a glyph.
bool printable(char32_t c) {
  struct range { char32_t lo, hi; };
  static constexpr range hidden[] = {
      {0x0000, 0x0020}, {0x007F, 0x00A0}, {0x00AD, 0x00AD}, {0x0300, 0x036F},
      {0x061C, 0x061C}, {0x1680, 0x1680}, {0x180E, 0x180E}, {0x2000, 0x200F},
      {0x2028, 0x202F}, {0x205F, 0x206F}, {0x3000, 0x3000}, {0xD800, 0xF8FF},
      {0xFDD0, 0xFDEF}, {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB}, {0xE0000, 0xE007F},
      {0xF0000, 0x10FFFF}};
  for (const range& r : hidden)
    if (c >= r.lo && c <= r.hi) return false;
  return (c & 0xFFFEu) != 0xFFFEu;  // U+xFFFE and U+xFFFF are noncharacters
}

std::string as_utf8(char32_t c) {
  std::uint8_t bytes[4];
  const unsigned n = detail::encode_scalar(c, bytes);
  return {reinterpret_cast<const char*>(bytes), n};
}

std::string count_line(std::string_view label, std::uint64_t n) {
  char line[64];
  std::snprintf(line, sizeof line, "%-13s%llu\n", std::string(label).c_str(),
                static_cast<unsigned long long>(n));
  return line;
}

// Count before the character, so the counts line up whatever the glyph's width.
std::string top_line(const code_point_count& entry, int count_width) {
  char line[64];
  std::snprintf(line, sizeof line, "  %-8s %*llu", code_point_label(entry.code_point).c_str(),
                count_width, static_cast<unsigned long long>(entry.count));
  std::string text = line;
  if (printable(entry.code_point)) text += "  " + as_utf8(entry.code_point);
  return text + '\n';
}

// heading: "file:        NAME" or "total:       N files".
std::string stats_text(const std::string& heading, const text_stats& st,
                       const std::vector<code_point_count>& top, std::size_t top_asked) {
  std::string text = heading + '\n';
  text += count_line("bytes:", st.input.bytes);
  text += count_line("code points:", st.code_points);
  text += count_line("lines:", st.lines);
  text += count_line("errors:", st.input.errors);
  for (std::size_t i = 0; i < st.by_length.size(); ++i)
    text += count_line(std::to_string(i + 1) + "-byte:", st.by_length[i]);
  if (top_asked == 0) return text;
  text += "top " + std::to_string(top_asked) + ":\n";
  const int width = top.empty() ? 1 : int(std::to_string(top.front().count).size());
  for (const auto& entry : top) text += top_line(entry, width);
  return text;
}

// key: "\"file\":NAME" or "\"total\":true,\"files\":N".
std::string stats_json(const std::string& key, const text_stats& st,
                       const std::vector<code_point_count>& top) {
  std::string json = "{" + key + ",\"bytes\":" + std::to_string(st.input.bytes) +
                     ",\"code_points\":" + std::to_string(st.code_points) +
                     ",\"lines\":" + std::to_string(st.lines) +
                     ",\"errors\":" + std::to_string(st.input.errors) + ",\"sequences\":{";
  // Appended part by part: GCC 12 gives a false -Wrestrict for "literal" + string.
  for (std::size_t i = 0; i < st.by_length.size(); ++i) {
    json += i ? ",\"" : "\"";
    json += std::to_string(i + 1);
    json += "\":";
    json += std::to_string(st.by_length[i]);
  }
  json += "},\"top\":[";
  for (std::size_t i = 0; i < top.size(); ++i) {
    json += i ? ",{\"code_point\":\"" : "{\"code_point\":\"";
    json += code_point_label(top[i].code_point);
    json += "\",\"value\":";  // the same code point as an integer, for programs
    json += std::to_string(std::uint32_t(top[i].code_point));
    json += ",\"count\":";
    json += std::to_string(top[i].count);
    json += '}';
  }
  return json + "]}\n";
}

// The sum over the inputs that could be read, as wc's "total" line.
class totals {
 public:
  void add(const input_result& st, bool with_top) {
    ++files_;
    const text_stats& one = st.stats();
    sum_.input.bytes += one.input.bytes;
    sum_.input.errors += one.input.errors;
    sum_.code_points += one.code_points;
    sum_.lines += one.lines;
    for (std::size_t i = 0; i < sum_.by_length.size(); ++i) sum_.by_length[i] += one.by_length[i];
    // Every code point of every file, so that the total's top N is exact.
    if (with_top)
      for (const code_point_count& c : st.top(SIZE_MAX)) counts_[c.code_point] += c.count;
  }
  [[nodiscard]] std::size_t files() const noexcept { return files_; }
  [[nodiscard]] const text_stats& sum() const noexcept { return sum_; }
  // The n most frequent over all files: count descending, then code point ascending.
  [[nodiscard]] std::vector<code_point_count> top(std::size_t n) const {
    std::vector<code_point_count> all;
    for (const auto& [code_point, count] : counts_) all.push_back({code_point, count});
    n = std::min(n, all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(n), all.end(),
                      [](const code_point_count& a, const code_point_count& b) {
                        return a.count != b.count ? a.count > b.count : a.code_point < b.code_point;
                      });
    all.resize(n);
    return all;
  }

 private:
  std::size_t files_ = 0;
  text_stats sum_{};
  std::map<char32_t, std::uint64_t> counts_;
};

}  // namespace

void run_stats(invocation& inv) {
  const cli_options& opt = inv.options();
  const bool with_total = opt.inputs.size() > 1;
  totals total;
  if (opt.json) record_unreadable_as_json(inv);
  inv.for_each_input(inv.config(operation::stats, opt.top > 0), nullptr,
                   [&](const std::string& name, const input_result& st) {
    const auto top = opt.top > 0 ? st.top(opt.top) : std::vector<code_point_count>{};
    if (opt.json) {
      inv.out().write(stats_json("\"file\":" + json_string(name), st.stats(), top));
    } else {
      if (total.files() != 0) inv.out().write("\n");  // a blank line between files
      inv.out().write(stats_text("file:        " + name, st.stats(), top, opt.top));
    }
    if (with_total) total.add(st, opt.top > 0);
  }, with_total ? SIZE_MAX : opt.top);  // the total's top N needs every code point of every file
  if (!with_total) return;
  const std::string files = std::to_string(total.files());
  if (opt.json) {
    inv.out().write(stats_json("\"total\":true,\"files\":" + files, total.sum(), total.top(opt.top)));
  } else {
    if (total.files() != 0) inv.out().write("\n");
    inv.out().write(stats_text("total:       " + files + (total.files() == 1 ? " file" : " files"),
                             total.sum(), total.top(opt.top), opt.top));
  }
}

}  // namespace gutf8::cli
