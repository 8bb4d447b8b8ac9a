#!/usr/bin/env bash
# Runs ON the GPU host from the repo root with the bundle of stage.sh in .device/: the file
# pipeline's checks and measurements in one call (logs under OUT_DIR, a summary printed last).
#   scripts/gpu/pipeline.sh OUT_DIR [tests] [limits] [e2e] [tmpfs]   (default: all four; the e2e part
#   alone takes about 7 minutes: give it a call of its own where calls are limited to 10)
#   tests   the GPU test suite and the CLI suite on --backend=cuda
#   limits  bench_host_limits on a 4 GiB text file (page-locking the mapped page cache included)
#   e2e     bench_e2e.sh: 16 GiB English (ascii) and Chinese (cjk) text, validate and decode, on
#           --backend=cpu / cuda / auto, and a size sweep from 1 KiB of auto against cpu
#   tmpfs   the CPU backend on the same 4 GiB file in the page cache and in /dev/shm
#   settings  bench_file_pipeline on 16 GiB ascii and cjk files (and 16 GiB of UTF-32 for encode):
#           CPU workers, GPU lanes fed by pread copies or by copies from the mapped page cache, both
#           together; inside one process, so after the first run the rates are the streaming rates
#           after CUDA's start-up
#   sanitize  compute-sanitizer memcheck on the GPU tests sized for it
# GUTF8_E2E_SIZE (default 16G) and GUTF8_E2E_REPS (default 3) scale the e2e part.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: pipeline.sh OUT_DIR [tests] [limits] [e2e] [tmpfs]}
shift
parts=("$@")
((${#parts[@]})) || parts=(tests limits e2e tmpfs)
text_file() {  # text_file KIND SIZE: the bench_e2e.sh input, built the same way when missing
  local f=$work/$1-$2.txt
  if [[ ! -f $f ]]; then
    mkdir -p "$work"
    python3 corpus/make_corpus.py tile --size 64M --kind "$1" "$work/base-$1.txt" > /dev/null
    python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); n = int(sys.argv[3]); f = open(sys.argv[2], 'wb')
while n > 0: f.write(d[:n]); n -= len(d[:n])" "$work/base-$1.txt" "$f" "$2"
  fi
  echo "$f"
}
mkdir -p "$out"
bin=.device/gutf8
work=/tmp/gutf8-e2e
size=${GUTF8_E2E_SIZE:-16G}
summary=()
wants() { [[ " ${parts[*]} " == *" $1 "* ]]; }
step() {  # step NAME SECONDS -- COMMAND...: runs it under a time limit, notes its status
  local name=$1 limit=$2 start=$SECONDS
  shift 3
  timeout "$limit" "$@"
  summary+=("$name: rc=$? in $((SECONDS - start)) s")
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt" 2>&1
echo "commit: $(tr '\n' ' ' < .device/COMMIT)" >> "$out/device.txt"

if wants settings; then
  fp=.device/bench/bench_file_pipeline
  {
    echo "op,backend,settings,first_s,median_s,gb_per_s,gpu_share,gpu_startup_s"
    for kind in ascii cjk; do
      f=$(text_file $kind 17179869184)
      cat "$f" > /dev/null
      echo "# $kind $(stat -c %s "$f") bytes"
      for op in validate decode sanitize; do
        $fp --file "$f" --op $op --backend cpu --reps 3
        $fp --file "$f" --op $op --backend cuda --feed copy --reps 3
        $fp --file "$f" --op $op --backend cuda --feed copy-mapped --reps 3
        [[ $op == decode ]] && $fp --file "$f" --op $op --backend cuda --feed copy --run-bytes 8 --reps 3
        [[ $op == sanitize ]] || $fp --file "$f" --op $op --backend auto --feed copy --reps 3
      done
    done
    u=$work/ascii-utf32.u32
    [[ -f $u ]] || head -c $((4 << 30)) "$(text_file ascii 17179869184)" | $bin decode --backend=cpu -o "$u" -
    echo "# ascii as UTF-32LE $(stat -c %s "$u") bytes"
    $fp --file "$u" --op encode --backend cpu --reps 3
    $fp --file "$u" --op encode --backend cuda --feed copy --reps 3
  } > "$out/settings.csv" 2> "$out/settings.err"
  summary+=("settings: done")
fi
if wants sanitize; then
  step memcheck 300 -- sh -c "compute-sanitizer --tool memcheck --error-exitcode 9 .device/tests/gutf8_gpu_tests --gtest_brief=1 --gtest_filter='GpuColumns.SanitizerSized:GpuColumns.EdgeRowsEveryLayout:GpuColumns.BadInput:GpuUtf16.EverySizeUpTo300AndAroundTiles:GpuUtf16.CarryLeavesTheCutSequence:GpuSanitizerSweep*' > '$out/memcheck.log' 2>&1"
fi
if wants tests; then
  step gpu_tests 240 -- sh -c ".device/tests/gutf8_gpu_tests --gtest_brief=1 > '$out/gpu_tests.log' 2>&1"
  step cli_cuda 240 -- sh -c "GUTF8_BIN=$PWD/$bin GUTF8_TEST_BACKEND=cuda .device/tests/gutf8_cli_tests --gtest_brief=1 > '$out/cli_cuda.log' 2>&1"
fi
if wants e2e; then
  step e2e 420 -- bash scripts/bench_e2e.sh --size "$size" --reps "${GUTF8_E2E_REPS:-3}" --no-baselines \
    --kinds "ascii cjk" --ops "validate decode" --backends "cpu cuda auto" --budget 360 \
    --sweep "1K 64K 1M 16M 256M 1G 4G" --work "$work" --out "$out/e2e" > "$out/e2e.console" 2>&1
fi
text=$(ls "$work"/ascii-*.txt 2>/dev/null | head -1)
if [[ -z $text ]]; then
  mkdir -p "$work"
  python3 corpus/make_corpus.py tile --size 64M --kind ascii "$work/base-ascii.txt" > /dev/null
  text=$work/ascii-4G.txt
  for _ in $(seq 64); do cat "$work/base-ascii.txt"; done > "$text"
fi
head -c $((4 << 30)) "$text" > "$work/four.txt"
if wants limits; then
  step host_limits 120 -- sh -c ".device/bench/bench_host_limits --reps 3 --file '$work/four.txt' > '$out/host_limits.md' 2>&1"
fi
if wants tmpfs; then
  {
    cp "$work/four.txt" /dev/shm/four.txt
    for where in "$work/four.txt" /dev/shm/four.txt; do
      for env in "" "GUTF8_NO_MAP=1"; do
        for r in 1 2 3; do
          t0=$(date +%s.%N)
          env $env "$bin" validate --backend=cpu --verbose "$where" 2>&1 | tail -1
          echo "$where ${env:-map} run $r: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}') s"
        done
      done
    done
    rm -f /dev/shm/four.txt
  } > "$out/tmpfs.log" 2>&1
  summary+=("tmpfs: done")
fi
rm -f "$work/four.txt"

for log in gpu_tests cli_cuda; do
  [[ -f $out/$log.log ]] && { echo "=== $log"; tail -n 6 "$out/$log.log"; }
done
[[ -f $out/e2e/e2e.csv ]] && { echo "=== e2e"; cut -d, -f1,3-8 "$out/e2e/e2e.csv" | column -t -s,; }
[[ -f $out/host_limits.md ]] && { echo "=== host limits"; grep -E "Register|registered|pread page cache, (4|8|12)" "$out/host_limits.md"; }
[[ -f $out/tmpfs.log ]] && { echo "=== tmpfs"; grep " run " "$out/tmpfs.log"; }
[[ -f $out/memcheck.log ]] && { echo "=== memcheck"; tail -n 8 "$out/memcheck.log"; }
[[ -f $out/settings.csv ]] && { echo "=== settings"; cat "$out/settings.csv"; tail -5 "$out/settings.err"; }
cat "$out/device.txt"
printf '%s\n' "${summary[@]}"
