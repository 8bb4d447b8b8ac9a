#!/usr/bin/env python3
"""The input engine against its peers, side by side in one run (wall clock from process start,
files in the page cache, median of --reps runs).

Cases (--cases, comma-separated):
  big      validate / decode of big text files: gutf8 at 1 and all threads against the simdutf peer
           (../shared/peers, `simdutf_files validate|decode FILE T`); `validate --replace -o /dev/null`
           against gutf8's own validate
  scaling  validate of the first big English file at 1..all threads, gutf8 beside simdutf
  small    `validate -l` over many small files against `isutf8 -l` and a CPython loop (and --backend=cuda
           with --cuda, which must name the same files with the same exit status as --backend=cpu)
  pipe     `cat FILE | gutf8 validate` against `cat FILE | wc -c`
  fixed    each tool's cost beyond its bytes: a run over a one-line file (process start, threads, exit),
           gutf8 at 1 and all threads beside simdutf, `gutf8 --version`, and gutf8 through `bash -c`
  phases   where a big-file validate's wall time goes, at all threads: gutf8's own `--verbose` times
           (the library's run, the CLI's total) and simdutf's own (main to its threads joined) beside
           each run's wall time, interleaved
  python   gutf8.validate_file against the CLI, gutf8.validate_files over the small files against isutf8 -l

Inputs are made under --work from the bundled samples (corpus/make_corpus.py tile, then repeated),
once; the small files are seeded (sizes 0.2-20 KB log-uniform, 1 % with one invalid byte).
Writes CSV rows to --out (case,tool,input,threads,median_s,gb_per_s,runs) and prints a table last.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1]]) if s[-1] in mult else int(s)


def text_file(work: str, kind: str, size: int, whole_lines: bool = False) -> str:
    """A file of `size` bytes of valid text of `kind`: a 64 MiB tile repeated (cut at a line end).
    The last repeat may end inside a character; whole_lines ends it at a line end (a little short
    of `size`), so that the whole file is valid UTF-8."""
    path = os.path.join(work, f"{kind}-{size >> 20}M{'-lines' if whole_lines else ''}.txt")
    if os.path.exists(path) and (whole_lines or os.path.getsize(path) == size):
        return path
    base = os.path.join(work, f"base-{kind}.txt")
    if not os.path.exists(base):
        subprocess.run([sys.executable, os.path.join(ROOT, "corpus", "make_corpus.py"), "tile", "--size", "64M",
                        "--kind", kind, base], check=True, stdout=subprocess.DEVNULL)
    data = open(base, "rb").read()
    data = data[: data.rindex(b"\n") + 1]  # whole lines, so the repeats stay valid UTF-8
    with open(path, "wb") as f:
        left = size
        while left > 0:
            part = data[:left]
            if whole_lines and left < len(data):
                part = part[: part.rfind(b"\n") + 1]
            f.write(part)
            left -= min(left, len(data))
    return path


def small_files(work: str, count: int, seed: int = 7) -> list[str]:
    """`count` files of 0.2-20 KB cut at line ends from the samples; 1 % get one invalid byte."""
    folder = os.path.join(work, f"small-{count}")
    names = [os.path.join(folder, f"f{i:06d}.txt") for i in range(count)]
    if os.path.isdir(folder) and len(os.listdir(folder)) == count:
        return names
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(seed)
    samples = [open(os.path.join(ROOT, "corpus", "sample", f), "rb").read()
               for f in sorted(os.listdir(os.path.join(ROOT, "corpus", "sample"))) if f.endswith(".txt")]
    for name in names:
        text = rng.choice(samples)
        size = int(math.exp(rng.uniform(math.log(200), math.log(20_000))))
        start = text.find(b"\n", rng.randrange(max(1, len(text) - size))) + 1
        body = (text[start:] + text)[:size]
        body = body[: body.rfind(b"\n") + 1] or body[:1]
        if rng.random() < 0.01:
            k = rng.randrange(len(body))
            body = body[:k] + bytes([rng.choice([0x80, 0xC0, 0xFF, 0xED])]) + body[k + 1:]
        with open(name, "wb") as f:
            f.write(body)
    return names


def timed(cmd: str | list[str], reps: int, stdin_devnull: bool = True) -> tuple[float, list[float], int]:
    """Median wall time of `cmd` (a shell string runs through bash), its runs and its last exit status."""
    runs, rc = [], 0
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, shell=isinstance(cmd, str), executable="/bin/bash" if isinstance(cmd, str) else None,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL if stdin_devnull else None)
        runs.append(time.perf_counter() - t0)
        rc = p.returncode
        if rc not in (0, 1):
            sys.stderr.write(f"{cmd}: exit {rc}: {p.stderr.decode(errors='replace')[:400]}\n")
    return statistics.median(runs), runs, rc


class Recorder:
    def __init__(self, out: str, commit: str, machine: str) -> None:
        self.rows: list[dict] = []
        self.out, self.commit, self.machine = out, commit, machine
        self.agree = True  # every cross-check between backends agreed

    def add(self, case: str, tool: str, inp: str, threads: int | str, bytes_: int, median: float, runs: list[float]) -> None:
        row = dict(case=case, tool=tool, input=inp, threads=threads, median_s=f"{median:.4f}",
                   gb_per_s=f"{bytes_ / median / 1e9:.2f}" if bytes_ else "",
                   runs=" ".join(f"{r:.4f}" for r in runs), commit=self.commit, machine=self.machine)
        self.rows.append(row)
        print(f"{case:8} {tool:34} {inp:22} T={threads!s:4} {median:8.4f} s  {row['gb_per_s']:>7} GB/s", flush=True)
        with open(self.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            w.writeheader()
            w.writerows(self.rows)


def big_case(a, rec: Recorder, files: list[tuple[str, str]]) -> None:
    for label, path in files:
        size = os.path.getsize(path)
        for t in ((1, a.threads) if size <= a.one_thread_max else (a.threads,)):
            for op in ("validate", "decode"):
                out = [] if op == "validate" else ["-o", "/dev/null"]
                m, runs, _ = timed([a.gutf8, op, "--backend=cpu", "--threads", str(t), *out, path], a.reps)
                rec.add("big", f"gutf8 {op}", label, t, size, m, runs)
                if a.simdutf:  # --threads 0 is gutf8's own choice; the peer then runs on every core
                    m, runs, _ = timed([a.simdutf, op, path, str(t or os.cpu_count())], a.reps)
                    rec.add("big", f"simdutf {op}", label, t or os.cpu_count(), size, m, runs)
        m, runs, _ = timed([a.gutf8, "validate", "--replace", "--backend=cpu", "-o", "/dev/null", path], a.reps)
        rec.add("big", "gutf8 validate --replace", label, a.threads, size, m, runs)


def scaling_case(a, rec: Recorder, path: str, label: str) -> None:
    size = os.path.getsize(path)
    for t in sorted({1, 2, 4, 8, 12, a.threads}):
        m, runs, _ = timed([a.gutf8, "validate", "--backend=cpu", "--threads", str(t), path], a.reps)
        rec.add("scaling", "gutf8 validate", label, t, size, m, runs)
        if a.simdutf:
            m, runs, _ = timed([a.simdutf, "validate", path, str(t)], a.reps)
            rec.add("scaling", "simdutf validate", label, t, size, m, runs)


# What a Python user would write for `-l`: each file read whole and decoded strictly.
CPYTHON_LIST = """import sys
for name in sys.argv[1:]:
    with open(name, 'rb') as f:
        data = f.read()
    try:
        data.decode('utf-8')
    except UnicodeDecodeError:
        print(name)
