#!/usr/bin/env python3
"""The CPU scanner's speed on one thread: `gutf8 validate --threads 1` beside simdutf's file run at
one thread, on the same files, interleaved, under `perf stat` (CPU time of the process, which a
loaded machine disturbs less than the wall clock; cycles where the machine has hardware counters).

    python3 bench/scanner_dev.py --gutf8 build/gutf8 [--gutf8 other/gutf8 ...] \
        --simdutf PATH/simdutf_files [--ops validate,replace,stats] --reps 5 FILE...

Each --gutf8 may be NAME=PATH. GUTF8_CPU_ISA in the environment applies to every gutf8 run.
--ops: gutf8's operations (default validate; replace is `validate --replace` to /dev/null).
Prints a Markdown table: per tool and file, the medians of CPU ms, ns/byte (CPU time), GB/s of
input by CPU time and by wall clock, cycles/byte where counted, the speed against simdutf's
validate and, for an operation other than validate, against the same build's validate.
"""
import argparse
import os
import statistics
import subprocess
import tempfile

OPS = {"validate": ["validate"], "replace": ["validate", "--replace"], "stats": ["stats"]}


def perf_run(cmd: list[str], events: str) -> dict[str, float]:
    """Counts of one run; an invalid input (exit status 1) is a run like any other."""
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as out:
        subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", events, "--", *cmd], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        values: dict[str, float] = {}
        for line in out.read().splitlines():
            fields = line.split(",")
            if len(fields) > 3 and fields[0] and fields[0][0].isdigit():
                values[fields[2].split(":")[0]] = float(fields[0])
        return values


def counted(events: str) -> str:
    """task-clock, plus cycles and instructions where the machine counts them."""
    probe = perf_run(["true"], "cycles,instructions")
    return events + (",cycles,instructions" if "cycles" in probe else "")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--gutf8", action="append", required=True)
    p.add_argument("--simdutf", required=True)
    p.add_argument("--ops", default="validate", help="gutf8's operations: validate,replace,stats")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    events = counted("task-clock,duration_time")
    tools = [("simdutf", lambda f: [a.simdutf, "validate", f, "1"])]
    for spec in a.gutf8:
        name, _, path = spec.rpartition("=")
        for op in a.ops.split(","):
            label = (name or "gutf8") + ("" if op == "validate" else f" {op}")
            tools.append((label, lambda f, path=path, op=op: [path, *OPS[op], "--backend=cpu", "--threads", "1", f]))
    for f in a.files:
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)  # into the page cache
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(a.reps):
        for f in a.files:
            for name, cmd in tools:
                runs.setdefault((name, f), []).append(perf_run(cmd(f), events))
    print(f"GUTF8_CPU_ISA={os.environ.get('GUTF8_CPU_ISA', '(best)')}, medians of {a.reps}\n")
    print("| file | tool | CPU ms | ns/byte | GB/s (CPU) | GB/s (wall) | cycles/byte | of simdutf (CPU) | of validate (CPU) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for f in a.files:
        size = os.path.getsize(f)
        cpu_of = {name: statistics.median(r["task-clock"] for r in runs[(name, f)]) for name, _ in tools}  # ms
        peer = cpu_of["simdutf"]
        for name, _ in tools:
            rs = runs[(name, f)]
            cpu = cpu_of[name]
            base = name.rsplit(" ", 1)[0] if name.rsplit(" ", 1)[-1] in OPS else None
            own = f"{cpu_of[base] / cpu:.2f}" if base in cpu_of and base != name else ""
            wall = statistics.median(r["duration_time"] for r in rs) / 1e6  # ns -> ms
            cyc = f"{statistics.median(r['cycles'] for r in rs) / size:.3f}" if "cycles" in rs[0] else "n/a"
            print(f"| {os.path.basename(f)} | {name} | {cpu:.1f} | {cpu * 1e6 / size:.3f} | {size / cpu / 1e6:.2f} | "
                  f"{size / wall / 1e6:.2f} | {cyc} | {peer / cpu:.2f} | {own} |")


if __name__ == "__main__":
    main()
