#!/usr/bin/env bash
# Here, after scripts/gpu/stage.sh: packs what driver.py's multi_gpu parts need from the bundle
# (.device/ is ~90 MB, too big to carry) into .probe/mgpu.tar.xz (ignored: carry it by name), and
# prints its size and what the device call would send (tracked and untracked files, the pack,
# .device-python/ and .whl/; 64 MiB at most).
#   GUTF8_BUNDLE  bundle folder (default .device)
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${GUTF8_BUNDLE:-.device}
files=("$b/COMMIT" "$b/gutf8" "$b/tests/gutf8_gpu_tests" "$b/tests/gutf8_cli_tests"
       "$b/bench/bench_codec" "$b/bench/bench_engine" "$b/bench/bench_host_limits")
missing=()
for f in "${files[@]}"; do [[ -f $f ]] || missing+=("$f"); done
libs=("$b"/bench/libbenchmark.so*)  # bench_codec's Google Benchmark, found through its $ORIGIN rpath
[[ -f ${libs[0]} ]] || missing+=("$b/bench/libbenchmark.so*")
((${#missing[@]} == 0)) || { echo "pack_multi_gpu.sh: missing (run scripts/gpu/stage.sh): ${missing[*]}" >&2; exit 1; }
grep -qa ' devices=' "$b/bench/bench_engine" ||
  echo "pack_multi_gpu.sh: note: this bench_engine has no --devices (built before it): forced CPU+GPU rows will run on GPU 0 alone" >&2
mkdir -p .probe
tar -cf - "${files[@]}" "${libs[@]}" | xz -T2 -6 > .probe/mgpu.tar.xz.part
mv .probe/mgpu.tar.xz.part .probe/mgpu.tar.xz
echo "bundle commit: $(tr '\n' ' ' < "$b/COMMIT")"
ls -l .probe/mgpu.tar.xz
sizes() { git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1; }
tree=$(sizes)
extra=0
for p in .probe/mgpu.tar.xz .device-python .whl; do
  [[ -e $p ]] || { echo "  (no $p)"; continue; }
  s=$(du -sb "$p" | cut -f1)
  extra=$((extra + s))
  printf '  %-22s %6.1f MiB\n' "$p" "$(awk -v s="$s" 'BEGIN {print s / 1048576}')"
done
printf '  %-22s %6.1f MiB\n' "working tree" "$(awk -v s="$tree" 'BEGIN {print s / 1048576}')"
printf 'total that travels: %.1f MiB of 64\n' "$(awk -v s=$((tree + extra)) 'BEGIN {print s / 1048576}')"
