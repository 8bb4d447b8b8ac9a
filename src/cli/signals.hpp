// Process-wide signal set-up. SIGPIPE is ignored so that a closed pipe shows up as EPIPE
// from write(), which the CLI turns into a quiet end. SIGINT, SIGTERM and SIGHUP remove
// the one temporary output file being written (if any), then end the process by the same
// signal, so the shell still sees "killed by SIGINT" (status 130) and no OUT is left.
#pragma once

#include <signal.h>

namespace gutf8::cli {

void install_signal_handlers() noexcept;

// The temporary a signal must remove. At most one is registered at a time (there is at
// most one -o file); path must stay valid until unregister_temporary().
void register_temporary(const char* path) noexcept;
void unregister_temporary() noexcept;

// While it lives (the CLI maps input files, cli/mapped_input.hpp): SIGBUS, which is how a
// read of a mapped page past a file's new end shows, removes the temporary, prints
// "gutf8: an input file shrank while it was read" and exits with status 3.
// What the guard does on SIGBUS: also where a write of output that lies in a mapped input file
// (the engine hands valid repairs over in place) fails with EFAULT because the file shrank.
[[noreturn]] void input_shrank() noexcept;

class shrunk_input_guard {
 public:
  shrunk_input_guard() noexcept;
  ~shrunk_input_guard();
  shrunk_input_guard(const shrunk_input_guard&) = delete;
  shrunk_input_guard& operator=(const shrunk_input_guard&) = delete;

 private:
  struct sigaction previous_;
};

}  // namespace gutf8::cli
