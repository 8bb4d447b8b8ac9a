"""Kernel parts, for work on the GPU kernels: their GPU tests first, compute-sanitizer on filters
that fit, the GPU-vs-CPU fuzzer for a fixed time, bench_codec in several rounds with a table of the
rounds' medians against the kernels' targets, Nsight Compute on every shape of the validate walk,
then the rest of the GPU tests with the time left. The group `kernels` runs them in that order
(`prim` adds bench_prim: --prim-args '--min-log2 20 --only scan,sort --no-cpu')."""
from __future__ import annotations

import csv
import glob
import io
import json
import os
import re
import shutil
import statistics
import time
from pathlib import Path

from .bench import commit_of, csv_rows
from .core import ROOT, Context, Outcome, group, gtest_counts, markdown_table, part
from .tests import sanitize_one

KERNEL_TESTS = "GpuRandom.*:GpuExhaustive.*:GpuChunks.*:GpuUtf16.*:GpuSanitizerSweep.*:GpuLaunchGrid.*:GpuLarge.*"
SANITIZER_RUNS = {  # tool: (gtest filter, seconds)
    "memcheck": ("GpuSanitizerSweep.*:GpuRandom.EverySizeUpTo300:GpuRandom.ValidateAtEveryAlignment:"
                 "GpuUtf16.EverySizeUpTo300AndAroundTiles", 100),
    "racecheck": ("GpuSanitizerSweep.*", 90),
}
CODEC_OPS = ("validate,validate_planes,validate_s1b3,validate_s1b4,validate_s2b2,validate_unaligned,decode_fused,"
             "decode_fused_replace,decode_fused_drop,decode_utf16_replace,decode_utf16be_replace,"
             "decode_utf16_three_pass_replace,repair_replace,repair_drop,encode_fused")
INPUTS = ["ascii", "cjk", "emoji", "mixed", "cjk_dense", "emoji_only"]
# The kernels' targets as fractions of the roofline: (valid text, text with 1 % or more invalid).
TARGETS = {"validate": (0.80, 0.70), "validate_unaligned": (0.80, 0.70), "decode_fused": (0.80, None),
           "decode_fused_replace": (0.80, 0.70), "decode_fused_drop": (0.80, 0.70), "decode_utf16_replace": (0.70, 0.70),
           "decode_utf16be_replace": (0.70, 0.70), "repair_replace": (0.85, 0.65), "repair_drop": (0.85, 0.65),
           "encode_fused": (0.80, 0.80)}
ASCII_VALIDATE_TARGET = 0.90  # validate of valid ASCII-heavy text


@part("kernel_tests", cap=150, needs=("tests/gutf8_gpu_tests",), help="the GPU tests of the kernels (the codec suites)")
def kernel_tests(ctx: Context) -> Outcome:
    step = ctx.run("kernel_tests", [ctx.path("tests/gutf8_gpu_tests"), "--gtest_color=no",
                                    f"--gtest_filter={KERNEL_TESTS}"], 150)
    limit = " (time limit)" if step.timed_out else ""
    return Outcome("kernel_tests", "pass" if step.ok else "fail", f"rc {step.rc}{limit}: {gtest_counts(step.text()).line()}")


@part("kernel_sanitizers", cap=200, needs=("tests/gutf8_gpu_tests",), tools=("compute-sanitizer",),
      help="memcheck on the validate, decode and UTF-16 tests and the sweep; racecheck on the sweep")
def kernel_sanitizers(ctx: Context) -> Outcome:
    results, clean = [], True
    for tool, (filter_, cap) in SANITIZER_RUNS.items():
        word, ok = sanitize_one(ctx, tool, "kernels", ctx.path("tests/gutf8_gpu_tests"),
                                [f"--gtest_filter={filter_}", "--gtest_color=no"], cap)
        results.append(f"{tool} {word}")
        clean &= ok
    return Outcome("kernel_sanitizers", "pass" if clean else "fail", "errors: " + ", ".join(results))


@part("kernel_fuzz", cap=45, needs=("tests/gutf8_gpu_fuzz",),
      help="gutf8_gpu_fuzz for 30 s on inputs up to 3 MB (a seed from the clock); stopping at the limit passes")
