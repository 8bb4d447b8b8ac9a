#!/usr/bin/env bash
# Run ON the GPU machine, from the repository root:
#   scripts/gpu/prim.sh BUILD_DIR OUT_DIR [extra bench_prim options]
# 1. the primitives' tests (GoogleTest output -> OUT_DIR/prim_tests.log, xml -> prim_tests.xml)
# 2. bench_prim (CSV/JSON/markdown -> OUT_DIR, console -> OUT_DIR/bench_prim.log)
# 3. plots + markdown table into OUT_DIR when python3 + matplotlib are there
# Bounded to about 4 minutes; prints a short summary last.
set -u
build=${1:?usage: scripts/gpu/prim.sh BUILD_DIR OUT_DIR [bench options]}
out=${2:?usage: scripts/gpu/prim.sh BUILD_DIR OUT_DIR [bench options]}
shift 2
mkdir -p "$out"
commit=${GUTF8_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [[ -z ${GUTF8_COMMIT:-} ]] && ! git diff --quiet 2>/dev/null; then commit="$commit+dirty"; fi

tests="$build/tests/gutf8_prim_tests"
bench="$build/bench/bench_prim"
# GUTF8_SKIP=tests or GUTF8_SKIP=bench runs one half only (the other counts as passed).
test_rc=-1
[[ ${GUTF8_SKIP:-} == tests ]] && test_rc=0
if [[ ${GUTF8_SKIP:-} != tests && -x $tests ]]; then
  echo "== gutf8_prim_tests (limit 150 s) =="
  timeout 150 "$tests" --gtest_output="xml:$out/prim_tests.xml" >"$out/prim_tests.log" 2>&1
  test_rc=$?
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|error' "$out/prim_tests.log" | tail -n 40
elif [[ ${GUTF8_SKIP:-} != tests ]]; then
  echo "missing $tests (build target gutf8_prim_tests)" | tee "$out/prim_tests.log"
fi

bench_rc=-1
[[ ${GUTF8_SKIP:-} == bench ]] && bench_rc=0
if [[ ${GUTF8_SKIP:-} != bench && -x $bench ]]; then
  echo "== bench_prim (limit 180 s) =="
  timeout 180 "$bench" --out "$out" --commit "$commit" "$@" >"$out/bench_prim.log" 2>&1
  bench_rc=$?
  if [[ $bench_rc -eq 124 ]]; then
    echo "bench_prim hit the time limit: rerun with --max-log2 26 or --only scan,select"
  fi
elif [[ ${GUTF8_SKIP:-} != bench ]]; then
  echo "missing $bench (build target bench_prim with -DGUTF8_BENCH=ON)"
fi

if [[ -f $out/prim.csv ]] && python3 -c 'import matplotlib' 2>/dev/null; then
  timeout 60 python3 bench/plot_prim.py "$out/prim.csv" --out "$out" >/dev/null 2>&1 || echo "plot_prim.py failed"
fi

echo
echo "================ summary ================"
grep -E '^GPU:|^device copy bandwidth' "$out/bench_prim.log" 2>/dev/null
sed -n '/== headline/,/^$/p' "$out/bench_prim.log" 2>/dev/null
grep -c 'MISMATCH' "$out/bench_prim.log" 2>/dev/null | sed 's/^/bench rows mismatching CUB: /'
grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$out/prim_tests.log" 2>/dev/null
echo "tests exit $test_rc, bench exit $bench_rc; results in $out"
[[ $test_rc -eq 0 && $bench_rc -eq 0 ]]
