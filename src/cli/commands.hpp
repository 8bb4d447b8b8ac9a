// The four commands. Each returns through the invocation's status; I/O failures on the
// output and library failures (no GPU) propagate as exceptions to cli::run.
#pragma once

#include <functional>
#include <string>

#include "cli/invocation.hpp"

namespace gutf8::cli {

void run_transcode(invocation& inv);  // decode, encode
void run_validate(invocation& inv);
void run_stats(invocation& inv);

// Runs the parsed command line; returns the exit status (quietly 0-contributing on EPIPE).
int run_command(const cli_options& options);

// --json: a record {"file","error"} for each input that cannot be read, on standard output or
// through write.
void record_unreadable_as_json(invocation& inv);
void record_unreadable_as_json(invocation& inv, const std::function<void(const std::string&)>& write);

// "1 invalid sequence", "2 invalid sequences": English plural by appending "s".
std::string count_of(std::uint64_t n, std::string_view noun);

// "invalid UTF-8 at byte 1 (line 1, column 2): REASON"; input: "UTF-8", "UTF-16LE", ...
std::string describe_position(std::string_view input, const error_position& e);

// "invalid UTF-8 at byte 1 (line 1, column 2): REASON" / "invalid UTF-16LE at byte 4 (...): REASON"
std::string describe_invalid(std::string_view input, const summary& in);

}  // namespace gutf8::cli
