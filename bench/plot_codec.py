#!/usr/bin/env python3
"""Bar chart and target summary of the GPU codec benchmark (bench/gpu/codec.cu).

  python3 bench/plot_codec.py [CSV] [PNG]      # default bench/results/codec.csv -> codec.png
  python3 bench/plot_codec.py --summary CSV    # the targets of the issue, one line each

The chart needs matplotlib; the summary uses the standard library only.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "results", "codec.csv")


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def find(rows, op, inp, pct):
    for r in rows:
        if r["op"] == op and r["input"] == inp and abs(float(r["invalid_pct"]) - pct) < 1e-9:
            return r
    return None


def summary(rows):
    if not rows:
        print("benchmark: no rows")
        return
    r0 = rows[0]
    print(f"benchmark: {r0['gpu']}, copy {r0['copy_gbps']} GB/s, {r0['size_mib']} MiB inputs")
    lines = []
    for inp in ("ascii", "cjk", "emoji", "mixed"):
        d = find(rows, "decode_fused", inp, 0.0)
        if d:
            frac = float(d["fraction"])
            lines.append(f"fused decode {inp}: {d['gbps']} GB/s = {100 * frac:.0f}% of roofline "
                         f"{d['roofline_gbps']} [{'ok' if frac >= 0.7 else 'below 70%'}]")
    v = [float(r["gbps"]) for r in rows if r["op"] == "validate"]
    if v:
        lines.append(f"validate: {min(v):.0f}..{max(v):.0f} GB/s [{'ok' if min(v) >= 2000 else 'below 2 TB/s somewhere'}]")
    for inp in ("ascii", "cjk", "emoji", "mixed"):
        d = find(rows, "decode_fused", inp, 0.0)
        for op in ("decode_fused_replace", "decode_fused_drop"):
            r = find(rows, op, inp, 1.0)
            if d and r:
                ratio = float(r["median_ms"]) / float(d["median_ms"])
                lines.append(f"{op} 1% invalid / valid decode, {inp}: {ratio:.2f}x "
                             f"[{'ok' if ratio <= 1.3 else 'above 1.3x'}]")
    for op in ("encode_fused", "encode_compact"):
        for inp in ("ascii", "cjk", "emoji", "mixed"):
            r = find(rows, op, inp, 0.0)
            if r:
                frac = float(r["fraction"])
                lines.append(f"{op} {inp}: {r['gbps']} GB/s = {100 * frac:.0f}% of roofline "
                             f"[{'ok' if frac >= 0.7 else 'below 70%'}]")
    for inp in ("ascii", "cjk", "emoji", "mixed"):
        s = find(rows, "decode_staged_replace", inp, 0.0)
        c = find(rows, "cub_baseline_replace", inp, 0.0)
        if s and c:
            lines.append(f"staged vs CUB baseline, {inp}: {s['gbps']} vs {c['gbps']} GB/s "
                         f"[{'ok' if float(s['gbps']) > float(c['gbps']) else 'slower'}]")
    for line in lines:
        print(line)


def plot(rows, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    valid = [r for r in rows if float(r["invalid_pct"]) == 0.0]
    inputs = [i for i in ("ascii", "cjk", "emoji", "mixed") if any(r["input"] == i for r in valid)]
    ops = []
    for r in valid:
        if r["op"] not in ops:
            ops.append(r["op"])
    width = 0.8 / max(len(ops), 1)
    fig, ax = plt.subplots(figsize=(max(10, 2.5 * len(inputs)), 5.5))
    for k, op in enumerate(ops):
        xs, ys = [], []
        for i, inp in enumerate(inputs):
            r = find(valid, op, inp, 0.0)
            if r:
                xs.append(i + (k - len(ops) / 2 + 0.5) * width)
                ys.append(float(r["gbps"]))
        ax.bar(xs, ys, width, label=op)
    ax.set_xticks(range(len(inputs)))
    ax.set_xticklabels(inputs)
    ax.set_ylabel("GB/s of UTF-8 text")
    r0 = rows[0]
    ax.set_title(f"gutf8 device codec, valid input — {r0['gpu']} ({r0['commit']}, {r0['date']})")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


def main(argv):
    if argv and argv[0] == "--summary":
        summary(load(argv[1] if len(argv) > 1 else DEFAULT_CSV))
        return 0
    path = argv[0] if argv else DEFAULT_CSV
    png = argv[1] if len(argv) > 1 else os.path.join(HERE, "results", "codec.png")
    rows = load(path)
    try:
        plot(rows, png)
    except ImportError:
        print("plot_codec.py: matplotlib is not installed; no chart written", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
