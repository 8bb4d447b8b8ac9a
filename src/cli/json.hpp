// The little JSON the CLI writes: JSON Lines (one object per line), built by hand (no dependency).
#pragma once

#include <string>
#include <string_view>

namespace gutf8::cli {

// A JSON string literal, quotes included. File names are bytes, not necessarily UTF-8: each
// byte outside a well-formed sequence XX is written \udcXX (Python's "surrogateescape", PEP 383),
// so the name is lossless: Python's os.fsencode(json.loads(...)) gives the original bytes.
std::string json_string(std::string_view text);

// "U+0041", "U+1F600": at least four upper-case hex digits.
std::string code_point_label(char32_t c);

}  // namespace gutf8::cli
