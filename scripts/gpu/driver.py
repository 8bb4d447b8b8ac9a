#!/usr/bin/env python3
"""gutf8 on the GPU host: the parts asked for, each under a time limit; logs and a report under OUT.

Run ON the device machine from the repository root, with the bundle of scripts/gpu/stage.sh carried
as .device/ (and .device-python/, .whl/ for the Python parts; pack_multi_gpu.sh's pack for a host of
several GPUs):

  python3 scripts/gpu/driver.py OUT [PART|GROUP ...] [options]     (--list: the parts and groups)

Default: the group `tests`. Each part has a time cap, and --budget bounds the whole run (every part
stops in time for the table): a part that would start with less than 15 s left is skipped. Without a
GPU (none found, or --gpus 0) the parts that need one are skipped, so the rest runs anywhere.

Writes OUT/report.md (the table, then each part's details), OUT/results.json, OUT/device.txt,
OUT/progress.log, OUT/steps.txt, the parts' own results, OUT/logs/ (each command's output) and
OUT/logs.tar.gz (the same, in one file); prints the table last.
Exit status 0 when no part failed.
"""
from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from devrun import bench, engine, engines, files, kernels, multi, nvcomp, tests  # noqa: E402,F401  (they register their parts)
from devrun.core import GROUPS, PARTS, ROOT, Context, Outcome, markdown_table, write_json  # noqa: E402

# KINDS.md of the device machines: NVLink multicast stays off.
os.environ.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
                  PYTHONUNBUFFERED="1")
# The carried wheel's compression libraries (scripts/gpu/stage_python.sh), for every Python part.
if (ROOT / ".device-python/lib").is_dir():
    os.environ["LD_LIBRARY_PATH"] = ":".join(filter(None, [str(ROOT / ".device-python/lib"),
                                                            os.environ.get("LD_LIBRARY_PATH")]))


def count_gpus() -> int:
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(line.startswith("GPU ") for line in p.stdout.splitlines()) if p.returncode == 0 else 0


def device_facts(ctx: Context) -> str:
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,clocks.max.sm,"
                            "pcie.link.gen.current,pcie.link.width.current", "--format=csv"],
                           capture_output=True, text=True, timeout=30)
        lines = [p.stdout.strip() or "no GPU"]
    except (OSError, subprocess.TimeoutExpired):
        lines = ["no GPU (no nvidia-smi)"]
    lines[0] += "" if ctx.gpus == 0 else f"; {ctx.gpus} GPUs assumed"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
    lines.append(f"host: {platform.node()}, {cpu}, {os.cpu_count()} CPUs, AVX-512 VBMI2: "
                 f"{'yes' if 'avx512_vbmi2' in flags else 'no'}")
    try:
        commit = " ".join((ctx.bundle / "COMMIT").read_text().split())
    except OSError:
        commit = "no COMMIT in the bundle"
    wheel = ROOT / ".device-python/COMMIT"
    lines.append(f"bundle {ctx.bundle}: {commit}; python wheel: "
                 f"{' '.join(wheel.read_text().split()) if wheel.exists() else 'none'}")
    return "\n".join(lines) + "\n"


def expand(names: list) -> list:
    out = []
    for n in names:
        for p in GROUPS.get(n, [n]):
            if p not in out:
                out.append(p)
    return out


def run_part(ctx: Context, name: str) -> Outcome:
    p = PARTS[name]
    if p.gpu and ctx.gpus == 0:
        return Outcome(name, "skip", "no GPU")
    missing = [n for n in p.needs if ctx.path(n) is None] + [t for t in p.tools if ctx.tool(t) is None]
    if missing:
        return Outcome(name, "skip", f"{', '.join(missing)} not in the bundle {ctx.bundle} or on PATH")
    if ctx.left() < 15:
        return Outcome(name, "skip", f"budget: {ctx.left():.0f} s left")
    ctx.note(f"{name}: up to {min(p.cap, ctx.left()):.0f} s")
    start = time.monotonic()
    ctx.part_end = start + min(p.cap, ctx.left())
    try:
        outcome = p.run(ctx)
    except Exception as e:  # one part's failure must not cost the others their report
        outcome = Outcome(name, "fail", f"{type(e).__name__}: {e}")
    outcome.seconds = time.monotonic() - start
    ctx.note(f"{name}: {outcome.status} in {outcome.seconds:.0f} s: {outcome.summary}")
    return outcome


