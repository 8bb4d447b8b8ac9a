#include "cli/signals.hpp"

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace gutf8::cli {
namespace {

// The only global mutable state of the CLI, because a signal handler can reach nothing
// else: the path of the temporary to unlink. A lock-free atomic pointer is safe to read
// from the handler; the string it points to is owned by atomic_output_file.
std::atomic<const char*> temporary_path{nullptr};
static_assert(std::atomic<const char*>::is_always_lock_free);

extern "C" void on_terminating_signal(int sig) {
  // unlink, signal and raise are async-signal-safe.
  if (const char* path = temporary_path.exchange(nullptr)) ::unlink(path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

extern "C" void on_shrunk_input(int) { input_shrank(); }

}  // namespace

void input_shrank() noexcept {
  // Only async-signal-safe calls: unlink, write, _exit.
  if (const char* path = temporary_path.exchange(nullptr)) ::unlink(path);
  static constexpr char message[] = "gutf8: an input file shrank while it was read\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, message, sizeof message - 1);
  ::_exit(3);
}

shrunk_input_guard::shrunk_input_guard() noexcept : previous_{} {
  struct sigaction action {};
  action.sa_handler = on_shrunk_input;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &previous_);
}

shrunk_input_guard::~shrunk_input_guard() { ::sigaction(SIGBUS, &previous_, nullptr); }

void install_signal_handlers() noexcept {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = on_terminating_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // Respect an inherited "ignore" (nohup, background jobs of non-interactive shells).
    struct sigaction previous {};
    if (::sigaction(sig, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &action, nullptr);
  }
}

void register_temporary(const char* path) noexcept { temporary_path.store(path); }
void unregister_temporary() noexcept { temporary_path.store(nullptr); }

}  // namespace gutf8::cli
