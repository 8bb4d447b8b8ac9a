"""Test parts: the GoogleTest suites of the bundle, compute-sanitizer over them, the GPU fuzzer and the
Python package's tests."""
from __future__ import annotations

import datetime
import glob
import sys
from pathlib import Path

from .core import ROOT, Context, Outcome, group, gtest_counts, part, sanitizer_errors


def gtest(ctx: Context, name: str, program: str, cap: float, env: dict | None = None, args: list | None = None) -> Outcome:
    """One GoogleTest program of the bundle; passes when it exits 0."""
    step = ctx.run(name, [ctx.path(program), "--gtest_color=no", *(args or [])], cap, env=env)
    counts = gtest_counts(step.text())
    limit = " (time limit)" if step.timed_out else ""
    return Outcome(name, "pass" if step.ok else "fail", f"rc {step.rc}{limit}: {counts.line()}")


def cli_env(ctx: Context) -> dict:
    """The CLI suites run the bundle's gutf8 with --backend=cuda added (GUTF8_TEST_BACKEND)."""
    return {"GUTF8_BIN": str((ctx.bundle / "gutf8").resolve()), "GUTF8_TEST_BACKEND": "cuda"}


@part("gpu_tests", cap=240, needs=("tests/gutf8_gpu_tests",), help="gutf8_gpu_tests: the codec, columns and CUDA backend on the GPU")
def gpu_tests(ctx: Context) -> Outcome:
    return gtest(ctx, "gpu_tests", "tests/gutf8_gpu_tests", 240)


@part("prim_tests", cap=150, needs=("tests/gutf8_prim_tests",), help="gutf8_prim_tests: scan, select and radix sort against CUB and the CPU")
def prim_tests(ctx: Context) -> Outcome:
    return gtest(ctx, "prim_tests", "tests/gutf8_prim_tests", 150,
                 args=[f"--gtest_output=xml:{ctx.out / 'prim_tests.xml'}"])


@part("cpu_tests", cap=300, gpu=False, needs=("tests/gutf8_cpu_tests",), help="gutf8_cpu_tests on this host's CPU (every ISA path it has: AVX-512 on the GPU host)")
def cpu_tests(ctx: Context) -> Outcome:
    return gtest(ctx, "cpu_tests", "tests/gutf8_cpu_tests", 300)


@part("cli", cap=300, needs=("gutf8", "tests/gutf8_cli_tests"), help="the CLI suite with --backend=cuda")
def cli(ctx: Context) -> Outcome:
    return gtest(ctx, "cli", "tests/gutf8_cli_tests", 300, env=cli_env(ctx))


@part("hostile", cap=540, needs=("gutf8", "tests/gutf8_hostile_tests"), help="the hostile-input CLI suite with --backend=cuda")
def hostile(ctx: Context) -> Outcome:
    return gtest(ctx, "hostile", "tests/gutf8_hostile_tests", 540, env=cli_env(ctx))


# ---------------------------------------------------------------------- compute-sanitizer ----

# gtest filters per tool and suite that keep each run within about 60-90 s (the sanitizers slow
# kernels 10-100x): the 1 GiB and > 4 GiB codec cases and the 2^28-element primitives are always out.
# racecheck (the slowest) runs the sweeps over every kernel, variant and policy on a few shapes.
# The tuning candidates' long grids (PrimTuning.Every*) are out; their *ByIndex tests stay in.
SANITIZER_FILTERS = {
    ("memcheck", "gpu"): "*-GpuLarge.*",
    ("memcheck", "prim"): "*-*Huge2Pow28*:PrimTuning.Every*",
    ("synccheck", "gpu"): "*-GpuLarge.*",
    ("synccheck", "prim"): "*-*Huge2Pow28*:PrimTuning.Every*",
    ("racecheck", "gpu"): "GpuSanitizerSweep.*:GpuRandom.TileBoundaries:GpuRandom.ErrorKindsAndLines",
    ("racecheck", "prim"): "PrimSanitizerSweep.*:PrimBuildingBlocks.*:PrimScan.TempQueryAndEmpty:PrimSelect.UnalignedInput",
    ("initcheck", "gpu"): ":".join([
        "GpuSanitizerSweep.*", "GpuRandom.EverySizeUpTo300", "GpuRandom.TileBoundaries", "GpuRandom.MisalignedInput",
        "GpuRandom.ErrorKindsAndLines", "GpuChunks.EverySplitOfShortInputs", "GpuExhaustive.OneAndTwoByteSequences",
        "GpuExhaustive.EncodeValueClasses", "CudaBackend.StreamSmallChunksEqualsCpu", "CudaBlockProcessor.*"]),
    ("initcheck", "prim"): ":".join([
        "PrimSanitizerSweep.*", "PrimBuildingBlocks.*", "PrimScan.Int32Sum", "PrimScan.NonCommutativeAffineCompose",
        "PrimScan.TempQueryAndEmpty", "PrimSelect.FlaggedU32", "PrimSelect.UnalignedInput",
        "PrimSort.KeysU32AllAlgorithms", "PrimSort.PairsU32StableWithDuplicates"]),
}


def sanitizer_filter(ctx: Context, tool: str, suite: str) -> str:
    """The filter for tool and suite: --san-filter TOOL:SUITE=FILTER, else the default above."""
    for spec in ctx.options.get("san_filter", []):
        key, _, value = spec.partition("=")
        if key == f"{tool}:{suite}":
            return value
    return SANITIZER_FILTERS[(tool, suite)]


TOOL_ARGS = {"memcheck": ["--leak-check", "full"], "racecheck": ["--racecheck-report", "analysis"]}


