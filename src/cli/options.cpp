// Command-line parsing with Boost.Program_options. The command comes first
// (`gutf8 COMMAND [OPTIONS] [FILE|-]...`), so each command gets a parser that knows exactly
// its own options and `--json` is an error for `decode` rather than silently ignored.
#include "cli/options.hpp"

#include <boost/program_options.hpp>

#include <array>
#include <cctype>
#include <charconv>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "cli/progress.hpp"
#include "gutf8/error.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/version.hpp"

namespace gutf8::cli {
namespace po = boost::program_options;

namespace {

// Values as the user typed them. Numbers are read as strings and checked here, because
// Boost's lexical_cast accepts "-1" for an unsigned and wraps it.
struct raw_values {
  std::string backend = "auto";
  std::string device = "0";
  std::string chunk_size;  // empty: the engine's default
  std::string gpu_memory = "0";
  std::string threads = "0";
  std::string top = "0";
  std::string max_errors;  // empty: not given
  std::string errors = "strict";
  std::string form = "utf-32le";
  std::string output;
  std::vector<std::string> inputs;
  bool progress = false, no_progress = false, verbose = false, help = false, version = false;
  bool replace = false, drop = false, json = false, quiet = false, force = false;
  bool bom = false, no_decompress = false;
  bool list_errors = false, files_with_errors = false, files_without_errors = false;
};

constexpr std::array commands{command::decode, command::encode, command::validate, command::stats};

std::string help_hint(std::optional<command> c) {
  return c ? "gutf8 " + std::string(name_of(*c)) + " --help" : std::string("gutf8 --help");
}

// "4M", "2M", "64K": a size as --chunk-size takes it.
std::string size_text(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes % (std::size_t{1} << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

po::options_description common_options(raw_values& v) {
  po::options_description d("Common options");
  d.add_options()
    ("backend", po::value(&v.backend)->value_name("auto|cuda|cpu"),
     "where to run: auto picks a GPU when one is usable and the input is large enough, "
     "cuda fails (exit 3) without a usable GPU (default auto)")
    ("device", po::value(&v.device)->value_name("N|N,M,...|all"),
     "CUDA device ordinal, a comma-separated list, or all usable GPUs; a regular file is spread "
     "over every GPU named (default 0)")
    ("chunk-size", po::value(&v.chunk_size)->value_name("SIZE"),
     ("read standard input and pipes SIZE bytes at a time, and cut big files into pieces of the smaller of "
      "SIZE and " + size_text(run_config{}.piece_bytes) + " (16 to 1G; K, M and G are multiples of 1024; default " +
      size_text(run_config{}.chunk_bytes) + ")").c_str())
    ("gpu-memory", po::value(&v.gpu_memory)->value_name("SIZE"),
     "cap the GPU memory gutf8 uses on each GPU; K, M and G as for --chunk-size, 0 = no cap (default 0); "
     "with --backend=cuda too little is exit 3, with auto it falls back to the CPU")
    ("threads", po::value(&v.threads)->value_name("N"),
     "CPU threads; 0 = automatic: seven in eight of the hardware threads (default 0)")
    ("progress", po::bool_switch(&v.progress),
     "progress bar on stderr when it is a terminal (default)")
    ("no-progress", po::bool_switch(&v.no_progress), "no progress bar")
    ("no-decompress", po::bool_switch(&v.no_decompress),
     "read inputs that start as gzip, zstd, xz, bzip2 or lz4 data as the bytes they are "
     "(by default they are read as the text they hold)")
    ("verbose", po::bool_switch(&v.verbose),
     "print read/process/write timings to stderr at the end")
    ("help,h", po::bool_switch(&v.help), "show this help and exit")
    ("version", po::bool_switch(&v.version), "show the version and exit");
  return d;
}

void add_output_option(po::options_description& d, raw_values& v) {
  const auto not_empty = [](const std::string& out) {
    if (out.empty()) throw po::invalid_option_value("'' (an empty name: - is standard output)");
  };
  d.add_options()("output,o", po::value(&v.output)->value_name("OUT")->notifier(not_empty),
                  "write to OUT instead of standard output (- is standard output); OUT "
                  "appears only if the command succeeds (written to a temporary, then renamed); "
                  "OUT ending in .gz, .zst, .xz, .bz2 or .lz4 is written in that format");
}

po::options_description command_options(command c, raw_values& v) {
  po::options_description d(std::string(name_of(c)) + " options");
  switch (c) {
    case command::decode:
    case command::encode:
      add_output_option(d, v);
      if (c == command::decode) {
        d.add_options()
          ("to", po::value(&v.form)->value_name("utf-32le|utf-32be|utf-16le|utf-16be"),
           "the output form (default utf-32le); UTF-16 writes a surrogate pair above U+FFFF")
          ("bom", po::bool_switch(&v.bom), "write U+FEFF in the output form first (none by default)")
          ("force,f", po::bool_switch(&v.force),
           "write the binary output to standard output even when it is a terminal "
           "(refused otherwise, as gzip does; -o - also allows it)");
      } else {
        d.add_options()
          ("from", po::value(&v.form)->value_name("utf-32le|utf-32be|utf-16le|utf-16be"),
           "the input form (default utf-32le); a BOM is read as the character U+FEFF, as iconv "
           "reads these explicit byte orders; in UTF-16 an unpaired surrogate is an error unit");
      }
      d.add_options()("errors", po::value(&v.errors)->value_name("strict|replace|drop"),
                      "strict: stop at the first error unit (exit 1); replace: each becomes "
                      "U+FFFD; drop: each is removed (default strict)");
      break;
    case command::validate:
      d.add_options()
        ("replace", po::bool_switch(&v.replace),
         "also write the input with each error unit replaced by U+FFFD")
        ("drop", po::bool_switch(&v.drop), "also write the input with each error unit removed");
      add_output_option(d, v);
      d.add_options()
        ("json", po::bool_switch(&v.json),
         "print JSON Lines to stdout instead of the stderr line: one object per file, one "
         "per line (an unreadable file gets {\"file\",\"error\"}); with --replace or "
         "--drop, -o OUT is required")
        ("quiet,q", po::bool_switch(&v.quiet),
         "print no stderr line and no progress bar; exit status only")
        ("list-errors", po::bool_switch(&v.list_errors),
         "also list every error unit to stdout, one line each: FILE: invalid UTF-8 at byte "
         "OFFSET (line L, column C): REASON [HEX BYTES]; with --json, an \"error_list\" array "
         "in the file's object")
        ("max-errors", po::value(&v.max_errors)->value_name("N"),
         "with --list-errors, list at most N error units per file (1 or more, default 1000)")
        ("files-with-errors,l", po::bool_switch(&v.files_with_errors),
         "print only the names of invalid inputs, one per line (as grep -l, isutf8 -l)")
        ("files-without-errors,L", po::bool_switch(&v.files_without_errors),
         "print only the names of valid inputs, one per line (as grep -L)");
      break;
    case command::stats:
      d.add_options()
        ("top", po::value(&v.top)->value_name("N"), "also list the N most frequent code points")
        ("json", po::bool_switch(&v.json),
         "print JSON Lines: one object per file, one per line (an unreadable file gets "
         "{\"file\",\"error\"}), then over several files {\"total\":true,\"files\":N,...}; "
         "top code points as \"U+XXXX\" and as an integer \"value\"");
      break;
  }
  return d;
}

std::string_view synopsis(command c) {
  switch (c) {
    case command::decode:
      return "gutf8 decode [FILE|-]... [-o OUT] [-f] [--errors=strict|replace|drop]\n"
             "       [--to FORM] [--bom] [OPTIONS]";
    case command::encode:
      return "gutf8 encode [FILE|-]... [-o OUT] [--errors=strict|replace|drop] [--from FORM]\n"
             "       [OPTIONS]";
    case command::validate:
      return "gutf8 validate [FILE|-]... [--replace | --drop] [-o OUT] [--json] [-q]\n"
             "       [--list-errors [--max-errors N]] [-l | -L] [OPTIONS]";
    case command::stats:
      return "gutf8 stats [FILE|-]... [--top N] [--json] [OPTIONS]";
  }
  return {};
}

std::string_view summary_of(command c) {
  switch (c) {
    case command::decode:
      return "Decode UTF-8 to UTF-32LE (4 bytes a code point, no BOM added), or with --to to\n"
             "UTF-32BE, UTF-16LE or UTF-16BE.\n"
             "Exit status: 0 success, 1 invalid input (strict), 2 usage error,\n"
             "3 I/O or device failure.\n";
    case command::encode:
      return "Encode UTF-32LE (or with --from UTF-32BE, UTF-16LE or UTF-16BE) to UTF-8. A value\n"
             "above 0x10FFFF or in D800..DFFF, and 1 to 3 trailing bytes, are error units; in\n"
             "UTF-16 an unpaired surrogate, and a cut pair or odd byte at the end.\n"
             "Exit status: 0 success, 1 invalid input (strict), 2 usage error,\n"
             "3 I/O or device failure.\n";
    case command::validate:
      return "Check UTF-8. Prints nothing for valid input; for invalid input, one line per\n"
             "file on stderr:\n"
             "  FILE: invalid UTF-8 at byte OFFSET (line L, column C): REASON;"
             " N invalid sequences\n"
             "--replace or --drop also write the repaired text (kept even for invalid input).\n"
             "Exit status: 0 valid, 1 invalid input found, 2 usage error,\n"
             "3 I/O or device failure.\n";
    case command::stats:
      return "Count bytes, code points, lines (LF bytes), error units and 1/2/3/4-byte\n"
             "sequences; --top N lists the most frequent code points (U+XXXX, count, and\n"
             "the character when it is visible). Over several files, a total follows, as wc\n"
             "prints one (its top N counted over all of them).\n"
             "Exit status: 0 even when the input has errors (they are counted), 2 usage\n"
             "error, 3 I/O or device failure.\n";
  }
  return {};
}

constexpr std::string_view inputs_note =
    "With no FILE, or when FILE is -, read standard input. Several files are processed\n"
    "in order, each as its own stream; their outputs are concatenated.\n";

// Prints option groups with one description column for all of them (Boost sizes each
// group on its own and, in 1.74, one column short for the longest option).
// Boost also leaves a space at the end of wrapped lines; they are trimmed.
void print_groups(std::ostream& s, std::initializer_list<const po::options_description*> groups) {
  unsigned width = 0;
  for (const auto* g : groups) width = std::max(width, g->get_option_column_width());
  std::ostringstream text;
  for (const auto* g : groups) {
    g->print(text, width + 1);
    if (g != *(groups.end() - 1)) text << '\n';
  }
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);)
    s << line.erase(line.find_last_not_of(' ') + 1) << '\n';
}

std::string command_help(command c) {
  raw_values unused;
  const auto specific = command_options(c, unused);
  const auto common = common_options(unused);
  std::ostringstream s;
  s << "Usage: " << synopsis(c) << "\n\n" << summary_of(c) << '\n' << inputs_note << '\n';
  print_groups(s, {&specific, &common});
  return s.str();
}

std::string global_help() {
  raw_values unused;
  std::ostringstream s;
  // GNU's "Usage: / or:" layout, which help2man turns into the man page's SYNOPSIS.
  s << "Usage: gutf8 decode [FILE|-]... [-o OUT] [-f] [--errors=POLICY] [--to FORM] [--bom]\n"
       "  or:  gutf8 encode [FILE|-]... [-o OUT] [--errors=POLICY] [--from FORM]\n"
       "  or:  gutf8 validate [FILE|-]... [--replace|--drop] [-o OUT] [--json] [-q] [-l|-L]\n"
       "  or:  gutf8 validate --list-errors [--max-errors N] [--json] [FILE|-]...\n"
       "  or:  gutf8 stats [FILE|-]... [--top N] [--json]\n"
       "  or:  gutf8 --help | --version\n\n"
       "Validate, decode, repair and encode UTF-8 on the CPU or an NVIDIA GPU.\n"
       "POLICY is strict, replace or drop; FORM is utf-32le (the default), utf-32be,\n"
       "utf-16le or utf-16be.\n\n"
       "Commands:\n"
       "  decode    UTF-8 to UTF-32LE (4 bytes a code point, no BOM added), UTF-32BE,\n"
       "            UTF-16LE or UTF-16BE\n"
       "  encode    UTF-32LE, UTF-32BE, UTF-16LE or UTF-16BE to UTF-8\n"
       "  validate  check UTF-8; --replace or --drop also write the repaired text\n"
       "  stats     count bytes, code points, lines, errors and sequence lengths\n\n"
    << inputs_note << '\n';
  const auto common = common_options(unused);
  print_groups(s, {&common});
  s << '\n'
    << "Exit status: 0 success or valid input, 1 invalid input found, 2 usage error,\n"
       "3 I/O or device failure. A closed pipe downstream ends the work quietly.\n"
       "Run 'gutf8 COMMAND --help' for the options of a command.\n";
  return s.str();
}

std::string version_text() {
  return std::string("gutf8 ") + GUTF8_VERSION +
         (GUTF8_HAVE_CUDA ? " (CUDA backend built in)\n" : " (CPU-only build)\n");
}

std::optional<command> command_named(std::string_view word) {
  for (command c : commands)
    if (name_of(c) == word) return c;
  return std::nullopt;
}

template <class T>
T parse_unsigned(std::string_view text, std::string_view option, command c,
                 T max = std::numeric_limits<T>::max()) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value > std::uint64_t(max))
    throw usage_error("invalid value '" + std::string(text) + "' for --" + std::string(option) +
                          " (expected a number from 0 to " + std::to_string(max) + ")",
                      help_hint(c));
  return static_cast<T>(value);
}

