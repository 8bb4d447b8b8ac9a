"""Parts for a host of several GPUs (nvidia-h200-x2 / -x4): the suites spread over the GPUs, the CLI when
a GPU fails, the codec on each GPU alone and all at once, the file pipeline end to end on 1, 2, 4 GPUs,
what bounds the scaling (PCIe, host memory), and gutf8.dask on a local GPU cluster.

Their inputs (--size of English text, 512 MiB of mixed text with 1% errors, with --tmpfs in a tmpfs
mounted at --work for the run) are built in the background from the first of these parts on."""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .core import Context, Outcome, TestCounts, group, gtest_counts, markdown_table, median, part
from .files import corpus, fill, parse_size, work
from .tests import python_site

_inputs: dict = {}


def inputs(ctx: Context, wait: bool = True) -> dict | None:
    """{'big': English text of --size, 'bad': 512 MiB with 1% errors}, built once in a thread."""
    if "thread" not in _inputs:
        w = work(ctx)
        if ctx.options.get("tmpfs") and subprocess.run(["mountpoint", "-q", w]).returncode != 0:
            # Page-cache pages without a disk's write-back; unmounted when the driver ends.
            if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300G", "tmpfs", w]).returncode == 0:
                atexit.register(subprocess.run, ["umount", "-l", str(w)])
        size = parse_size(ctx.options.get("size", "32G"))
        files = {"big": w / f"ascii-{size}.txt", "bad": w / "mixed-1pct-512M.txt"}

        def build():
            try:
                if not files["bad"].exists():
                    corpus(ctx, "tile", "--size", "16M", "--kind", "mixed", "--seed", "3", w / "base-mixed16.txt")
                    corpus(ctx, "inject", "--rate", "0.01", "--seed", "7", w / "base-mixed16.txt", w / "base-bad.txt")
                    fill(files["bad"], w / "base-bad.txt", 512 << 20)
                if not files["big"].exists():
                    corpus(ctx, "tile", "--size", "64M", "--kind", "ascii", w / "base-ascii.txt")
                    fill(files["big"], w / "base-ascii.txt", size)
                _inputs["files"] = files
            except (OSError, subprocess.CalledProcessError) as e:
                _inputs["error"] = str(e)

        _inputs["thread"] = threading.Thread(target=build, daemon=True)
        _inputs["thread"].start()
    if wait:
        _inputs["thread"].join(timeout=max(1.0, ctx.limit(400)))
    return _inputs.get("files")


def device_list(k: int) -> str:
    return ",".join(str(d) for d in range(k))


def gpu_counts(ctx: Context) -> list:
    counts = [k for k in (1, 2, 4, 8, 16) if k <= ctx.gpus]
    return counts + ([ctx.gpus] if ctx.gpus not in counts and ctx.gpus > 0 else [])


def device_wrapper(ctx: Context, gutf8: Path, device: str) -> Path:
    """gutf8 with --device added after the command, as the CLI suite's GUTF8_TEST_BACKEND adds --backend."""
    w = ctx.logs / f"gutf8-dev-{device}"
    w.write_text(f"""#!/bin/sh
case "$1" in decode|encode|validate|stats) ;; *) exec "{gutf8}" "$@" ;; esac
for a in "$@"; do case "$a" in --device|--device=*|--help|-h|--version) exec "{gutf8}" "$@" ;; esac; done
c=$1; shift
exec "{gutf8}" "$c" --device {device} "$@"
""")
    w.chmod(0o755)
    return w


