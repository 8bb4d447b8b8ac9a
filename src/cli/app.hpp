// The whole tool as a function: parse, run, map every failure to a message and an exit
// status (SPEC §2). Nothing below it prints a stack trace or exits.
#pragma once

namespace gutf8::cli {

int run(int argc, const char* const* argv);

}  // namespace gutf8::cli
