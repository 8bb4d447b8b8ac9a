"""What one GPU file call costs in a warm process, with the GPU lanes kept between calls
(gutf8.gpu_lanes, the default) and built afresh for every call (the cache cleared before each),
side by side: gutf8.validate_file / repair_file on files of several sizes, backend cuda (or cpu
for the CPU backend's figure). A markdown table on --out; every figure the median of --reps calls
after one warm-up call.

  python bench/python/bench_file_calls.py --sizes 64M,256M,1G --reps 5 --workdir /dev/shm/x \
      --out bench/results/gpu_file_calls_h200.md
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import gutf8
from bench_python import current_commit, machine, make_file, sample_text, size_arg


def call_seconds(call, reps: int, clear_first: bool) -> list[float]:
    call()  # warm-up: CUDA's start-up, and the lanes the kept runs take over
    times = []
    for _ in range(reps):
        if clear_first:
            gutf8.gpu_lanes.clear()  # what every call did before the lanes were kept
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64M,256M,1G")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    commit = current_commit()
    rows = ["| file | call | backend | lanes | median ms | GB/s | calls, ms |", "|---|---|---|---|---:|---:|---|"]
    with tempfile.TemporaryDirectory(dir=a.workdir) as tmp:
        work = Path(tmp)
        for size in [size_arg(s) for s in a.sizes.split(",")]:
            path = work / f"mixed-{size}.txt"
            size = make_file(path, size, sample_text())
            out = work / "repaired.txt"
            calls = {"validate_file": lambda b: gutf8.validate_file(path, backend=b),
                     "repair_file": lambda b: gutf8.repair_file(path, out, "replace", backend=b)}
            for name, call in calls.items():
                settings = [("cuda", "kept", False), ("cuda", "built each call", True), ("cpu", "-", False)]
                if not gutf8.cuda_available():
                    settings = settings[2:]
                for backend, lanes, clear_first in settings:
                    times = call_seconds(lambda: call(backend), a.reps, clear_first)
                    med = statistics.median(times)
                    rows.append(f"| {size / 2**20:.0f} MiB | {name} | {backend} | {lanes} | {med * 1e3:.1f} | "
                                f"{size / med / 1e9:.2f} | {' '.join(f'{t * 1e3:.0f}' for t in times)} |")
                    print(rows[-1], flush=True)
    gpu = ""
    if gutf8.cuda_available():
        try:
            gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                 text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            gpu = "a GPU"
    text = [f"# One GPU file call in a warm process: lanes kept or built each call ({gpu or 'no GPU'})", "",
            f"- Machine: {machine()}; GPU: {gpu or 'none'}", f"- Commit: {commit}",
            "- Input: corpus/sample/mixed.txt tiled to each size, in the --workdir given (a tmpfs: page-cache pages).",
            f"- Each row: the median of {a.reps} calls after one warm-up call; `built each call` clears "
            "gutf8.gpu_lanes before every call, as every call ran before the lanes were kept.",
            f"- Run: `python bench/python/bench_file_calls.py --sizes {a.sizes} --reps {a.reps} ...`", ""] + rows
    Path(a.out).write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
