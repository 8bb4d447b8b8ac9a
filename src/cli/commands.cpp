#include "cli/commands.hpp"

#include "cli/json.hpp"

namespace gutf8::cli {
namespace {

std::string validate_json(const std::string& name, const summary& in) {
  std::string line = "{\"file\":" + json_string(name) + ",\"bytes\":" + std::to_string(in.bytes) +
                     ",\"valid\":" + (in.valid() ? "true" : "false") +
                     ",\"errors\":" + std::to_string(in.errors) + ",\"first_error\":";
  if (const auto& e = in.first_error) {
    line += "{\"offset\":" + std::to_string(e->offset) + ",\"line\":" + std::to_string(e->line) +
            ",\"column\":" + std::to_string(e->column) + '}';
  } else {
    line += "null";
  }
  return line + "}\n";
}

}  // namespace

std::string describe_invalid(operation op, const summary& input) {
  const bool utf32 = op == operation::encode;
  std::string text = utf32 ? "invalid UTF-32" : "invalid UTF-8";
  const auto& e = input.first_error;
  if (!e) return text;  // the library counted an error without locating it: say what we can
  text += " at byte " + std::to_string(e->offset);
  if (!utf32)
    text += " (line " + std::to_string(e->line) + ", column " + std::to_string(e->column) + ')';
  return text + ": " + std::string(describe(e->kind));
}

void run_transcode(session& s) {
  const cli_options& opt = s.options();
  const operation op = opt.command == command::encode ? operation::encode : operation::decode;
  text_output out(s, opt.output);
  s.for_each_input(s.config(op), &out.writer(),
                   [&](const std::string& name, const input_result& st) {
    const summary& in = st.stats().input;
    if (s.invalid_input_fails() && !in.valid()) {
      s.error(name + ": " + describe_invalid(op, in));
      s.raise(exit_invalid);
    }
  });
  out.finish(s.status() == exit_ok);
}

// Without --replace/--drop validate only counts; with them it also writes the repaired
// text, which is kept even for invalid input (repairing it is the point).
void run_validate(session& s) {
  const cli_options& opt = s.options();
  const bool repair = opt.policy != error_policy::strict;
  std::optional<text_output> out;
  if (repair) out.emplace(s, opt.output);
  const auto config = s.config(repair ? operation::sanitize : operation::validate);
  s.for_each_input(config, out ? &out->writer() : nullptr,
                   [&](const std::string& name, const input_result& st) {
    const summary& in = st.stats().input;
    if (s.invalid_input_fails() && !in.valid()) s.raise(exit_invalid);
    if (opt.json) {
      s.out().write(validate_json(name, in));
    } else if (!in.valid() && !opt.quiet) {
      s.report(name + ": " + describe_invalid(operation::validate, in) + "; " +
               std::to_string(in.errors) +
               " invalid sequences");  // SPEC §2 wording, fixed for parsers, even for 1
    }
  });
  if (out) out->finish(s.status() < exit_failure);
}

int run_command(const cli_options& options) {
  session s(options);
  try {
    switch (options.command) {
      case command::decode:
      case command::encode: run_transcode(s); break;
      case command::validate: run_validate(s); break;
      case command::stats: run_stats(s); break;
    }
    s.finish();
  } catch (const broken_pipe&) {
    // The reader downstream has all it wanted (`gutf8 decode big | head -c 1`): end
    // quietly, as if the output had been complete; earlier failures still count.
  }
  return s.status();
}

}  // namespace gutf8::cli
