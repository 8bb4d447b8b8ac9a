#!/usr/bin/env bash
# Builds the Python package as a CUDA (sm_90) wheel for the GPU host's Python, which has numpy,
# CuPy, pandas and pytest but neither network nor CMake: here, a wheel for that Python's version
# with cudart and the C++ runtime linked statically, in .device-python/.
#   GUTF8_PYTHON_EXE  the Python to build for (default: pyenv's 3.12, else python3.12)
set -euo pipefail
cd "$(dirname "$0")/../.."
# (pyenv's shims answer `command -v` even where they cannot run, so its interpreters come first)
py=${GUTF8_PYTHON_EXE:-$(ls -d "$HOME"/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1)}
py=${py:-python3.12}
venv=build-python-stage/venv
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy
rm -rf .device-python && mkdir -p .device-python
"$venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps -w .device-python . \
  -C build-dir=build-python-stage/cmake -C cmake.define.GUTF8_CUDA=ON -C cmake.define.GUTF8_STATIC=ON \
  -C cmake.define.GUTF8_STATIC_COMPRESSION=OFF -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90
# A shared module cannot take Debian's non-PIC compression archives: their shared libraries travel in
# .device-python/lib/ (the driver puts it on LD_LIBRARY_PATH).
mkdir -p .device-python/lib
rm -rf build-python-stage/unpacked && unzip -q -d build-python-stage/unpacked .device-python/*.whl
ldd build-python-stage/unpacked/gutf8/_gutf8*.so | awk '/lib(z|zstd|lzma|bz2|lz4|deflate|xxhash)\.so/{print $3}' |
  xargs -r cp -L -t .device-python/lib/
git rev-parse --short HEAD > .device-python/COMMIT
ls -l .device-python