gutf8::backend parse_backend(std::string_view text, command c) {
  if (text == "auto") return backend::auto_select;
  if (text == "cpu") return backend::cpu;
  if (text == "cuda") return backend::cuda;
  throw usage_error("invalid value '" + std::string(text) +
                        "' for --backend (expected auto, cuda or cpu)", help_hint(c));
}

// "utf-16le", "UTF-16LE", "utf16le": iconv's names, any case, the hyphen optional.
text_form parse_form(std::string_view text, std::string_view option, command c) {
  std::string key;
  for (const char ch : text)
    if (ch != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (key == "utf32le") return text_form::utf32le;
  if (key == "utf32be") return text_form::utf32be;
  if (key == "utf16le") return text_form::utf16le;
  if (key == "utf16be") return text_form::utf16be;
  throw usage_error("invalid value '" + std::string(text) + "' for --" + std::string(option) +
                        " (expected utf-32le, utf-32be, utf-16le or utf-16be)", help_hint(c));
}

error_policy parse_policy(std::string_view text, command c) {
  if (text == "strict") return error_policy::strict;
  if (text == "replace") return error_policy::replace;
  if (text == "drop") return error_policy::drop;
  throw usage_error("invalid value '" + std::string(text) +
                        "' for --errors (expected strict, replace or drop)", help_hint(c));
}

// Combinations Boost cannot express.
void check_combinations(command c, const raw_values& v) {
  auto fail = [c](const std::string& what) { throw usage_error(what, help_hint(c)); };
  if (v.progress && v.no_progress) fail("--progress and --no-progress exclude each other");
  if (c != command::validate) return;
  if (v.replace && v.drop) fail("--replace and --drop exclude each other");
  const bool repair = v.replace || v.drop;
  if (!v.output.empty() && !repair)
    fail("-o needs --replace or --drop (validate writes no text otherwise)");
  const bool names = v.files_with_errors || v.files_without_errors;
  if (v.files_with_errors && v.files_without_errors) fail("-l and -L exclude each other");
  if (names && (v.json || v.list_errors)) fail("-l and -L print names only: not with --json or --list-errors");
  if (!v.max_errors.empty() && !v.list_errors) fail("--max-errors needs --list-errors");
  // Standard output carries one thing: the JSON, the error list, the names, or the repaired text.
  const char* report = v.json ? "--json" : v.list_errors ? "--list-errors" : names ? "-l and -L" : nullptr;
  if (report && repair && (v.output.empty() || v.output == "-"))
    fail(std::string(report) + " with --replace or --drop needs -o OUT (standard output carries the report)");
}

int device_number(std::string_view text, const std::string& hint) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || text.front() == '-' || ec != std::errc() || ptr != end)
    throw usage_error("invalid value '" + std::string(text) + "' for --device: not a GPU number (expected all, or numbers "
                      "from 0 to " + std::to_string(std::numeric_limits<int>::max()) + " separated by commas)", hint);
  return value;
}

}  // namespace

