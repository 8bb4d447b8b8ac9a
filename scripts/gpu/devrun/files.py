"""File parts: the input engine inside one process (bench_engine), the CLI end to end
(scripts/bench_e2e.sh), the host's limits (bench_host_limits), the page cache against a tmpfs, and
what one GPU file call costs in a warm process."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .core import ROOT, Context, Outcome, group, part, tail

GIB = 1 << 30


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def work(ctx: Context) -> Path:
    w = Path(ctx.options.get("work", "/tmp/gutf8-device"))
    w.mkdir(parents=True, exist_ok=True)
    return w


def fill(dst: Path, src: Path, size: int) -> None:
    """dst = src repeated, cut at size bytes (at a sequence start only if src ends at one)."""
    data = src.read_bytes()
    tmp = dst.with_suffix(dst.suffix + ".part")
    with open(tmp, "wb") as f:
        left = size
        while left > 0:
            f.write(data[:left])
            left -= min(left, len(data))
    tmp.rename(dst)


def corpus(ctx: Context, *args) -> None:
    subprocess.run([sys.executable, str(ROOT / "corpus/make_corpus.py"), *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL)


def text_file(ctx: Context, kind: str, size: int) -> Path:
    """KIND text (corpus/sample/KIND.txt tiled to 64 MiB, then repeated) of size bytes, made once."""
    f = work(ctx) / f"{kind}-{size}.txt"
    if not f.exists():
        base = work(ctx) / f"base-{kind}.txt"
        if not base.exists():
            corpus(ctx, "tile", "--size", "64M", "--kind", kind, base)
        fill(f, base, size)
    return f


def read_through(path: Path) -> None:
    """Brings a file into the page cache."""
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def pipeline_rows(ctx: Context, name: str, runs: list, cap: float) -> tuple[str, bool]:
    """bench_engine once per argument list; its CSV rows (first run, then the median of the
    rest: the streaming rate after CUDA's start-up)."""
    program = ctx.path("bench/bench_engine")
    rows, ok = ["op,backend,settings,first_s,median_s,gb_per_s,gpu_share,gpu_startup_s"], True
    for k, args in enumerate(runs):
        if ctx.limit(cap) < 20:
            rows.append(f"# budget: {len(runs) - k} runs left out")
            break
        out = ctx.logs / f"{name}{k}.csv"
        step = ctx.run(f"{name}{k}", [program, *args], 120, stdout=out)
        ok &= step.ok
        rows.append(f"# {' '.join(map(str, args))}" + ("" if step.ok else f": rc {step.rc}, {tail(step.log, 1)}"))
        rows += [line for line in out.read_text().splitlines() if line and not line.startswith("op,")]
    return "\n".join(rows) + "\n", ok


@part("settings", cap=500, needs=("bench/bench_engine",), help="bench_engine on 16 GiB English and Chinese text (and UTF-32): CPU workers, GPU lanes, both")
def settings(ctx: Context) -> Outcome:
    size = parse_size(ctx.options.get("size", "16G"))
    runs = []
    for kind in ("ascii", "cjk"):
        f = text_file(ctx, kind, size)
        read_through(f)
        for op in ("validate", "decode", "repair"):
            base = ["--file", f, "--op", op, "--reps", "3"]
            runs += [base + ["--backend", "cpu"], base + ["--backend", "cuda"]]
            if op == "decode":
                runs.append(base + ["--backend", "cuda", "--run-bytes", "8"])
            if op != "repair":
                runs.append(base + ["--backend", "auto"])
    utf32 = work(ctx) / "ascii-utf32.u32"
    if not utf32.exists() and ctx.path("gutf8"):
        head = work(ctx) / "ascii-head.txt"
        with open(text_file(ctx, "ascii", size), "rb") as src, open(head, "wb") as dst:
            dst.write(src.read(min(size, 4 * GIB) // 4))
        subprocess.run([ctx.bundle / "gutf8", "decode", "--backend=cpu", "-o", utf32, head], check=False)
        head.unlink(missing_ok=True)
    if utf32.exists():
        runs += [["--file", utf32, "--op", "encode", "--reps", "3", "--backend", b] + []
                 for b in ("cpu", "cuda")]
    table, ok = pipeline_rows(ctx, "settings", runs, 500)
    (ctx.out / "settings.csv").write_text(table)
    return Outcome("settings", "pass" if ok else "fail", "settings.csv", details="```\n" + table + "```\n")


@part("stats", cap=300, needs=("bench/bench_engine",), help="bench_engine of stats on 4 GiB of mixed text, CPU workers and GPU lanes")
def stats(ctx: Context) -> Outcome:
    m = work(ctx) / "mixed-4G.txt"
    if not m.exists():
        corpus(ctx, "tile", "--size", "4G", "--kind", "mixed", m)
    table, ok = pipeline_rows(ctx, "stats", [["--file", m, "--op", "stats", "--backend", b, "--reps", "3"]
                                             for b in ("cpu", "cuda")], 300)
    (ctx.out / "stats.csv").write_text(table)
    return Outcome("stats", "pass" if ok else "fail", "stats.csv", details="```\n" + table + "```\n")


def bench_e2e(ctx: Context, name: str, args: list, cap: float) -> Outcome:
    out = ctx.out / name
    step = ctx.run(name, ["bash", "scripts/bench_e2e.sh", "--bin", ctx.bundle / "gutf8", "--work", work(ctx),
                          "--out", out, *args], cap)
    table = out / "e2e.csv"
    rows = []
    if table.exists():
        rows = [",".join(line.split(",")[:1] + line.split(",")[3:8]) for line in table.read_text().splitlines()]
    return Outcome(name, "pass" if step.ok else "fail", f"rc {step.rc}; {name}/e2e.md",
                   details="```\n" + "\n".join(rows) + "\n```\n")


@part("e2e", cap=420, needs=("gutf8",), help="scripts/bench_e2e.sh: 16 GiB English and Chinese, validate and decode, cpu / cuda / auto, and a size sweep")
def e2e(ctx: Context) -> Outcome:
    return bench_e2e(ctx, "e2e", ["--size", ctx.options.get("size", "16G"), "--reps", ctx.options.get("reps", 3),
                                  "--no-baselines", "--kinds", "ascii cjk", "--ops", "validate decode", "--backends",
                                  "cpu cuda auto", "--budget", "360", "--sweep", "1K 64K 1M 16M 256M 1G 4G"], 420)


@part("autosweep", cap=240, needs=("gutf8",), help="scripts/bench_e2e.sh: --backend=auto against cpu from 1 KiB to 4 GiB")
def autosweep(ctx: Context) -> Outcome:
    return bench_e2e(ctx, "autosweep", ["--size", "4G", "--reps", "5", "--no-baselines", "--kinds", "ascii", "--ops",
                                        "validate decode", "--backends", "cpu auto", "--sweep", "1K 1M 64M 1G"], 240)


def four_gib(ctx: Context) -> Path:
    """4 GiB of English text (the head of a larger one when made)."""
    f = work(ctx) / "four.txt"
    if not f.exists():
        bigger = [p for p in sorted(work(ctx).glob("ascii-*.txt")) if p.stat().st_size >= 4 * GIB]
        src = bigger[0] if bigger else text_file(ctx, "ascii", 4 * GIB)
        with open(src, "rb") as a, open(f, "wb") as b:
            for _ in range(4 * GIB // (64 << 20)):
                b.write(a.read(64 << 20))
    return f


@part("limits", cap=120, needs=("bench/bench_host_limits",), help="bench_host_limits on 4 GiB: start-up, PCIe, pread of the page cache, page-locking")
def limits(ctx: Context) -> Outcome:
    step = ctx.run("limits", [ctx.path("bench/bench_host_limits"), "--reps", "3", "--file", four_gib(ctx)], 120, stdout=ctx.out / "host_limits.md")
    keep = [l for l in (ctx.out / "host_limits.md").read_text().splitlines()
            if any(s in l for s in ("Register", "registered", "pread page cache, 4", "pread page cache, 8",
                                    "pread page cache, 12"))]
    return Outcome("limits", "pass" if step.ok else "fail", f"rc {step.rc}; host_limits.md", details="\n".join(keep))


@part("tmpfs", cap=120, gpu=False, needs=("gutf8",), help="the CPU backend on 4 GiB in the page cache and in /dev/shm, mapped and read (GUTF8_NO_MAP=1)")
def tmpfs(ctx: Context) -> Outcome:
    program, f = ctx.path("gutf8"), four_gib(ctx)
    shm = Path("/dev/shm/gutf8-four.txt")
    shutil.copyfile(f, shm)
    lines = []
    try:
        for where in (f, shm):
            for env in ({}, {"GUTF8_NO_MAP": "1"}):
                for r in range(3):
                    t0 = time.monotonic()
                    p = subprocess.run([program, "validate", "--backend=cpu", "--verbose", where], capture_output=True,
                                       text=True, env=dict(os.environ, **env), timeout=ctx.limit(60))
                    label = "GUTF8_NO_MAP=1" if env else "map"
                    lines.append(f"{where} {label} run {r + 1}: {time.monotonic() - t0:.3f} s "
                                 f"({(p.stderr.strip().splitlines() or [''])[-1]})")
    finally:
        shm.unlink(missing_ok=True)
    (ctx.out / "tmpfs.log").write_text("\n".join(lines) + "\n")
    return Outcome("tmpfs", "pass", "tmpfs.log", details="\n".join(lines))


@part("file_calls", cap=400, needs=("bench/bench_engine",), help="one GPU file call in a warm process, lanes kept or built each call (C++ and Python)")
def file_calls(ctx: Context) -> Outcome:
    sizes = ctx.options.get("file_call_sizes", "64M,256M,1G")
    shm = Path("/dev/shm/gutf8-calls")
    shm.mkdir(exist_ok=True)
    runs = []
    try:
        for size in sizes.split(","):
            f = shm / f"mixed-{size}.txt"
            corpus(ctx, "tile", "--size", size, "--kind", "mixed", f)
            runs += [["--file", f, "--op", op, "--backend", "cuda", "--reps", "5", "--keep-lanes", keep]
                     for op in ("validate", "decode") for keep in ("0", "1")]
        table, ok = pipeline_rows(ctx, "file_calls", runs, 300)
        from .tests import python_site  # the Python half needs the carried wheel
        site = python_site(ctx)
        if site is not None:
            step = ctx.run("file_calls_python", [sys.executable, "bench/python/bench_file_calls.py", "--sizes", sizes,
                                                 "--reps", "5", "--workdir", shm, "--out", ctx.out / "file_calls_python.md"],
                           200, env={"PYTHONPATH": site})
            ok &= step.ok
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    (ctx.out / "file_calls.csv").write_text(table)
    return Outcome("file_calls", "pass" if ok else "fail", "file_calls.csv, file_calls_python.md",
                   details="```\n" + table + "```\n")


group("files", ["settings", "stats", "limits", "tmpfs"])