"""


def small_case(a, rec: Recorder, names: list[str]) -> None:
    total = sum(os.path.getsize(n) for n in names)
    label = f"{len(names)} small files"
    listing = os.path.join(a.work, f"small-{len(names)}.list")
    with open(listing, "w") as f:
        f.write("\n".join(names))
    m, runs, _ = timed(f"xargs -s 1900000 -a {listing} {a.isutf8} -l", a.reps)
    rec.add("small", "isutf8 -l", label, 1, total, m, runs)
    m, runs, _ = timed(f"xargs -s 1900000 -a {listing} {a.gutf8} validate -l --backend=cpu", a.reps)
    rec.add("small", "gutf8 validate -l --backend=cpu", label, a.threads, total, m, runs)
    m, runs, _ = timed(f"xargs -s 1900000 -a {listing} {shlex.quote(sys.executable)} -c {shlex.quote(CPYTHON_LIST)}", a.reps)
    rec.add("small", "CPython loop", label, 1, total, m, runs)
    if a.cuda:  # fewer runs: each starts CUDA
        m, runs, _ = timed(f"timeout {a.cuda_timeout} xargs -s 1900000 -a {listing} {a.gutf8} validate -l --backend=cuda",
                           min(a.reps, 3))
        rec.add("small", "gutf8 validate -l --backend=cuda", label, a.threads, total, m, runs)
        rec.agree &= same_listing(a, listing)


def same_listing(a, listing: str) -> bool:
    """Whether --backend=cuda names the same files with the same exit status as --backend=cpu."""
    def listed(backend: str) -> tuple[int, bytes]:
        p = subprocess.run(f"timeout {a.cuda_timeout} xargs -s 1900000 -a {listing} {a.gutf8} validate -l --backend={backend}",
                           shell=True, executable="/bin/bash", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return p.returncode, p.stdout
    cpu, cuda = listed("cpu"), listed("cuda")
    named = cpu[1].count(b"\n")
    print(f"small    cuda and cpu: {'the same' if cpu == cuda else 'DIFFERENT'} names ({named}) and exit status ({cpu[0]})",
          flush=True)
    return cpu == cuda


def fixed_case(a, rec: Recorder) -> None:
    """What a run costs beyond its bytes; every command runs without a shell but the one that says so."""
    path = os.path.join(a.work, "one-line.txt")
    with open(path, "w") as f:
        f.write("one line of text\n")
    reps = max(a.reps, 31)  # milliseconds: more runs for a stable median
    label = "one line"
    m, runs, _ = timed([a.gutf8, "--version"], reps)
    rec.add("fixed", "gutf8 --version", label, 1, 0, m, runs)
    for t in sorted({1, a.threads}):
        m, runs, _ = timed([a.gutf8, "validate", "--backend=cpu", "--threads", str(t), path], reps)
        rec.add("fixed", "gutf8 validate", label, t, 0, m, runs)
        if a.simdutf:
            m, runs, _ = timed([a.simdutf, "validate", path, str(t)], reps)
            rec.add("fixed", "simdutf validate", label, t, 0, m, runs)
    m, runs, _ = timed(f"{a.gutf8} validate --backend=cpu --threads {a.threads} {shlex.quote(path)}", reps)
    rec.add("fixed", "bash -c 'gutf8 validate'", label, a.threads, 0, m, runs)


def phases_case(a, rec: Recorder, files: list[tuple[str, str]]) -> None:
    """Wall time against each tool's own account of it: what lies outside the work."""
    got = re.compile(r"read and process ([\d.]+) s.* in ([\d.]+) s,")
    for label, path in files:
        size = os.path.getsize(path)
        walls: dict[str, list[float]] = {k: [] for k in ("gutf8 wall", "gutf8 run", "gutf8 total", "simdutf wall",
                                                          "simdutf own")}
        for _ in range(max(a.reps, 11)):
            t0 = time.perf_counter()
            p = subprocess.run([a.gutf8, "validate", "--verbose", "--backend=cpu", "--threads", str(a.threads), path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            walls["gutf8 wall"].append(time.perf_counter() - t0)
            m = got.search(p.stderr)
            if m:
                walls["gutf8 run"].append(float(m.group(1)))
                walls["gutf8 total"].append(float(m.group(2)))
            if a.simdutf:
                t0 = time.perf_counter()
                q = subprocess.run([a.simdutf, "validate", path, str(a.threads)], capture_output=True, text=True)
                walls["simdutf wall"].append(time.perf_counter() - t0)
                walls["simdutf own"].append(float(q.stdout.split()[2]))
        for tool, runs in walls.items():
            if runs:
                rec.add("phases", tool, label, a.threads, size, statistics.median(runs), runs)


def pipe_case(a, rec: Recorder, path: str, label: str) -> None:
    size = os.path.getsize(path)
    m, runs, _ = timed(f"cat {shlex.quote(path)} | wc -c", a.reps)
    rec.add("pipe", "cat | wc -c", label, 1, size, m, runs)
    m, runs, _ = timed(f"cat {shlex.quote(path)} | {a.gutf8} validate --backend=cpu", a.reps)
    rec.add("pipe", "cat | gutf8 validate", label, a.threads, size, m, runs)


def in_process(code: str, reps: int) -> list[float]:
    """Seconds of `code` (a call of gutf8) run `reps` times in one warm Python process, after one
    untimed call: what a Python user's call costs, without the interpreter's start-up."""
    script = ("import time, gutf8\n" + code + "\nt = []\n"
              f"for _ in range({reps}):\n    s = time.perf_counter()\n    " + code.replace("\n", "\n    ") +
              "\n    t.append(time.perf_counter() - s)\nprint(' '.join(map(str, t)))")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return [float(x) for x in p.stdout.split()]


def python_case(a, rec: Recorder, path: str, label: str, names: list[str]) -> None:
    size = os.path.getsize(path)
    runs = in_process(f"r = gutf8.validate_file({path!r}, backend='cpu'); assert r.valid", a.reps)
    rec.add("python", "gutf8.validate_file (warm process)", label, a.threads, size, statistics.median(runs), runs)
    m, runs, _ = timed([a.gutf8, "validate", "--backend=cpu", path], a.reps)
    rec.add("python", "gutf8 validate (CLI)", label, a.threads, size, m, runs)
    listing = os.path.join(a.work, f"small-{len(names)}.list")
    total = sum(os.path.getsize(n) for n in names)
    call = f"names = open({listing!r}).read().split(); bad = [r.path for r in gutf8.validate_files(names, backend='cpu') if not r.valid]"
    runs = in_process(call, a.reps)
    rec.add("python", "gutf8.validate_files (warm process)", f"{len(names)} small files", a.threads, total,
            statistics.median(runs), runs)
    m, runs, _ = timed(f"{sys.executable} -c " + shlex.quote("import gutf8; " + call), a.reps)
    rec.add("python", "gutf8.validate_files (from start)", f"{len(names)} small files", a.threads, total, m, runs)
    m, runs, _ = timed(f"xargs -s 1900000 -a {listing} {a.isutf8} -l", a.reps)
    rec.add("python", "isutf8 -l", f"{len(names)} small files", 1, total, m, runs)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gutf8", required=True)
    p.add_argument("--simdutf", default="")
    p.add_argument("--isutf8", default="isutf8")
    p.add_argument("--work", default="/tmp/gutf8-host-engine")
    p.add_argument("--out", default="host_engine.csv")
    p.add_argument("--cases", default="big,scaling,small,pipe")
    p.add_argument("--sizes", default="2G", help="big files' sizes, e.g. 2G,16G")
    p.add_argument("--kinds", default="ascii:English,cjk:Chinese")
    p.add_argument("--small", type=int, default=20_000)
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="0: gutf8's own choice")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--cuda", action="store_true", help="also --backend=cuda over the small files")
    p.add_argument("--cuda-timeout", type=int, default=20)
    p.add_argument("--one-thread-max", type=parse_size, default=parse_size("2G"),
                   help="big files up to this size are also run on one thread")
    p.add_argument("--commit", default="")
    p.add_argument("--machine", default="")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    cases = a.cases.split(",")
    rec = Recorder(a.out, a.commit, a.machine)
    kinds = [k.split(":") for k in a.kinds.split(",")]
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    big = [(f"{label} {s >> 30} GiB", text_file(a.work, kind, s)) for s in sizes for kind, label in kinds] \
        if {"big", "scaling", "pipe", "python", "phases"} & set(cases) else []
    names = small_files(a.work, a.small) if {"small", "python"} & set(cases) else []
    if big:  # the page cache holds every input before the first timing
        subprocess.run(["cat", *[f for _, f in big]], stdout=subprocess.DEVNULL, check=True)
    if "fixed" in cases:
        fixed_case(a, rec)
    if "big" in cases:
        big_case(a, rec, big)
    if "phases" in cases:
        phases_case(a, rec, big)
    if "scaling" in cases:
        scaling_case(a, rec, big[0][1], big[0][0])
    if "small" in cases:
        small_case(a, rec, names)
    if "pipe" in cases:
        pipe_case(a, rec, big[0][1], big[0][0])
    if "python" in cases:
        python_case(a, rec, big[0][1], big[0][0], names)
    return 0 if rec.agree else 1


if __name__ == "__main__":
    sys.exit(main())
