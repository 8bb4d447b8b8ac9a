#!/usr/bin/env bash
# Here: the Python wheels the GPU host's image lacks, for its Python 3.12 on x86-64, into .whl/
# (ignored; carry it by name). One set a call (a device call carries 64 MiB at most):
#   scripts/gpu/stage_wheels.sh [dask|duckdb|polars]      (default dask)
#   dask    dask, distributed and those of their needs the image does not hold, for gutf8.dask
#           (scripts/gpu/driver.py installs them with pip --no-index for its Python parts)
#   duckdb  duckdb (25 MB), for `scripts/gpu/driver.py OUT engines --engines duckdb`
#   polars  polars and polars-runtime-32 (55 MB), for `scripts/gpu/driver.py OUT engines --engines polars`
# The gutf8 wheel itself is scripts/gpu/stage_python.sh's (.device-python/).
set -euo pipefail
cd "$(dirname "$0")/../.."
case ${1:-dask} in
  # One version of each: dask-expr 1.1.21 is the one that pins dask 2024.12.1.
  dask) wheels=(dask==2024.12.1 distributed==2024.12.1 dask-expr==1.1.21 partd==1.4.2 locket==1.0.0
                tblib==3.2.2 zict==3.0.0 tornado==6.6.1) ;;
  duckdb) wheels=(duckdb==2.0.1) ;;
  polars) wheels=(polars==2.1.0 polars-runtime-32==2.1.0) ;;
  *) echo "usage: stage_wheels.sh [dask|duckdb|polars]" >&2; exit 2 ;;
esac
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 -d .whl "${wheels[@]}"
du -sh .whl
