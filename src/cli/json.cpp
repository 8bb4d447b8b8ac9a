#include "cli/json.hpp"

#include <cstdint>
#include <cstdio>

#include "utf8/utf8_rules.hpp"

namespace gutf8::cli {
namespace {

// Length of the well-formed UTF-8 sequence at the start of s, 0 when none starts there.
std::size_t well_formed_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const unsigned length = detail::sequence_length(byte(0));
  if (length == 0 || length > s.size()) return 0;
  for (unsigned i = 1; i < length; ++i)
    if (!detail::continues(byte(0), i, byte(i))) return 0;
  return length;
}

std::string unicode_escape(unsigned unit) {
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, "\\u%04x", unit);
  return escaped;
}

void append_ascii(std::string& out, char c) {
  switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) out += unicode_escape(static_cast<unsigned char>(c));
      else out += c;
  }
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  while (!text.empty()) {
    const std::size_t length = well_formed_length(text);
    if (length == 1) {
      append_ascii(out, text.front());
    } else if (length > 1) {
      out.append(text.substr(0, length));
    } else {
      // PEP 383 "surrogateescape": byte XX becomes U+DCXX, so os.fsencode() gives it back.
      out += unicode_escape(0xDC00u + static_cast<std::uint8_t>(text.front()));
    }
    text.remove_prefix(length == 0 ? 1 : length);
  }
  return out + '"';
}

std::string code_point_label(char32_t c) {
  char label[16];
  std::snprintf(label, sizeof label, "U+%04X", unsigned(c));
  return label;
}

}  // namespace gutf8::cli
