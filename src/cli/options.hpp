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

inline constexpr std::size_t default_max_errors = 1000;
inline constexpr std::size_t min_chunk_size = 16;
// Buffers of a few chunks are allocated up front (decode output is 4x); beyond 1 GiB they buy no
// speed and risk a bare out-of-memory failure.
inline constexpr std::size_t max_chunk_size = std::size_t{1} << 30;

struct cli_options {
  gutf8::cli::command command = command::validate;
  std::vector<std::string> inputs;     // "-" is standard input; never empty after parsing
  std::optional<std::string> output;   // -o OUT; "-o -" is standard output (left empty)
  bool force = false;                  // -f, or -o -: binary output even to a terminal
  text_form form = text_form::utf32le; // decode --to, encode --from
  bool bom = false;                    // decode --bom
  // decode/encode: --errors; validate: replace or drop with --replace/--drop, else strict
  // (strict there means "no repaired output").
  error_policy policy = error_policy::strict;
  bool json = false;
  bool quiet = false;                  // validate -q (also hides the progress bar)
  std::size_t max_listed_errors = 0;   // validate --list-errors: list up to this many per file
  // validate -l / -L: print only the names of invalid / valid inputs.
  enum class file_list : unsigned char { none, invalid, valid } names_only = file_list::none;
  std::size_t top = 0;                 // stats --top N
  gutf8::options backend{};
  std::vector<int> devices;            // --device N,M,...: the GPUs a regular file is spread over
  bool all_devices = false;            // --device all
  std::optional<std::size_t> chunk_size;  // --chunk-size; none: the engine's default
  bool progress = true;                // still needs stderr to be a terminal
  bool verbose = false;
  bool decompress = true;              // compressed inputs read as their text (not --no-decompress)
};

// What the command line asks for.
struct parse_result {
  enum class action : unsigned char { run, print_text } what = action::run;
  cli_options options;  // for run
  std::string text;     // for print_text: --help or --version output (stdout, exit 0)
};

// Throws usage_error for anything malformed.
parse_result parse_command_line(int argc, const char* const* argv);

// The GPUs --device names: "all", or GPU numbers separated by commas ("0", "1,0"). Throws
// usage_error (suggesting `help_hint`) on anything else.
struct device_list {
  std::vector<int> devices;  // in the order given; empty with all
  bool all = false;          // every usable GPU
};
device_list parse_device_list(std::string_view text, const std::string& help_hint = "gutf8 --help");

// "16", "64K", "1M", "2G" (multiples of 1024); throws usage_error outside [min, max] bytes or
// when malformed. Exposed for the tests of the option parser.
std::size_t parse_size(std::string_view text, std::string_view option, std::size_t min,
                       std::size_t max);

}  // namespace gutf8::cli