@part("mgpu_tests", cap=200, needs=("gutf8", "tests/gutf8_gpu_tests", "tests/gutf8_cli_tests"), help="the GPU suite in 4 shards (GPUs rotated per shard), the CLI suite per --device, test_dask.py, all at once")
def mgpu_tests(ctx: Context) -> Outcome:
    gutf8, suite, cli = ctx.path("gutf8"), ctx.path("tests/gutf8_gpu_tests"), ctx.path("tests/gutf8_cli_tests")
    if {"failover", "mgpu_e2e"} & set(ctx.options.get("requested", [])):
        inputs(ctx, wait=False)  # built while the tests run
    gutf8 = gutf8.resolve()
    shards = int(ctx.options.get("cli_shards", 4))
    jobs = {}  # label -> [(name, command, env)]
    for s in range(4):
        visible = ",".join(str((j + s) % ctx.gpus) for j in range(ctx.gpus))
        jobs.setdefault("gutf8_gpu_tests (GPUs rotated per shard)", []).append(
            (f"gpu_tests_{s}", [suite, "--gtest_color=no"],
             {"CUDA_VISIBLE_DEVICES": visible, "GTEST_TOTAL_SHARDS": "4", "GTEST_SHARD_INDEX": str(s)}))
    for d in ["all"] + [str(g) for g in range(ctx.gpus)]:
        wrapper = device_wrapper(ctx, gutf8, d)
        for s in range(shards):
            jobs.setdefault(f"CLI, cuda, --device {d}", []).append(
                (f"cli_dev{d}_{s}", [cli, "--gtest_color=no"],
                 {"GUTF8_BIN": str(wrapper), "GUTF8_TEST_BACKEND": "cuda", "GTEST_TOTAL_SHARDS": str(shards),
                  "GTEST_SHARD_INDEX": str(s)}))
    site = python_site(ctx)
    if site:
        jobs["tests/python/test_dask.py"] = [("pytest_dask", [sys.executable, "-m", "pytest", "-q", "-rfEs", "-p",
                                                              "no:cacheprovider", "tests/python/test_dask.py"],
                                              {"PYTHONPATH": site})]
    results = {}
    threads = [threading.Thread(target=lambda n=n, c=c, e=e: results.__setitem__(n, ctx.run(n, c, 200, env=e)))
               for runs in jobs.values() for n, c, e in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows, ok = [], True
    for label, runs in jobs.items():
        counts = TestCounts()
        for n, _, _ in runs:
            counts.add(gtest_counts(results[n].text()))
        rcs = " ".join(f"{results[n].rc} ({results[n].seconds:.0f})" for n, _, _ in runs)
        ok &= all(results[n].ok for n, _, _ in runs)
        last = results[runs[0][0]].text().strip().splitlines()[-1:] if label.startswith("tests/python") else []
        rows.append([label, rcs, counts.passed, counts.failed, counts.skipped,
                     " ".join(counts.failures)[:400] or " ".join(last)])
    table = markdown_table(["suite", "shards rc (s)", "passed", "failed", "skipped", "failures"], rows)
    return Outcome("mgpu_tests", "pass" if ok else "fail", f"{len(threads)} runs", details=table)


# ---------------------------------------------------------------------------- failover ----

def verdict(expect: str, rc: int, same: bool, err: str, left: list) -> str:
    """same: status and output as the CPU backend's; exit3: status 3, one line on stderr, no output
    left (docs/SPEC.md where no GPU can do the work); same_or_3: either (whether the failing GPU was
    needed decides)."""
    if expect != "exit3" and same:
        how = re.search(r"fell back[^)]*|[0-9.]+ [KMGT]?i?B on the GPU", err)
        return f"PASS (same as the CPU; {how.group(0) if how else ''})"
    if expect != "same" and rc == 3 and not left and len(err.strip().splitlines()) == 1:
        return f"PASS (exit 3, no output left: {err[:100].strip()})"
    return f"FAIL (rc {rc}, same output {same}, files left: {' '.join(left) or 'none'}, stderr: {err[:160]!r})"


def md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        while chunk := f.read(64 << 20):
            h.update(chunk)
    return h.hexdigest()


class FailoverCases:
    """The CLI's answers when a GPU fails, against the CPU backend's: decode of the 1%-invalid text
    (md5 of the -o file) and validate --json of the big one."""

    def __init__(self, ctx: Context, gutf8: Path, files: dict):
        self.ctx, self.gutf8, self.big, self.bad = ctx, gutf8, files["big"], files["bad"]
        self.fo = work(ctx) / "fo"
        self.rows: list = []
        self.ref_decode = self.decode("--backend=cpu")
        self.ref_validate = self.validate("--backend=cpu")

    def decode(self, *args) -> tuple[int, str, list, str]:
        self.fo.mkdir(exist_ok=True)
        p = subprocess.run([self.gutf8, "decode", "--errors=replace", *args, self.bad, "-o", self.fo / "out"],
                           capture_output=True, text=True, timeout=self.ctx.limit(60))
        left = sorted(os.listdir(self.fo))
        digest = md5(self.fo / "out") if (self.fo / "out").exists() else ""
        shutil.rmtree(self.fo, ignore_errors=True)
        return p.returncode, p.stderr, left, digest

    def validate(self, *args) -> tuple[int, str, str]:
        p = subprocess.run([self.gutf8, "validate", "--json", *args, self.big], capture_output=True, text=True,
                           timeout=self.ctx.limit(60))
        return p.returncode, p.stdout, p.stderr

    def decode_case(self, label: str, expect: str, *args) -> None:
        rc, err, left, digest = self.decode(*args)
        same = rc == self.ref_decode[0] and digest == self.ref_decode[3]
        self.rows.append([label, "decode " + " ".join(args), verdict(expect, rc, same, err, left)])

    def validate_case(self, label: str, expect: str, *args) -> None:
        rc, out, err = self.validate("--verbose", *args)
        first = err.splitlines()[:1] if rc == 3 else err.splitlines()  # --verbose adds lines of its own
        same = rc == self.ref_validate[0] and out == self.ref_validate[1]
        self.rows.append([label, "validate --json " + " ".join(args), verdict(expect, rc, same, "\n".join(first), [])])


@contextlib.contextmanager
def memory_hog(gpu: int):
    """A CuPy process holding all but 256 MiB of a GPU's memory; yields its first line ('holding ...')."""
    hog = subprocess.Popen([sys.executable, "-c", """
import time, cupy
free, total = cupy.cuda.runtime.memGetInfo()
hold = cupy.cuda.runtime.malloc(free - (256 << 20))
print('holding', (free - (256 << 20)) >> 20, 'MiB of', total >> 20, flush=True)
time.sleep(600)"""], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu)))
    try:
        yield hog.stdout.readline()
    finally:
        hog.kill()
        hog.wait()


