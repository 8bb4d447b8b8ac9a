#!/usr/bin/env bash
# Runs ON the GPU machine from the repository root: what one GPU file call costs in a warm
# process with the GPU lanes kept between calls (gutf8::gpu_lane_cache) and built every call.
#   scripts/gpu/file_calls.sh BUNDLE OUT_DIR [SIZES (default 64M,256M,1G)]
# BUNDLE holds bench/bench_file_pipeline (scripts/gpu/stage.sh's .device/); the Python part runs
# where `import gutf8` finds a CUDA build (PYTHONPATH, e.g. stage_python.sh's wheel installed
# with pip --target). Inputs go to a tmpfs (/dev/shm): page-cache pages, as a warm file is.
# Writes OUT_DIR/file_calls.md: bench_file_pipeline's rows (first run, then the median of 5 later
# runs in the same process, with and without --keep-lanes) and bench/python/bench_file_calls.py's.
set -euo pipefail
bundle=${1:?usage: file_calls.sh BUNDLE OUT_DIR [SIZES]}
out=${2:?usage: file_calls.sh BUNDLE OUT_DIR [SIZES]}
sizes=${3:-64M,256M,1G}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
work=$(mktemp -d /dev/shm/gutf8-calls.XXXXXX)
trap 'rm -rf "$work"' EXIT
{
  echo "## bench_file_pipeline (C++, one process: the first run, then the median of 5 later runs)"
  echo
  echo '```'
  echo "op,backend,settings,first_s,later_median_s,gb_per_s,gpu_share,gpu_startup_s"
  for size in ${sizes//,/ }; do
    f=$work/mixed-$size.txt
    python3 corpus/make_corpus.py tile --size "$size" --kind mixed "$f" > /dev/null
    for op in validate decode; do
      for keep in 0 1; do
        echo "# $size"
        "$bundle/bench/bench_file_pipeline" --file "$f" --op "$op" --backend cuda --reps 5 --keep-lanes "$keep"
      done
    done
    rm -f "$f"
  done
  echo '```'
  echo
} > "$out/file_calls.md"
python3 bench/python/bench_file_calls.py --sizes "$sizes" --reps 5 --workdir "$work" --out "$out/python.md"
cat "$out/python.md" >> "$out/file_calls.md"
cat "$out/file_calls.md"
