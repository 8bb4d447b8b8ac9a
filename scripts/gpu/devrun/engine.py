"""Input engine parts: its GPU tests (the engine's GPU lanes, the CUDA backend, the CUDA block
processor, and the Python file and device tests from the carried wheel), and bench/host_engine.py:
the engine against simdutf, isutf8 and wc, wall clock from process start."""
from __future__ import annotations

import os
import platform
import shutil
import sys

from .core import ROOT, Context, Outcome, group, gtest_counts, part, tail
from .tests import python_site

ENGINE_GPU_TESTS = "EngineGpu.*:CudaBackend.*:CudaBlockProcessor.*"
PYTHON_ENGINE_TESTS = ["tests/python/test_files.py", "tests/python/test_device.py"]


@part("engine_tests", cap=500, needs=("tests/gutf8_gpu_tests",),
      help="the engine's GPU tests (GPU lanes, CUDA backend and block processor), then the Python file and device tests")
def engine_tests(ctx: Context) -> Outcome:
    step = ctx.run("engine_tests", [ctx.path("tests/gutf8_gpu_tests"), "--gtest_color=no",
                                    f"--gtest_filter={ENGINE_GPU_TESTS}"], 300)
    ok = step.ok
    summary = f"GPU tests rc {step.rc}{' (time limit)' if step.timed_out else ''}: {gtest_counts(step.text()).line()}"
    site = python_site(ctx)
    if site is None:
        summary += "; pytest not run (no wheel in .device-python/)"
    else:
        py = ctx.run("engine_pytest", [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                       *PYTHON_ENGINE_TESTS], 200, env={"PYTHONPATH": site})
        ok &= py.ok
        lines = py.text().strip().splitlines()
        summary += f"; pytest rc {py.rc}: {lines[-1] if lines else ''}"
    return Outcome("engine_tests", "pass" if ok else "fail", summary)


def peer(ctx: Context, name: str) -> str | None:
    """A peer carried in .probe/peers/ (built here: ../shared/peers/simdutf/build.sh .probe/peers, and
    cp /usr/bin/isutf8 .probe/peers/), else one on PATH."""
    carried = ROOT / ".probe/peers" / name
    if carried.is_file() and os.access(carried, os.X_OK):
        return str(carried)
    return shutil.which(name)


def engine_cases(ctx: Context, isutf8: str | None, site: str | None) -> tuple[list, list]:
    """The cases asked for (--engine-cases), less those whose tools are missing, and why."""
    cases = ctx.options.get("engine_cases", "big,scaling,small,pipe,python").split(",")
    dropped = []
    if isutf8 is None:
        dropped += [f"{c} (no isutf8)" for c in cases if c in ("small", "python")]
        cases = [c for c in cases if c not in ("small", "python")]
    if site is None and "python" in cases:
        dropped.append("python (no wheel in .device-python/)")
        cases.remove("python")
    return cases, dropped


@part("host_engine", cap=580, gpu=False, needs=("gutf8",),
      help="bench/host_engine.py: the engine beside simdutf, isutf8 and wc (--engine-cases, --engine-sizes, --reps)")
def host_engine(ctx: Context) -> Outcome:
    simdutf, isutf8 = peer(ctx, "simdutf_files"), peer(ctx, "isutf8")
    site = python_site(ctx)
    cases, dropped = engine_cases(ctx, isutf8, site)
    if not cases:
        return Outcome("host_engine", "skip", "no case left: " + ", ".join(dropped))
    commit = "+".join((ctx.bundle / "COMMIT").read_text().split()) if (ctx.bundle / "COMMIT").exists() else "unknown"
    table = ctx.out / "host_engine.csv"
    args = [sys.executable, "bench/host_engine.py", "--gutf8", ctx.bundle / "gutf8", "--simdutf", simdutf or "",
            "--isutf8", isutf8 or "isutf8", "--work", os.path.join(ctx.options.get("work", "/tmp/gutf8-device"), "engine"),
            "--out", table, "--cases", ",".join(cases), "--sizes", ctx.options.get("engine_sizes", "2G,16G"),
            "--reps", ctx.options.get("reps", "5"), "--commit", commit,
            "--machine", f"{platform.node()} ({os.cpu_count()} CPUs)"]
    if ctx.gpus > 0:
        args.append("--cuda")
    step = ctx.run("host_engine", args, 560, env={"PYTHONPATH": site} if site else None)
    notes = [] if simdutf else ["no simdutf peer: its rows left out"]
    notes += [f"left out: {d}" for d in dropped]
    return Outcome("host_engine", "pass" if step.ok else "fail",
                   f"rc {step.rc}{' (time limit)' if step.timed_out else ''}; host_engine.csv"
                   + "".join(f"; {n}" for n in notes),
                   details="```\n" + tail(step.log, 40) + "\n```\n")


@part("engine_knobs", cap=300, gpu=False, needs=("gutf8",),
      help="bench/engine_knobs.py: the big-file knobs (pieces in flight, release step, decode's pieces) beside simdutf, "
           "2 GiB, 16, 14 and 1 threads; --knobs-env NAME=VALUE,... runs those settings instead of the sweep")
