#!/usr/bin/env bash
# Here: the Python wheels the GPU host's image lacks for gutf8.dask (dask, distributed and those of
# their needs the image does not hold), for its Python 3.12 on x86-64, into .whl/ (ignored; carry
# it by name). scripts/gpu/driver.py installs them with pip --no-index for its Python parts.
set -euo pipefail
cd "$(dirname "$0")/../.."
# One version of each: dask-expr 1.1.21 is the one that pins dask 2024.12.1.
wheels=(dask==2024.12.1 distributed==2024.12.1 dask-expr==1.1.21 partd==1.4.2 locket==1.0.0
        tblib==3.2.2 zict==3.0.0 tornado==6.6.1)
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 -d .whl "${wheels[@]}"
du -sh .whl
