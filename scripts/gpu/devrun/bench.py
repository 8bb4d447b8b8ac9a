"""Benchmark parts: the GPU codec, the primitives, the string columns, the CPU codec, A/B rounds of
several bundles' benchmarks interleaved in one run, and Nsight profiles."""
from __future__ import annotations

import collections
import csv
import json
import re
import shlex
import sys
from pathlib import Path

from .core import Context, Outcome, group, markdown_table, median, part, tail


def commit_of(ctx: Context) -> str:
    try:
        return "+".join((ctx.bundle / "COMMIT").read_text().split())
    except OSError:
        return "unknown"


def plot(ctx: Context, name: str, args: list) -> None:
    """A chart where matplotlib is there (never fails the part)."""
    ctx.run(f"plot_{name}", [sys.executable, *args], 60)


@part("codec", cap=230, needs=("bench/bench_codec",), help="bench_codec: every GPU codec path device-resident, against the copy roofline")
def codec(ctx: Context) -> Outcome:
    step = ctx.run("codec", [ctx.path("bench/bench_codec"), "--out", ctx.out, "--commit", commit_of(ctx), "--budget", "150",
                             *shlex.split(ctx.options.get("codec_args", ""))], 230)
    table = ctx.out / "codec.csv"
    if not table.exists():
        return Outcome("codec", "fail", f"rc {step.rc}, no codec.csv")
    plot(ctx, "codec", ["bench/plot_codec.py", table, ctx.out / "codec.png"])
    summary = ctx.run("codec_summary", [sys.executable, "bench/plot_codec.py", "--summary", table], 30)
    return Outcome("codec", "pass" if step.ok else "fail", f"rc {step.rc}; codec.csv, codec.md",
                   details="```\n" + summary.text() + "```\n")


@part("prim", cap=180, needs=("bench/bench_prim",), help="bench_prim: scan, select and sort against CUB (--prim-args for more options)")
def prim(ctx: Context) -> Outcome:
    step = ctx.run("prim", [ctx.path("bench/bench_prim"), "--out", ctx.out, "--commit", commit_of(ctx),
                            *shlex.split(ctx.options.get("prim_args", ""))], 180)
    if (ctx.out / "prim.csv").exists():
        plot(ctx, "prim", ["bench/plot_prim.py", ctx.out / "prim.csv", "--out", ctx.out])
    text = step.text()
    headline = re.search(r"== headline.*?\n\n", text, re.S)
    mismatches = text.count("MISMATCH")
    hint = "; hit its limit: --prim-args '--max-log2 26' or '--only scan,select'" if step.timed_out else ""
    return Outcome("prim", "pass" if step.ok and mismatches == 0 else "fail",
                   f"rc {step.rc}, {mismatches} rows unlike CUB{hint}",
                   details="```\n" + (headline.group(0) if headline else tail(step.log)) + "```\n")


@part("prim_sweep", cap=240, needs=("bench/bench_prim",),
      help="bench_prim --sweep: every scan and pair-sort tuning candidate beside CUB and Thrust, 2^20..2^28 (--prim-args)")
def prim_sweep(ctx: Context) -> Outcome:
    step = ctx.run("prim_sweep", [ctx.path("bench/bench_prim"), "--sweep", "--out", ctx.out, "--commit", commit_of(ctx),
                                  *shlex.split(ctx.options.get("prim_args", ""))], 240)
    lines = [line for line in step.text().splitlines() if re.match(r"(scan|sort) ", line) or line.startswith("sweep:")]
    mismatches = sum("MISMATCH" in line for line in lines)
    files = "prim_sweep.csv, prim_sweep.md" if (ctx.out / "prim_sweep.csv").exists() else "no prim_sweep.csv"
    limit = " (time limit: --prim-args '--only scan' or '--runs 10')" if step.timed_out else ""
    return Outcome("prim_sweep", "pass" if step.ok and mismatches == 0 else "fail",
                   f"rc {step.rc}{limit}, {mismatches} sizes with entries unlike CUB; {files}",
                   details="```\n" + ("\n".join(lines) or tail(step.log)) + "\n```\n")


@part("cpu_codec", cap=200, gpu=False, needs=("bench/bench_cpu_codec",), help="bench_cpu_codec on this host (median of 5; GUTF8_CPU_ISA picks a lower ISA)")
def cpu_codec(ctx: Context) -> Outcome:
    out = ctx.out / "cpu_codec.json"
    step = ctx.run("cpu_codec", [ctx.path("bench/bench_cpu_codec"), "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
                                 f"--benchmark_out={out}", "--benchmark_out_format=json"], 200)
    rows = [(b["run_name"], b.get("label", ""), f"{b['bytes_per_second'] / 1e9:.2f}")
            for b in gbench_rows(out) if b.get("aggregate_name") == "median"]
    return Outcome("cpu_codec", "pass" if step.ok else "fail", f"rc {step.rc}; cpu_codec.json",
                   details=markdown_table(["benchmark", "input", "GB/s (median of 5)"], rows))


