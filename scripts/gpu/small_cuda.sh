#!/usr/bin/env bash
# Runs ON the GPU host from the repository root: small inputs in batches on the GPU lanes
# (src/engine/batches.hpp). Builds nothing: carry the bundle of
#   GUTF8_TARGETS="gutf8_cli gutf8_gpu_tests gutf8_cli_tests" scripts/gpu/stage.sh
# as .device/. Then:
#   scripts/gpu/small_cuda.sh OUT_DIR
# 1. the GPU tests of this path: the engine's GPU suite, the CLI's many-input tests (cuda against
#    cpu), and its validate, list and many-input suites with GUTF8_TEST_BACKEND=cuda;
# 2. `validate -l` over 2,000 and 20,000 files of 0.2-20 KB (bench/host_engine.py's seeded set,
#    1 % invalid) with --backend=cpu, --backend=cuda and isutf8 -l where installed: runs
#    interleaved, median of 5, wall clock from process start, files in the page cache; cpu and
#    cuda must name the same files with the same exit status.
# Writes OUT_DIR/small_cuda.md, tests_*.log, runs.log; prints the test verdicts, then the table.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: small_cuda.sh OUT_DIR}
mkdir -p "$out"
bin=$PWD/.device/gutf8  # absolute: the CLI tests run in scratch folders
commit=$(cat .device/COMMIT 2> /dev/null | tr '\n' ' ' || echo unknown)
reps=${GUTF8_SMALL_REPS:-5}
# GUTF8_SMALL_TESTS=0: only the timings (a call that ran the GPU suites already).
tests=${GUTF8_SMALL_TESTS:-1}

engine_rc=- cli_rc=- cuda_rc=-
if [[ $tests != 0 ]]; then
  timeout 200 .device/tests/gutf8_gpu_tests --gtest_filter='EngineGpu.*' > "$out/tests_engine_gpu.log" 2>&1
  engine_rc=$?
  GUTF8_BIN=$bin timeout 90 .device/tests/gutf8_cli_tests --gtest_filter='many.*' > "$out/tests_cli_many.log" 2>&1
  cli_rc=$?
  # The validate, list and many-input CLI suites with --backend=cuda added to every command.
  GUTF8_BIN=$bin GUTF8_TEST_BACKEND=cuda timeout 120 .device/tests/gutf8_cli_tests \
    --gtest_filter='many.*:list.*:validate.*' > "$out/tests_cli_cuda.log" 2>&1
  cuda_rc=$?
fi

work=$(mktemp -d /dev/shm/gutf8-small.XXXXXX)
trap 'rm -rf "$work"' EXIT
table=$out/small_cuda.md
{
  echo "# validate -l over small files: --backend=cuda beside --backend=cpu"
  echo
  echo "bundle $commit; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); host $(nproc) CPUs;"
  echo "files of 0.2-20 KB (bench/host_engine.py small_files, seed 7), page cache, median of $reps, seconds"
  echo
  echo "| files | MB | isutf8 -l | cpu | cuda | cuda / cpu | same names and status |"
  echo "|---:|---:|---:|---:|---:|---:|---|"
} > "$table"
for count in 2000 20000; do
  python3 -c "import sys; sys.path.insert(0, 'bench'); import host_engine as h; print('\n'.join(h.small_files('$work', $count)))" \
    > "$work/list-$count"
  mb=$(xargs -a "$work/list-$count" cat | wc -c | awk '{printf "%.1f", $1 / 1e6}')
  tools=(cpu cuda)
  command -v isutf8 > /dev/null && tools+=(isutf8)
  declare -A times=()
  for ((r = 0; r < reps; ++r)); do
    for tool in "${tools[@]}"; do
      case $tool in
        isutf8) cmd=(isutf8 -l) ;;
        *) cmd=("$bin" validate -l "--backend=$tool") ;;
      esac
      t0=$(date +%s.%N)
      timeout 30 xargs -s 1900000 -a "$work/list-$count" "${cmd[@]}" > "$work/out-$tool" 2>> "$out/runs.log"
      rc=$?
      t1=$(date +%s.%N)
      took=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')
      echo "$count $tool run $r: rc $rc, $took s" >> "$out/runs.log"
      times[$tool]+="$took "
      echo "$rc" > "$work/rc-$tool"
    done
  done
  median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {printf "%.3f", NR ? a[int((NR + 1) / 2)] : 0}'; }
  cpu=$(echo "${times[cpu]}" | median)
  cuda=$(echo "${times[cuda]}" | median)
  isu=$( [[ -n ${times[isutf8]:-} ]] && echo "${times[isutf8]}" | median || echo "-")
  same=no
  cmp -s "$work/out-cpu" "$work/out-cuda" && cmp -s "$work/rc-cpu" "$work/rc-cuda" && same=yes
  ratio=$(awk -v a="$cuda" -v b="$cpu" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
  echo "| $count | $mb | $isu | $cpu | $cuda | $ratio | $same ($(wc -l < "$work/out-cpu") named) |" >> "$table"
  unset times
done
echo
[[ $tests != 0 ]] && echo "== engine GPU tests (rc $engine_rc): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests_engine_gpu.log" | tr '\n' ' ')"
[[ $tests != 0 ]] && echo "== CLI many-input tests (rc $cli_rc): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests_cli_many.log" | tr '\n' ' ')"
[[ $tests != 0 ]] && echo "== CLI validate, list, many under GUTF8_TEST_BACKEND=cuda (rc $cuda_rc): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests_cli_cuda.log" | tr '\n' ' ')"
cat "$table"
