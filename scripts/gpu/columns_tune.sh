#!/usr/bin/env bash
# Runs ON the GPU host from the repo root: the string-column kernels' checks and tuning runs in
# one call, logs under OUT_DIR and a summary printed last.
#   scripts/gpu/columns_tune.sh OUT_DIR [BENCH_COLUMNS ...]
# The GPU column tests and compute-sanitizer memcheck (.device/tests/gutf8_gpu_tests), then each
# bench_columns binary given (default .device/bench/bench_columns; several: builds of other knob
# values in kernels/utf8/policy.cuh), interleaved over GUTF8_TUNE_ROUNDS rounds (default 2), the
# first also with --no-pool; then nsys (where installed) and ncu on the medium columns.
# GUTF8_TUNE_PARTS (default "checks bench profile") picks the parts, to split them over calls.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: columns_tune.sh OUT_DIR [BENCH_COLUMNS ...]}
shift
benches=("$@")
((${#benches[@]})) || benches=(.device/bench/bench_columns)
mkdir -p "$out"
: > "$out/steps.txt"
step() {  # step NAME SECONDS -- COMMAND...
  local name=$1 limit=$2 start=$SECONDS
  shift 3
  timeout "$limit" "$@"
  echo "$name: rc=$? in $((SECONDS - start)) s" >> "$out/steps.txt"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt" 2>&1
cat .device/COMMIT >> "$out/device.txt" 2>/dev/null
parts=" ${GUTF8_TUNE_PARTS:-checks bench profile} "
tests=.device/tests/gutf8_gpu_tests
first=${benches[0]}
if [[ $parts == *" checks "* ]]; then
step tests 240 -- sh -c "$tests --gtest_brief=1 --gtest_filter='GpuColumn*' > '$out/column_tests.log' 2>&1"
step memcheck 240 -- sh -c "compute-sanitizer --tool memcheck --error-exitcode 9 $tests --gtest_brief=1 \
  --gtest_filter='GpuColumns.SanitizerSized:GpuColumns.EdgeRowsEveryLayout:GpuColumns.CleanColumnsAreCopied:GpuColumns.BadInput:GpuColumns.Results*:GpuColumnViews.ViewsThatShareBytes:GpuColumnViews.BadViewsAreRejectedAsOnTheHost:GpuColumnViews.EdgeRowsEveryLayout' \
  > '$out/memcheck.log' 2>&1"
fi
if [[ $parts == *" bench "* ]]; then
for ((round = 1; round <= ${GUTF8_TUNE_ROUNDS:-2}; ++round)); do
  for b in "${benches[@]}"; do
    name=$(basename "$(dirname "$(dirname "$b")")")-$(basename "$b")
    step "bench $name r$round" 200 -- sh -c "$b --runs 7 > '$out/bench-$name-r$round.log' 2>&1"
  done
done
step "bench no-pool" 200 -- sh -c "$first --runs 7 --no-pool > '$out/bench-no-pool.log' 2>&1"
fi
if [[ $parts == *" profile "* ]]; then
if command -v nsys > /dev/null; then
  for col in medium200_clean medium200_dirty1pct; do
    step "nsys $col" 120 -- sh -c "nsys profile -o '$out/nsys-$col' --force-overwrite true $first --runs 3 --only $col \
      > /dev/null 2>&1 && nsys stats -r cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum '$out/nsys-$col.nsys-rep' \
      > '$out/nsys-$col.txt' 2>&1; rm -f '$out/nsys-$col.nsys-rep' '$out/nsys-$col.sqlite'"
  done
fi
# Launch order per column: is_valid warm-up and runs (a scan each), then make_valid (scan, write).
for spec in column_scan:1:medium200_clean column_scan:1:medium200_dirty1pct column_scan:9:medium200_dirty1pct \
            column_write:1:medium200_dirty1pct; do
  IFS=: read -r kernel skip col <<<"$spec"
  step "ncu $kernel $skip $col" 150 -- sh -c "ncu --clock-control none -k 'regex:$kernel' -s $skip -c 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis $first --runs 7 --only $col > '$out/ncu-$kernel-$skip-$col.txt' 2>&1"
done
fi

echo "=== device"; cat "$out/device.txt"
echo "=== steps"; cat "$out/steps.txt"
[[ -f $out/column_tests.log ]] && echo "=== tests" && grep -E "FAILED|PASSED|tests? ran|SKIPPED" "$out/column_tests.log" | tail -n 12
[[ -f $out/memcheck.log ]] && echo "=== memcheck" && tail -n 3 "$out/memcheck.log"
for f in "$out"/bench-*.log; do [[ -f $f ]] || continue; echo "=== $(basename "$f")"; grep '^|' "$f" | grep -v -- '---'; done
for f in "$out"/nsys-*.txt; do [[ -f $f ]] && { echo "=== $(basename "$f")"; grep -E "column|Memcpy|memset|Malloc|Free|Synchronize|prim|Scan|scan" "$f" | head -n 30 | cut -c1-200; }; done
for f in "$out"/ncu-*.txt; do [[ -f $f ]] && { echo "=== $(basename "$f")"; grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots|No Eligible|Warp Cycles Per Issued|Eligible Warps" "$f" | head -n 16; }; done
