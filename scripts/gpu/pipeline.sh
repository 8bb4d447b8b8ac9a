#!/usr/bin/env bash
# Runs ON the GPU host from the repo root with the bundle of stage.sh in .device/: the file
# pipeline's checks and measurements in one call (logs under OUT_DIR, a summary printed last).
#   scripts/gpu/pipeline.sh OUT_DIR [tests] [limits] [e2e] [tmpfs]   (default: all four; the e2e part
#   alone takes about 7 minutes: give it a call of its own where calls are limited to 10)
#   tests   the GPU test suite, and the cli part
#   limits  bench_host_limits on a 4 GiB text file (page-locking the mapped page cache included)
#   e2e     bench_e2e.sh: 16 GiB English (ascii) and Chinese (cjk) text, validate and decode, on
#           --backend=cpu / cuda / auto, and a size sweep from 1 KiB of auto against cpu
#   tmpfs   the CPU backend on the same 4 GiB file in the page cache and in /dev/shm
#   settings  bench_file_pipeline on 16 GiB ascii and cjk files (and 16 GiB of UTF-32 for encode):
#           CPU workers, GPU lanes fed by pread copies or by copies from the mapped page cache, both
#           together; inside one process, so after the first run the rates are the streaming rates
#           after CUDA's start-up
#   sanitize  compute-sanitizer memcheck on the GPU tests sized for it
#   cli     the CLI suite on --backend=cuda alone
#   stats   bench_file_pipeline of stats on 4 GiB of mixed text, CPU workers and GPU lanes
#   utf16   bench_codec: the UTF-16 decode beside the fused UTF-32 decode, device-resident
#   columns bench_columns: device is_valid / make_valid beside flat validate / sanitize
#   columns_cpu  bench/columns_cpu.py: bench_cpu_columns (1 thread and all cores) beside pyarrow's
#           cast and a CPython decode loop on the same bytes (needs python3 with pyarrow, numpy)
#   autosweep  bench_e2e.sh of --backend=auto against cpu from 1 KiB to 4 GiB (validate, decode)
#   python  the Python package's tests and benchmark from the wheel in .device-python/ (stage_python.sh),
#           with the wheels in .whl/ where carried (dask, distributed and their needs: the dask tests)
#   pytest  the Python package's tests alone (carry .device-python and .whl; no .device needed)
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
wants() {  # tests includes the CLI suite
  [[ " ${parts[*]} " == *" $1 "* ]] || { [[ $1 == cli ]] && [[ " ${parts[*]} " == *" tests "* ]]; }
}
step() {  # step NAME SECONDS -- COMMAND...: runs it under a time limit, notes its status
  local name=$1 limit=$2 start=$SECONDS
  shift 3
  timeout "$limit" "$@"
  summary+=("$name: rc=$? in $((SECONDS - start)) s")
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt" 2>&1
echo "commit: $(tr '\n' ' ' < .device/COMMIT 2>/dev/null) python wheel: $(cat .device-python/COMMIT 2>/dev/null)" >> "$out/device.txt"

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
  step memcheck 300 -- sh -c "compute-sanitizer --tool memcheck --error-exitcode 9 .device/tests/gutf8_gpu_tests --gtest_brief=1 --gtest_filter='GpuColumns.SanitizerSized:GpuColumns.EdgeRowsEveryLayout:GpuColumns.CleanColumnsAreCopied:GpuColumns.BadInput:GpuColumns.Results*:GpuColumnViews.ViewsThatShareBytes:GpuColumnViews.BadViewsAreRejectedAsOnTheHost:GpuColumnViews.EdgeRowsEveryLayout:GpuUtf16.EverySizeUpTo300AndAroundTiles:GpuUtf16.CarryLeavesTheCutSequence:GpuSanitizerSweep*' > '$out/memcheck.log' 2>&1"
fi
if wants cli; then
  step cli_cuda 240 -- sh -c "GUTF8_BIN=$PWD/$bin GUTF8_TEST_BACKEND=cuda .device/tests/gutf8_cli_tests --gtest_brief=1 > '$out/cli_cuda.log' 2>&1"
fi
if wants stats; then
  m=$work/mixed-4G.txt
  mkdir -p "$work"
  [[ -f $m ]] || python3 corpus/make_corpus.py tile --size 4G --kind mixed "$m" > /dev/null
  for b in cpu cuda; do .device/bench/bench_file_pipeline --file "$m" --op stats --backend $b --reps 3; done > "$out/stats.csv" 2>&1
  summary+=("stats: done")
fi
if wants utf16; then
  step utf16 200 -- sh -c ".device/bench/bench_codec --ops decode_fused_replace,decode_utf16_replace --runs 15 --out '$out/codec' > '$out/codec.log' 2>&1"
fi
if wants columns; then
  step columns 240 -- sh -c ".device/bench/bench_columns --runs 7 --out '$out/columns_gpu.md' > '$out/columns.log' 2>&1"
fi
if wants columns_cpu; then
  step columns_cpu 560 -- sh -c "python3 bench/columns_cpu.py --bench .device/bench/bench_cpu_columns --repeats 5 --python-repeats 3 --out '$out/columns_cpu.md' > '$out/columns_cpu.log' 2>&1"
fi
if wants autosweep; then
  step autosweep 240 -- bash scripts/bench_e2e.sh --size 4G --reps 5 --no-baselines --kinds "ascii" --ops "validate decode" \
    --backends "cpu auto" --sweep "1K 1M 64M 1G" --work "$work" --out "$out/auto" > "$out/auto.console" 2>&1
fi
if wants python || wants pytest; then
  site="python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .device-python/*.whl $(ls .whl/*.whl 2>/dev/null | tr '\n' ' ')"
  tests="PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 python3 -m pytest -q -rfEs -p no:cacheprovider tests/python > '$out/python_tests.log' 2>&1"
  if wants python; then
    step python 300 -- sh -c "$site && $tests; PYTHONPATH=/tmp/site python3 bench/python/bench_python.py --reps 5 --cli $bin --big-size 4G --files 64 --file-size 64M --workdir /tmp --out '$out/python_h100.md' > '$out/python_bench.log' 2>&1"
  else
    step pytest 240 -- sh -c "$site && $tests"
  fi
fi
if wants tests; then
  step gpu_tests 240 -- sh -c ".device/tests/gutf8_gpu_tests --gtest_brief=1 > '$out/gpu_tests.log' 2>&1"
fi
if wants e2e; then
  step e2e 420 -- bash scripts/bench_e2e.sh --size "$size" --reps "${GUTF8_E2E_REPS:-3}" --no-baselines \
    --kinds "ascii cjk" --ops "validate decode" --backends "cpu cuda auto" --budget 360 \
    --sweep "1K 64K 1M 16M 256M 1G 4G" --work "$work" --out "$out/e2e" > "$out/e2e.console" 2>&1
fi
if wants limits || wants tmpfs; then  # both read 4 GiB of English text (the e2e part's, when made)
  text=$(ls "$work"/ascii-*.txt 2>/dev/null | head -1)
  [[ -n $text ]] || text=$(text_file ascii $((4 << 30)))
  head -c $((4 << 30)) "$text" > "$work/four.txt"
fi
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
for csv in "$out/e2e/e2e.csv" "$out/auto/e2e.csv"; do
  [[ -f $csv ]] && { echo "=== $csv"; cut -d, -f1,4-8 "$csv"; }
done
[[ -f $out/stats.csv ]] && { echo "=== stats"; cat "$out/stats.csv"; }
[[ -f $out/codec.log ]] && { echo "=== utf16"; grep -E "decode_(fused|utf16)_replace" "$out/codec.log" | tail -8; }
[[ -f $out/columns_gpu.md ]] && { echo "=== columns"; tail -n 25 "$out/columns_gpu.md"; }
[[ -f $out/columns_cpu.md ]] && { echo "=== columns_cpu"; tail -n 12 "$out/columns_cpu.md"; }
[[ -f $out/python_tests.log ]] && { echo "=== python"; grep -E "^(SKIPPED|FAILED|ERROR)" "$out/python_tests.log"; tail -n 1 "$out/python_tests.log"; tail -n 15 "$out/python_h100.md" 2>/dev/null; }
[[ -f $out/host_limits.md ]] && { echo "=== host limits"; grep -E "Register|registered|pread page cache, (4|8|12)" "$out/host_limits.md"; }
[[ -f $out/tmpfs.log ]] && { echo "=== tmpfs"; grep " run " "$out/tmpfs.log"; }
[[ -f $out/memcheck.log ]] && { echo "=== memcheck"; tail -n 8 "$out/memcheck.log"; }
[[ -f $out/settings.csv ]] && { echo "=== settings"; cat "$out/settings.csv"; tail -5 "$out/settings.err"; }
cat "$out/device.txt"
printf '%s\n' "${summary[@]}"