def kernel_fuzz(ctx: Context) -> Outcome:
    seed = str(int(time.time()))
    step = ctx.run("kernel_fuzz", [ctx.path("tests/gutf8_gpu_fuzz"), "--iterations", "100000", "--seed", seed,
                                   "--max-size", "3000000", "--save", ctx.out], 30)
    text = step.text()
    found = "MISMATCH" in text or "failure:" in text
    ok = not found and (step.ok or step.timed_out)
    last = [line for line in text.splitlines() if line.startswith("gutf8_gpu_fuzz: ")]
    how = "stopped at its time limit" if step.timed_out else f"rc {step.rc}"
    return Outcome("kernel_fuzz", "pass" if ok else "fail", f"{how}, seed {seed}: {last[-1] if last else ''}")


def goal(op: str, kind: str, invalid: float):
    """The target fraction for a row, or None."""
    t = TARGETS.get(op)
    if t is None:
        return None
    g = t[0] if invalid == 0 else (t[1] if invalid >= 1.0 else None)
    return ASCII_VALIDATE_TARGET if g is not None and op.startswith("validate") and kind == "ascii" and invalid == 0 else g


def rounds_table(rounds: list) -> str:
    """Per op and invalid rate, the median over rounds of each input's fraction of the roofline
    (* where the target is met), then validate's GB/s and ratio to the former walk."""
    rows: dict = {}
    for rnd in rounds:
        for r in rnd:
            rows.setdefault((r["op"], r["input"], float(r["invalid_pct"])), []).append((float(r["gbps"]), float(r["fraction"])))
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in rows.items()}
    ops = list(dict.fromkeys(k[0] for k in rows))
    rates = sorted({k[2] for k in rows})
    head = " ".join(f"{i:>10}" for i in INPUTS)
    lines = [f"{len(rounds)} rounds; copy {', '.join(r[0]['copy_gbps'] for r in rounds)} GB/s, "
             f"read {', '.join(r[0].get('read_gbps', '?') for r in rounds)} GB/s", "",
             "% of roofline (validate: of the read kernel), median of the rounds; * = target met",
             f"{'op':32} {'inv%':>4} {head}"]
    for op in ops:
        for inv in rates:
            cells = []
            for kind in INPUTS:
                m, g = med.get((op, kind, inv)), goal(op, kind, inv)
                cells.append(f"{'':>10}" if m is None else f"{m[1]:9.0%}{'*' if g is not None and m[1] >= g else ' '}")
            if any(c.strip() for c in cells):
                lines.append(f"{op:32} {inv:4.1f} {' '.join(cells)}")
    lines += ["", "validate GB/s, and / the former walk (validate_planes) in the same rounds", f"{'op':32} {'inv%':>4} {head}"]
    for op in (o for o in ops if o.startswith("validate")):
        for inv in rates:
            cells = []
            for kind in INPUTS:
                m, ref = med.get((op, kind, inv)), med.get(("validate_planes", kind, inv))
                cells.append(f"{'':>10}" if m is None else (f"{m[0]:5.0f} {m[0] / ref[0]:4.2f}" if ref else f"{m[0]:10.0f}"))
            if any(c.strip() for c in cells):
                lines.append(f"{op:32} {inv:4.1f} {' '.join(cells)}")
    return "\n".join(lines) + "\n"


@part("codec_rounds", cap=260, needs=("bench/bench_codec",),
      help="bench_codec in --codec-rounds rounds (3) of the kernels' ops: a table of the rounds' medians against the targets")
def codec_rounds(ctx: Context) -> Outcome:
    rounds, rcs = [], []
    for r in range(1, int(ctx.options.get("codec_rounds", 3)) + 1):
        where = ctx.logs / f"codec_r{r}"
        step = ctx.run(f"codec_r{r}", [ctx.path("bench/bench_codec"), "--out", where, "--commit", commit_of(ctx),
                                       "--runs", "10", "--budget", "70", "--ops", CODEC_OPS], 80)
        rcs.append(str(step.rc))
        if (where / "codec.csv").exists():
            shutil.copyfile(where / "codec.csv", ctx.out / f"codec_r{r}.csv")
            rounds.append(csv_rows(where / "codec.csv"))
    rounds = [r for r in rounds if r]
    if not rounds:
        return Outcome("codec_rounds", "fail", f"rcs {' '.join(rcs)}; no codec.csv")
    table = rounds_table(rounds)
    (ctx.out / "codec_rounds.txt").write_text(table)
    ok = all(rc == "0" for rc in rcs)
    return Outcome("codec_rounds", "pass" if ok else "fail", f"rcs {' '.join(rcs)}; codec_r*.csv, codec_rounds.txt",
                   details="```\n" + table + "```\n")


# ------------------------------------------------------------------------------ ncu ----