def stop(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM as SIGINT: the report of what ran is still written


def pack(out: Path) -> None:
    """Every command's log (and the A/B rounds) in one file, for callers that fetch few files back."""
    folders = [d for d in ("logs", "ab") if (out / d).is_dir()]
    if folders:
        with tarfile.open(out / "logs.tar.gz", "w:gz") as t:
            for d in folders:
                t.add(out / d, arcname=d)


def report(ctx: Context, outcomes: list, facts: str) -> str:
    table = markdown_table(["part", "status", "s", "summary"],
                           [[o.part, o.status, f"{o.seconds:.0f}", o.summary.replace("|", "/")] for o in outcomes])
    details = "".join(f"\n## {o.part}\n\n{o.details.rstrip()}\n" for o in outcomes if o.details.strip())
    (ctx.out / "report.md").write_text(f"# gutf8 device run\n\n```\n{facts}```\n\n{table}{details}")
    write_json(ctx.out / "results.json", {"facts": facts, "parts": [o.__dict__ for o in outcomes]})
    return table


def arguments(argv: list) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="\n".join(__doc__.splitlines()[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", type=Path, help="folder for the logs and the report")
    ap.add_argument("parts", nargs="*", help="parts and groups (default: tests)")
    ap.add_argument("--list", action="store_true", help="list the parts and groups")
    ap.add_argument("--bundle", type=Path, default=ROOT / ".device", help="scripts/gpu/stage.sh's bundle")
    ap.add_argument("--budget", type=float, default=420, help="seconds for the whole run (default 420)")
    ap.add_argument("--gpus", type=int, help="GPUs to assume (default: nvidia-smi's count; 0: none)")
    ap.add_argument("--work", default=None, help="folder for the inputs (default /tmp/gutf8-device)")
    ap.add_argument("--size", help="text size of settings and e2e (16G), of the multi-GPU parts (32G)")
    ap.add_argument("--reps", help="repetitions of e2e (3) and host_engine (5)")
    ap.add_argument("--engine-cases", help="host_engine: cases of bench/host_engine.py (big,scaling,small,pipe,python)")
    ap.add_argument("--engine-sizes", help="host_engine: big files' sizes (2G,16G)")
    ap.add_argument("--knobs-env", help="engine_knobs: validate variants, NAME=VALUE settings comma-separated (the sweep otherwise)")
    ap.add_argument("--knobs-ops", help="engine_knobs: operations (validate,decode,replace)")
    ap.add_argument("--knobs-threads", help="engine_knobs: thread counts (CPUs, CPUs - 2, 1)")
    ap.add_argument("--knobs-sizes", help="engine_knobs: file sizes (2G)")
    ap.add_argument("--engines", help="engines: which of duckdb,polars (both; one a call fits 64 MiB of wheels)")
    ap.add_argument("--engines-rows", help="engines: rows of bench_engines.py (10000000)")
    ap.add_argument("--tmpfs", action="store_true", help="multi-GPU parts: their inputs in a tmpfs at --work")
    ap.add_argument("--base", action="append", default=[], help="ab: a bundle to compare with (repeatable)")
    ap.add_argument("--ab", default="codec", help="ab: benchmarks, of codec,prim,cpu_codec,columns (codec)")
    ap.add_argument("--rounds", type=int, default=2, help="ab: interleaved rounds (2)")
    ap.add_argument("--ab-args", default="", help="ab: more options for every benchmark it runs")
    ap.add_argument("--codec-args", default="", help="more bench_codec options for codec")
    ap.add_argument("--codec-rounds", type=int, default=3, help="codec_rounds: rounds of bench_codec (3)")
    ap.add_argument("--prim-args", default="", help="more bench_prim options for prim and prim_sweep")
    ap.add_argument("--columns-args", default="", help="more bench_columns options for columns (e.g. --no-pool)")
    ap.add_argument("--ncu", action="append", default=[], help="ncu: 'KERNEL_REGEX|SKIP|PROGRAM ARGS' (repeatable)")
    ap.add_argument("--nsys", action="append", default=[], help="nsys: 'PROGRAM ARGS' (repeatable)")
    ap.add_argument("--san-filter", action="append", default=[],
                    help="compute-sanitizer: TOOL:SUITE=GTEST_FILTER (SUITE gpu or prim) instead of the default")
    ap.add_argument("--san-timeout", type=float, default=120, help="seconds per compute-sanitizer run (120)")
    ap.add_argument("--fuzz-iterations", default="400", help="fuzz: iterations (400)")
    ap.add_argument("--fuzz-seed", default=None, help="fuzz: seed (default: the date)")
    ap.add_argument("--cli-shards", type=int, default=4, help="mgpu_tests: shards per CLI --device setting (4)")
    ap.add_argument("--file-call-sizes", default="64M,256M,1G", help="file_calls: input sizes")
    ap.add_argument("--dask-files", default="32", help="dask: files (32)")
    ap.add_argument("--dask-mib", default="256", help="dask: MiB a file (256)")
    args = ap.parse_args(argv)
    if not args.list and args.out is None:
        ap.error("OUT is needed")
    return args


def unpack(bundle: Path) -> None:
    """A host of several GPUs gets the bundle as pack_multi_gpu.sh's .probe/mgpu.tar.xz."""
    pack = ROOT / ".probe/mgpu.tar.xz"
    if not (bundle / "gutf8").exists() and pack.exists():
        with tarfile.open(pack) as t:
            t.extractall(ROOT)


def main(argv: list) -> int:
    args = arguments(argv)
    if args.list:
        for p in PARTS.values():
            print(f"{p.name:17} {'GPU' if p.gpu else '   '} {p.cap:4.0f} s  {p.help}")
        for g, members in GROUPS.items():
            print(f"group {g}: {' '.join(members)}")
        return 0
    names = expand(args.parts or ["tests"])
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        print(f"driver.py: unknown part {' '.join(unknown)} (--list)", file=sys.stderr)
        return 2
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    options = {k: v for k, v in vars(args).items() if v is not None and k not in ("out", "parts", "list", "bundle",
                                                                                   "budget", "gpus")}
    options["requested"] = names
    unpack(args.bundle.resolve())
    ctx = Context(out=out, bundle=args.bundle.resolve(), budget=args.budget,
                  gpus=count_gpus() if args.gpus is None else args.gpus, options=options)
    ctx.logs.mkdir(exist_ok=True)
    (out / "progress.log").write_text("")
    facts = device_facts(ctx)
    (out / "device.txt").write_text(facts)
    ctx.note(f"{ctx.gpus} GPUs; bundle {ctx.bundle}; budget {args.budget:.0f} s")
    outcomes = []
    signal.signal(signal.SIGTERM, stop)
    try:
        for name in names:
            outcomes.append(run_part(ctx, name))
    except KeyboardInterrupt:  # stopped from outside: the report of what ran
        stopped, rest = names[len(outcomes)], names[len(outcomes) + 1:]
        outcomes.append(Outcome(stopped, "fail", f"stopped by a signal; not run: {' '.join(rest) or 'none'}"))
    pack(out)
    table = report(ctx, outcomes, facts)
    print("\n" + facts + "\n" + table, end="")
    return 1 if any(o.status == "fail" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
