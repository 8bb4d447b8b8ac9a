#!/usr/bin/env python3
"""Fits backend::auto_select's model (src/codec/auto_model.hpp) to measured rates.

Reads bench/results/auto_model.csv (one measured figure a row: what, operation, text, threads,
value, unit, commit, source) and writes src/codec/auto_model_fit.hpp, the constants the model
uses. After a new measurement: add or replace its rows, run this script, commit both files.

  python3 bench/fit_auto_model.py [--csv FILE] [--out FILE] [--check]

--check writes nothing and fails when the header differs from what the table gives.
"""
import argparse
import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ("validate", "decode", "encode", "repair", "stats")


def significant(x: float, digits: int = 3) -> float:
    """x rounded to `digits` significant digits."""
    if x == 0:
        return 0.0
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def fit_threads(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(max_rate, half_threads) of rate(t) = max_rate * t / (t + half_threads), least relative error.

    For a given half the best max_rate has a closed form; half is found by golden-section search.
    """
    def best_max(half: float) -> float:
        g = [(t / (t + half), r) for t, r in points]
        return sum(x / r for x, r in g) / sum((x / r) ** 2 for x, r in g)

    def error(half: float) -> float:
        m = best_max(half)
        return sum(((m * t / (t + half)) - r) ** 2 / r**2 for t, r in points)

    lo, hi = 0.01, 1000.0
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if error(a) < error(b):
            hi = b
        else:
            lo = a
    half = (lo + hi) / 2
    return best_max(half), half


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def one(rows: list[dict], quantity: str) -> float:
    values = [float(r["value"]) for r in rows if r["quantity"] == quantity]
    if len(values) != 1:
        sys.exit(f"fit_auto_model: expected one {quantity} row, found {len(values)}")
    return values[0]


def per_operation(rows: list[dict], quantity: str, pick, per_thread: bool) -> dict[str, float]:
    """Bytes per second by operation: `pick` (max or min) over the texts, per thread if asked."""
    out = {}
    for op in OPERATIONS:
        rates = [float(r["value"]) * 1e9 / (float(r["threads"]) if per_thread else 1.0)
                 for r in rows if r["quantity"] == quantity and r["operation"] == op]
        if not rates:
            sys.exit(f"fit_auto_model: no {quantity} row for {op}")
        out[op] = significant(pick(rates))
    return out


def constants(rows: list[dict]) -> dict[str, float]:
    threads = [(float(r["threads"]), float(r["value"]) * 1e9) for r in rows if r["quantity"] == "stream_cpu_rate"]
    max_rate, half = fit_threads(threads)
    c = {
        "startup_seconds": significant(one(rows, "stream_startup")),
        "gpu_bytes_per_second": significant(one(rows, "stream_gpu_rate") * 1e9),
        "cpu_max_bytes_per_second": significant(max_rate),
        "cpu_half_rate_threads": significant(half),
        # Where the CPU workers stop scaling: the best file rate of any operation.
        "cpu_memory_bytes_per_second": significant(
            max(float(r["value"]) * 1e9 for r in rows if r["quantity"] == "file_cpu_rate")),
    }
    # A CPU worker's rate: the better text's (per thread); the GPU lanes': the worse text's.
    for op, v in per_operation(rows, "file_cpu_rate", max, True).items():
        c[f"worker_{op}"] = v
    for op, v in per_operation(rows, "file_gpu_rate", min, False).items():
        c[f"gpu_file_{op}"] = v
    return c


def literal(x: float) -> str:
    """A C++ literal of x: rates in units of 1e9 (55.6e9), other values as they are."""
    return f"{x / 1e9:g}e9" if abs(x) >= 1e6 else f"{x:g}"


def header(c: dict[str, float], source: str) -> str:
    lines = [
        f"// Written by bench/fit_auto_model.py from {source}: do not edit.",
        "#pragma once",
        "",
        "namespace gutf8::internal::auto_fit {",
        "",
    ]
    lines += [f"inline constexpr double {name} = {literal(value)};" for name, value in c.items()]
    lines += ["", "}  // namespace gutf8::internal::auto_fit", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", type=Path, default=ROOT / "bench/results/auto_model.csv")
    ap.add_argument("--out", type=Path, default=ROOT / "src/codec/auto_model_fit.hpp")
    ap.add_argument("--check", action="store_true", help="fail when the header is not what the table gives")
    args = ap.parse_args()
    source = args.csv.resolve().relative_to(ROOT) if args.csv.resolve().is_relative_to(ROOT) else args.csv
    text = header(constants(read_rows(args.csv)), str(source))
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} differs from what {source} gives: run bench/fit_auto_model.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