# Each validate shape's kernel, mangled: validate_sLbM takes L slabs (32 bytes) a warp lane, M thread blocks an SM.
VALIDATE_KERNELS = {"validate": "validate_screen_kernelILb1ELj2ELi3E", "validate_s1b3": "validate_screen_kernelILb1ELj1ELi3E",
                    "validate_s1b4": "validate_screen_kernelILb1ELj1ELi4E", "validate_s2b2": "validate_screen_kernelILb1ELj2ELi2E",
                    "validate_planes": "validate_kernelILb1ELb0E"}
NCU_RUNS = [("validate", "cjk"), ("validate_s1b3", "cjk"), ("validate_s1b4", "cjk"), ("validate_s2b2", "cjk"),
            ("validate_planes", "cjk"), ("validate", "ascii")]
NCU_METRICS = ("smsp__inst_executed.sum,dram__bytes_read.sum,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,"
               "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.avg.per_cycle_active,"
               "sm__warps_active.avg.pct_of_peak_sustained_active")
STALLS = ["long_scoreboard", "short_scoreboard", "math_pipe_throttle", "wait", "not_selected", "selected",
          "no_instruction", "mio_throttle", "lg_throttle", "branch_resolving", "dispatch_stall", "barrier",
          "drain", "membar", "misc", "sleeping", "tex_throttle", "imc_miss"]


def ncu_launches(logs: Path):
    """(op, input, invalid rate, the launch's metrics) of each ncu CSV: the first launch (valid text)
    and the 14th (the 1 % run)."""
    for p in sorted(glob.glob(str(logs / "ncu_*.csv"))):
        m = re.match(r"ncu_(.+)_(cjk|ascii)\.csv", os.path.basename(p))
        lines = [line for line in open(p, errors="replace") if line.startswith('"')]
        if not m or len(lines) < 3:
            continue
        rows = list(csv.DictReader(io.StringIO("".join([lines[0]] + lines[2:]))))
        yield m.group(1), m.group(2), "0", rows[0]
        if len(rows) >= 14:
            yield m.group(1), m.group(2), "1%", rows[13]


def ncu_row(op: str, kind: str, rate: str, r: dict) -> str:
    def num(key: str) -> float:
        try:
            return float(r.get(key, "").replace(",", ""))
        except ValueError:
            return float("nan")

    def stall(s: str) -> float:  # warps stalled for this reason per issued instruction (any such column else)
        keys = sorted((k for k in r if "issue_stalled_" + s + "_" in k and "not_issued" not in k),
                      key=lambda k: ("per_issue_active" not in k, k))
        return num(keys[0]) if keys else float("nan")

    kib = 64 * 1024
    return (f"{op},{kind},{rate},{num('smsp__inst_executed.sum') / kib:.1f},{num('gpu__time_duration.sum') / 1e3:.1f},"
            f"{num('dram__bytes_read.sum') / 2**20:.1f},{num('sm__inst_executed.avg.per_cycle_active'):.2f},"
            f"{num('sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active'):.1f},"
            f"{num('sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active'):.1f},"
            f"{num('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f},{num('launch__registers_per_thread'):.0f},"
            + ",".join(f"{stall(s):.2f}" for s in STALLS))


@part("validate_ncu", cap=240, needs=("bench/bench_codec",), tools=("ncu",),
      help="Nsight Compute on each validate shape over 64 MiB of CJK (and the default on ASCII), valid and 1 %: ncu.csv")
def validate_ncu(ctx: Context) -> Outcome:
    tool, done = ctx.tool("ncu"), 0
    for op, kind in NCU_RUNS:  # launches 4..17 of one bench run: 10 timed runs valid, then at 1 %
        if ctx.limit(240) < 45:
            break
        step = ctx.run(f"ncu_{op}_{kind}", [tool, "--clock-control", "none", "--kernel-name-base", "mangled",
                                            "--kernel-name", f"regex:{VALIDATE_KERNELS[op]}", "--launch-skip", "3",
                                            "--launch-count", "14", "--csv", "--page", "raw",
                                            *[a for s in ("SpeedOfLight", "WarpStateStats", "Occupancy", "LaunchStats")
                                              for a in ("--section", s)], "--metrics", NCU_METRICS,
                                            ctx.bundle / "bench/bench_codec", "--size", "64", "--runs", "10", "--quick",
                                            "--inputs", kind, "--ops", op, "--out", ctx.logs / "ncu_bench"], 40,
                       stdout=ctx.logs / f"ncu_{op}_{kind}.csv")
        done += step.ok
    header = ("op,input,invalid,warp_inst_per_KiB,us,dram_read_MiB,ipc,alu_pct,fma_pct,warps_active_pct,registers,"
              + ",".join("stall_" + s for s in STALLS))
    rows = [ncu_row(*launch) for launch in ncu_launches(ctx.logs)]
    (ctx.out / "ncu.csv").write_text("\n".join([header, *rows]) + "\n")
    table = markdown_table(header.split(",")[:11], [r.split(",")[:11] for r in rows])
    return Outcome("validate_ncu", "pass" if done == len(NCU_RUNS) else "fail",
                   f"{done} of {len(NCU_RUNS)} profiles, {len(rows)} launches: ncu.csv", details=table)


