#!/usr/bin/env python3
"""`validate`, `validate --replace` (to /dev/null) and `stats` of one or more gutf8 builds on one
CPU thread, interleaved, by user CPU time (`/usr/bin/time -f %U`), which a loaded machine disturbs
less than the wall clock:

    python3 bench/replace_ratio_dev.py --gutf8 before=PATH --gutf8 after=PATH --reps 5 FILE...

Prints a Markdown table of the medians (seconds of user CPU time) and, per build and file, the
ratio validate / validate --replace (the issue's target: replace at >= 0.8x validate's speed).
The exit status and output of a run do not matter (an invalid file exits 1).
"""
import argparse
import os
import statistics
import subprocess
import tempfile

COMMANDS = {
    "validate": ["validate"],
    "replace": ["validate", "--replace"],
    "stats": ["stats"],
}


def user_seconds(cmd: list[str]) -> float:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        subprocess.run(["/usr/bin/time", "-f", "%U", "-o", t.name, *cmd], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return float(t.read().split()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--gutf8", action="append", required=True, help="NAME=PATH")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    builds = [g.split("=", 1) if "=" in g else [g, g] for g in a.gutf8]
    times: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(a.reps):  # interleaved: every build and command once per round
        for f in a.files:
            for op, args in COMMANDS.items():
                for name, path in builds:
                    cmd = [path, *args, "--backend=cpu", "--threads", "1", f]
                    times.setdefault((name, op, f), []).append(user_seconds(cmd))
    print("| file | build | validate s | validate --replace s | stats s | replace / validate (speed) |")
    print("|---|---|---:|---:|---:|---:|")
    for f in a.files:
        for name, _ in builds:
            m = {op: statistics.median(times[(name, op, f)]) for op in COMMANDS}
            ratio = m["validate"] / m["replace"] if m["replace"] > 0 else float("nan")
            print(f"| {os.path.basename(f)} | {name} | {m['validate']:.3f} | {m['replace']:.3f} | "
                  f"{m['stats']:.3f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
