#!/usr/bin/env python3
"""Plots bench_prim results: one log-log time-vs-size PNG per primitive variant, plus a
markdown table (time, throughput, % of CUB) -- written to bench/results/ by default.

usage: bench/plot_prim.py RESULTS.csv [--out DIR]
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

STYLE = {  # algorithm -> (colour, marker, linestyle)
    "cub": ("black", "o", "-"),
    "thrust": ("grey", "s", "--"),
    "decoupled_lookback": ("tab:red", "^", "-"),
    "fused": ("tab:red", "^", "-"),
    "onesweep": ("tab:red", "^", "-"),
    "blocked": ("tab:orange", "v", "-"),
    "digit": ("tab:orange", "v", "-"),
    "blelloch": ("tab:green", "D", "-"),
    "split_bit": ("tab:green", "D", "-"),
    "hillis_steele": ("tab:blue", "x", "-"),
    "select_bytes": ("tab:purple", "*", "-"),
    "select_bytes_end": ("tab:purple", "*", "--"),
}


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def markdown(rows):
    groups = defaultdict(list)
    order = []
    for r in rows:
        k = (r["primitive"], r["variant"])
        if k not in groups:
            order.append(k)
        groups[k].append(r)
    head = rows[0] if rows else {}
    lines = ["# gutf8::prim benchmark", "",
             f"GPU: {head.get('gpu', '?')}  ", f"Commit: {head.get('commit', '?')}  ",
             f"Date: {head.get('date', '?')}", "",
             "Cells: median ms (GB/s for scan/select, Gkeys/s for sort; % of CUB's throughput)."]
    for k in order:
        rs = groups[k]
        algs = list(dict.fromkeys(r["algorithm"] for r in rs))
        sizes = sorted({int(r["n"]) for r in rs})
        lines += ["", f"## {k[0]} / {k[1]}", "", "| n | " + " | ".join(algs) + " |",
                  "|---|" + "---|" * len(algs)]
        for n in sizes:
            cells = []
            for a in algs:
                hit = [r for r in rs if int(r["n"]) == n and r["algorithm"] == a]
                if not hit:
                    cells.append("-")
                    continue
                r = hit[0]
                thr = f"{float(r['gkeys_per_s']):.2f} Gk/s" if r["gkeys_per_s"] else f"{float(r['gb_per_s']):.0f} GB/s"
                ratio = float(r["ratio_vs_cub"] or 0)
                pct = f", {100 * ratio:.0f}%" if ratio > 0 else ""
                bad = ", MISMATCH" if r["ok"] == "FAIL" else ""
                cells.append(f"{float(r['median_ms']):.4g} ({thr}{pct}{bad})")
            label = f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["primitive"], r["variant"])][r["algorithm"]].append((int(r["n"]), float(r["median_ms"])))
    written = []
    for (prim, variant), algs in groups.items():
        fig, ax = plt.subplots(figsize=(7, 5))
        for alg, pts in sorted(algs.items()):
            pts.sort()
            colour, marker, ls = STYLE.get(alg, (None, ".", ":"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=alg, color=colour, marker=marker,
                    linestyle=ls if not alg.startswith(("cpu", "std")) else ":")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("elements")
        ax.set_ylabel("median time (ms)")
        gpu = rows[0].get("gpu", "")
        ax.set_title(f"{prim} / {variant} — {gpu}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        path = os.path.join(out, f"prim_{prim}_{variant}.png")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--out", default=os.path.join(here, "results"))
    args = ap.parse_args()
    rows = load(args.csv)
    if not rows:
        sys.exit("no rows in " + args.csv)
    os.makedirs(args.out, exist_ok=True)
    md_path = os.path.join(args.out, "prim.md")
    with open(md_path, "w") as f:
        f.write(markdown(rows))
    written = [md_path]
    try:
        written += plot(rows, args.out)
    except ImportError:
        print("matplotlib missing: wrote the table only", file=sys.stderr)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
