"""The SQL and dataframe engines on the GPU host (docs/ENGINES.md): gutf8's DuckDB and Polars
functions, their tests and bench/python/bench_engines.py, from carried wheels, since that host has no
package registry. The gutf8 wheel is stage_python.sh's (.device-python/); duckdb's or polars' is
stage_wheels.sh's (.whl/). Both engines' wheels together pass a device call's 64 MiB: one call an
engine (--engines duckdb, then --engines polars)."""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from .core import ROOT, Context, Outcome, part, tail
from .tests import python_site


@part("engines", cap=560, gpu=False,
      help="DuckDB and Polars: their tests, then bench/python/bench_engines.py (--engines, --engines-rows, --reps)")
def engines(ctx: Context) -> Outcome:
    site = python_site(ctx)
    if site is None:
        return Outcome("engines", "skip", "no wheel in .device-python/ (scripts/gpu/stage_python.sh)")
    names = [n for n in ctx.options.get("engines", "duckdb,polars").split(",") if n]
    env = {"PYTHONPATH": site}
    tests = ctx.run("engines_tests", [sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                                      *[f"tests/python/test_{n}.py" for n in names]], 120, env=env)
    reps = str(ctx.options.get("reps", "5"))
    commit_file = ROOT / ".device-python/COMMIT"
    commit = commit_file.read_text().strip() if commit_file.exists() else "unknown"
    work = Path(tempfile.mkdtemp(dir="/dev/shm" if Path("/dev/shm").is_dir() else None, prefix="gutf8-engines."))
    try:
        bench = ctx.run("engines_bench", [sys.executable, "bench/python/bench_engines.py",
                                          "--rows", ctx.options.get("engines_rows", "10000000"), "--reps", reps,
                                          "--slow-reps", str(min(int(reps), 3)), "--engines", ",".join(names),
                                          "--workdir", work, "--commit", commit,
                                          "--out", ctx.out / "engines_h200.md"], 420, env=env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = tests.text().strip().splitlines()
    ok = tests.ok and bench.ok
    summary = (f"tests rc {tests.rc}: {lines[-1] if lines else ''}; bench rc {bench.rc}"
               f"{' (time limit)' if bench.timed_out else ''}: engines_h200.md")
    return Outcome("engines", "pass" if ok else "fail", summary, details="```\n" + tail(bench.log, 30) + "\n```\n")
