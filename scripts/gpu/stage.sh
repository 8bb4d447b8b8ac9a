#!/usr/bin/env bash
# Builds a self-contained sm_90 bundle (static cudart, libstdc++, Boost, GTest; Google
# Benchmark's .so carried beside the binaries with an $ORIGIN rpath; nvCOMP's in lib/ where the build
# found it) for the GPU host, which has nothing installed but a driver and the CUDA toolkit.
#   GUTF8_BUILD_DIR   build folder   (default build-device)
#   GUTF8_BUNDLE      bundle folder  (default .device; must match /.device*/ in .gitignore)
#   GUTF8_TARGETS     targets to build (default: all)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${GUTF8_BUILD_DIR:-build-device}
bundle=${GUTF8_BUNDLE:-.device}
GUTF8_BUILD_DIR=$build bash scripts/build.sh -DGUTF8_STATIC=ON -DGUTF8_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
rm -rf "$bundle" && mkdir -p "$bundle/tests" "$bundle/bench"
# The CLI only when this build made it (its target is gutf8_cli; "gutf8" is the library): a binary left
# from an earlier build would travel under this commit's name.
targets=" ${GUTF8_TARGETS:-all} "
if [[ -x $build/gutf8 && ( $targets == " all " || $targets == *" gutf8_cli "* ) ]]; then cp $build/gutf8 "$bundle/"; fi
find $build/tests -maxdepth 1 -type f -executable -exec cp {} "$bundle/tests/" \;
find $build/bench -maxdepth 1 -type f -executable -exec cp {} "$bundle/bench/" \;
cp -L "$(ldconfig -p | awk '/libbenchmark.so.1/{print $NF; exit}')" "$bundle/bench/"
# nvCOMP's shared library (GUTF8_NVCOMP builds copy it to <build>/lib): its users find it through an
# $ORIGIN/../lib rpath.
if [[ -d $build/lib ]]; then
  mkdir -p "$bundle/lib" && cp -L "$build"/lib/* "$bundle/lib/"
fi
strip --strip-unneeded "$bundle"/gutf8 "$bundle"/tests/* "$bundle"/bench/bench_* 2>/dev/null || true
git rev-parse --short HEAD > "$bundle/COMMIT"
git diff --quiet HEAD || echo "+uncommitted" >> "$bundle/COMMIT"
du -sh "$bundle"
