#!/usr/bin/env python3
"""Compressed corpora through the input engine against the standard tools, side by side in one run.

Cases (wall clock from process start, files in the page cache, median of --reps runs):
  shards   --shards files of zstd -3 and of gzip -6 (one frame / member each, cut at line ends):
           `gutf8 validate SHARDS` (all threads, and one) against one core's `zstd -dc` / `gzip -dc` of
           the same shards to /dev/null (the target scales that rate by the cores used; gutf8's one
           thread against it is the ceiling no thread count passes) and against the shell loop
           `for f in SHARDS; do zstdcat $f | gutf8 validate; done`
  framed   one zstd file of 1 MiB frames (each compressed by zstd -3, concatenated): `gutf8 validate`
           (all threads, and one) against one core's `zstd -dc`
  output   `gutf8 validate --replace -o OUT.zst SHARDS` (zstd shards in) against one core's
           `zstd -3 -c TEXT` to /dev/null
  gpu      the same validate of the framed file and of the gzip shards with --backend=cuda beside
           --backend=cpu (only with --cuda; nvCOMP lanes are what the target asks for)

Writes CSV rows (case,tool,input,threads,median_s,gb_per_s,runs,commit,machine; GB/s of text) to
--out and prints a table of ratios against the targets last.

    python3 bench/compress_engine.py --gutf8 build/gutf8 --text 16G --shards 64 --out OUT.csv
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_engine import Recorder, parse_size, text_file, timed  # noqa: E402

FRAME = 1 << 20


def cut_lines(data: bytes, parts: int) -> list[bytes]:
    """data in `parts` pieces of about equal size, each ending at a line end."""
    out, start = [], 0
    for k in range(1, parts + 1):
        end = len(data) if k == parts else data.index(b"\n", max(start, len(data) * k // parts)) + 1
        out.append(data[start:end])
        start = end
    return out


def compress(tool: list[str], data: bytes) -> bytes:
    return subprocess.run(tool, input=data, stdout=subprocess.PIPE, check=True).stdout


def make_inputs(work: str, text: str, shards: int) -> dict[str, list[str]]:
    """The zstd and gzip shards and the framed zstd file, made once from the text file."""
    folder = os.path.join(work, f"compressed-{os.path.getsize(text) >> 20}M-{shards}")
    names = {"zstd": [os.path.join(folder, f"s{k:03d}.txt.zst") for k in range(shards)],
             "gzip": [os.path.join(folder, f"s{k:03d}.txt.gz") for k in range(shards)],
             "framed": [os.path.join(folder, "framed.txt.zst")]}
    if all(os.path.exists(n) for group in names.values() for n in group):
        return names
    os.makedirs(folder, exist_ok=True)
    data = open(text, "rb").read()
    zstd, gzip = ["zstd", "-3", "-q", "-c"], ["gzip", "-6", "-c"]
    with ThreadPoolExecutor(os.cpu_count()) as pool:  # the tools run as processes, one a core
        pieces = cut_lines(data, shards)
        for k, (z, g) in enumerate(zip(pool.map(lambda p: compress(zstd, p), pieces),
                                       pool.map(lambda p: compress(gzip, p), pieces))):
            open(names["zstd"][k], "wb").write(z)
            open(names["gzip"][k], "wb").write(g)
        frames = pool.map(lambda at: compress(zstd, data[at:at + FRAME]), range(0, len(data), FRAME))
        with open(names["framed"][0], "wb") as f:
            for frame in frames:
                f.write(frame)
    return names


def shards_case(a, rec: Recorder, names: dict[str, list[str]], size: int) -> None:
    for fmt, cat in (("zstd", "zstd -dc"), ("gzip", "gzip -dc")):
        files = " ".join(shlex.quote(n) for n in names[fmt])
        label = f"{len(names[fmt])} {fmt} shards"
        m, runs, _ = timed(f"{cat} {files} > /dev/null", a.reps)
        rec.add("shards", f"{cat} (one core)", label, 1, size, m, runs)
        m, runs, _ = timed(f"{a.gutf8} validate --backend=cpu {files}", a.reps)
        rec.add("shards", "gutf8 validate", label, 0, size, m, runs)
        m, runs, _ = timed(f"{a.gutf8} validate --backend=cpu --threads 1 {files}", a.reps)
        rec.add("shards", "gutf8 validate (one thread)", label, 1, size, m, runs)
        m, runs, _ = timed(f"for f in {files}; do {cat} $f | {a.gutf8} validate --backend=cpu || exit $?; done", a.reps)
        rec.add("shards", f"shell loop: {cat} | gutf8 validate", label, 1, size, m, runs)


def framed_case(a, rec: Recorder, names: dict[str, list[str]], size: int) -> None:
    framed = shlex.quote(names["framed"][0])
    m, runs, _ = timed(f"zstd -dc {framed} > /dev/null", a.reps)
    rec.add("framed", "zstd -dc (one core)", "zstd, 1 MiB frames", 1, size, m, runs)
    m, runs, _ = timed(f"{a.gutf8} validate --backend=cpu {framed}", a.reps)
    rec.add("framed", "gutf8 validate", "zstd, 1 MiB frames", 0, size, m, runs)
    m, runs, _ = timed(f"{a.gutf8} validate --backend=cpu --threads 1 {framed}", a.reps)
    rec.add("framed", "gutf8 validate (one thread)", "zstd, 1 MiB frames", 1, size, m, runs)


def output_case(a, rec: Recorder, names: dict[str, list[str]], text: str, size: int) -> None:
    files = " ".join(shlex.quote(n) for n in names["zstd"])
    out = os.path.join(a.work, "repaired.txt.zst")
    m, runs, _ = timed(f"zstd -3 -q -c {shlex.quote(text)} > /dev/null", a.reps)
    rec.add("output", "zstd -3 -c (one core)", "the text", 1, size, m, runs)
    m, runs, _ = timed(f"{a.gutf8} validate --replace --backend=cpu -o {shlex.quote(out)} {files}", a.reps)
    rec.add("output", "gutf8 validate --replace -o X.zst", f"{len(names['zstd'])} zstd shards", 0, size, m, runs)
    m, runs, _ = timed(f"{a.gutf8} validate --replace --backend=cpu --threads 1 -o {shlex.quote(out)} {files}", a.reps)
    rec.add("output", "gutf8 validate --replace -o X.zst (one thread)", f"{len(names['zstd'])} zstd shards", 1, size, m,
            runs)
    check = subprocess.run(f"zstd -dc {shlex.quote(out)} | cmp - {shlex.quote(text)}", shell=True)
    if check.returncode != 0:
        sys.stderr.write("output case: the repaired .zst does not decompress to the text\n")
    os.remove(out)


def gpu_case(a, rec: Recorder, names: dict[str, list[str]], size: int) -> None:
    for label, group in (("zstd, 1 MiB frames", names["framed"]), (f"{len(names['gzip'])} gzip shards", names["gzip"])):
        files = " ".join(shlex.quote(n) for n in group)
        for backend in ("cpu", "cuda"):
            m, runs, _ = timed(f"{a.gutf8} validate --backend={backend} {files}", a.reps)
            rec.add("gpu", f"gutf8 validate --backend={backend}", label, 0, size, m, runs)


def ratio(rec: Recorder, case: str, tool: str, inp: str | None = None) -> float:
    for r in rec.rows:
        if r["case"] == case and r["tool"] == tool and (inp is None or r["input"] == inp):
            return float(r["median_s"])
    return float("nan")


def summary(rec: Recorder, cores: int, shards: int) -> None:
    """Each target's ratio, and its ceiling: the ratio at perfect scaling of gutf8's one-thread run
    (the tool's one-core time over gutf8's one-thread time), which no thread count can pass."""
    def line(name: str, case: str, tool: str, ours: str, target: float, inp: str | None = None) -> str:
        t, o, o1 = ratio(rec, case, tool, inp), ratio(rec, case, ours, inp), ratio(rec, case, ours + " (one thread)", inp)
        return (f"  {name}: gutf8 = {t / o / cores:.2f}x (one core's {tool.split(' (')[0]} x {cores}) [>= {target}]; "
                f"ceiling at perfect scaling {t / o1:.2f}x")

    print(f"\ntargets (cores used: {cores}):")
    for fmt, cat in (("zstd", "zstd -dc"), ("gzip", "gzip -dc")):
        label = f"{shards} {fmt} shards"
        print(line(label, "shards", f"{cat} (one core)", "gutf8 validate", 0.8, label))
        loop, ours = ratio(rec, "shards", f"shell loop: {cat} | gutf8 validate", label), ratio(rec, "shards", "gutf8 validate", label)
        print(f"  {label}: {loop / ours:.2f}x the shell loop [>= 8]")
    print(line("framed zstd", "framed", "zstd -dc (one core)", "gutf8 validate", 0.8))
    print(line("--replace -o X.zst", "output", "zstd -3 -c (one core)", "gutf8 validate --replace -o X.zst", 0.7))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gutf8", required=True)
    p.add_argument("--work", default="/tmp/gutf8-compress-bench")
    p.add_argument("--out", default="compress_engine.csv")
    p.add_argument("--text", default="16G", help="text size, e.g. 512M or 16G")
    p.add_argument("--kind", default="mixed", help="corpus/make_corpus.py's text kind")
    p.add_argument("--shards", type=int, default=64)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--cases", default="shards,framed,output")
    p.add_argument("--cuda", action="store_true", help="also the gpu case")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--commit", default="")
    p.add_argument("--machine", default="")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    text = text_file(a.work, a.kind, parse_size(a.text), whole_lines=True)
    size = os.path.getsize(text)
    names = make_inputs(a.work, text, a.shards)
    subprocess.run(f"cat {shlex.quote(text)} {' '.join(shlex.quote(n) for g in names.values() for n in g)} > /dev/null",
                   shell=True, check=True)  # into the page cache
    rec = Recorder(a.out, a.commit, a.machine)
    cases = a.cases.split(",") + (["gpu"] if a.cuda else [])
    if "shards" in cases:
        shards_case(a, rec, names, size)
    if "framed" in cases:
        framed_case(a, rec, names, size)
    if "output" in cases:
        output_case(a, rec, names, text, size)
    if "gpu" in cases:
        gpu_case(a, rec, names, size)
    if {"shards", "framed", "output"} <= set(cases):
        summary(rec, a.cores, a.shards)
    return 0


if __name__ == "__main__":
    sys.exit(main())