@part("columns", cap=240, needs=("bench/bench_columns",), help="bench_columns: device is_valid / make_valid beside flat validate / repair (--columns-args)")
def columns(ctx: Context) -> Outcome:
    step = ctx.run("columns", [ctx.path("bench/bench_columns"), "--runs", "7", "--out", ctx.out / "columns_gpu.md",
                               *shlex.split(ctx.options.get("columns_args", ""))], 240)
    return Outcome("columns", "pass" if step.ok else "fail", f"rc {step.rc}; columns_gpu.md",
                   details=tail(ctx.out / "columns_gpu.md", 12))


@part("utf16", cap=200, needs=("bench/bench_codec",), help="bench_codec: the UTF-16 decode (LE and BE) beside the fused UTF-32 decode")
def utf16(ctx: Context) -> Outcome:
    step = ctx.run("utf16", [ctx.path("bench/bench_codec"), "--ops", "decode_fused_replace,decode_utf16_replace,decode_utf16be_replace",
                             "--runs", "15", "--out", ctx.out / "utf16"], 200)
    rows = [line for line in step.text().splitlines() if re.search(r"decode_(fused|utf16|utf16be)_replace", line)]
    return Outcome("utf16", "pass" if step.ok else "fail", f"rc {step.rc}", details="\n".join(rows[-12:]))


@part("columns_cpu", cap=560, gpu=False, needs=("bench/bench_cpu_columns",), help="bench/columns_cpu.py: bench_cpu_columns beside pyarrow and CPython")
def columns_cpu(ctx: Context) -> Outcome:
    step = ctx.run("columns_cpu", [sys.executable, "bench/columns_cpu.py", "--bench", ctx.path("bench/bench_cpu_columns"), "--repeats", "5",
                                   "--python-repeats", "3", "--out", ctx.out / "columns_cpu.md"], 560)
    return Outcome("columns_cpu", "pass" if step.ok else "fail", f"rc {step.rc}; columns_cpu.md",
                   details=tail(ctx.out / "columns_cpu.md", 12))


# --------------------------------------------------------------------------- A/B ----
# Each benchmark of every bundle (--base BUNDLE, repeatable, then the run's own) once per round, in
# order, so that drift shows as differences between rounds; per row the median over rounds, and its
# ratio to the first bundle's.

def gbench_rows(path: Path) -> list:
    try:
        return json.loads(path.read_text())["benchmarks"]
    except (OSError, ValueError, KeyError):
        return []


def csv_rows(path: Path) -> list:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def markdown_rows(path: Path) -> list:
    """The rows of every markdown table in a file, as dicts by header."""
    rows, header = [], None
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return rows
    for line in lines:
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells)))
    return rows


# name: (program, arguments (OUT is the round's folder), rows of a result -> {row key: GB/s})
AB_BENCHES = {
    "codec": ("bench/bench_codec", lambda o: ["--out", o, "--commit", o.name, "--runs", "9", "--budget", "60"],
              lambda o: {f"{r['op']} {r['input']} {r['invalid_pct']}%": float(r["gbps"])
                         for r in csv_rows(o / "codec.csv")}),
    "prim": ("bench/bench_prim", lambda o: ["--out", o, "--min-log2", "28", "--max-log2", "28", "--only",
                                            "scan,select", "--no-cpu", "--no-thrust", "--runs", "15"],
             lambda o: {f"{r['primitive']} {r['variant']} {r['algorithm']} 2^{r['log2n']}": float(r["gb_per_s"])
                        for r in csv_rows(o / "prim.csv") if r["gb_per_s"]}),
    "cpu_codec": ("bench/bench_cpu_codec", lambda o: ["--benchmark_filter=BM_gutf8", f"--benchmark_out={o}.json",
                                                      "--benchmark_out_format=json"],
                  lambda o: {f"{b['name']} {b.get('label', '')}": b["bytes_per_second"] / 1e9
                             for b in gbench_rows(Path(f"{o}.json"))}),
    "columns": ("bench/bench_columns", lambda o: ["--runs", "7", "--out", f"{o}.md"],
                lambda o: {f"{r['column']} {what}": float(r[f"{what} GB/s"])
                           for r in markdown_rows(Path(f"{o}.md")) for what in ("is_valid", "make_valid")
                           if r.get(f"{what} GB/s")}),
}


def ab_one(ctx: Context, kind: str, bundles: list, rounds: int) -> tuple[str, bool]:
    program, args, rows = AB_BENCHES[kind]
    found = collections.defaultdict(lambda: collections.defaultdict(list))
    ok = True
    for r in range(1, rounds + 1):
        for i, b in enumerate(bundles):
            binary = b / program
            if not binary.is_file():
                return f"{binary} missing\n", False
            where = ctx.out / "ab" / f"{kind}-b{i}-r{r}"
            where.parent.mkdir(parents=True, exist_ok=True)
            extra = shlex.split(ctx.options.get("ab_args", ""))
            step = ctx.run(f"ab_{kind}_b{i}_r{r}", [binary.resolve(), *args(where), *extra], 300)
            ok &= step.ok
            for key, value in rows(where).items():
                found[key][i].append(value)
    header = ["row"] + [f"b{i} ({b}) rounds / median / ratio" for i, b in enumerate(bundles)]
    table = []
    for key in sorted(found):
        base = median(found[key].get(0, []))
        cells = [key]
        for i in range(len(bundles)):
            v = found[key].get(i, [])
            m = median(v)
            ratio = f"{m / base:.3f}" if m and base else ""
            cells.append(" ".join(f"{x:.2f}" for x in v) + (f" / **{m:.2f}** / {ratio}" if m else ""))
        table.append(cells)
    return f"### {kind}: {rounds} rounds, GB/s\n\n" + markdown_table(header, table), ok


