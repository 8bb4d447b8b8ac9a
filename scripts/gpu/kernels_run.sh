#!/usr/bin/env bash
# One device call for the kernels' work (issue 45), run ON the GPU machine from the repository
# root with the static sm_90 bundle in .device/ (built here by
#   GUTF8_TARGETS="gutf8_gpu_tests bench_codec bench_prim gutf8_gpu_fuzz" bash scripts/gpu/stage.sh
# ); builds nothing. Every step has a timeout and the whole call ends by GUTF8_DEADLINE seconds
# (default 450):
#   1. the GPU tests of the kernels (the codec suites; host-only suites ran where the bundle was
#      built), timeout 150 s;
#   2. compute-sanitizer memcheck on the validate / decode / UTF-16 tests and the sanitizer sweep,
#      racecheck on the sweep (every kernel on a few shapes);
#   3. the GPU-vs-CPU differential fuzz, 30 s;
#   4. bench_codec, three rounds (256 MiB a case, the device-resident ops; every validate shape
#      and the former walk side by side), and with GUTF8_PRIM=1 bench_prim;
#   5. ncu (--clock-control none) on each validate shape over 64 MiB of CJK text, valid and at
#      1 %: warp instructions per KiB, issue, pipes, occupancy and the stall reasons;
#   6. the rest of the GPU tests with the time left;
#   7. a summary table, printed last: per op x input the median of the rounds, GB/s and % of
#      roofline (validate: of the read kernel's rate), issue 45's target, and for validate the
#      ratio to the former walk (no input may lose more than 1 %).
# Everything lands under $OUT (or $1): summary.txt, codec_r{1,2,3}.csv, ncu.csv and logs.tgz.
set -uo pipefail
out=${1:-${OUT:-out}}
mkdir -p "$out/logs"
b=.device
commit=$(cat $b/COMMIT 2>/dev/null | tr '\n' ' ' || echo unknown)
deadline=${GUTF8_DEADLINE:-450}
t0=$SECONDS
step() { echo "== $1 (t=$((SECONDS - t0)) s)"; }
left() { local l=$((deadline - (SECONDS - t0))); echo $((l < 1 ? 1 : l)); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : l)); }  # a step's timeout within the deadline
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv >"$out/logs/gpu.txt" 2>&1

kernels='GpuRandom.*:GpuExhaustive.*:GpuChunks.*:GpuUtf16.*:GpuSanitizerSweep.*:GpuLaunchGrid.*:GpuLarge.*'
step "GPU tests (kernels)"
timeout "$(cap 150)" $b/tests/gutf8_gpu_tests --gtest_color=no --gtest_filter="$kernels" \
  >"$out/logs/gpu_tests_kernels.log" 2>&1
tests_rc=$?
tests_line=$(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+ test' "$out/logs/gpu_tests_kernels.log" | tr '\n' ' ')
grep -E '^\[  FAILED  \]' "$out/logs/gpu_tests_kernels.log" | head -10

step "compute-sanitizer"
san=""
for tool in memcheck racecheck; do
  f='GpuSanitizerSweep.*:GpuRandom.EverySizeUpTo300:GpuRandom.ValidateAtEveryAlignment:GpuUtf16.EverySizeUpTo300AndAroundTiles'
  lim=100
  [[ $tool == racecheck ]] && f='GpuSanitizerSweep.*' && lim=90
  timeout "$(cap $lim)" "$cs" --tool $tool --error-exitcode 9 $b/tests/gutf8_gpu_tests --gtest_color=no \
    --gtest_filter="$f" >"$out/logs/$tool.log" 2>&1
  rc=$?
  san+="$tool: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/logs/$tool.log" | tail -1), "
  san+="$(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+ test' "$out/logs/$tool.log" | tr '\n' ' '); "
done
echo "$san"

step "differential fuzz"
timeout "$(cap 30)" $b/tests/gutf8_gpu_fuzz --iterations 100000 --seed "$(date +%s)" --max-size 3000000 \
  >"$out/logs/fuzz.log" 2>&1
fuzz_rc=$?
[[ $fuzz_rc == 124 ]] && fuzz_rc="0 (stopped at its time limit)"
fuzz_line=$(tail -2 "$out/logs/fuzz.log" | tr '\n' ' ')

step "bench_codec, 3 rounds"
ops=validate,validate_planes,validate_s1b3,validate_s1b4,validate_s2b2,validate_unaligned,decode_fused
ops+=,decode_fused_replace,decode_fused_drop,decode_utf16_replace,decode_utf16be_replace
ops+=,decode_utf16_three_pass_replace,sanitize_replace,sanitize_drop,encode_fused
bench_rc=""
for round in 1 2 3; do
  timeout "$(cap 80)" $b/bench/bench_codec --out "$out/logs/r$round" --commit "$commit" --runs 10 --budget 70 \
    --ops $ops >"$out/logs/bench_codec_r$round.log" 2>&1
  bench_rc+="$? "
  cp "$out/logs/r$round/codec.csv" "$out/codec_r$round.csv" 2>/dev/null
