#!/usr/bin/env bash
# Builds a self-contained sm_90 bundle in .device/ (static cudart, libstdc++, Boost, GTest;
# Google Benchmark's .so carried beside the binaries with an $ORIGIN rpath) for the GPU host,
# which has nothing installed but a driver and the CUDA toolkit.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build-device
GUTF8_BUILD_DIR=$build bash scripts/build.sh -DGUTF8_STATIC=ON -DGUTF8_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
rm -rf .device && mkdir -p .device/tests .device/bench
cp $build/gutf8 .device/
find $build/tests -maxdepth 1 -type f -executable -exec cp {} .device/tests/ \;
find $build/bench -maxdepth 1 -type f -executable -exec cp {} .device/bench/ \;
cp -L "$(ldconfig -p | awk '/libbenchmark.so.1/{print $NF; exit}')" .device/bench/
strip --strip-unneeded .device/gutf8 .device/tests/* .device/bench/bench_* 2>/dev/null || true
git rev-parse --short HEAD > .device/COMMIT
git diff --quiet HEAD || echo "+uncommitted" >> .device/COMMIT
du -sh .device
