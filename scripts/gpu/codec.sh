#!/usr/bin/env bash
# GPU codec checks, run ON the GPU machine from the repository root:
#   scripts/gpu/codec.sh BUILD_DIR OUT_DIR
# 1. the GPU test suite (gutf8_gpu_tests; log in OUT_DIR/gpu_tests.log),
# 2. the codec benchmark (bounded to about 3 minutes; OUT_DIR/codec.{csv,md}, log in
#    OUT_DIR/bench_codec.log) and its bar chart when matplotlib is available,
# 3. a short summary, printed last (targets from the issue: fused decode >= 70% of roofline,
#    validate >= 2 TB/s, replace/drop at 1% invalid within 1.3x of valid decode, encoders >= 70%,
#    staged faster than the CUB-composed baseline).
set -uo pipefail
build=${1:?usage: scripts/gpu/codec.sh BUILD_DIR OUT_DIR}
out=${2:?usage: scripts/gpu/codec.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
commit=${GUTF8_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
[[ -z ${GUTF8_COMMIT:-} && -n "$(git status --porcelain 2>/dev/null)" ]] && commit="$commit+dirty"

# GUTF8_SKIP=tests or GUTF8_SKIP=bench runs one half only (the other counts as passed).
echo "== GPU tests ($build/tests/gutf8_gpu_tests)"
start=$SECONDS
if [[ ${GUTF8_SKIP:-} == tests ]]; then
  tests_rc=0; : > "$out/gpu_tests.log"
elif [[ -x "$build/tests/gutf8_gpu_tests" ]]; then
  timeout 240 "$build/tests/gutf8_gpu_tests" --gtest_color=no >"$out/gpu_tests.log" 2>&1
  tests_rc=$?
else
  echo "missing $build/tests/gutf8_gpu_tests" >"$out/gpu_tests.log"
  tests_rc=127
fi
tests_s=$((SECONDS - start))
grep -E "^\[  (FAILED|SKIPPED) |^\[  PASSED|tests? ran" "$out/gpu_tests.log" | tail -20

bench="$build/bench/bench_codec"  # bench/gpu/codec.cu (the CPU one is bench_cpu_codec)
[[ -x $bench ]] || bench=""
echo "== benchmark (${bench:-not built})"
bench_rc=127
[[ ${GUTF8_SKIP:-} == bench ]] && bench_rc=0
if [[ ${GUTF8_SKIP:-} != bench && -n "$bench" ]]; then
  timeout 230 "$bench" --out "$out" --commit "$commit" --budget 150 >"$out/bench_codec.log" 2>&1
  bench_rc=$?
  tail -n 3 "$out/bench_codec.log"
  python3 bench/plot_codec.py "$out/codec.csv" "$out/codec.png" >/dev/null 2>&1 || true
fi

echo
echo "== summary (commit $commit)"
echo "GPU tests: exit $tests_rc in ${tests_s}s; $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+' "$out/gpu_tests.log" | tr '\n' ' ')"
if [[ -f "$out/codec.csv" ]]; then
  python3 bench/plot_codec.py --summary "$out/codec.csv"
else
  echo "benchmark: exit $bench_rc, no results (see $out/bench_codec.log)"
fi
[[ $tests_rc -eq 0 && $bench_rc -eq 0 ]]
