#!/usr/bin/env python3
"""Bar chart of the end-to-end benchmark (scripts/bench_e2e.sh): GB/s of input per file for
gutf8 on each backend and the baselines, log scale (they differ by two orders of magnitude).

  python3 bench/plot_e2e.py [CSV] [PNG]   # default bench/results/e2e.csv -> e2e.png (matplotlib)
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["ascii", "cjk", "emoji", "mixed", "mixed-invalid-1pct"]
# (label, tool, backend, operation): one bar each per file.
SERIES = [
    ("gutf8 validate, CPU", "gutf8", "cpu", "validate"),
    ("gutf8 validate, GPU", "gutf8", "cuda", "validate"),
    ("gutf8 decode, CPU", "gutf8", "cpu", "decode"),
    ("gutf8 decode, GPU", "gutf8", "cuda", "decode"),
    ("iconv decode", "iconv", "-", None),
    ("python3 decode", "python3", "-", None),
    ("utfcpp decode", "utfcpp", "-", None),
]


def rate(rows, f, tool, backend, op):
    for r in rows:
        if r["file"] == f and r["tool"] == tool and r["backend"] == backend and r["status"] == "ok":
            if op is None or r["operation"] == op:
                return float(r["gb_per_s"])
    return None


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "e2e.csv")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(src), "e2e.png")
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = 0.8 / len(SERIES)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for i, (label, tool, backend, op) in enumerate(SERIES):
        xs, ys = [], []
        for j, f in enumerate(FILES):
            v = rate(rows, f, tool, backend, op)
            if v:
                xs.append(j + (i - len(SERIES) / 2 + 0.5) * width)
                ys.append(v)
        ax.bar(xs, ys, width, label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(FILES)), FILES)
    ax.set_ylabel("GB/s of input (wall clock)")
    ax.set_title("gutf8 end to end, 4 GiB files in the page cache, output to /dev/null")
    ax.axhline(40, color="grey", linestyle="--", linewidth=0.8)
    ax.text(len(FILES) - 0.5, 42, "validate target 40 GB/s", ha="right", fontsize=8, color="grey")
    ax.legend(fontsize=8, ncol=4, loc="lower center", bbox_to_anchor=(0.5, -0.32))
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(dst)


if __name__ == "__main__":
    main()
