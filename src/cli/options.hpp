// The parsed command line of the `gutf8` tool (SPEC §2). Parsing never prints or exits:
// it returns what to do, or throws usage_error, and cli::run turns that into output and
// an exit status.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gutf8/codec.hpp"
#include "gutf8/types.hpp"

namespace gutf8::cli {

// A malformed command line: exit status 2, with a hint to use --help.
class usage_error : public std::runtime_error {
 public:
  usage_error(const std::string& what, std::string help_hint)
      : std::runtime_error(what), hint_(std::move(help_hint)) {}
  // The command whose --help to suggest ("gutf8 --help" or "gutf8 validate --help").
  [[nodiscard]] const std::string& hint() const noexcept { return hint_; }

 private:
  std::string hint_;
};

enum class command : unsigned char { decode, encode, validate, stats };
std::string_view name_of(command c) noexcept;

inline constexpr std::size_t default_chunk_size = std::size_t{16} << 20;  // 16 MiB
inline constexpr std::size_t min_chunk_size = 16;

struct cli_options {
  gutf8::cli::command command = command::validate;
  std::vector<std::string> inputs;     // "-" is standard input; never empty after parsing
  std::optional<std::string> output;   // -o OUT
  // decode/encode: --errors; validate: replace or drop with --replace/--drop, else strict
  // (strict there means "no repaired output").
  error_policy policy = error_policy::strict;
  bool json = false;
  bool quiet = false;                  // validate -q
  std::size_t top = 0;                 // stats --top N
  gutf8::options backend{};
  std::vector<int> devices;            // --device N,M,...: the GPUs a regular file is spread over
  bool all_devices = false;            // --device all
  std::size_t chunk_size = default_chunk_size;
  bool progress = true;                // still needs stderr to be a terminal
  bool verbose = false;
};

// What the command line asks for.
struct parse_result {
  enum class action : unsigned char { run, print_text } what = action::run;
  cli_options options;  // for run
  std::string text;     // for print_text: --help or --version output (stdout, exit 0)
};

// Throws usage_error for anything malformed.
parse_result parse_command_line(int argc, const char* const* argv);

// "16", "64K", "1M", "2G" (multiples of 1024); throws usage_error below `min` bytes or when
// malformed. Exposed for the tests of the option parser.
std::size_t parse_size(std::string_view text, std::string_view option, std::size_t min = min_chunk_size);

}  // namespace gutf8::cli
