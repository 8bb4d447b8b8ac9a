#!/usr/bin/env bash
# GPU reliability checks, run ON the GPU machine from the repository root (docs/RELIABILITY.md):
#   scripts/gpu/sanitize.sh BUNDLE OUT_DIR [PART ...]
# BUNDLE holds tests/gutf8_gpu_tests and tests/gutf8_prim_tests (scripts/gpu/stage.sh makes
# .device/), and for the last two parts tests/gutf8_gpu_fuzz, tests/gutf8_hostile_tests, gutf8.
# PARTs (default: all, in this order; about 10 minutes in all, so on a machine with a 10-minute
# limit per command run them in two or three calls, e.g. "memcheck initcheck", "racecheck
# synccheck", "fuzz hostile"):
#   memcheck racecheck initcheck synccheck
#            the GPU test suites under compute-sanitizer --tool TOOL, with gtest filters that
#            keep each run within about 60-90 s (the sanitizer slows kernels 10-100x; the 1 GiB
#            and 2^28 cases are always out); memcheck also runs gutf8_gpu_fuzz briefly
#   fuzz     gutf8_gpu_fuzz (GPU vs CPU differential fuzzing) without a sanitizer
#   hostile  the hostile-input CLI suite on the CUDA backend
# Logs go to OUT_DIR/<part>-<suite>.log; one verdict line per part is printed last, e.g.
#   memcheck: ERROR SUMMARY: 0 errors (gpu_tests 0, prim_tests 0, gpu_fuzz 0)
# Exit status 0 when every part ran clean.
#
# Knobs: GUTF8_SAN_TIMEOUT (seconds per sanitizer run, default 120), GUTF8_SAN_FILTER_<TOOL>_GPU /
# GUTF8_SAN_FILTER_<TOOL>_PRIM (gtest filters replacing the defaults below, TOOL in upper case),
# GUTF8_GPU_FUZZ_ITERATIONS (default 400), GUTF8_GPU_FUZZ_SEED (default: the date, printed).
set -uo pipefail
bundle=${1:?usage: scripts/gpu/sanitize.sh BUNDLE OUT_DIR [memcheck|racecheck|initcheck|synccheck|fuzz|hostile ...]}
out=${2:?usage: scripts/gpu/sanitize.sh BUNDLE OUT_DIR [PART ...]}
shift 2
parts=("$@")
((${#parts[@]})) || parts=(memcheck racecheck initcheck synccheck fuzz hostile)
mkdir -p "$out"
: >"$out/sanitize-summary.txt"
limit=${GUTF8_SAN_TIMEOUT:-120}

cs=$(command -v compute-sanitizer || true)
[[ -z $cs && -x /usr/local/cuda/bin/compute-sanitizer ]] && cs=/usr/local/cuda/bin/compute-sanitizer

# Default filters. Always out: the 1 GiB and > 4 GiB codec cases and the 2^28-element
# primitives. racecheck (shared-memory hazards; the slowest tool) runs the *SanitizerSweep tests:
# every kernel, variant and policy, and every primitive algorithm, on a few shapes spanning
# several tiles (with errors, carries, ragged tails, the backend's pieces). initcheck gets those
# plus all sizes up to 300 and tile boundaries, chunk carries, the 1/2-byte exhaustive set, and
# each primitive family.
big_gpu='GpuLarge.*'
big_prim='*Huge2Pow28*'
filter() {  # TOOL SUITE
  local var="GUTF8_SAN_FILTER_${1^^}_${2^^}"
  if [[ -n ${!var:-} ]]; then echo "${!var}"; return; fi
  case "$1:$2" in
    memcheck:gpu | synccheck:gpu) echo "*-$big_gpu" ;;
    memcheck:prim | synccheck:prim) echo "*-$big_prim" ;;
    racecheck:gpu) echo "GpuSanitizerSweep.*:GpuRandom.TileBoundaries:GpuRandom.ErrorKindsAndLines" ;;
    racecheck:prim) echo "PrimSanitizerSweep.*:PrimBuildingBlocks.*:PrimScan.TempQueryAndEmpty:PrimSelect.UnalignedInput" ;;
    initcheck:gpu)
      echo "GpuSanitizerSweep.*:GpuRandom.EverySizeUpTo300:GpuRandom.TileBoundaries:GpuRandom.MisalignedInput:GpuRandom.ErrorKindsAndLines:GpuChunks.EverySplitOfShortInputs:GpuExhaustive.OneAndTwoByteSequences:GpuExhaustive.EncodeValueClasses:CudaBackend.StreamSmallChunksEqualsCpu:CudaBlockProcessor.*" ;;
    initcheck:prim)
      echo "PrimSanitizerSweep.*:PrimBuildingBlocks.*:PrimScan.Int32Sum:PrimScan.NonCommutativeAffineCompose:PrimScan.TempQueryAndEmpty:PrimSelect.FlaggedU32:PrimSelect.UnalignedInput:PrimSort.KeysU32AllAlgorithms:PrimSort.PairsU32StableWithDuplicates" ;;
  esac
}

