#!/usr/bin/env bash
# Runs ON the GPU host from the repo root, with the bundle from stage.sh carried as .device/:
# device facts, the primitives' tests and benchmark, the codec's tests and benchmark, and the
# CLI suite on the CUDA backend. Logs and results go under OUT_DIR; a summary is printed last.
#   scripts/gpu/run_all.sh OUT_DIR [prim|codec|cli|cpu ...]   (default: prim codec cli)
# GUTF8_SKIP=tests|bench is passed on to prim and codec to run only one half.
set -uo pipefail
out=${1:?usage: run_all.sh OUT_DIR [prim|codec|cli ...]}
shift
parts=("$@")
((${#parts[@]})) || parts=(prim codec cli)
mkdir -p "$out"
export GUTF8_COMMIT=$(tr '\n' ' ' < .device/COMMIT | sed 's/ $//; s/ /+/')
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
  --format=csv > "$out/device.txt" 2>&1
echo "commit: $GUTF8_COMMIT" >> "$out/device.txt"
status=0
summary=()
for part in "${parts[@]}"; do
  start=$SECONDS
  case $part in
    prim) bash scripts/gpu/prim.sh .device "$out" > "$out/prim.console" 2>&1 ;;
    codec) bash scripts/gpu/codec.sh .device "$out" > "$out/codec.console" 2>&1 ;;
    cpu) timeout 200 .device/tests/gutf8_cpu_tests --gtest_brief=1 > "$out/cpu_host.log" 2>&1 ;;
    cli) GUTF8_BIN=$PWD/.device/gutf8 GUTF8_TEST_BACKEND=cuda timeout 300 \
           .device/tests/gutf8_cli_tests --gtest_brief=1 > "$out/cli_cuda.log" 2>&1 ;;
    *) echo "unknown part $part"; false ;;
  esac
  rc=$?
  ((rc == 0)) || status=1
  summary+=("$part: rc=$rc in $((SECONDS - start)) s")
done
for part in "${parts[@]}"; do
  [[ -f $out/$part.console ]] && { echo "=== $part"; tail -n 25 "$out/$part.console"; }
done
for log in cli_cuda cpu_host; do
  [[ -f $out/$log.log ]] && { echo "=== $log"; tail -n 8 "$out/$log.log"; }
done
cat "$out/device.txt"
printf '%s\n' "${summary[@]}"
exit $status
