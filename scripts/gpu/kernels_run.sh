#!/usr/bin/env bash
# One device call for the kernels' work (issue 45), run ON the GPU machine from the repository
# root with the static sm_90 bundle in .device/ (built here by
#   GUTF8_TARGETS="gutf8_gpu_tests bench_codec bench_prim gutf8_gpu_fuzz" bash scripts/gpu/stage.sh
# ); builds nothing. At most 9 minutes (every step has a timeout), about 6 in practice:
#   1. the GPU tests (timeout 150 s);
#   2. compute-sanitizer memcheck and racecheck on the tests that run the validate kernels and
#      the sanitizer sweep (every kernel on a few shapes);
#   3. the GPU-vs-CPU differential fuzz, 30 s;
#   4. ncu (--clock-control none) on validate (screen and former walk) over 64 MiB of CJK and
#      ASCII text: warp instructions per KiB, DRAM bytes, pipe use;
#   5. bench_codec (256 MiB a case, the device-resident ops, bounded), and with GUTF8_PRIM=1
#      bench_prim (scan and sort from 2^20, bounded);
#   6. a summary table, printed last: op x input, GB/s, % of roofline (validate: of the read
#      kernel's rate), and whether issue 45's target is met.
# Everything lands under $OUT (or $1): summary.txt, codec.csv, codec.md, prim.md, ncu.csv and
# logs.tgz (every log).
set -uo pipefail
out=${1:-${OUT:-out}}
mkdir -p "$out/logs"
b=.device
commit=$(cat $b/COMMIT 2>/dev/null | tr '\n' ' ' || echo unknown)
t0=$SECONDS
step() { echo "== $1 (t=$((SECONDS - t0)) s)"; }
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv >"$out/logs/gpu.txt" 2>&1

step "GPU tests"
timeout 150 $b/tests/gutf8_gpu_tests --gtest_color=no >"$out/logs/gpu_tests.log" 2>&1
tests_rc=$?
tests_line=$(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]+ test' "$out/logs/gpu_tests.log" | tr '\n' ' ')
grep -E '^\[  FAILED  \]' "$out/logs/gpu_tests.log" | head -10

step "compute-sanitizer"
san_filter='GpuSanitizerSweep.*:GpuRandom.EverySizeUpTo300:GpuRandom.ValidateAtEveryAlignment:GpuRandom.TileBoundaries'
san=""
for tool in memcheck racecheck; do
  f=$san_filter
  [[ $tool == racecheck ]] && f='GpuSanitizerSweep.*:GpuRandom.EverySizeUpTo300'
  lim=80; [[ $tool == racecheck ]] && lim=50
  timeout $lim "$cs" --tool $tool --error-exitcode 9 $b/tests/gutf8_gpu_tests --gtest_color=no \
    --gtest_filter="$f" >"$out/logs/$tool.log" 2>&1
  rc=$?
  san+="$tool: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/logs/$tool.log" | tail -1); "
done
echo "$san"

step "differential fuzz"
timeout 30 $b/tests/gutf8_gpu_fuzz --iterations 100000 --seed "$(date +%s)" --max-size 3000000 \
  >"$out/logs/fuzz.log" 2>&1
fuzz_rc=$?
[[ $fuzz_rc == 124 ]] && fuzz_rc="0 (stopped at 30 s)"
fuzz_line=$(tail -2 "$out/logs/fuzz.log" | tr '\n' ' ')

step "ncu"
for kind in cjk ascii; do
  # Not sanitize's copying pass (validate_kernel<true, true>): 13 launches each of the two walks.
  timeout 40 "$ncu" --clock-control none --kernel-name-base demangled \
    --kernel-name regex:'validate_screen_kernel|validate_kernel<(true|false), false>' \
    --launch-skip 0 --launch-count 26 --csv --page raw \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,gpu__time_duration.sum,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active \
    $b/bench/bench_codec --size 64 --runs 10 --quick --inputs $kind --ops validate,validate_planes \
    --out "$out/logs/ncu_bench_$kind" >"$out/logs/ncu_$kind.csv" 2>"$out/logs/ncu_$kind.err"
