#include "cli/app.hpp"

#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/signals.hpp"
#include "gutf8/error.hpp"

namespace gutf8::cli {
namespace {

int fail(exit_status status, std::string_view message) {
  if (message.starts_with("gutf8: ")) message.remove_prefix(7);  // no "gutf8: gutf8: "
  write_stderr("gutf8: " + std::string(message) + '\n');
  return status;
}

// --help and --version: plain text to stdout, with write errors reported like any other.
int print(const std::string& text) {
  fd_writer out(STDOUT_FILENO);
  out.write(text);
  out.flush();
  return exit_ok;
}

}  // namespace

int run(int argc, const char* const* argv) {
  install_signal_handlers();
  try {
    const parse_result parsed = parse_command_line(argc, argv);
    if (parsed.what == parse_result::action::print_text) return print(parsed.text);
    return run_command(parsed.options);
  } catch (const usage_error& e) {
    write_stderr("gutf8: " + std::string(e.what()) + "\nTry '" + e.hint() +
                 "' for more information.\n");
    return exit_usage;
  } catch (const broken_pipe&) {
    return exit_ok;  // `gutf8 --help | head -1`
  } catch (const io_error& e) {
    return fail(exit_failure, e.what());
  } catch (const gutf8::error& e) {
    // no_device, device_failure, out_of_memory...: the library's message says which.
    const int status = fail(exit_failure, e.what());
    // A GPU given up may still run a kernel that never ends (nvCOMP on a corrupt frame): no exit
    // handler or runtime teardown gets to wait for it once the report is out (stderr is unbuffered).
    if (e.code() == errc::device_failure) std::_Exit(status);
    return status;
  } catch (const std::bad_alloc&) {
    return fail(exit_failure, "out of memory");
  } catch (const std::exception& e) {
    return fail(exit_failure, e.what());
  } catch (...) {
    return fail(exit_failure, "unexpected failure");
  }
}

}  // namespace gutf8::cli
