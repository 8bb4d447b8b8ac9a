#include "cli/json.hpp"

#include <cstdio>

#include "gutf8/codec.hpp"

namespace gutf8::cli {

std::string json_string(std::string_view text) {
  // The CPU backend: a file name is never worth a GPU.
  const std::u8string utf8 =
      gutf8::sanitize(text, error_policy::replace, nullptr, options{backend::cpu});
  std::string out = "\"";
  for (const char8_t c : utf8) {
    switch (c) {
      case u8'"': out += "\\\""; break;
      case u8'\\': out += "\\\\"; break;
      case u8'\n': out += "\\n"; break;
      case u8'\r': out += "\\r"; break;
      case u8'\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", unsigned(c));
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + '"';
}

std::string code_point_label(char32_t c) {
  char label[16];
  std::snprintf(label, sizeof label, "U+%04X", unsigned(c));
  return label;
}

}  // namespace gutf8::cli