@part("failover", cap=180, needs=("gutf8",), help="the CLI when a GPU fails: --gpu-memory 64K everywhere, then the last GPU short of memory (CuPy)")
def failover(ctx: Context) -> Outcome:
    files = inputs(ctx)
    if files is None:
        return Outcome("failover", "skip", f"no inputs: {_inputs.get('error')}")
    c = FailoverCases(ctx, ctx.path("gutf8"), files)
    c.decode_case("64K cap on every GPU, cuda", "exit3", "--backend=cuda", "--device", "all", "--gpu-memory", "64K")
    c.validate_case("64K cap on every GPU, auto beside 2 CPU workers (so that GPUs join)", "same", "--backend=auto",
                    "--threads", "2", "--device", "all", "--gpu-memory", "64K")
    last = ctx.gpus - 1
    with memory_hog(last) as line:
        if "holding" in line:
            c.decode_case(f"GPU {last} short of memory, cuda, all GPUs", "same_or_3", "--backend=cuda", "--device", "all")
            c.decode_case(f"GPU {last} short of memory, cuda, GPU {last} alone", "same_or_3", "--backend=cuda",
                          "--device", str(last))
            c.validate_case(f"GPU {last} short of memory, auto beside 2 CPU workers, all GPUs", "same",
                            "--backend=auto", "--threads", "2", "--device", "all")
            c.validate_case(f"GPU {last} short of memory, cuda, all GPUs", "same_or_3", "--backend=cuda", "--device",
                            "all")
        else:
            c.rows.append([f"GPU {last} short of memory", f"(the CuPy process did not start: {line.strip()})", "not run"])
    ok = all(r[2].startswith(("PASS", "not run")) for r in c.rows)
    passed = sum(r[2].startswith("PASS") for r in c.rows)
    return Outcome("failover", "pass" if ok else "fail", f"{passed} of {len(c.rows)} pass",
                   details=markdown_table(["case", "command", "verdict"], c.rows))


# ------------------------------------------------------------------------------- codec ----

