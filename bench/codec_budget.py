#!/usr/bin/env python3
"""Each codec operation's instructions against the SMs' issue budget at its target (issue 45).

Input: one `bench_codec --profile` run under `ncu --profile-from-start off` (its stdout, where each
op's "profile: INPUT RATE OP" marker is followed by ncu's "==PROF== Profiling" lines for that op's
launches), the raw metrics of the report (`ncu -i R --csv --page raw`) and the run's codec.csv
(text and moved bytes) with the copy and read rates of a run without the profiler, and each row's
target (the driver's, scripts/gpu/devrun/kernels.py goal()). Per op, input and error rate: warp
instructions a KiB of text over all the op's kernels, their IPC, and the most a KiB can take at the
target fraction of the roofline:
SMs x 4 schedulers x clock / (target rate / 1 KiB), at full issue and at the measured IPC.
"""
import argparse
import csv
import io
import json
import re
from collections import defaultdict

SMS = 132


def num(row: dict, key: str) -> float:
    try:
        return float(row.get(key, "").replace(",", ""))
    except ValueError:
        return float("nan")


def launches(log: str) -> dict[str, tuple[str, str, str]]:
    """ncu's kernel ID -> (input, rate, op) of the marker before it."""
    owner, at = {}, None
    for line in open(log, errors="replace"):
        m = re.match(r"profile: (\S+) (\S+) (\S+)", line)
        if m:
            at = m.groups()
            continue
        m = re.search(r'==PROF== Profiling "[^"]*"[^-]*- (\d+):', line)
        if m and at:
            owner[m.group(1)] = at
    return owner


# ncu's units for the two metrics whose unit it picks by size: to nanoseconds and to hertz.
SCALE = {"gpu__time_duration.sum": {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6},
         "sm__cycles_elapsed.avg.per_second": {"hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9, "cycle/second": 1,
                                               "cycle/usecond": 1e6, "cycle/nsecond": 1e9}}


def raw_rows(path: str) -> list[dict]:
    """The report's rows, the timed metrics in nanoseconds and hertz (the second line holds the units)."""
    lines = [line for line in open(path, errors="replace") if line.startswith('"')]
    if len(lines) < 3:
        return []
    units = next(csv.reader([lines[1]]))
    rows = list(csv.DictReader(io.StringIO("".join([lines[0]] + lines[2:]))))
    header = next(csv.reader([lines[0]]))
    for key, table in SCALE.items():
        if key not in header:
            continue
        factor = table[units[header.index(key)].strip().lower()]
        for r in rows:
            r[key] = str(num(r, key) * factor)
    return rows


def text_bytes(codec_csv: str, copy_gbps: float, read_gbps: float) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(input, rate, op) -> (bytes of text the op's GB/s counts, roofline GB/s at the given rates: the
    read rate for validate, which only reads, the copy rate for the others)."""
    out = {}
    for r in csv.DictReader(open(codec_csv)):
        text, moved = float(r["text_bytes"]), float(r["moved_bytes"])
        rate = read_gbps if r["op"].startswith("validate") else copy_gbps
        out[(r["input"], r["invalid_pct"], r["op"])] = (text, text * rate / moved)
    return out


def calibration(log: str) -> tuple[float, float]:
    """The copy and read rates a bench_codec run without the profiler printed."""
    m = re.search(r"copy rate \(read\+write\): ([\d.]+) GB/s\s+read rate: ([\d.]+) GB/s", open(log).read())
    if not m:
        raise SystemExit(f"{log}: no copy and read rates")
    return float(m.group(1)), float(m.group(2))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", required=True, help="stdout of ncu + bench_codec --profile")
    p.add_argument("--raw", required=True, help="ncu -i REPORT --csv --page raw")
    p.add_argument("--codec", required=True, help="the run's codec.csv")
    p.add_argument("--calibration", required=True, help="stdout of bench_codec without the profiler (its rates)")
    p.add_argument("--targets", required=True,
                   help="JSON: op -> input -> invalid_pct (as in codec.csv) -> target fraction or null; ops in table order")
    p.add_argument("--out", required=True, help="CSV to write; the table is printed as markdown")
    a = p.parse_args()
    with open(a.targets) as f:
        targets = json.load(f)
    copy_gbps, read_gbps = calibration(a.calibration)
    owner, sizes = launches(a.log), text_bytes(a.codec, copy_gbps, read_gbps)
    acc: dict[tuple, dict] = defaultdict(lambda: defaultdict(float))
    for r in raw_rows(a.raw):
        key = owner.get(r.get("ID", ""))
        if not key:
            continue
        s = acc[key]
        s["inst"] += num(r, "smsp__inst_executed.sum")
        s["ns"] += num(r, "gpu__time_duration.sum")
        s["active"] += num(r, "sm__cycles_active.avg")
        s["hz"] = max(s["hz"], num(r, "sm__cycles_elapsed.avg.per_second"))
        s["kernels"] += 1
    rows = []
    for (inp, rate, op), s in acc.items():
        if (inp, rate, op) not in sizes or op not in targets:
            continue
        nbytes, roof = sizes[(inp, rate, op)]
        target = targets[op].get(inp, {}).get(rate)
        kib = nbytes / 1024
        per_kib = s["inst"] / kib
        ipc = s["inst"] / (SMS * s["active"]) if s["active"] else float("nan")  # warp instructions / SM / active cycle
        hz = s["hz"]
        rate_kernels = nbytes / s["ns"]  # GB/s over the kernels' own time
        row = {"op": op, "input": inp, "invalid_pct": rate, "kernels": int(s["kernels"]),
               "warp_inst_per_KiB": f"{per_kib:.1f}", "ipc": f"{ipc:.2f}", "sm_clock_GHz": f"{hz / 1e9:.2f}",
               "kernel_us": f"{s['ns'] / 1e3:.1f}", "of_roofline_kernels_only": f"{rate_kernels / roof:.3f}"}
        if target:
            allowed = SMS * 4 * hz / (target * roof * 1e9 / 1024)  # at full issue
            row.update({"target": f"{target:.2f}", "allowed_full_issue": f"{allowed:.1f}",
                        "allowed_at_ipc": f"{allowed * ipc / 4:.1f}", "over_at_ipc": f"{per_kib / (allowed * ipc / 4):.2f}",
                        "over_full_issue": f"{per_kib / allowed:.2f}"})
        rows.append(row)
    rows.sort(key=lambda r: (list(targets).index(r["op"]), r["input"], float(r["invalid_pct"])))
    fields = ["op", "input", "invalid_pct", "kernels", "warp_inst_per_KiB", "ipc", "sm_clock_GHz", "kernel_us",
              "of_roofline_kernels_only", "target", "allowed_full_issue", "allowed_at_ipc", "over_at_ipc",
              "over_full_issue"]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print("| " + " | ".join(fields) + " |\n|" + "---|" * len(fields))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k in fields) + " |")


if __name__ == "__main__":
    main()
