// gutf8 stats: counts per file, as text for people or one JSON object per line.
// Errors in the input are counted, not failed on: stats exits 0 for invalid text.
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/json.hpp"
#include "gutf8/detail/utf8_rules.hpp"

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

std::string stats_text(const std::string& name, const text_stats& st,
                       const std::vector<code_point_count>& top, std::size_t top_asked) {
  std::string text = "file:        " + name + '\n';
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

std::string stats_json(const std::string& name, const text_stats& st,
                       const std::vector<code_point_count>& top) {
  std::string json = "{\"file\":" + json_string(name) +
                     ",\"bytes\":" + std::to_string(st.input.bytes) +
                     ",\"code_points\":" + std::to_string(st.code_points) +
                     ",\"lines\":" + std::to_string(st.lines) +
                     ",\"errors\":" + std::to_string(st.input.errors) + ",\"sequences\":{";
  // Appended piece by piece: GCC 12 gives a false -Wrestrict for "literal" + string.
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
    json += "\",\"count\":";
    json += std::to_string(top[i].count);
    json += '}';
  }
  return json + "]}\n";
}

}  // namespace

void run_stats(session& s) {
  const cli_options& opt = s.options();
  bool first = true;
  s.for_each_input(s.config(operation::stats, opt.top > 0), nullptr,
                   [&](const std::string& name, const input_result& st) {
    const auto top = opt.top > 0 ? st.top(opt.top) : std::vector<code_point_count>{};
    if (opt.json) {
      s.out().write(stats_json(name, st.stats(), top));
    } else {
      if (!first) s.out().write("\n");  // a blank line between files
      s.out().write(stats_text(name, st.stats(), top, opt.top));
    }
    first = false;
  }, opt.top);
}

}  // namespace gutf8::cli