verdicts=()
status=0

# compute-sanitizer on one program; prints its error count (or a word when there is none).
sanitize_run() {  # TOOL NAME LOG PROGRAM ARGS...
  local tool=$1 name=$2 log=$3
  shift 3
  local extra=()
  case $tool in
    memcheck) extra=(--leak-check full) ;;
    racecheck) extra=(--racecheck-report analysis) ;;
  esac
  local start=$SECONDS
  timeout --signal=INT "$limit" "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 86 \
    --print-limit 100 "$@" >"$log" 2>&1
  local rc=$?
  local errors
  # racecheck ends with "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"; a
  # warning is a hazard too, so both count.
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -Eo '[0-9]+')
  [[ -z $errors ]] && errors=$(grep -Eo 'RACECHECK SUMMARY: .*\(([0-9]+) errors, ([0-9]+) warnings\)' "$log" | tail -1 |
    grep -Eo '[0-9]+ (errors|warnings)' | awk '{n += $1} END {if (NR) print n}')
  {
    echo "# $tool $name: rc=$rc in $((SECONDS - start)) s"
    grep -E '^\[  (PASSED|FAILED) |tests? ran|gutf8_gpu_fuzz:' "$log" | tail -5
  } >>"$out/sanitize-summary.txt"
  if grep -q 'Running 0 tests' "$log"; then
    echo "no-test-matched-the-filter"
  elif ((rc == 124)); then
    echo "timeout(${errors:-?})"
  elif [[ -z $errors ]]; then
    echo "no-summary(rc=$rc)"
  elif ((rc != 0 && rc != 86)); then
    echo "$errors(rc=$rc)"
  else
    echo "$errors"
  fi
}

for part in "${parts[@]}"; do
  case $part in
    memcheck | racecheck | initcheck | synccheck)
      if [[ -z $cs ]]; then
        verdicts+=("$part: compute-sanitizer not found")
        status=1
        continue
      fi
      results=()
      total=0
      clean=1
      for suite in gpu prim; do
        prog="$bundle/tests/gutf8_${suite}_tests"
        if [[ ! -x $prog ]]; then
          results+=("${suite}_tests missing")
          clean=0
          continue
        fi
        r=$(sanitize_run "$part" "${suite}_tests" "$out/$part-${suite}_tests.log" "$prog" \
              --gtest_filter="$(filter "$part" "$suite")" --gtest_color=no)
        results+=("${suite}_tests $r")
        [[ $r =~ ^[0-9]+$ ]] && total=$((total + r)) || clean=0
        [[ $r == 0 ]] || clean=0
      done
      if [[ $part == memcheck && -x $bundle/tests/gutf8_gpu_fuzz ]]; then
        r=$(sanitize_run memcheck gpu_fuzz "$out/memcheck-gpu_fuzz.log" "$bundle/tests/gutf8_gpu_fuzz" \
              --iterations 40 --max-size 262144 --seed 7 --save "$out")
        results+=("gpu_fuzz $r")
        [[ $r =~ ^[0-9]+$ ]] && total=$((total + r)) || clean=0
        [[ $r == 0 ]] || clean=0
      fi
      verdicts+=("$part: ERROR SUMMARY: $total errors ($(IFS=,; echo "${results[*]}" | sed 's/,/, /g'))$( ((clean)) || echo ' -- NOT CLEAN, see logs')")
      ((clean)) || status=1
      ;;
    fuzz)
      seed=${GUTF8_GPU_FUZZ_SEED:-$(date +%Y%m%d)}
      timeout 300 "$bundle/tests/gutf8_gpu_fuzz" --iterations "${GUTF8_GPU_FUZZ_ITERATIONS:-400}" \
        --seed "$seed" --save "$out" >"$out/gpu_fuzz.log" 2>&1
      rc=$?
      verdicts+=("fuzz: rc=$rc, $(grep -E '^gutf8_gpu_fuzz: ' "$out/gpu_fuzz.log" | tail -1)")
      ((rc == 0)) || status=1
      ;;
    hostile)
      GUTF8_BIN="$(cd "$bundle" && pwd)/gutf8" GUTF8_TEST_BACKEND=cuda timeout 540 \
        "$bundle/tests/gutf8_hostile_tests" --gtest_color=no >"$out/hostile_cuda.log" 2>&1
      rc=$?
      verdicts+=("hostile (cuda backend): rc=$rc, $(grep -E '^\[  (PASSED|FAILED) ' "$out/hostile_cuda.log" | tr '\n' ' ')")
      ((rc == 0)) || status=1
      ;;
    *)
      verdicts+=("$part: unknown part")
      status=1
      ;;
  esac
done

echo "== gutf8 GPU reliability ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
cat "$out/sanitize-summary.txt"
printf '%s\n' "${verdicts[@]}" | tee "$out/verdicts.txt"
exit $status
