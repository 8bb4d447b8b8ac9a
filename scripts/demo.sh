#!/usr/bin/env bash
# Quick start 1: set up, build and run gutf8 on the bundled sample corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
sample=corpus/sample/mixed.txt
echo "== gutf8 stats $sample --top 10"
./build/gutf8 stats "$sample" --top 10
echo "== gutf8 decode $sample | gutf8 encode | cmp - $sample"
./build/gutf8 decode "$sample" | ./build/gutf8 encode | cmp - "$sample" && echo "round trip: identical"
echo "== gutf8 validate on a copy with invalid bytes injected (exit status 1 expected)"
broken=$(mktemp); trap 'rm -f "$broken"' EXIT
python3 corpus/make_corpus.py inject --rate 0.001 --seed 1 "$sample" "$broken" >/dev/null
./build/gutf8 validate "$broken" || echo "exit status $?"
echo "== gutf8 validate --replace: U+FFFD count against CPython's errors='replace'"
# (|| true: validate exits 1 because the input was invalid, which is the point here)
{ ./build/gutf8 validate --replace -q "$broken" || true; } | python3 -c "
import sys
ours = sys.stdin.buffer.read().decode('utf-8').count('\ufffd')
cpython = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace').count('\ufffd')
print(f'gutf8: {ours}  CPython: {cpython}  ->', 'identical' if ours == cpython else 'DIFFERENT')
" "$broken"
