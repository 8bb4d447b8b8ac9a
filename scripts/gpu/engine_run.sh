#!/usr/bin/env bash
# The input engine on the GPU machine (issue 44), from the repository root with the static bundle
# of scripts/gpu/stage.sh in .device/, the simdutf peer and isutf8 in .probe/peers/ (built and
# copied here: `bash ../shared/peers/simdutf/build.sh .probe/peers; cp /usr/bin/isutf8 .probe/peers/`)
# and, for the Python parts, the CUDA wheel of scripts/gpu/stage_python.sh in .device-python/.
#   scripts/gpu/engine_run.sh tests   the engine's GPU tests and the Python GPU tests
#   scripts/gpu/engine_run.sh bench   bench/host_engine.py: gutf8 beside simdutf and isutf8
# Logs and CSV under $OUT; a short table printed last.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
b=${BUNDLE:-.device}
part=${1:-bench}
echo "bundle $(cat $b/COMMIT | tr '\n' ' '), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
if [[ -d .device-python ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .device-python/*.whl .whl/*.whl 2>/dev/null \
    && export PYTHONPATH=/tmp/site
fi
if [[ $part == tests ]]; then
  timeout 300 $b/tests/gutf8_gpu_tests --gtest_color=no --gtest_filter='EngineGpu.*:CudaBackend.*:CudaBlockProcessor.*' \
    > "$out/gpu_tests.log" 2>&1; echo "GPU tests (engine, backend): exit $?"
  grep -E "^\[  (PASSED|FAILED)|^\[  FAILED  \]" "$out/gpu_tests.log" | head -20
  if [[ -n ${PYTHONPATH:-} ]]; then
    timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/python/test_files.py tests/python/test_device.py \
      > "$out/pytest.log" 2>&1; echo "pytest files+device: exit $?"; tail -3 "$out/pytest.log"
  fi
  exit 0
fi
commit=$(cat $b/COMMIT | head -1)
PYTHONUNBUFFERED=1 timeout 560 python3 bench/host_engine.py --gutf8 $b/gutf8 --simdutf .probe/peers/simdutf_files \
  --isutf8 .probe/peers/isutf8 --work /tmp/he --out "$out/host_engine.csv" --cases "${CASES:-big,scaling,small,pipe,python}" \
  --sizes "${SIZES:-2G,16G}" --reps "${REPS:-5}" --cuda --commit "$commit" --machine "H200 host (16 vCPUs)" \
  2>&1 | tee "$out/host_engine.log"
