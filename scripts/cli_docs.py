#!/usr/bin/env python3
"""Generates the man page (gutf8.1, through help2man) and the bash and zsh completions of gutf8
from the built binary's --help output, so that none of them can drift from it.

usage: cli_docs.py GUTF8_BINARY OUT_DIR
writes OUT_DIR/gutf8.1, OUT_DIR/gutf8.bash, OUT_DIR/_gutf8
"""
import os
import re
import subprocess
import sys

COMMANDS = ["decode", "encode", "validate", "stats"]
SUMMARY = "validate, decode, repair and encode UTF-8 on the CPU or an NVIDIA GPU"

# "  -o [ --output ] OUT   text", "  --backend auto|cuda|cpu  text", "  --json   text"
OPTION = re.compile(r"^  (?:-(?P<short>\w) \[ )?--(?P<long>[a-z][a-z0-9-]*)(?: \])?(?: (?P<value>[^ ]+))?(?: +(?P<text>.*))?$")


def help_text(binary, *args):
    return subprocess.run([binary, *args, "--help"], check=True, capture_output=True, text=True).stdout


class option:
    def __init__(self, match, text):
        self.short = match["short"]
        self.long = match["long"]
        self.value = match["value"]
        self.text = text

    def choices(self):
        """The values of an enumerated argument ("auto|cuda|cpu"), else None."""
        return self.value.split("|") if self.value and "|" in self.value else None


def parse_options(text):
    """The options of one --help: each with its first line of description."""
    options = []
    for line in text.splitlines():
        m = OPTION.match(line)
        if m:
            options.append(option(m, (m["text"] or "").strip()))
        elif options and line.startswith("    ") and not options[-1].text:
            options[-1].text = line.strip()  # Boost put the description on the next line
    return options


def roff_escape(line):
    line = line.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + line if line.startswith((".", "'")) else line


def man_page(binary, helps, out_dir):
    include = os.path.join(out_dir, "gutf8.h2m")
    with open(include, "w") as f:
        f.write("[COMMANDS]\n")
        for c in COMMANDS:
            f.write(f'.SS "gutf8 {c}"\n.nf\n')
            own = helps[c].split("\nCommon options:")[0]  # the common ones are in OPTIONS above
            f.write("\n".join(roff_escape(l) for l in own.rstrip("\n").splitlines()))
            f.write("\n.fi\n")
        f.write("[SEE ALSO]\niconv(1), isutf8(1)\n")
    subprocess.run(["help2man", "--no-info", "--name", SUMMARY, "--include", include,
                    "--output", os.path.join(out_dir, "gutf8.1"), binary], check=True)
    os.remove(include)


def bash_completion(commands):
    lines = ["# bash completion for gutf8; generated from `gutf8 --help` by scripts/cli_docs.py",
             "_gutf8() {",
             "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
             "  # --opt=value: bash splits at '=', so the option is one or two words back",
             "  if [[ $cur == = ]]; then cur=; elif [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi",
             "  if ((COMP_CWORD == 1)); then",
             f'    COMPREPLY=($(compgen -W "{" ".join(COMMANDS)} --help --version" -- "$cur")); return',
             "  fi",
             "  local opts",
             "  case ${COMP_WORDS[1]} in"]
    for c, options in commands.items():
        words = []
        for o in options:
            words += ([f"-{o.short}"] if o.short else []) + [f"--{o.long}"]
        lines.append(f'    {c}) opts="{" ".join(words)}";;')
    lines += ["    *) return;;", "  esac", "  case $prev in"]
    takes_value = {}
    for options in commands.values():
        for o in options:
            if o.value:
                names = ([f"-{o.short}"] if o.short else []) + [f"--{o.long}"]
                choices = o.choices()
                action = (f'COMPREPLY=($(compgen -W "{" ".join(choices)}" -- "$cur"))' if choices
                          else 'COMPREPLY=($(compgen -f -- "$cur"))' if o.value == "OUT" else "COMPREPLY=()")
                takes_value["|".join(names)] = action
    for names, action in takes_value.items():
        lines.append(f"    {names}) {action}; return;;")
    lines += ["  esac",
              '  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
              '  else COMPREPLY=($(compgen -f -- "$cur")); fi',
              "}",
              "complete -o filenames -o bashdefault -F _gutf8 gutf8",
              ""]
    return "\n".join(lines)


def zsh_quote(text):
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh_spec(o):
    text = zsh_quote(o.text.split(";")[0])
    choices = o.choices()
    value = ""
    if o.value:
        value = f":{o.value.lower()}:" + (f"({' '.join(choices)})" if choices else "_files" if o.value == "OUT" else " ")
    if o.short:
        eq = "+" if o.value else ""
        return f"'(-{o.short} --{o.long})'{{-{o.short}{eq},--{o.long}{'=' if o.value else ''}}}'[{text}]{value}'"
    return f"'--{o.long}{'=' if o.value else ''}[{text}]{value}'"


def zsh_completion(commands, global_help):
    described = dict(re.findall(r"^  (\w+) +(.+)$", global_help.split("Commands:")[1].split("\n\n")[0], re.M))
    lines = ["#compdef gutf8",
             "# zsh completion for gutf8; generated from `gutf8 --help` by scripts/cli_docs.py",
             "_gutf8() {",
             "  local -a commands",
             "  commands=(" + " ".join(f"'{c}:{zsh_quote(described.get(c, c))}'" for c in COMMANDS) + ")",
             "  if (( CURRENT == 2 )); then",
             "    _describe -t commands 'gutf8 command' commands",
             "    _arguments '--help[show the help and exit]' '--version[show the version and exit]'",
             "    return",
             "  fi",
             "  local command=${words[2]}",
             "  shift words",
             "  (( CURRENT-- ))",
             "  case $command in"]
    for c, options in commands.items():
        specs = " \\\n        ".join(zsh_spec(o) for o in options)
        lines.append(f"    {c}) _arguments -s \\\n        {specs} \\\n        '*:file:_files';;")
    lines += ["  esac", "}", '_gutf8 "$@"', ""]
    return "\n".join(lines)


def main():
    binary, out_dir = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    helps = {c: help_text(binary, c) for c in COMMANDS}
    global_help = help_text(binary)
    commands = {c: parse_options(helps[c]) for c in COMMANDS}
    man_page(binary, helps, out_dir)
    with open(os.path.join(out_dir, "gutf8.bash"), "w") as f:
        f.write(bash_completion(commands))
    with open(os.path.join(out_dir, "_gutf8"), "w") as f:
        f.write(zsh_completion(commands, global_help))


if __name__ == "__main__":
    main()
