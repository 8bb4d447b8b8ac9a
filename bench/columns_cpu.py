#!/usr/bin/env python3
"""CPU string-column benchmark: gutf8 (one thread, all threads) beside pyarrow and CPython on
the same bytes, in one run on this machine.

Builds Arrow binary columns of mixed-script rows (clean, and with 1% of rows carrying one bad
byte), writes their buffers for bench_cpu_columns (GUTF8_COLUMNS_DIR, bench/columns_data.hpp),
times pyarrow.compute.cast(binary -> string), pyarrow.compute.utf8_length and a CPython loop of
bytes.decode('utf-8', 'replace'), runs bench_cpu_columns, and prints a Markdown report of
medians (GB/s of column data bytes).

    python3 -m venv .venv && .venv/bin/pip install pyarrow numpy
    .venv/bin/python bench/columns_cpu.py --bench build-cpu/bench/bench_cpu_columns \
        --out bench/results/columns_dev.md
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SCRIPTS = [(0x61, 0x7A), (0xE0, 0xFF), (0x3B1, 0x3C9), (0x430, 0x44F), (0x5D0, 0x5EA), (0x4E00, 0x9FFF),
           (0x1F600, 0x1F64F)]


def make_row(rng, mean):
    target = mean // 2 + int(rng.integers(0, mean + 1))
    words, size = [], 0
    while size < target:
        lo, hi = SCRIPTS[int(rng.integers(0, len(SCRIPTS)))]
        w = "".join(chr(int(c)) for c in rng.integers(lo, hi + 1, size=int(rng.integers(1, 9)))) + " "
        b = w.encode()
        words.append(b)
        size += len(b)
    return b"".join(words)


def dirtied(rng, row):
    b = bytearray(row)
    b[int(rng.integers(0, len(b)))] = int(rng.integers(0x80, 0x100))
    return bytes(b)


def make_column(rows, mean, dirty, seed, pool_size):
    """rows drawn from a pool of distinct rows (building 10 M distinct rows in Python is slow)."""
    rng = np.random.default_rng(seed)
    clean = [make_row(rng, mean) for _ in range(pool_size)]
    bad = [dirtied(rng, r) for r in clean]
    pick = rng.integers(0, pool_size, size=rows)
    is_bad = rng.random(rows) < dirty
    values = [bad[i] if d else clean[i] for i, d in zip(pick.tolist(), is_bad.tolist())]
    return pa.array(values, type=pa.binary())


def median_seconds(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_pyarrow(arr, repeats):
    out = {}
    try:
        pc.cast(arr, pa.string())
        out["pyarrow_cast"] = median_seconds(lambda: pc.cast(arr, pa.string()), repeats)
    except pa.ArrowInvalid:
        out["pyarrow_cast"] = None  # raises on the first invalid row: nothing to compare
    as_string = arr.view(pa.string())  # unchecked: utf8_length's speed on the same bytes
    out["pyarrow_utf8_length"] = median_seconds(lambda: pc.utf8_length(as_string), repeats)
    return out


def time_cpython(arr, repeats):
    rows = arr.to_pylist()
    return median_seconds(lambda: [b.decode("utf-8", "replace") for b in rows], repeats)


def write_column(directory, name, arr):
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=len(arr) + 1)
    data = bufs[2]
    with open(os.path.join(directory, name + ".offsets"), "wb") as f:
        f.write(offsets.tobytes())
    with open(os.path.join(directory, name + ".data"), "wb") as f:
        f.write(memoryview(data)[: int(offsets[-1])])


def run_gutf8(bench, directory, repeats):
    env = dict(os.environ, GUTF8_COLUMNS_DIR=directory)
    out = subprocess.run([bench, f"--benchmark_repetitions={repeats}", "--benchmark_report_aggregates_only=true",
                          "--benchmark_format=json", "--benchmark_min_time=0.5s"],
                         env=env, check=True, capture_output=True, text=True).stdout
    medians = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            medians[b["run_name"]] = b["real_time"] / 1e3  # ms -> s
    return medians


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="bench_cpu_columns binary")
    ap.add_argument("--out", help="write the Markdown report here too")
    ap.add_argument("--short-rows", type=int, default=10_000_000)
    ap.add_argument("--medium-rows", type=int, default=10_000_000)
    ap.add_argument("--long-rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--python-repeats", type=int, default=3)
    args = ap.parse_args()

    shapes = [("short20", args.short_rows, 20, 4096), ("medium200", args.medium_rows, 200, 4096),
              ("long100k", args.long_rows, 100 << 10, 64)]
    rows_out = []
    with tempfile.TemporaryDirectory() as directory:
        names, results = [], {}
        for seed, (shape, rows, mean, pool) in enumerate(shapes):
            for dirty in (0.0, 0.01):
                name = shape + ("_clean" if dirty == 0 else "_dirty1pct")
                arr = make_column(rows, mean, dirty, seed, pool)
                nbytes = int(np.frombuffer(arr.buffers()[1], dtype=np.int32)[len(arr)])
                write_column(directory, name, arr)
                names.append(name)
                r = time_pyarrow(arr, args.repeats)
                r["cpython_replace"] = time_cpython(arr, args.python_repeats)
                results[name] = (len(arr), nbytes, r)
                del arr
        with open(os.path.join(directory, "manifest.txt"), "w") as f:
            f.write("\n".join(names) + "\n")
        gutf8 = run_gutf8(args.bench, directory, args.repeats)

    threads = sorted({int(k.rsplit(":", 1)[1].split("/")[0]) for k in gutf8})
    gbps = lambda nbytes, s: "raises" if s is None else f"{nbytes / s / 1e9:.2f}"
    head = ("| column | rows | MB | pyarrow cast | pyarrow utf8_length | CPython decode replace | "
            + " | ".join(f"gutf8 {op} {t}T" for op in ("is_valid", "make_valid", "count") for t in threads)
            + " | 1T is_valid / pyarrow cast | all-T make_valid / CPython |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name in names:
        rows, nbytes, r = results[name]
        g = lambda op, t: gutf8.get(f"{op}/{name}/threads:{t}/real_time")
        cells = [name, f"{rows:,}", f"{nbytes / 1e6:.0f}", gbps(nbytes, r["pyarrow_cast"]),
                 gbps(nbytes, r["pyarrow_utf8_length"]), gbps(nbytes, r["cpython_replace"])]
        for op in ("is_valid", "make_valid_replace", "count_code_points_replace"):
            cells += [gbps(nbytes, g(op, t)) for t in threads]
        one, many = g("is_valid", threads[0]), g("make_valid_replace", threads[-1])
        cells.append("-" if r["pyarrow_cast"] is None else f"{r['pyarrow_cast'] / one:.1f}x")
        cells.append(f"{r['cpython_replace'] / many:.1f}x")
        lines.append("| " + " | ".join(cells) + " |")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = "\n".join([
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} hardware threads "
        f"(shared with other jobs), Python {platform.python_version()}, pyarrow {pa.__version__}, commit {commit}.",
        f"GB/s of column data bytes, median of {args.repeats} runs (CPython: {args.python_repeats}).",
        "", *lines, ""])
    print(report)
    if args.out:
        with open(args.out, "a") as f:
            f.write(report + "\n")


if __name__ == "__main__":
    main()
