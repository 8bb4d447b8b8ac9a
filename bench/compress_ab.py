#!/usr/bin/env python3
"""Two gutf8 builds (A, B) on compress_engine.py's inputs, interleaved command by command with the
standard tools, for a machine that is not quiet: each round runs every command once in turn (A, B,
the tool), so that the load others put on the machine falls on all alike. Reports the median wall
time and the median CPU time (user + system of the process and its children) of each command.

    python3 bench/compress_ab.py --a build-base/gutf8 --b build/gutf8 --work /tmp/cbench --rounds 5

--work is compress_engine.py's --work after a run of it (its compressed-*/ folder and the text).
"""
from __future__ import annotations

import argparse
import glob
import os
import resource
import statistics
import subprocess
import time


def run(cmd: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, children) of a shell command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, shell=True, executable="/bin/bash", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{cmd}: exit {p.returncode}: {p.stderr.decode(errors='replace')[:400]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="the gutf8 binary before")
    p.add_argument("--b", required=True, help="the gutf8 binary after")
    p.add_argument("--work", required=True)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    folder = sorted(glob.glob(os.path.join(a.work, "compressed-*")))[-1]
    text = max(glob.glob(os.path.join(a.work, "*-lines.txt")), key=os.path.getsize)
    zst = " ".join(sorted(glob.glob(os.path.join(folder, "s*.txt.zst"))))
    gz = " ".join(sorted(glob.glob(os.path.join(folder, "s*.txt.gz"))))
    framed = os.path.join(folder, "framed.txt.zst")
    out = os.path.join(a.work, "ab_out.zst")
    cases = [
        ("zstd shards", [("zstd -dc (one core)", f"zstd -q -dc {zst} > /dev/null")] +
         [(f"{k} gutf8 validate", f"{b} validate --no-progress {zst}") for k, b in (("A", a.a), ("B", a.b))]),
        ("gzip shards", [("gzip -dc (one core)", f"gzip -dc {gz} > /dev/null")] +
         [(f"{k} gutf8 validate", f"{b} validate --no-progress {gz}") for k, b in (("A", a.a), ("B", a.b))]),
        ("framed zstd", [("zstd -dc (one core)", f"zstd -q -dc {framed} > /dev/null")] +
         [(f"{k} gutf8 validate", f"{b} validate --no-progress {framed}") for k, b in (("A", a.a), ("B", a.b))]),
        ("output -o X.zst", [("zstd -3 -c text (one core)", f"zstd -q -3 -c {text} > /dev/null")] +
         [(f"{k} gutf8 validate --replace -o X.zst", f"{b} validate --no-progress --replace -o {out} {zst}")
          for k, b in (("A", a.a), ("B", a.b))]),
    ]
    size = os.path.getsize(text)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in range(a.rounds):
        for case, cmds in cases:
            for name, cmd in cmds:
                times.setdefault((case, name), []).append(run(cmd))
        print(f"round {r + 1} of {a.rounds} done", flush=True)
    print(f"\ntext {size} bytes; median of {a.rounds} interleaved rounds\n")
    print("| case | command | wall s | GB/s (wall) | CPU s | GB/s a CPU second |")
    print("|---|---|---:|---:|---:|---:|")
    for (case, name), runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"| {case} | {name} | {wall:.3f} | {size / wall / 1e9:.2f} | {cpu:.3f} | {size / cpu / 1e9:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