@part("gpu_tests_rest", cap=300, needs=("tests/gutf8_gpu_tests",),
      help="the GPU tests other than the kernels' (and the host-only ones), with the time left")
def gpu_tests_rest(ctx: Context) -> Outcome:
    step = ctx.run("gpu_tests_rest", [ctx.path("tests/gutf8_gpu_tests"), "--gtest_color=no",
                                      f"--gtest_filter=*-{KERNEL_TESTS}:*Host*"], 300)
    stopped = ""
    if step.timed_out:
        running = re.findall(r"^\[ RUN      \] (\S+)", step.text(), re.M)
        stopped = f" (time limit, in {running[-1]})" if running else " (time limit)"
    return Outcome("gpu_tests_rest", "pass" if step.ok else "fail",
                   f"rc {step.rc}{stopped}: {gtest_counts(step.text()).line()}")


group("kernels", ["kernel_tests", "kernel_sanitizers", "kernel_fuzz", "codec_rounds", "validate_ncu", "gpu_tests_rest"])


BUDGET_OPS = "validate,decode_fused,decode_fused_replace,decode_utf16_replace,repair_replace,encode_fused"
BUDGET_METRICS = "smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg.per_second"


def budget_targets(path: Path) -> None:
    """goal() for every row the budget run makes (--quick: valid and 1 %), as codec_budget.py reads it."""
    table = {op: {kind: {f"{rate:.1f}": goal(op, kind, rate) for rate in (0.0, 1.0)} for kind in INPUTS}
             for op in BUDGET_OPS.split(",")}
    path.write_text(json.dumps(table, indent=1) + "\n")


@part("budget", cap=300, needs=("bench/bench_codec",), tools=("ncu",),
      help="Nsight Compute over every launch of each target op (64 MiB, every input, valid and 1 %): "
           "instructions a KiB against the issue budget at the op's target (bench/codec_budget.py): budget.csv")
def budget(ctx: Context) -> Outcome:
    tool, report, bench_out = ctx.tool("ncu"), ctx.logs / "budget", ctx.logs / "budget_bench"
    # The copy and read rates without the profiler attached (it slows the read kernel): no input, no op.
    ctx.run("budget_calibration", [ctx.bundle / "bench/bench_codec", "--inputs", "none", "--runs", "20", "--out",
                                   ctx.logs / "budget_calibration"], 60, stdout=ctx.logs / "budget_calibration.txt")
    step = ctx.run("budget_ncu", [tool, "--clock-control", "none", "--profile-from-start", "off", "--metrics",
                                  BUDGET_METRICS, "--export", report, "-f", ctx.bundle / "bench/bench_codec", "--profile",
                                  "--quick", "--size", "64", "--runs", "10", "--ops", BUDGET_OPS, "--out", bench_out],
                   300, stdout=ctx.logs / "budget_stdout.log")
    if not step.ok:
        return Outcome("budget", "fail", f"ncu rc {step.rc}: logs/budget_ncu.log")
    ctx.run("budget_raw", [tool, "-i", f"{report}.ncu-rep", "--csv", "--page", "raw", "--metrics", BUDGET_METRICS], 120,
            stdout=ctx.logs / "budget_raw.csv")
    budget_targets(ctx.logs / "budget_targets.json")
    table = ctx.run("budget_table", ["python3", ROOT / "bench/codec_budget.py", "--log", ctx.logs / "budget_stdout.log",
                                     "--raw", ctx.logs / "budget_raw.csv", "--codec", bench_out / "codec.csv",
                                     "--calibration", ctx.logs / "budget_calibration.txt",
                                     "--targets", ctx.logs / "budget_targets.json",
                                     "--out", ctx.out / "budget.csv"], 60, stdout=ctx.out / "budget.md")
    text = (ctx.out / "budget.md").read_text() if table.ok else ""
    rows = max(0, text.count("\n") - 2)
    return Outcome("budget", "pass" if table.ok and rows else "fail", f"{rows} rows: budget.csv, budget.md", details=text)
