// The little JSON the CLI writes: one object per line, built by hand (no dependency).
#pragma once

#include <string>
#include <string_view>

namespace gutf8::cli {

// A JSON string literal, quotes included. File names are bytes, not necessarily UTF-8:
// invalid sequences become U+FFFD so that the output is always valid JSON.
std::string json_string(std::string_view text);

// "U+0041", "U+1F600": at least four upper-case hex digits.
std::string code_point_label(char32_t c);

}  // namespace gutf8::cli
