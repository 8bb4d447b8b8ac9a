#!/usr/bin/env bash
# A/B of two codec benchmark binaries in one GPU session, run ON the GPU machine:
#   scripts/gpu/ab.sh OUT_DIR BENCH_A BENCH_B [bench_codec options...]
# Runs A, B, A, B (drift shows as differences between the rounds): abn.sh with two binaries and
# two rounds.
set -uo pipefail
out=${1:?usage: ab.sh OUT_DIR BENCH_A BENCH_B [options]}
a=${2:?}
b=${3:?}
shift 3
exec bash "$(dirname "$0")/abn.sh" "$out" 2 "$a" "$b" -- "$@"
