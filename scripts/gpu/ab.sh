#!/usr/bin/env bash
# A/B of two codec benchmark binaries in one GPU session, run ON the GPU machine:
#   scripts/gpu/ab.sh OUT_DIR BENCH_A BENCH_B [bench_codec options...]
# Runs A, B, A, B (drift shows as A-A and B-B differences) and prints, per op and input, the
# median GB/s of each run and B / A (of the run medians' means).
set -uo pipefail
out=${1:?usage: ab.sh OUT_DIR BENCH_A BENCH_B [options]}
a=${2:?}
b=${3:?}
shift 3
mkdir -p "$out"
for round in 1 2; do
  for side in a b; do
    bin=$a; [[ $side == b ]] && bin=$b
    "$bin" --out "$out/$side$round" --commit "$side$round" "$@" >"$out/$side$round.log" 2>&1 || echo "$side$round: exit $?"
  done
done
python3 - "$out" <<'PY'
import csv, sys, collections
out = sys.argv[1]
g = collections.defaultdict(dict)
for run in ("a1", "b1", "a2", "b2"):
    try:
        for r in csv.DictReader(open(f"{out}/{run}/codec.csv")):
            g[(r["op"], r["input"], r["invalid_pct"])][run] = float(r["gbps"])
    except FileNotFoundError:
        print("missing", run)
print(f"{'op':24} {'input':7} {'inv%':>5} {'a1':>8} {'a2':>8} {'b1':>8} {'b2':>8} {'b/a':>6}")
for k in sorted(g):
    v = g[k]
    if len(v) < 4:
        continue
    ra = (v["a1"] + v["a2"]) / 2
    rb = (v["b1"] + v["b2"]) / 2
    print(f"{k[0]:24} {k[1]:7} {k[2]:>5} {v['a1']:8.1f} {v['a2']:8.1f} {v['b1']:8.1f} {v['b2']:8.1f} {rb / ra:6.3f}")
PY
