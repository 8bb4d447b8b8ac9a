#!/usr/bin/env bash
# CI reliability stage (docs/RELIABILITY.md), run by .ci/run after the main test command:
#   1. the CPU test suites under AddressSanitizer + UndefinedBehaviorSanitizer (clang,
#      -fno-sanitize-recover=all, CUDA off) in build-asan/;
#   2. the libFuzzer targets (also under ASan/UBSan) in build-fuzz/, each for a bounded time,
#      starting from the checked-in seed corpus (tests/fuzz/corpus/<target>/, never modified:
#      new inputs go to a scratch directory);
#   3. a summary: per suite pass/fail and time, per fuzz target executions and time.
# Exit status 0 when everything passed. Crash reproducers are copied to
# ${GUTF8_RELIABILITY_OUT:-build-fuzz/findings}/ for turning into regression tests.
#
# Knobs (environment):
#   GUTF8_FUZZ_SECONDS   per fuzz target (default 60)
#   GUTF8_FUZZ_MAX_LEN   largest fuzz input in bytes (default 4096)
#   GUTF8_RELIABILITY_SKIP  space-separated parts to skip: asan fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
start_all=$(date +%s)
fuzz_seconds=${GUTF8_FUZZ_SECONDS:-60}
max_len=${GUTF8_FUZZ_MAX_LEN:-4096}
skip=" ${GUTF8_RELIABILITY_SKIP:-} "
out_dir=${GUTF8_RELIABILITY_OUT:-build-fuzz/findings}
jobs=$(nproc)

# --------------------------------------------------------------- set up ----
bash scripts/setup.sh
need=()
for p in clang libclang-rt-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "ci_reliability: installing ${need[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
for s in llvm-symbolizer /usr/lib/llvm-14/bin/llvm-symbolizer; do
  if command -v "$s" >/dev/null 2>&1; then ASAN_SYMBOLIZER_PATH=$(command -v "$s"); export ASAN_SYMBOLIZER_PATH; break; fi
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

summary=()
failed=0
note() { summary+=("$(printf '%-44s %s' "$1" "$2")"); }

# The exhaustive CPU cases that take ~4 min under ASan on 2 cores: the normal (unsanitized)
# suite runs them all; here the 1/2-byte set, the E0..EF and F0..FF 3-byte sets and the whole
# 4-byte F4 set (the leads with the special second-byte ranges) stay in.
asan_exclude='Exhaustive\.(FourBytes_F[0-3]|ThreeBytes_00_7F|ThreeBytes_80_DF|ThreeByteSequencesBackToBack|FourByteSequencesBackToBack)$'
# The 1 GiB streams run in the normal suite (~80 s more under ASan; the 1 GiB decompressions ~130 s,
# and ASan's quarantine of freed memory breaks their memory bound).
asan_exclude="$asan_exclude|hostile\.GiB|CompressHighRatio\."

# ---------------------------------------------------------- ASan + UBSan ----
if [[ "$skip" != *" asan "* ]]; then
  t0=$(date +%s)
  CC=clang CXX=clang++ cmake -S . -B build-asan -DGUTF8_CUDA=OFF -DGUTF8_BENCH=OFF \
    -DGUTF8_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-asan -j "$jobs" --target gutf8_cli gutf8_cpu_tests gutf8_cli_tests \
    gutf8_prim_tests gutf8_hostile_tests
  t1=$(date +%s)
  note "build-asan (clang, address,undefined)" "built in $((t1 - t0)) s"
  if ctest --test-dir build-asan --output-on-failure -j "$jobs" -E "$asan_exclude" \
       -L '^(cpu|cli|prim|hostile)$' >build-asan/ctest.log 2>&1; then
    verdict=passed
  else
    verdict=FAILED
    failed=1
    tail -n 80 build-asan/ctest.log
  fi
  t2=$(date +%s)
  counts=$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' build-asan/ctest.log || echo "no ctest summary")
  note "ASan+UBSan cpu/cli/prim/hostile tests" "$verdict: $counts, $((t2 - t1)) s"
fi

# ------------------------------------------------------------- libFuzzer ----
if [[ "$skip" != *" fuzz "* ]]; then
  t0=$(date +%s)
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DGUTF8_CUDA=OFF -DGUTF8_BENCH=OFF -DGUTF8_FUZZ=ON \
    -DGUTF8_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-fuzz -j "$jobs" --target gutf8_fuzz_utf8 gutf8_fuzz_encode gutf8_fuzz_stream \
    gutf8_fuzz_decompress
  t1=$(date +%s)
  note "build-fuzz (clang, libFuzzer, address,undefined)" "built in $((t1 - t0)) s"
  mkdir -p "$out_dir"
  fuzz_one() {  # target dictionary
    local t=$1 dict=$2 work=build-fuzz/work/$1
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    # -rss_limit_mb: ASan keeps freed memory in quarantine; 2 GiB is libFuzzer's default too.
    build-fuzz/tests/fuzz/gutf8_fuzz_"$t" -max_total_time="$fuzz_seconds" -max_len="$max_len" \
      -print_final_stats=1 -dict="tests/fuzz/$dict" -rss_limit_mb=2560 \
      -artifact_prefix="$work/artifacts/" "$work/corpus" "tests/fuzz/corpus/$t" >"$work/log" 2>&1
  }
  pids=()
  declare -A started
  # Two at a time on two cores; each gets its own full -max_total_time.
  run_batch() {
    pids=()
    for spec in "$@"; do
      fuzz_one ${spec/:/ } &
      pids+=($!)
      started[$!]=${spec%%:*}
    done
    for pid in "${pids[@]}"; do
      if ! wait "$pid"; then echo "fuzz target ${started[$pid]} failed" >&2; fi
    done
  }
  if ((jobs >= 4)); then
    run_batch utf8:utf8.dict encode:utf32.dict stream:utf8.dict decompress:compress.dict
  else
    run_batch utf8:utf8.dict stream:utf8.dict
    run_batch encode:utf32.dict decompress:compress.dict
  fi
  for t in utf8 encode stream decompress; do
    work=build-fuzz/work/$t
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/log" | grep -Eo '[0-9]+$' || echo "?")
    secs=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$work/log" | grep -Eo 'in [0-9]+' | grep -Eo '[0-9]+' || echo "$fuzz_seconds")
    cov=$(grep -Eo 'DONE +cov: [0-9]+ ft: [0-9]+' "$work/log" | tail -1 | sed 's/DONE *//')
    if ls "$work"/artifacts/* >/dev/null 2>&1 || grep -q "ERROR: libFuzzer\|ERROR: AddressSanitizer\|runtime error\|disagreement" "$work/log"; then
      failed=1
      cp "$work"/artifacts/* "$out_dir"/ 2>/dev/null || true
      note "fuzz $t" "FAILED after $execs executions: reproducer(s) in $out_dir"
      grep -E "disagreement|ERROR|runtime error|SUMMARY" -A12 "$work/log" | head -n 60
    else
      note "fuzz $t" "passed: $execs executions in ${secs} s, $cov"
    fi
  done
fi

end_all=$(date +%s)
echo
echo "== gutf8 reliability summary =="
printf '%s\n' "${summary[@]}"
echo "total: $((end_all - start_all)) s; $([ $failed -eq 0 ] && echo ALL PASSED || echo FAILURES)"
exit $failed