def engine_knobs(ctx: Context) -> Outcome:
    simdutf = peer(ctx, "simdutf_files")
    workers = os.cpu_count() or 16
    env = ctx.options.get("knobs_env", "")
    # Settings given: those beside the defaults (the window and release sweeps are in host_engine_h200.md).
    sweep = ["--ahead", f"{2 * workers + 4},{32 * workers + 4}", "--release", "16M,512M"] if not env else []
    args = [sys.executable, "bench/engine_knobs.py", "--gutf8", ctx.bundle / "gutf8", "--simdutf", simdutf or "",
            "--work", os.path.join(ctx.options.get("work", "/tmp/gutf8-device"), "engine"),
            "--sizes", ctx.options.get("knobs_sizes", "2G"),
            "--threads", ctx.options.get("knobs_threads", f"{workers},{max(workers - 2, 1)},1"),
            "--reps", ctx.options.get("reps", "5"), *sweep, "--env", env,
            "--ops", ctx.options.get("knobs_ops", "validate,decode,replace"), "--decode-pieces", "8M,1M,512K",
            "--out", ctx.out / "engine_knobs.csv"]
    step = ctx.run("engine_knobs", args, 280)
    return Outcome("engine_knobs", "pass" if step.ok else "fail",
                   f"rc {step.rc}{' (time limit)' if step.timed_out else ''}; engine_knobs.csv"
                   + ("" if simdutf else "; no simdutf peer: its rows left out"),
                   details="```\n" + tail(step.log, 60) + "\n```\n")


# The CPU suites that cover the scanners (every ISA path the host has) and the engine's pieces.
DECODE_TESTS = ":".join(f"{suite}.*" for suite in (
    "ScanDecode", "ScanWalk", "Exhaustive", "RandomUtf8", "RandomUtf32", "UnicodeExamples", "Kinds", "Boundaries",
    "Policies", "Positions", "Stats", "Threads", "FuzzCorpus", "Stream", "ErrorList", "Pieces", "Engine", "RoundTrip"))


@part("decode_1t", cap=400, gpu=False, needs=("gutf8", "tests/gutf8_cpu_tests"),
      help="the scanners' CPU tests on this host's ISAs, then decode at 1 thread beside simdutf (2 GiB English and "
           "Chinese; decode's pieces of 256 and 128 KiB, release steps of 8 MiB and none, and the AVX2 path)")
def decode_1t(ctx: Context) -> Outcome:
    tests = ctx.run("decode_1t_tests", [ctx.path("tests/gutf8_cpu_tests"), "--gtest_color=no",
                                        f"--gtest_filter={DECODE_TESTS}"], 200)
    simdutf = peer(ctx, "simdutf_files")
    args = [sys.executable, "bench/engine_knobs.py", "--gutf8", ctx.bundle / "gutf8", "--simdutf", simdutf or "",
            "--work", os.path.join(ctx.options.get("work", "/tmp/gutf8-device"), "engine"), "--sizes", "2G",
            "--threads", "1", "--reps", ctx.options.get("reps", "5"), "--ops", "decode",
            "--decode-pieces", "1M,512K", "--decode-isas", "avx2", "--decode-release", "8M,4G",
            "--out", ctx.out / "decode_1t.csv"]
    bench = ctx.run("decode_1t_bench", args, 180)
    limit = lambda step: " (time limit)" if step.timed_out else ""  # noqa: E731
    return Outcome("decode_1t", "pass" if tests.ok and bench.ok else "fail",
                   f"tests rc {tests.rc}{limit(tests)}: {gtest_counts(tests.text()).line()}; "
                   f"bench rc {bench.rc}{limit(bench)}; decode_1t.csv" + ("" if simdutf else "; no simdutf peer"),
                   details="```\n" + tail(bench.log, 20) + "\n```\n")


@part("compress_engine", cap=580, gpu=False, needs=("gutf8",), tools=("zstd", "gzip"))
def compress_engine(ctx: Context) -> Outcome:
    """bench/compress_engine.py: compressed shards and frames through the engine beside zstd and gzip (--size)."""
    commit = "+".join((ctx.bundle / "COMMIT").read_text().split()) if (ctx.bundle / "COMMIT").exists() else "unknown"
    args = [sys.executable, "bench/compress_engine.py", "--gutf8", ctx.bundle / "gutf8",
            "--work", os.path.join(ctx.options.get("work", "/tmp/gutf8-device"), "compress"),
            "--out", ctx.out / "compress_engine.csv", "--text", ctx.options.get("size", "16G"),
            "--reps", ctx.options.get("reps", "5"), "--commit", commit,
            "--machine", f"{platform.node()} ({os.cpu_count()} CPUs)"]
    if ctx.gpus > 0:
        args.append("--cuda")
    step = ctx.run("compress_engine", args, 560)
    return Outcome("compress_engine", "pass" if step.ok else "fail",
                   f"rc {step.rc}{' (time limit)' if step.timed_out else ''}; compress_engine.csv",
                   details="```\n" + tail(step.log, 30) + "\n```\n")


group("engine", ["engine_tests", "host_engine"])
