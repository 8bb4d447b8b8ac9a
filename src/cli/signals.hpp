// Process-wide signal set-up. SIGPIPE is ignored so that a closed pipe shows up as EPIPE
// from write(), which the CLI turns into a quiet end. SIGINT, SIGTERM and SIGHUP remove
// the one temporary output file being written (if any), then end the process by the same
// signal, so the shell still sees "killed by SIGINT" (status 130) and no OUT is left.
#pragma once

namespace gutf8::cli {

void install_signal_handlers() noexcept;

// The temporary a signal must remove. At most one is registered at a time (there is at
// most one -o file); path must stay valid until unregister_temporary().
void register_temporary(const char* path) noexcept;
void unregister_temporary() noexcept;

}  // namespace gutf8::cli
