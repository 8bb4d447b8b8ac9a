#!/usr/bin/env bash
# The Python package's tests: a virtual environment, `pip install .[test]` (nanobind and
# scikit-build-core come from PyPI; the CUDA backend is built when nvcc is found), then pytest.
# GUTF8_PY_VENV picks the environment (default build-python/venv); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(realpath -m "${GUTF8_PY_VENV:-build-python/venv}")"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# build-dir keeps CMake's build between runs, so a second run rebuilds only what changed.
"$venv/bin/python" -m pip install -q ".[test]" -C build-dir=build-python/cmake
# pytest exits 5 when it collected nothing: set -e makes that a failure, as CI requires.
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests/python "$@"
