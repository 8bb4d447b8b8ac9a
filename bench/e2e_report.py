#!/usr/bin/env python3
"""Headline table of an end-to-end run: bench/e2e_report.py E2E.CSV > table.md

Per file: gutf8 on the GPU and on the CPU (GB/s of input, wall clock, median of the run's reps)
for validate, validate --replace, decode and encode; iconv, python3 and utfcpp decode; and the
best gutf8 decode over iconv and utfcpp. E2E.CSV is what scripts/bench_e2e.sh writes."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
rate = {}
for r in rows:
    if r['status'] == 'ok' and r['gb_per_s']:
        rate[(r['file'], r['tool'], r['backend'], r['operation'])] = float(r['gb_per_s'])

def g(file, tool, backend, op):
    v = rate.get((file, tool, backend, op))
    return v

def fmt(v):
    return '–' if v is None else f'{v:.2f}' if v < 1 else f'{v:.1f}'

files = [f for f in ['ascii', 'cjk', 'emoji', 'mixed', 'mixed-invalid-1pct']
         if any(k[0] == f for k in rate)]
print('| file | validate GPU / CPU | validate --replace GPU / CPU | decode GPU / CPU | '
      'encode GPU / CPU | iconv | python3 | utfcpp | best gutf8 decode vs iconv / utfcpp |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for f in files:
    cells = []
    for op in ['validate', 'validate --replace', 'decode', 'encode']:
        cells.append(f"{fmt(g(f, 'gutf8', 'cuda', op))} / {fmt(g(f, 'gutf8', 'cpu', op))}")
    iconv = g(f, 'iconv', '-', 'decode') or g(f, 'iconv', '-', 'decode (-c)')
    py = g(f, 'python3', '-', 'decode (replace)')
    utf = g(f, 'utfcpp', '-', 'decode')
    best = max(v for v in [g(f, 'gutf8', 'cuda', 'decode'), g(f, 'gutf8', 'cpu', 'decode'), 0] if v is not None)
    ratio = ' / '.join('–' if b is None else f'{best / b:.0f}×' for b in [iconv, utf])
    print(f"| {f} | {' | '.join(cells)} | {fmt(iconv)} | {fmt(py)} | {fmt(utf)} | {ratio} |")