@part("ab", cap=600, gpu=False, help="A/B: --ab KINDS (codec,prim,cpu_codec,columns) of --base BUNDLE(s) and this bundle, --rounds interleaved")
def ab(ctx: Context) -> Outcome:
    bases = [Path(b) for b in ctx.options.get("base", [])]
    if not bases:
        return Outcome("ab", "skip", "no --base BUNDLE to compare with")
    kinds = [k for k in ctx.options.get("ab", "codec").split(",") if k]
    unknown = [k for k in kinds if k not in AB_BENCHES]
    if unknown:
        return Outcome("ab", "fail", f"unknown --ab {','.join(unknown)} (known: {', '.join(AB_BENCHES)})")
    if ctx.gpus == 0 and any(k != "cpu_codec" for k in kinds):
        kinds = [k for k in kinds if k == "cpu_codec"]
        if not kinds:
            return Outcome("ab", "skip", "no GPU for the GPU benchmarks")
    details, ok = "", True
    for kind in kinds:
        text, good = ab_one(ctx, kind, bases + [ctx.bundle], int(ctx.options.get("rounds", 2)))
        details += text + "\n"
        ok &= good
    (ctx.out / "ab.md").write_text(details)
    return Outcome("ab", "pass" if ok else "fail", f"{', '.join(kinds)}: ab.md", details=details)


# ----------------------------------------------------------------------- profiles ----

NCU_SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "SchedulerStats",
                "MemoryWorkloadAnalysis", "InstructionStats", "SourceCounters"]
NCU_LINES = re.compile(r"Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|"
                       r"Issue Slots|No Eligible|Warp Cycles Per Issued|Stall|Eligible Warps")


@part("ncu", cap=300, tools=("ncu",), help="Nsight Compute: --ncu 'KERNEL_REGEX|SKIP|PROGRAM ARGS' (repeatable), one launch each")
def ncu(ctx: Context) -> Outcome:
    tool, specs = ctx.tool("ncu"), ctx.options.get("ncu", [])
    if not specs:
        return Outcome("ncu", "skip", "no --ncu spec")
    lines, ok = [], True
    for k, spec in enumerate(specs):
        kernel, skip, command = spec.split("|", 2)
        program, *args = shlex.split(command)
        report = ctx.out / f"ncu{k}"
        step = ctx.run(f"ncu{k}", [tool, "--clock-control", "none", "-k", f"regex:{kernel}", "-s", skip, "-c", "1",
                                   *[a for s in NCU_SECTIONS for a in ("--section", s)], "-f", "-o", report,
                                   ctx.bundle / program, *args], 150)
        ok &= step.ok
        details = ctx.run(f"ncu{k}_details", [tool, "-i", f"{report}.ncu-rep", "--page", "details"], 60,
                          stdout=ctx.out / f"ncu{k}.txt")
        ctx.run(f"ncu{k}_sass", [tool, "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source",
                                 "sass"], 60, stdout=ctx.out / f"ncu{k}_sass.csv")
        text = (ctx.out / f"ncu{k}.txt").read_text(errors="replace") if details.ok else ""
        lines.append(f"#### {spec}\n\n```\n" + "\n".join(l for l in text.splitlines() if NCU_LINES.search(l))[:4000]
                     + "\n```\n")
    return Outcome("ncu", "pass" if ok else "fail", f"{len(specs)} profiles: ncu*.txt, ncu*_sass.csv",
                   details="\n".join(lines))


@part("nsys", cap=240, tools=("nsys",), help="Nsight Systems: --nsys 'PROGRAM ARGS' (repeatable): kernel, API and copy summaries")
def nsys(ctx: Context) -> Outcome:
    tool, specs = ctx.tool("nsys"), ctx.options.get("nsys", [])
    if not specs:
        return Outcome("nsys", "skip", "no --nsys spec")
    ok = True
    for k, command in enumerate(specs):
        program, *args = shlex.split(command)
        report = ctx.out / f"nsys{k}"
        step = ctx.run(f"nsys{k}", [tool, "profile", "-o", report, "--force-overwrite", "true",
                                    ctx.bundle / program, *args], 120)
        ok &= step.ok
        ctx.run(f"nsys{k}_stats", [tool, "stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum",
                                   f"{report}.nsys-rep"], 60, stdout=ctx.out / f"nsys{k}.txt")
        for suffix in (".nsys-rep", ".sqlite"):
            Path(f"{report}{suffix}").unlink(missing_ok=True)
    return Outcome("nsys", "pass" if ok else "fail", f"{len(specs)} profiles: nsys*.txt")


group("bench", ["codec", "prim"])