def sanitize_one(ctx: Context, tool: str, name: str, program, args: list, cap: float) -> tuple[str, bool]:
    """compute-sanitizer on one program: its verdict word (an error count when clean) and whether clean."""
    cs = ctx.tool("compute-sanitizer")
    step = ctx.run(f"{tool}-{name}", [cs, "--tool", tool, *TOOL_ARGS.get(tool, []), "--error-exitcode", "86",
                                      "--print-limit", "100", program, *args], cap)
    text = step.text()
    errors = sanitizer_errors(text)
    if "Running 0 tests" in text:
        return "no test matched the filter", False
    if step.timed_out:
        return f"time limit ({errors if errors is not None else '?'} errors so far)", False
    if errors is None:
        return f"no summary (rc {step.rc})", False
    if step.rc not in (0, 86):
        return f"{errors} (rc {step.rc})", False
    return str(errors), errors == 0


def sanitizer_part(tool: str):
    def run(ctx: Context) -> Outcome:
        if ctx.tool("compute-sanitizer") is None:
            return Outcome(tool, "fail", "compute-sanitizer not found")
        cap = float(ctx.options.get("san_timeout", 120))
        results, clean = [], True
        for suite in ("gpu", "prim"):
            program = ctx.path(f"tests/gutf8_{suite}_tests")
            if program is None:
                results.append(f"{suite}_tests missing")
                clean = False
                continue
            word, ok = sanitize_one(ctx, tool, f"{suite}_tests", program,
                                    [f"--gtest_filter={sanitizer_filter(ctx, tool, suite)}", "--gtest_color=no"], cap)
            results.append(f"{suite}_tests {word}")
            clean &= ok
        fuzz = ctx.path("tests/gutf8_gpu_fuzz")
        if tool == "memcheck" and fuzz is not None:
            word, ok = sanitize_one(ctx, tool, "gpu_fuzz", fuzz, ["--iterations", "40", "--max-size", "262144",
                                                                "--seed", "7", "--save", ctx.out], cap)
            results.append(f"gpu_fuzz {word}")
            clean &= ok
        return Outcome(tool, "pass" if clean else "fail", "errors: " + ", ".join(results))
    run.__doc__ = f"compute-sanitizer --tool {tool} over the GPU and primitive suites (filters sized for it)"
    return run


for _tool, _cap in (("memcheck", 400), ("racecheck", 300), ("initcheck", 300), ("synccheck", 300)):
    part(_tool, cap=_cap)(sanitizer_part(_tool))


@part("fuzz", cap=300, needs=("tests/gutf8_gpu_fuzz",), help="gutf8_gpu_fuzz: GPU against CPU differential fuzzing (--fuzz-iterations, --fuzz-seed)")
def fuzz(ctx: Context) -> Outcome:
    program = ctx.path("tests/gutf8_gpu_fuzz")
    seed = ctx.options.get("fuzz_seed") or datetime.date.today().strftime("%Y%m%d")
    step = ctx.run("fuzz", [program, "--iterations", ctx.options.get("fuzz_iterations", 400), "--seed", seed,
                            "--save", ctx.out], 300)
    last = [line for line in step.text().splitlines() if line.startswith("gutf8_gpu_fuzz: ")]
    return Outcome("fuzz", "pass" if step.ok else "fail", f"rc {step.rc}, seed {seed}: {last[-1] if last else ''}")


# --------------------------------------------------------------------------- Python ----

def python_site(ctx: Context) -> str | None:
    """Installs the carried wheels (stage_python.sh's .device-python/, the dask ones in .whl/) into
    a folder for PYTHONPATH, once per run; None when there is no gutf8 wheel."""
    site = Path(ctx.options.get("work", "/tmp/gutf8-device")) / "site"
    if (site / "gutf8").is_dir():
        return str(site)
    wheels = sorted(glob.glob(str(ROOT / ".device-python/*.whl")))
    if not wheels:
        return None
    wheels += sorted(glob.glob(str(ROOT / ".whl/*.whl")))
    step = ctx.run("pip", [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                           "--target", site, *wheels], 120)
    return str(site) if step.ok else None


@part("pytest", cap=300, gpu=False, help="the Python package's tests from the carried wheel (.device-python/, .whl/)")
def pytest(ctx: Context) -> Outcome:
    site = python_site(ctx)
    if site is None:
        return Outcome("pytest", "skip", "no wheel in .device-python/ (scripts/gpu/stage_python.sh)")
    step = ctx.run("pytest", [sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "tests/python"],
                   300, env={"PYTHONPATH": site, "PYTHONUNBUFFERED": "1"})
    lines = step.text().strip().splitlines()
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return Outcome("pytest", "pass" if step.ok else "fail",
                   f"rc {step.rc}: {lines[-1] if lines else ''}" + (f"; {failures[0]}" if failures else ""))


@part("python_bench", cap=300, help="bench/python/bench_python.py: the Python calls beside the CLI and CPython")
def python_bench(ctx: Context) -> Outcome:
    site = python_site(ctx)
    if site is None:
        return Outcome("python_bench", "skip", "no wheel in .device-python/ (scripts/gpu/stage_python.sh)")
    report = ctx.out / "python.md"
    step = ctx.run("python_bench", [sys.executable, "bench/python/bench_python.py", "--reps", "5", "--cli",
                                    ctx.bundle / "gutf8", "--big-size", "4G", "--files", "64", "--file-size", "64M",
                                    "--workdir", ctx.options.get("work", "/tmp"), "--out", report], 300,
                   env={"PYTHONPATH": site})
    return Outcome("python_bench", "pass" if step.ok else "fail", f"rc {step.rc}; {report.name}")


group("tests", ["gpu_tests", "prim_tests", "cli", "cpu_tests"])
group("reliability", ["memcheck", "racecheck", "initcheck", "synccheck", "fuzz", "hostile"])