device_list parse_device_list(std::string_view text, const std::string& hint) {
  device_list list;
  if (text == "all") {
    list.all = true;
    return list;
  }
  for (;;) {
    const std::size_t comma = text.find(',');
    list.devices.push_back(device_number(text.substr(0, comma), hint));
    if (comma == std::string_view::npos) return list;
    text.remove_prefix(comma + 1);
  }
}

namespace {

// --device N, N,M,... or all: the first listed is the one a stream (standard input) uses.
void parse_devices(const std::string& text, command c, cli_options& o) {
  const device_list list = parse_device_list(text, help_hint(c));
  o.all_devices = list.all;
  if (list.all) return;
  o.backend.device = list.devices.front();
  if (list.devices.size() > 1) o.devices = list.devices;  // one GPU: options::device says it
}

cli_options to_options(command c, raw_values& v) {
  check_combinations(c, v);
  cli_options o;
  o.command = c;
  o.inputs = v.inputs.empty() ? std::vector<std::string>{"-"} : std::move(v.inputs);
  if (!v.output.empty() && v.output != "-") o.output = v.output;
  o.force = v.force || v.output == "-";
  if (c == command::decode || c == command::encode) {
    o.policy = parse_policy(v.errors, c);
    o.form = parse_form(v.form, c == command::decode ? "to" : "from", c);
  }
  o.bom = v.bom;
  if (v.replace) o.policy = error_policy::replace;
  if (v.drop) o.policy = error_policy::drop;
  o.json = v.json;
  o.quiet = v.quiet;
  if (v.list_errors) {
    o.max_listed_errors =
        v.max_errors.empty() ? default_max_errors : parse_unsigned<std::size_t>(v.max_errors, "max-errors", c);
    if (o.max_listed_errors == 0)
      throw usage_error("invalid value '0' for --max-errors (expected 1 or more)", help_hint(c));
  }
  if (v.files_with_errors) o.names_only = cli_options::file_list::invalid;
  if (v.files_without_errors) o.names_only = cli_options::file_list::valid;
  o.top = parse_unsigned<std::size_t>(v.top, "top", c);
  o.backend.backend = parse_backend(v.backend, c);
  parse_devices(v.device, c, o);
  o.backend.threads = parse_unsigned<unsigned>(v.threads, "threads", c);
  try {
    if (!v.chunk_size.empty()) o.chunk_size = parse_size(v.chunk_size, "chunk-size", min_chunk_size, max_chunk_size);
    o.backend.device_memory_limit = parse_size(v.gpu_memory, "gpu-memory", 0,
                                               std::numeric_limits<std::size_t>::max());
  } catch (const usage_error& e) {
    throw usage_error(e.what(), help_hint(c));
  }
  o.progress = !v.no_progress && !v.quiet;
  o.verbose = v.verbose;
  o.decompress = !v.no_decompress;
  return o;
}

// Whether the option a token names (--name, --name=..., -x) takes a value in the next token.
bool takes_next_token(const po::options_description& all, const std::string& token) {
  if (token.starts_with("--")) {
    if (token.find('=') != std::string::npos) return false;
    const po::option_description* d = all.find_nothrow(token.substr(2), false);
    return d != nullptr && d->semantic()->max_tokens() > 0;
  }
  if (token.size() != 2) return false;  // -x alone; -xVALUE and bundles stand by themselves
  const po::option_description* d = all.find_nothrow(token, false);  // Boost names short options "-x"
  return d != nullptr && d->semantic()->max_tokens() > 0;
}

// The inputs apart from the options, in order: Boost's parser erases each positional token from
// the front of a vector, which made 20,000 file names cost seconds.
std::vector<std::string> split_inputs(const po::options_description& all, std::vector<std::string>& args) {
  std::vector<std::string> options, inputs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& t = args[i];
    if (t == "--") {
      inputs.insert(inputs.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (t.size() < 2 || t.front() != '-') {
      inputs.push_back(std::move(args[i]));  // args is replaced by the options below
      continue;
    }
    options.push_back(t);
    if (takes_next_token(all, t) && i + 1 < args.size()) options.push_back(args[++i]);
  }
  args = std::move(options);
  return inputs;
}

parse_result parse_command(command c, std::vector<std::string> args) {
  raw_values v;
  po::options_description all;
  all.add(command_options(c, v)).add(common_options(v));
  try {
    v.inputs = split_inputs(all, args);
    po::variables_map vm;
    // No guessing: "--ver" must not silently mean --verbose or --version.
    const int style = po::command_line_style::default_style &
                      ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(all).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw usage_error(e.what(), help_hint(c));
  }
  if (v.help) return {parse_result::action::print_text, {}, command_help(c)};
  if (v.version) return {parse_result::action::print_text, {}, version_text()};
  return {parse_result::action::run, to_options(c, v), {}};
}

}  // namespace

std::string_view name_of(command c) noexcept {
  switch (c) {
    case command::decode: return "decode";
    case command::encode: return "encode";
    case command::validate: return "validate";
    case command::stats: return "stats";
  }
  return "?";
}

std::size_t parse_size(std::string_view text, std::string_view option, std::size_t min,
                       std::size_t max) {
  const auto bad = [&](const std::string& why) {
    return usage_error("invalid value '" + std::string(text) + "' for --" + std::string(option) +
                           ": " + why, "gutf8 --help");
  };
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ptr == text.data()) throw bad("expected a number with an optional K, M or G");
  if (ec == std::errc::result_out_of_range) throw bad("too large");
  unsigned shift = 0;
  if (ptr != end) {
    if (end - ptr != 1) throw bad("expected a number with an optional K, M or G");
    switch (*ptr) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: throw bad("expected a number with an optional K, M or G");
    }
  }
  const auto range = [&] { return "from " + human_bytes(min) + " to " + human_bytes(max); };
  if (value > (std::uint64_t(max) >> shift)) throw bad("too large (expected " + range() + ")");
  value <<= shift;
  if (value < min) throw bad("too small (expected " + range() + ")");
  return static_cast<std::size_t>(value);
}

parse_result parse_command_line(int argc, const char* const* argv) {
  if (argc <= 1) throw usage_error("missing command (decode, encode, validate or stats)", help_hint(std::nullopt));
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string& first = args.front();
  if (first == "-h" || first == "--help") {
    // "gutf8 --help validate" is read as "gutf8 validate --help".
    const auto c = args.size() > 1 ? command_named(args[1]) : std::nullopt;
    return {parse_result::action::print_text, {}, c ? command_help(*c) : global_help()};
  }
  if (first == "--version") return {parse_result::action::print_text, {}, version_text()};
  if (const auto c = command_named(first))
    return parse_command(*c, std::vector<std::string>(std::make_move_iterator(args.begin() + 1),
                                                      std::make_move_iterator(args.end())));
  if (first.starts_with('-'))
    throw usage_error("missing command before '" + first +
                          "' (decode, encode, validate or stats come first)",
                      help_hint(std::nullopt));
  throw usage_error("unknown command '" + first + "' (expected decode, encode, validate or stats)",
                    help_hint(std::nullopt));
}

}  // namespace gutf8::cli
