#include "cli/commands.hpp"

#include <unistd.h>

#include "cli/json.hpp"

namespace gutf8::cli {
namespace {

// An object left open, so that a caller may add fields before the closing brace.
std::string position_json(const error_position& e) {
  return "{\"offset\":" + std::to_string(e.offset) + ",\"line\":" + std::to_string(e.line) +
         ",\"column\":" + std::to_string(e.column) + ",\"reason\":" + json_string(describe(e.kind));
}

// "E2 82" (text) or "e282" (JSON).
std::string hex_bytes(const error_unit& u, bool spaced) {
  static constexpr char digits[] = "0123456789ABCDEF0123456789abcdef";
  const int lower = spaced ? 0 : 16;
  std::string text;
  for (std::size_t i = 0; i < u.length; ++i) {
    if (spaced && i != 0) text += ' ';
    text += digits[lower + (u.bytes[i] >> 4)];
    text += digits[lower + (u.bytes[i] & 15)];
  }
  return text;
}

// --json; with --list-errors also "error_list": [{offset, line, column, reason, bytes}, ...].
std::string validate_json(const std::string& name, const input_result& st, bool list) {
  const summary& in = st.stats().input;
  std::string line = "{\"file\":" + json_string(name) + ",\"bytes\":" + std::to_string(in.bytes) +
                     ",\"valid\":" + (in.valid() ? "true" : "false") +
                     ",\"errors\":" + std::to_string(in.errors) + ",\"first_error\":";
  line += in.first_error ? position_json(*in.first_error) + '}' : std::string("null");
  if (list) {
    line += ",\"error_list\":[";
    const auto units = st.listed_errors();
    for (std::size_t i = 0; i < units.size(); ++i) {
      if (i != 0) line += ',';
      line += position_json(units[i].at);
      line += ",\"bytes\":\"" + hex_bytes(units[i], false) + "\"}";
    }
    line += ']';
  }
  return line + "}\n";
}

// --list-errors in text: one line per error unit, as the stderr report words the first.
std::string error_lines(const std::string& name, const input_result& st) {
  std::string text;
  for (const error_unit& u : st.listed_errors())
    text += name + ": " + describe_position("UTF-8", u.at) + " [" + hex_bytes(u, true) + "]\n";
  return text;
}

// -l / -L: whether this input's name is printed.
bool listed_by_name(cli_options::file_list list, bool valid) {
  return list == cli_options::file_list::invalid ? !valid : list == cli_options::file_list::valid && valid;
}

}  // namespace

void record_unreadable_as_json(invocation& inv, const std::function<void(const std::string&)>& write) {
  inv.on_unreadable([write](const std::string& name, const std::string& reason) {
    write("{\"file\":" + json_string(name) + ",\"error\":" + json_string(reason) + "}\n");
  });
}

void record_unreadable_as_json(invocation& inv) {
  record_unreadable_as_json(inv, [&inv](const std::string& line) { inv.out().write(line); });
}

std::string count_of(std::uint64_t n, std::string_view noun) {
  return std::to_string(n) + ' ' + std::string(noun) + (n == 1 ? "" : "s");
}

std::string describe_position(std::string_view input, const error_position& e) {
  // Line and column count bytes in UTF-8 and code points in UTF-32 and UTF-16.
  return "invalid " + std::string(input) + " at byte " +
         std::to_string(e.offset) + " (line " + std::to_string(e.line) + ", column " +
         std::to_string(e.column) + "): " + std::string(describe(e.kind));
}

std::string describe_invalid(std::string_view input, const summary& in) {
  if (in.first_error) return describe_position(input, *in.first_error);
  return "invalid " + std::string(input);  // counted without a place: say what we can
}

void run_transcode(invocation& inv) {
  const cli_options& opt = inv.options();
  const operation op = opt.command == command::encode ? operation::encode : operation::decode;
  if (op == operation::decode && !opt.output && !opt.force && ::isatty(STDOUT_FILENO) == 1)
    throw usage_error("refusing to write binary " + std::string(name_of(opt.form)) +
                      " to a terminal; use -o OUT, -o - or -f/--force", "gutf8 decode --help");
  const std::string_view input = op == operation::encode ? name_of(opt.form) : "UTF-8";
  text_output out(inv, opt.output);
  inv.for_each_input(inv.config(op), &out.writer(),
                   [&](const std::string& name, const input_result& st) {
    const summary& in = st.stats().input;
    if (inv.invalid_input_fails() && !in.valid()) {
      inv.error(name + ": " + describe_invalid(input, in));
      inv.raise(exit_invalid);
    }
  });
  out.finish(inv.status() == exit_ok);
}

// Without --replace/--drop validate only counts; with them it also writes the repaired
// text, which is kept even for invalid input (repairing it is the point).
void run_validate(invocation& inv) {
  const cli_options& opt = inv.options();
  const bool repair = opt.policy != error_policy::strict;
  std::optional<text_output> out;
  if (repair) out.emplace(inv, opt.output);
  auto config = inv.config(repair ? operation::repair : operation::validate);
  config.max_listed_errors = opt.max_listed_errors;
  const bool list = opt.max_listed_errors != 0;
  // With the repair going to a named OUT, standard output carries only the report: a reader that
  // leaves early (`| head`) ends the report, not the repair, which OUT still receives whole.
  bool report_closed = false;
  const auto report = [&](const std::string& text) {
    if (report_closed) return;
    try {
      inv.out().write(text);
    } catch (const broken_pipe&) {
      if (!(repair && opt.output)) throw;
      report_closed = true;
    }
  };
  if (opt.json) record_unreadable_as_json(inv, report);
  inv.for_each_input(config, out ? &out->writer() : nullptr,
                   [&](const std::string& name, const input_result& st) {
    const summary& in = st.stats().input;
    if (inv.invalid_input_fails() && !in.valid()) inv.raise(exit_invalid);
    if (opt.names_only != cli_options::file_list::none) {
      if (listed_by_name(opt.names_only, in.valid())) report(name + '\n');
    } else if (opt.json) {
      report(validate_json(name, st, list));
    } else {
      if (list) report(error_lines(name, st));
      if (in.valid() || opt.quiet) return;
      inv.report(name + ": " + describe_invalid("UTF-8", in) + "; " +
               count_of(in.errors, "invalid sequence"));
    }
  });
  if (out) out->finish(inv.status() < exit_failure);
}

int run_command(const cli_options& options) {
  invocation inv(options);
  try {
    switch (options.command) {
      case command::decode:
      case command::encode: run_transcode(inv); break;
      case command::validate: run_validate(inv); break;
      case command::stats: run_stats(inv); break;
    }
    inv.finish();
  } catch (const broken_pipe&) {
    // The reader downstream has all it wanted (`gutf8 decode big | head -c 1`): end
    // quietly, as if the output had been complete; earlier failures still count.
  }
  return inv.status();
}

}  // namespace gutf8::cli
