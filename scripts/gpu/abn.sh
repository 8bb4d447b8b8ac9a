#!/usr/bin/env bash
# Several codec benchmark binaries in one GPU session, run ON the GPU machine:
#   scripts/gpu/abn.sh OUT_DIR ROUNDS BENCH... -- [bench_codec options...]
# Runs every binary once per round, in order, and prints per op and input each binary's round
# medians (GB/s; drift shows as differences between them), their mean and its ratio to the first's.
# The binaries run in the repository root, wherever this is called from: bench_codec reads its
# inputs from corpus/sample there and synthesizes different text when it cannot find them.
set -uo pipefail
out=${1:?usage: abn.sh OUT_DIR ROUNDS BENCH... -- [options]}
rounds=${2:?}
shift 2
bins=()
while [[ $# -gt 0 && $1 != -- ]]; do bins+=("$(realpath "$1")"); shift; done
[[ ${1:-} == -- ]] && shift
mkdir -p "$out"
out=$(realpath "$out")
cd "$(dirname "$0")/../.." || exit 1
for ((r = 1; r <= rounds; ++r)); do
  for i in "${!bins[@]}"; do
    "${bins[$i]}" --out "$out/b$i-r$r" --commit "b$i-r$r" "$@" >"$out/b$i-r$r.log" 2>&1 || echo "b$i-r$r: exit $?"
  done
done
python3 - "$out" "$rounds" "${bins[@]}" <<'PY'
import csv, sys, collections, os
out, rounds, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
g = collections.defaultdict(lambda: collections.defaultdict(list))
for i in range(len(bins)):
    for r in range(1, rounds + 1):
        f = f"{out}/b{i}-r{r}/codec.csv"
        if not os.path.exists(f):
            continue
        for row in csv.DictReader(open(f)):
            g[(row["op"], row["input"], row["invalid_pct"])][i].append(float(row["gbps"]))
names = [os.path.basename(b) for b in bins]
print(f"{'op':22} {'input':6} {'inv%':>4} " + " ".join(f"{n:>{14 + 8 * rounds}}" for n in names))
for k in sorted(g):
    v = g[k]
    if 0 not in v:
        continue
    base = sum(v[0]) / len(v[0])
    cells = []
    for i in range(len(bins)):
        if i in v:
            m = sum(v[i]) / len(v[i])
            runs = " ".join(f"{x:7.1f}" for x in v[i]).rjust(8 * rounds - 1)
            cells.append(f"{runs} {m:7.1f} {m / base:5.3f}")
        else:
            cells.append(" " * (14 + 8 * rounds))
    print(f"{k[0]:22} {k[1]:6} {k[2]:>4} " + " ".join(cells))
PY
