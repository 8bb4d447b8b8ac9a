#!/usr/bin/env bash
# Nsight Compute profile of one codec kernel, run ON the GPU machine from the repository root:
#   scripts/gpu/profile.sh BUILD_DIR OUT_DIR NAME OP INPUT KERNEL_REGEX
# runs bench_codec on a 64 MiB tile of INPUT with only OP and profiles one launch of the kernel
# whose name matches KERNEL_REGEX: OUT_DIR/NAME.ncu-rep, the speed-of-light / warp-state /
# instruction-mix details (NAME.txt) and the per-SASS-instruction counts (NAME_sass.csv; columns
# include the address, the instruction and "Warp Instructions Executed"). Clocks are left alone.
set -uo pipefail
build=$1 out=$2 name=$3 op=$4 input=$5 kernel=$6
mkdir -p "$out"
ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
  --section SourceCounters --section MemoryWorkloadAnalysis -f -o "$out/$name" \
  "$build/bench/bench_codec" --size 64 --runs 10 --ops "$op" --inputs "$input" --out "$out/tmp_$name" \
  >"$out/${name}_run.log" 2>&1
ncu -i "$out/$name.ncu-rep" --page details >"$out/$name.txt" 2>&1
ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/${name}_sass.csv" 2>"$out/${name}_sass.err"
rm -rf "$out/tmp_$name"
