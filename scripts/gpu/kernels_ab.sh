#!/usr/bin/env bash
# The checks of a kernel change, run ON the GPU machine from the repository root in one session:
#   scripts/gpu/kernels_ab.sh OUT BASE_BUNDLE [ROUNDS]
# 1. GPU and primitive tests of the bundle in .device (logs OUT/gpu_tests.log, OUT/prim_tests.log),
# 2. compute-sanitizer memcheck of the codec's and the primitives' sanitizer-sized tests,
# 3. codec A/B: BASE_BUNDLE/bench/bench_codec against .device/bench/bench_codec, ROUNDS rounds
#    (GUTF8_AB_ARGS: more bench_codec arguments, e.g. --ops encode_compact,encode_fused)
#    interleaved (abn.sh; OUT/codec_ab.txt), and the same for bench_prim's scan and select at 2^28
#    (OUT/prim_ab.txt; the byte compaction also at a size that is no power of two). Each part is
#    bounded; a summary is printed last.
set -uo pipefail
out=${1:?usage: kernels_ab.sh OUT BASE_BUNDLE [ROUNDS]}
base=${2:?usage: kernels_ab.sh OUT BASE_BUNDLE [ROUNDS]}
rounds=${3:-2}
mkdir -p "$out"
cd "$(dirname "$0")/../.." || exit 1
step() { local name=$1 limit=$2; shift 2; local t=$SECONDS; timeout "$limit" "$@"; echo "$name: exit $? in $((SECONDS - t)) s" | tee -a "$out/steps.txt"; }

step gpu_tests 200 sh -c ".device/tests/gutf8_gpu_tests --gtest_brief=1 > '$out/gpu_tests.log' 2>&1"
step prim_tests 150 sh -c ".device/tests/gutf8_prim_tests --gtest_brief=1 > '$out/prim_tests.log' 2>&1"
step memcheck 150 sh -c "compute-sanitizer --tool memcheck --error-exitcode 9 .device/tests/gutf8_gpu_tests --gtest_brief=1 --gtest_filter='GpuSanitizerSweep*' > '$out/memcheck_codec.log' 2>&1 && compute-sanitizer --tool memcheck --error-exitcode 9 .device/tests/gutf8_prim_tests --gtest_brief=1 --gtest_filter='PrimSanitizerSweep*:PrimBuildingBlocks.Flagged*' > '$out/memcheck_prim.log' 2>&1"
step codec_ab "${GUTF8_AB_LIMIT:-330}" sh -c "bash scripts/gpu/abn.sh '$out/codec' $rounds '$base/bench/bench_codec' .device/bench/bench_codec -- --runs ${GUTF8_AB_RUNS:-9} --budget 120 ${GUTF8_AB_ARGS:-} > '$out/codec_ab.txt' 2>&1"
prim_ab() {
  for ((r = 1; r <= rounds; ++r)); do
    for b in "$base" .device; do
      "$b/bench/bench_prim" --out "$out/prim-$(basename "$b")-r$r" --min-log2 28 --max-log2 28 --only scan,select \
        --no-cpu --no-thrust --runs 15 > "$out/prim-$(basename "$b")-r$r.log" 2>&1
    done
  done
}
export -f prim_ab; export out rounds base
step prim_ab 120 bash -c prim_ab
# GUTF8_NCU="kernel-regex:op:input ..." profiles those kernels (one launch each) where ncu reads counters.
for spec in ${GUTF8_NCU:-}; do
  IFS=: read -r kernel op input <<<"$spec"
  step "ncu_${op}_${input}" 90 sh -c "ncu --clock-control none -k 'regex:$kernel' -s 3 -c 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis .device/bench/bench_codec --ops $op --inputs $input --size 64 --runs 1 \
    --quick --out '$out/ncu-scratch' > '$out/ncu_${op}_$input.txt' 2>&1"
done

echo "=== steps"; cat "$out/steps.txt"
echo "=== gpu tests"; grep -E "FAILED|PASSED|tests? ran" "$out/gpu_tests.log" | tail -n 12
echo "=== prim tests"; grep -E "FAILED|PASSED|tests? ran" "$out/prim_tests.log" | tail -n 12
echo "=== memcheck"; tail -n 3 "$out/memcheck_codec.log" "$out/memcheck_prim.log" 2>/dev/null
for f in "$out"/ncu_*.txt; do [[ -f $f ]] && { echo "=== $(basename "$f")"; grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Issue Slots|No Eligible|Warp Cycles Per Issued|Stall|Eligible Warps" "$f" | head -n 40; }; done
echo "=== codec A/B (base, new: per-round GB/s, mean, ratio)"; cat "$out/codec_ab.txt"
echo "=== prim A/B at 2^28 (bench_prim, each round: base then new)"
grep -HE "2\^28|u8_unpad" "$out"/prim-*.log | sed "s|$out/||"
# Everything in one file, for callers that can fetch only a few files back.
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
