#!/usr/bin/env python3
"""One record from several rounds of the codec benchmark (bench_codec's codec.md files).

  python3 bench/codec_record.py --commit C ROUND.md... > bench/results/codec_h100.md

Each row takes the round whose GB/s is that row's median over the rounds (an odd number of rounds
gives a real median; with an even number, the lower middle), with that round's roofline, so that
every figure in a row comes from one measurement. The header names the rounds' copy rates.
"""
import argparse
import re
import sys


def read_round(path):
    """Header lines (dict) and rows keyed by (input, invalid, op) -> list of cells."""
    header, rows = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"- ([^:]+): (.*)", line.strip())
            if m:
                header[m.group(1)] = m.group(2)
            elif line.startswith("| ") and not line.startswith("| input") and not line.startswith("|---"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                rows[tuple(cells[:3])] = cells
    return header, rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", required=True, help="what the binary was built from")
    ap.add_argument("--note", default="", help="one more line for the header")
    ap.add_argument("rounds", nargs="+")
    a = ap.parse_args(argv)
    rounds = [read_round(p) for p in a.rounds]
    first_header, first_rows = rounds[0]
    copies = [float(h["device copy rate (cudaMemcpy D2D, read+write)"].split()[0]) for h, _ in rounds]
    out = ["# gutf8 device codec benchmark", ""]
    out.append(f"- GPU: {first_header.get('GPU', '?')}")
    out.append(f"- commit: {a.commit}")
    out.append(f"- date: {first_header.get('date', '?')}")
    out.append(f"- input: {first_header.get('input', '?')} a round; per row the round with the median GB/s of {len(rounds)}")
    out.append(f"- device copy rate (cudaMemcpy D2D, read+write), measured in each round: "
               f"{min(copies):.1f}-{max(copies):.1f} GB/s; a row's roofline uses its own round's")
    out.append("- GB/s = bytes of UTF-8 text / time; roofline = that text's bytes / (bytes the op must read + write at the copy rate)")
    if a.note:
        out.append(f"- {a.note}")
    out += ["", "| input | invalid | op | ms | GB/s | roofline GB/s | % of roofline |",
            "|---|---:|---|---:|---:|---:|---:|"]
    for key in first_rows:
        cands = sorted((float(r[key][4]), r[key]) for _, r in rounds if key in r)
        cells = cands[(len(cands) - 1) // 2][1]
        out.append("| " + " | ".join(cells) + " |")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