@part("mgpu_codec", cap=170, needs=("bench/bench_codec",), help="bench_codec's fused decode (replace) device-resident on each GPU alone, then all at once")
def mgpu_codec(ctx: Context) -> Outcome:
    args = [ctx.path("bench/bench_codec"), "--quick", "--inputs", "ascii,mixed", "--ops", "decode_fused_replace", "--size", "256", "--budget", "40"]
    rows = {}

    def one(mode: str, gpu: int, runs: str) -> None:
        where = ctx.logs / f"codec-{mode}-{gpu}"
        ctx.run(f"codec-{mode}-{gpu}", [*args, "--runs", runs, "--out", where], 40,
                env={"CUDA_VISIBLE_DEVICES": str(gpu)})
        from .bench import csv_rows
        for r in csv_rows(where / "codec.csv"):
            rows.setdefault((r["input"], r["invalid_pct"]), {})[(mode, gpu)] = r["gbps"]

    for g in range(ctx.gpus):
        one("alone", g, "300")
    threads = [threading.Thread(target=one, args=("all", g, "1000")) for g in range(ctx.gpus)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    header = ["input", "invalid %"] + [f"GPU {g} alone" for g in range(ctx.gpus)] + \
             [f"GPU {g} all at once" for g in range(ctx.gpus)]
    table = [[k[0], k[1]] + [v.get(("alone", g), "") for g in range(ctx.gpus)] +
             [v.get(("all", g), "") for g in range(ctx.gpus)] for k, v in sorted(rows.items())]
    return Outcome("mgpu_codec", "pass" if table else "fail", "GB/s of input, 256 MiB",
                   details=markdown_table(header, table))


# -------------------------------------------------------------------------------- e2e ----

def cli_row(ctx: Context, big: Path, op: str, backend: str, devices: str, threads: str, reps: int) -> list:
    """Wall clock of the CLI on big, median of reps (stdout to /dev/null), and what --verbose said."""
    args = [ctx.path("gutf8"), op, "--verbose", f"--backend={backend}"] + (["--errors=replace"] if op == "decode" else [])
    args += (["--device", devices] if devices else []) + (["--threads", threads] if threads else [])
    times, status, said = [], "ok", ""
    for _ in range(reps):
        if ctx.limit(90) < 12:
            status = f"budget after {len(times)} runs"
            break
        t0 = time.monotonic()
        p = subprocess.run(args + [big], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=ctx.limit(90))
        if p.returncode not in (0, 1):
            status = f"exit {p.returncode}: {p.stderr[:120]}"
            break
        times.append(time.monotonic() - t0)
        m = re.search(r"[0-9.]+ [KMGTP]?i?B on the GPU( after a start-up of [0-9.]+ s)?|the CPU did all the work|"
                      r"fell back[^)]*", p.stderr)
        said = m.group(0) if m else ""
    m = median(times)
    gbs = f"{big.stat().st_size / m / 1e9:.2f}" if m else ""
    return ["gutf8", op, backend, devices, threads or ("0" if backend == "cuda" else "default"),
            f"{m:.3f}" if m else "", gbs, status, said]


def pipeline_row(ctx: Context, big: Path, op: str, backend: str, devices: str) -> list:
    """bench_engine in one process: the median of 2 runs after the first (CUDA's start-up)."""
    args = ["--file", big, "--op", op, "--backend", backend, "--reps", "2"] + (["--devices", devices] if devices else [])
    out = ctx.logs / f"fp-{op}-{backend}-{devices or 'none'}.csv"
    step = ctx.run(out.stem, [ctx.path("bench/bench_engine"), *args], 120, stdout=out)
    line = (out.read_text().strip().splitlines() or [""])[-1]
    cells = line.split(",")  # op,backend,settings...,first_s,median_s,gb_per_s,gpu_share,gpu_startup_s
    if not step.ok or len(cells) < 8:
        return ["bench_engine", op, backend, devices, "", "", "", f"rc {step.rc}", ""]
    first, med, gbs, share, startup = cells[-5:]
    return ["bench_engine", op, backend, devices, "", med, gbs, "ok",
            f"first {first} s, GPU share {share}, start-up {startup} s"]


@part("mgpu_e2e", cap=200, needs=("gutf8", "bench/bench_engine"), help="validate and decode of --size English text in memory: CLI and bench_engine on 1, 2, 4 GPUs")
def mgpu_e2e(ctx: Context) -> Outcome:
    files = inputs(ctx)
    if files is None:
        return Outcome("mgpu_e2e", "skip", f"no inputs: {_inputs.get('error')}")
    big = files["big"]
    dmon = subprocess.Popen(["nvidia-smi", "dmon", "-s", "ut", "-o", "T", "-d", "1"],
                            stdout=open(ctx.logs / "dmon.log", "w"), stderr=subprocess.STDOUT)
    rows = []
    try:
        for op in ("validate", "decode"):
            rows.append(cli_row(ctx, big, op, "cpu", "", "", 3))
            for backend in ("cuda", "auto"):
                rows += [cli_row(ctx, big, op, backend, device_list(k), "", 3) for k in gpu_counts(ctx)]
        for op in ("validate", "decode"):
            rows.append(pipeline_row(ctx, big, op, "cpu", ""))
            rows += [pipeline_row(ctx, big, op, "auto", device_list(k)) for k in gpu_counts(ctx)]
            rows.append(pipeline_row(ctx, big, op, "cuda", "0"))
            if ctx.gpus > 1:
                rows.append(pipeline_row(ctx, big, op, "cuda", device_list(ctx.gpus)))
        workers = os.cpu_count() - os.cpu_count() // 8  # the file pipeline's CPU workers by default
        rows += [cli_row(ctx, big, op, "cpu", "", str(t), 1) for t in (8, 16, 32) if t < workers
                 for op in ("validate", "decode")]
    finally:
        dmon.terminate()
    header = ["tool", "op", "backend", "devices", "threads", "median s", "GB/s", "status", "GPU"]
    with open(ctx.out / "e2e.csv", "w") as f:
        f.write(",".join(header) + "\n" + "".join(",".join(str(c).replace(",", "+") for c in r) + "\n" for r in rows))
    return Outcome("mgpu_e2e", "pass", f"{big.stat().st_size / 2**30:g} GiB: e2e.csv",
                   details=markdown_table(header, rows))


@part("mgpu_limits", cap=140, help="what bounds the scaling: pinned copies on each GPU and several at once (CuPy), host memory copies (numpy), bench_host_limits")
def mgpu_limits(ctx: Context) -> Outcome:
    here = Path(__file__).parent
    pcie = ctx.run("pcie", [sys.executable, here / "pcie.py"], 40, stdout=ctx.out / "pcie.md")
    workers = os.cpu_count() - os.cpu_count() // 8
    procs = ",".join(str(p) for p in sorted({1, 4, 8, 16, 32, workers}) if p <= workers)
    membw = ctx.run("membw", [sys.executable, here / "membw.py", procs], 30, stdout=ctx.out / "membw.md")
    host = ctx.run("host", ["sh", "-c", HOST_FACTS], 30, stdout=ctx.out / "host.md")
    details = "\n".join((ctx.out / f).read_text() for f in ("pcie.md", "membw.md", "host.md"))
    return Outcome("mgpu_limits", "pass" if pcie.ok and membw.ok and host.ok else "fail", "pcie.md, membw.md, host.md",
                   details=details)


# The machine: GPUs and their links, CPUs and NUMA nodes, memory, the Python libraries' versions.
HOST_FACTS = """
echo '```'
nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,\
pcie.link.width.max,memory.total,clocks.max.sm,power.limit --format=csv
nvidia-smi topo -m
lscpu | grep -E '^(Model name|CPU\\(s\\)|Thread|Core|Socket|NUMA|L3)'
for n in /sys/devices/system/node/node*; do [ -d "$n" ] && echo "$(basename "$n"): cpus $(cat "$n/cpulist")"; done
grep -E 'MemTotal|MemAvailable' /proc/meminfo
python3 -c "import numpy, pandas, pyarrow; print('numpy', numpy.__version__, 'pandas', pandas.__version__, 'pyarrow', pyarrow.__version__)"
python3 -c "import cupy; print('cupy', cupy.__version__)"
echo '```'
"""


@part("dask", cap=110, help="bench_python.py's dask section: validate_files over 32 files of 256 MiB on 1, 2, 4 GPU workers")
def dask(ctx: Context) -> Outcome:
    site = python_site(ctx)
    if site is None:
        return Outcome("dask", "skip", "no wheel in .device-python/")
    counts = ",".join(str(k) for k in gpu_counts(ctx))
    step = ctx.run("dask", [sys.executable, "bench/python/bench_python.py", "--sections", "dask", "--dask-backend", "cuda",
                            "--reps", "3", "--workers", counts, "--files", ctx.options.get("dask_files", 32),
                            "--file-size", f"{ctx.options.get('dask_mib', 256)}M", "--workdir", work(ctx), "--out",
                            ctx.out / "dask.md"], 110,
                   env={"PYTHONPATH": site, "DASK_DISTRIBUTED__DIAGNOSTICS__NVML": "False"})
    text = (ctx.out / "dask.md").read_text() if (ctx.out / "dask.md").exists() else ""
    return Outcome("dask", "pass" if step.ok else "fail", "dask.md", details=text[text.find("## gutf8.dask"):])


group("multi_gpu", ["mgpu_tests", "failover", "mgpu_codec", "mgpu_e2e", "mgpu_limits", "limits", "dask"])
