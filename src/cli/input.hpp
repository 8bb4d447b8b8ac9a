// How the CLI names its inputs: "-" is standard input, shown as "<stdin>"; the engine reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gutf8/engine.hpp"

namespace gutf8::cli {

// How a file is named in messages: "-" is shown as "<stdin>".
std::string display_name(std::string_view path);

// The input the engine reads for a command-line name.
gutf8::input input_named(const std::string& path);

// The size of a regular file, for the progress bar's total and ETA; nullopt for pipes,
// terminals, devices and files that cannot be examined (their error comes when they are read).
std::optional<std::uint64_t> regular_file_size(const std::string& path);

}  // namespace gutf8::cli
