#!/usr/bin/env bash
# Configures and builds gutf8 into build/ (CUDA backend on when nvcc is found; Release unless
# -DCMAKE_BUILD_TYPE says otherwise).
# Extra arguments go to cmake, e.g. -DGUTF8_STATIC=ON or -DGUTF8_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B "${GUTF8_BUILD_DIR:-build}" "$@" >/dev/null
# GUTF8_TARGETS (optional) limits the build to those targets.
cmake --build "${GUTF8_BUILD_DIR:-build}" -j "$(nproc)" ${GUTF8_TARGETS:+--target $GUTF8_TARGETS}