done
python3 - "$out" <<'EOF' >"$out/ncu.csv"
import csv, sys, io, os
out = sys.argv[1]
print("input,kernel,launches,warp_inst_per_KiB,dram_read_MiB,us,alu_pct,fma_pct,ipc,warps_active_pct")
for kind in ("cjk", "ascii"):
    p = os.path.join(out, "logs", f"ncu_{kind}.csv")
    if not os.path.exists(p): continue
    lines = [l for l in open(p, errors="replace") if l.startswith('"')]
    if len(lines) < 3: continue
    rows = list(csv.DictReader(io.StringIO("".join([lines[0]] + lines[2:]))))
    groups = {}
    for r in rows:
        name = r.get("Kernel Name", "?")
        groups.setdefault(name.split("(")[0], []).append(r)
    for name, rs in groups.items():
        def med(key):
            v = sorted(float(r[key].replace(",", "")) for r in rs if r.get(key, "").replace(",", "").replace(".", "").isdigit())
            return v[len(v) // 2] if v else float("nan")
        kib = 64 * 1024
        print(f"{kind},{name.replace(',', ';')},{len(rs)},{med('smsp__inst_executed.sum') / kib:.1f},"
              f"{med('dram__bytes_read.sum') / 2**20:.1f},{med('gpu__time_duration.sum') / 1e3:.1f},"
              f"{med('sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active'):.1f},"
              f"{med('sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active'):.1f},"
              f"{med('sm__inst_executed.avg.per_cycle_active'):.2f},"
              f"{med('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}")
EOF
cat "$out/ncu.csv"

step "bench_codec"
ops=validate,validate_planes,validate_unaligned,decode_fused,decode_fused_replace,decode_fused_drop,decode_utf16_replace,sanitize_replace,sanitize_drop,encode_fused
timeout 150 $b/bench/bench_codec --out "$out" --commit "$commit" --runs 10 --budget 100 --ops $ops \
  >"$out/logs/bench_codec.log" 2>&1
bench_rc=$?
head -3 "$out/logs/bench_codec.log"

prim_rc="not run (GUTF8_PRIM=1 runs it)"
if [[ ${GUTF8_PRIM:-0} == 1 ]]; then
  step "bench_prim"
  timeout 60 $b/bench/bench_prim --out "$out/logs/prim" --commit "$commit" --min-log2 20 --max-log2 28 \
    --only scan,sort --runs 9 --no-cpu >"$out/logs/bench_prim.log" 2>&1
  prim_rc=$?
  cp "$out/logs/prim/prim.md" "$out/prim.md" 2>/dev/null
fi

tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"

{
  echo "== summary: bundle $commit, $((SECONDS - t0)) s"
  echo "GPU tests: exit $tests_rc; $tests_line"
  echo "sanitizers: $san"
  echo "fuzz: exit $fuzz_rc; $fuzz_line"
  echo "bench_codec exit $bench_rc, bench_prim exit $prim_rc"
  echo "ncu (64 MiB, warp instructions per KiB):"
  column -t -s, "$out/ncu.csv" 2>/dev/null || cat "$out/ncu.csv"
  python3 - "$out/codec.csv" <<'EOF'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1])))
except OSError:
    print("no codec.csv"); sys.exit(0)
if rows:
    print(f"copy {rows[0]['copy_gbps']} GB/s, read {rows[0].get('read_gbps', '?')} GB/s")
# issue 45's targets: (valid, with errors) fraction of the roofline; ascii-heavy validate 0.90
target = {"validate": (0.80, 0.70), "validate_unaligned": (0.80, 0.70), "decode_fused": (0.80, None),
          "decode_fused_replace": (0.80, 0.70), "decode_fused_drop": (0.80, 0.70),
          "decode_utf16_replace": (0.70, None), "sanitize_replace": (0.85, 0.65),
          "sanitize_drop": (0.85, 0.65), "encode_fused": (0.80, 0.80)}
print(f"{'op':28} {'input':11} {'inv%':>5} {'GB/s':>8} {'%roof':>6}  target")
for r in rows:
    op, inp, inv = r["op"], r["input"], float(r["invalid_pct"])
    t = target.get(op)
    goal = None
    if t:
        goal = t[0] if inv == 0 else (t[1] if inv >= 1.0 else None)
        if op.startswith("validate") and inp == "ascii" and inv == 0: goal = 0.90
    frac = float(r["fraction"])
    verdict = "-" if goal is None else (f"{'met' if frac >= goal else 'NOT met'} ({goal:.0%})")
    print(f"{op:28} {inp:11} {inv:5.1f} {float(r['gbps']):8.1f} {frac:6.0%}  {verdict}")
EOF
} | tee "$out/summary.txt"
