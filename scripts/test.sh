#!/usr/bin/env bash
# Quick start 2: set up, build and run the whole test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir "${GUTF8_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
# The Python package (a virtual environment, pip install .[test], pytest).
bash scripts/test_python.sh
