// The one error type of gutf8. Library code that a user calls in a loop returns
// status values; this exception is only raised by set-up paths (backend selection,
// allocation of RAII resources) and by the host convenience wrappers.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

namespace gutf8 {

enum class errc : int {
  ok = 0,
  invalid_argument,   // bad sizes, null buffers, unsupported option
  output_too_small,   // the caller's output span cannot hold the worst case
  no_device,          // CUDA backend asked for but not built in or no usable GPU
  device_failure,     // a CUDA call failed (message carries its name and context)
  out_of_memory,      // device or pinned allocation failed
  io_failure,         // reading or writing a file or pipe
};

class error : public std::runtime_error {
 public:
  // errno_value: the errno of the failed system call behind an io_failure, 0 when there is none.
  error(errc code, const std::string& what, int errno_value = 0)
      : std::runtime_error(what), code_(code), errno_value_(errno_value) {}
  [[nodiscard]] errc code() const noexcept { return code_; }
  // Lets a binding raise what its language raises for that errno (Python: FileNotFoundError, ...).
  [[nodiscard]] int errno_value() const noexcept { return errno_value_; }

 private:
  errc code_;
  int errno_value_;
};

// The io_failure of a system call that failed with errno `e`: "context: reason" (the reason alone
// without a context), errno_value() = e.
inline error system_call_failure(int e, const std::string& context = {}) {
  const std::string reason = std::strerror(e);
  return error(errc::io_failure, context.empty() ? reason : context + ": " + reason, e);
}

}  // namespace gutf8