done
grep -h WARNING "$out"/logs/bench_codec_r*.log | sort | uniq -c | head -5

prim_rc="not run (GUTF8_PRIM=1 runs it)"
if [[ ${GUTF8_PRIM:-0} == 1 ]]; then
  step "bench_prim"
  timeout "$(cap 60)" $b/bench/bench_prim --out "$out/logs/prim" --commit "$commit" --min-log2 20 --max-log2 28 \
    --only scan,sort --runs 9 --no-cpu >"$out/logs/bench_prim.log" 2>&1
  prim_rc=$?
  cp "$out/logs/prim/prim.md" "$out/prim.md" 2>/dev/null
fi

step "ncu"
# Per shape, one bench run of 64 MiB CJK (valid, then 1 %; 3 warm-ups and 10 timed runs each):
# launches 4 .. 17 profiled, the first (valid) and the last (1 %) reported; the default shape
# (validate: 2 blocks a lane, 3 an SM) also on the ASCII sample. The former walk too.
declare -A kname=([validate]=validate_screen_kernelILb1ELj2ELi3E [validate_s1b3]=validate_screen_kernelILb1ELj1ELi3E
  [validate_s1b4]=validate_screen_kernelILb1ELj1ELi4E [validate_s2b2]=validate_screen_kernelILb1ELj2ELi2E
  [validate_planes]=validate_kernelILb1ELb0E)
for run in validate:cjk validate_s1b3:cjk validate_s1b4:cjk validate_s2b2:cjk validate_planes:cjk validate:ascii; do
  op=${run%%:*} kind=${run##*:}
  [[ $(left) -lt 50 ]] && break
  timeout "$(cap 40)" "$ncu" --clock-control none --kernel-name-base mangled --kernel-name "regex:${kname[$op]}" \
    --launch-skip 3 --launch-count 14 --csv --page raw \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active \
    $b/bench/bench_codec --size 64 --runs 10 --quick --inputs "$kind" --ops "$op" \
    --out "$out/logs/ncu_bench" >"$out/logs/ncu_${op}_$kind.csv" 2>"$out/logs/ncu_${op}_$kind.err"
done
python3 - "$out" <<'EOF' >"$out/ncu.csv"
import csv, glob, io, os, re, sys
out = sys.argv[1]
stalls = ["long_scoreboard", "short_scoreboard", "math_pipe_throttle", "wait", "not_selected", "selected",
          "no_instruction", "mio_throttle", "lg_throttle", "branch_resolving", "dispatch_stall", "barrier",
          "drain", "membar", "misc", "sleeping", "tex_throttle", "imc_miss"]
print("op,input,invalid,warp_inst_per_KiB,us,dram_read_MiB,ipc,alu_pct,fma_pct,warps_active_pct,registers," +
      ",".join("stall_" + s for s in stalls))
def launches():
  for p in sorted(glob.glob(os.path.join(out, "logs", "ncu_*.csv"))):
    m = re.match(r"ncu_(.+)_(cjk|ascii)\.csv", os.path.basename(p))
    lines = [l for l in open(p, errors="replace") if l.startswith('"')]
    if not m or len(lines) < 3: continue
    rows = list(csv.DictReader(io.StringIO("".join([lines[0]] + lines[2:]))))
    yield m, "0", rows[0]
    if len(rows) >= 14: yield m, "1%", rows[13]
for m, rate, r in launches():
    def num(key):
        v = r.get(key, "").replace(",", "")
        try: return float(v)
        except ValueError: return float("nan")
    def stall(s):  # warps stalled for this reason per issued instruction (any such column else)
        keys = [k for k in r if "issue_stalled_" + s + "_" in k and "not_issued" not in k]
        keys.sort(key=lambda k: ("per_issue_active" not in k, k))
        return num(keys[0]) if keys else float("nan")
    kib = 64 * 1024
    print(f"{m.group(1)},{m.group(2)},{rate},"
          f"{num('smsp__inst_executed.sum') / kib:.1f},{num('gpu__time_duration.sum') / 1e3:.1f},"
          f"{num('dram__bytes_read.sum') / 2**20:.1f},{num('sm__inst_executed.avg.per_cycle_active'):.2f},"
          f"{num('sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active'):.1f},"
          f"{num('sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active'):.1f},"
          f"{num('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f},{num('launch__registers_per_thread'):.0f}," +
          ",".join(f"{stall(s):.2f}" for s in stalls))
EOF
cat "$out/ncu.csv"

full_rc="not run (no time left)"
if [[ $(left) -gt 30 ]]; then
  step "GPU tests (the others, $(left) s left)"
  timeout "$(left)" $b/tests/gutf8_gpu_tests --gtest_color=no --gtest_filter="*-$kernels:*Host*" \
    >"$out/logs/gpu_tests_rest.log" 2>&1
  full_rc="exit $?; $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+ test' "$out/logs/gpu_tests_rest.log" | tr '\n' ' ')"
  [[ $full_rc == "exit 124;"* ]] && full_rc+="(stopped in $(grep '^\[ RUN' "$out/logs/gpu_tests_rest.log" | tail -1))"
  grep -E '^\[  FAILED  \]' "$out/logs/gpu_tests_rest.log" | head -10
fi

tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"

{
  echo "== summary: bundle $commit, $((SECONDS - t0)) s"
  echo "GPU tests (kernels): exit $tests_rc; $tests_line"
  echo "GPU tests (the others): $full_rc"
  echo "sanitizers: $san"
  echo "fuzz: exit $fuzz_rc; $fuzz_line"
  echo "bench_codec exits: $bench_rc, bench_prim exit $prim_rc"
  echo "ncu (64 MiB CJK; stalls: warps stalled for the reason per issued instruction):"
  cut -d, -f1-19 "$out/ncu.csv" | sed 's/stall_//g; s/_scoreboard/_sb/g; s/warp_inst_per_KiB/inst_KiB/' | column -t -s,
  python3 - "$out" <<'EOF'
import csv, glob, os, statistics, sys
out = sys.argv[1]
rounds = [list(csv.DictReader(open(p))) for p in sorted(glob.glob(os.path.join(out, "codec_r*.csv")))]
rounds = [r for r in rounds if r]
if not rounds:
    print("no codec csv"); sys.exit(0)
print(f"{len(rounds)} rounds; copy {', '.join(r[0]['copy_gbps'] for r in rounds)} GB/s, "
      f"read {', '.join(r[0].get('read_gbps', '?') for r in rounds)} GB/s")
rows = {}
for rnd in rounds:
    for r in rnd:
        rows.setdefault((r["op"], r["input"], float(r["invalid_pct"])), []).append((float(r["gbps"]), float(r["fraction"])))
# issue 45's targets: (valid, with errors) fraction of the roofline; ascii-heavy validate 0.90
target = {"validate": (0.80, 0.70), "validate_unaligned": (0.80, 0.70), "decode_fused": (0.80, None),
          "decode_fused_replace": (0.80, 0.70), "decode_fused_drop": (0.80, 0.70),
          "decode_utf16_replace": (0.70, None), "decode_utf16be_replace": (0.70, None), "sanitize_replace": (0.85, 0.65),
          "sanitize_drop": (0.85, 0.65), "encode_fused": (0.80, 0.80)}
inputs = ["ascii", "cjk", "emoji", "mixed", "cjk_dense", "emoji_only"]
ops = list(dict.fromkeys(k[0] for k in rows))
rates = sorted({k[2] for k in rows})
def med(op, inp, inv, i):
    v = rows.get((op, inp, inv))
    return statistics.median(x[i] for x in v) if v else None
def goal(op, inp, inv):
    t = target.get(op)
    if not t: return None
    g = t[0] if inv == 0 else (t[1] if inv >= 1.0 else None)
    return 0.90 if g is not None and op.startswith("validate") and inp == "ascii" and inv == 0 else g
head = " ".join(f"{i:>10}" for i in inputs)
print(f"\n% of roofline (validate: of the read kernel), median of the rounds; * = issue 45's target met")
print(f"{'op':32} {'inv%':>4} {head}")
for op in ops:
    for inv in rates:
        cells = []
        for inp in inputs:
            f = med(op, inp, inv, 1)
            g = goal(op, inp, inv)
            cells.append(f"{'':>10}" if f is None else f"{f:9.0%}{'*' if g is not None and f >= g else ' '}")
        if any(c.strip() for c in cells): print(f"{op:32} {inv:4.1f} {' '.join(cells)}")
print(f"\nvalidate GB/s, and / the former walk (validate_planes) in the same rounds")
print(f"{'op':32} {'inv%':>4} {head}")
for op in [o for o in ops if o.startswith("validate")]:
    for inv in rates:
        cells = []
        for inp in inputs:
            gb, ref = med(op, inp, inv, 0), med("validate_planes", inp, inv, 0)
            cells.append(f"{'':>10}" if gb is None else (f"{gb:5.0f} {gb / ref:4.2f}" if ref else f"{gb:10.0f}"))
        if any(c.strip() for c in cells): print(f"{op:32} {inv:4.1f} {' '.join(cells)}")
EOF
} | tee "$out/summary.txt"
