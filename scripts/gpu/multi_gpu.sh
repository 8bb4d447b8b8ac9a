#!/usr/bin/env bash
# Runs ON a lent machine of several GPUs (nvidia-h200-x2 / -x4) from the repo root, in one call of
# under 9 minutes: gutf8 on every GPU of one host.
#   scripts/gpu/multi_gpu.sh OUT_DIR
# Carry .probe/mgpu.tar.xz (scripts/gpu/pack_multi_gpu.sh: the binaries of stage.sh's bundle that
# this needs, extracted here into .device/ unless .device/gutf8 is there), .device-python
# (stage_python.sh's wheel) and .whl (dask, distributed and what the image lacks of their needs).
#
#   tests     the GPU suite (4 shards, shard i seeing the GPUs rotated by i, so each GPU is device 0
#             of one shard and --device all still finds them all) and the CLI suite on
#             --backend=cuda with --device all and with each GPU named alone (a wrapper given as
#             GUTF8_BIN adds --device after the command, as GUTF8_TEST_BACKEND adds --backend), 4
#             shards each, and tests/python/test_dask.py (a local GPU cluster), all at once
#   failover  the CLI when a GPU fails: --gpu-memory 64K on every GPU (cuda: exit 3, no -o; auto:
#             the CPU finishes, output equal to the CPU backend's) and the last GPU made to fail by a
#             CuPy process that holds all but 256 MiB of its memory (auto: equal to the CPU
#             backend's; cuda: equal, or exit 3 without -o where the GPU is needed)
#   codec     bench_codec's fused decode (replace) device-resident on each GPU alone, then all at once
#   e2e       validate and decode (--errors=replace) of a 32 GiB English file in memory (a tmpfs,
#             i.e. page-cache pages), stdout to /dev/null, median of 3 wall-clock runs of the CLI:
#             --backend=cpu, cuda and auto with --device 0 / 0,1 / 0,1,2,3; bench_file_pipeline in
#             one process (streaming rates after CUDA's start-up): cpu, cuda and CPU workers with
#             GPUs forced to join (--backend auto --devices LIST); the CPU backend by --threads;
#             nvidia-smi dmon (PCIe rx/tx per GPU, each second) alongside
#   limits    what bounds the scaling: pinned H2D / D2H / both on each GPU alone and on 1/2/4 GPUs at
#             once (CuPy, one process), host memory copy bandwidth with 1..56 processes (numpy),
#             bench_host_limits on GPU 0 (start-up, PCIe, pread of the page cache, page-locking)
#   dask      bench/python/bench_python.py's dask section with --dask-backend cuda: validate_files over
#             32 files of 256 MiB on local_gpu_cluster of 1, 2, 4 GPU workers, after a warm-up; median of 3
# Output (at most 8 files come back): OUT_DIR/summary.md (printed last), e2e.csv (device lists
# written 0+1+2+3), codec.csv,
# dask.md, host.md (machine facts, topology, PCIe and memory bandwidth, bench_host_limits),
# progress.log (the timeline, written as it goes) and logs.tar.gz (every log).
# Knobs (GUTF8_MGPU_NGPU and GUTF8_MGPU_TEST_BACKEND=cpu try the tests' plumbing without a GPU):
# GUTF8_MGPU_BUDGET (seconds, default 500: every phase stops in time for the rest),
# GUTF8_MGPU_TEST_LIMIT (seconds a test shard may run, default 200), GUTF8_MGPU_CLI_SHARDS (default 4),
# GUTF8_MGPU_CLI_DEVICES (the CLI suite's --device settings, default "all 0 1 ..."),
# GUTF8_MGPU_SIZE (default 32G), GUTF8_MGPU_DASK_FILES and _MIB (32 files of 256 MiB),
# GUTF8_MGPU_SKIP (phases to leave out, e.g. "tests dask"; also gpu_suite and pytest, parts of tests),
# GUTF8_MGPU_WORK (default /tmp/gutf8-mgpu; a tmpfs is mounted there when possible).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${1:?usage: multi_gpu.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # KINDS.md: keep set
export PYTHONUNBUFFERED=1 DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False
budget=${GUTF8_MGPU_BUDGET:-500}
size=${GUTF8_MGPU_SIZE:-32G}
skip=" ${GUTF8_MGPU_SKIP:-} "
work=${GUTF8_MGPU_WORK:-/tmp/gutf8-mgpu}
L=$work-logs  # every log, tarred into OUT_DIR/logs.tar.gz at the end
rm -rf "$L" && mkdir -p "$L/bin"
T0=$SECONDS
progress=$out/progress.log
: > "$progress"
note() { echo "[$(date +%T) +$((SECONDS - T0))s] $*" | tee -a "$progress"; }
left() { echo $((budget - (SECONDS - T0))); }
# phase_end SECONDS_CAP RESERVE: the phase's deadline, leaving RESERVE seconds for what follows.
phase_end() { local a=$((SECONDS + $1)) b=$((T0 + budget - $2)); echo $((a < b ? a : b)); }
pleft() { echo $((pend - SECONDS)); }
lim() { local p; p=$(pleft); echo $(($1 < p ? $1 : (p > 1 ? p : 1))); }  # lim CAP: CAP within the phase
wants() { [[ $skip != *" $1 "* ]]; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", b - a}'; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
bg_pids=()
bg() {  # bg NAME CAP CMD...: runs CMD in the background under a time limit, log in $L/NAME.log
  local name=$1 cap=$2
  shift 2
  ( s=$SECONDS; timeout -k 10 "$cap" "$@" > "$L/$name.log" 2>&1; echo "$? $((SECONDS - s))" > "$L/$name.rc" ) &
  bg_pids+=($!)
}
bg_wait() { local p; for p in "${bg_pids[@]}"; do wait "$p"; done; bg_pids=(); }
rc_of() { cat "$L/$1.rc" 2>/dev/null || echo "- -"; }
# The summary of what has been measured so far (also when the script is stopped).
write_summary() {
python3 - "$out" "$L" "${bytes:-0}" "$ngpu" "$commit" "$((SECONDS - T0))" > "$out/summary.md" << 'EOF'
import csv, os, sys
out, L, nbytes, ngpu, commit, took = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""
def rows(path):
    try:
        with open(path) as f:
            return list(csv.DictReader(f))
    except OSError:
        return []
print(f"# gutf8 on {ngpu} GPUs of one host (bundle {commit}), {took} s\n")
print(read(os.path.join(L, "tests.md")))
print(read(os.path.join(L, "failover.md")))
e2e = rows(os.path.join(out, "e2e.csv"))
if e2e:
    print(f"## End to end, {nbytes / 2**30:g} GiB of English text in memory, GB/s of input\n")
    print("CLI: wall clock from process start, median of 3 (stdout /dev/null). bench_file_pipeline: one "
          "process, the slower of 2 runs after a first (CUDA's start-up apart); `auto` there forces the GPUs to "
          "join the CPU workers. GPU column: what --verbose said of the last run.\n")
    print("| tool | op | backend | devices | threads | median s | GB/s | x CPU | GPU |")
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    base = {(r["tool"], r["op"]): float(r["gb_per_s"]) for r in e2e
            if r["backend"] == "cpu" and r["gb_per_s"] and r["runs"] != "1"}
    for r in e2e:
        ref = base.get((r["tool"], r["op"]))
        x = f"{float(r['gb_per_s']) / ref:.2f}" if ref and r["gb_per_s"] else ""
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        print(f"| {r['tool'].replace('bench_file_pipeline', 'fp')} | {r['op']} | {r['backend']} | {r['devices']} | "
              f"{r['threads']} | {r['median_s']} | {r['gb_per_s']}{status} | {x} | {r['gpu']} |")
    print()
codec = rows(os.path.join(out, "codec.csv"))
if codec:
    print("## Device-resident fused decode (replace), GB/s of input, 256 MiB (bench_codec, CUDA events)\n")
    print("| input | invalid | " + " | ".join(f"GPU {g} alone" for g in range(ngpu)) + " | " +
          " | ".join(f"GPU {g} all at once" for g in range(ngpu)) + " |")
    print("|---|---|" + "---:|" * (2 * ngpu))
    keys = sorted({(r["input"], r["invalid_pct"]) for r in codec})
    for k in keys:
        cell = {(r["mode"], r["gpu"]): r["gbps"] for r in codec if (r["input"], r["invalid_pct"]) == k}
        print(f"| {k[0]} | {k[1]}% | " + " | ".join(cell.get(("alone", str(g)), "") for g in range(ngpu)) + " | " +
              " | ".join(cell.get(("all_at_once", str(g)), "") for g in range(ngpu)) + " |")
    print()
pcie, membw = read(os.path.join(L, "pcie.md")), read(os.path.join(L, "membw.md"))
if pcie or membw:
    print("## What bounds it\n")
    print(pcie)
    print(membw)
    hl = [l for l in read(os.path.join(L, "host_limits.md")).splitlines()
          if any(s in l for s in ("pinned 256", "pread page cache, 16", "pread page cache, 8 ", "of 64 MiB mapped"))]
    if hl:
        print("bench_host_limits (GPU 0): \n\n| measure | value | unit |\n|---|---:|---|\n" + "\n".join(hl) + "\n")
dask = read(os.path.join(out, "dask.md"))
if dask:
    print(dask[dask.find("## gutf8.dask"):] if "## gutf8.dask" in dask else dask)
elif read(os.path.join(L, "dask.err")):
    print("## dask: no result\n\n```\n" + read(os.path.join(L, "dask.err"))[-1500:] + "\n```\n")
print("Timeline: progress.log; every log: logs.tar.gz; machine facts, PCIe, memory: host.md.")
EOF
}
finish() {  # the tarball and the summary, also when the script is stopped
  trap - EXIT INT TERM
  [[ -n ${hog_pid:-} ]] && kill "$hog_pid" 2>/dev/null
  [[ -n ${dmon_pid:-} ]] && kill "$dmon_pid" 2>/dev/null
  bg_wait 2>/dev/null
  note "done after $((SECONDS - T0)) s"
  write_summary 2> "$L/summary.err"
  cp "$progress" "$L/" 2>/dev/null
  tar -C "$(dirname "$L")" -czf "$out/logs.tar.gz" "$(basename "$L")" 2>/dev/null
  [[ -f $out/summary.md ]] && cat "$out/summary.md"
  umount "$work" 2>/dev/null
}
trap finish EXIT
trap 'note "stopped by a signal"; exit 143' INT TERM

# ------------------------------------------------------------------ set-up ----
if [[ -f .probe/mgpu.tar.xz ]]; then  # (over a .device/ that an earlier call left)
  if command -v xz > /dev/null; then tar -xJf .probe/mgpu.tar.xz
  else python3 -c "import tarfile; tarfile.open('.probe/mgpu.tar.xz').extractall('.')"; fi
fi
bin=$PWD/.device/gutf8
fp=.device/bench/bench_file_pipeline
[[ -x $bin ]] || { note "no .device/gutf8 (carry .probe/mgpu.tar.xz from scripts/gpu/pack_multi_gpu.sh)"; exit 2; }
commit=$(tr '\n' ' ' < .device/COMMIT 2> /dev/null)
ngpu=${GUTF8_MGPU_NGPU:-$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')}
counts=()
for k in 1 2 4 8 16; do ((k <= ngpu)) && counts+=("$k"); done
((ngpu > 0)) && [[ " ${counts[*]} " != *" $ngpu "* ]] && counts+=("$ngpu")
devlist() { seq -s, 0 $(($1 - 1)); }
ncpu=$(nproc)
workers=$((ncpu - ncpu / 8))  # the file pipeline's CPU workers by default
note "bundle $commit; $ngpu GPUs (counts: ${counts[*]:-none}); $ncpu CPUs; budget ${budget}s; file $size"
site_ok=0
if compgen -G '.device-python/*.whl' > /dev/null; then
  wheels=(.device-python/*.whl)
  compgen -G '.whl/*.whl' > /dev/null && wheels+=(.whl/*.whl)
  timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "${wheels[@]}" > "$L/pip.log" 2>&1 && site_ok=1
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
note "python wheels installed: $site_ok ($(cat .device-python/COMMIT 2> /dev/null))"
{
  echo "# Machine"
  echo; echo '```'
  uname -a; echo "bundle: $commit; wheel: $(cat .device-python/COMMIT 2> /dev/null)"
  nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,memory.total,clocks.max.sm,power.limit --format=csv 2>&1
  echo; nvidia-smi topo -m 2>&1
  echo; lscpu 2>&1 | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA|L3)'
  for n in /sys/devices/system/node/node*; do [[ -d $n ]] && echo "$(basename "$n"): cpus $(cat "$n/cpulist")"; done
  grep -E 'MemTotal|MemAvailable' /proc/meminfo
  python3 -c "import numpy, pandas, pyarrow; print('numpy', numpy.__version__, 'pandas', pandas.__version__, 'pyarrow', pyarrow.__version__)" 2>&1
  python3 -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
  PYTHONPATH=/tmp/site python3 -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)" 2>&1 | tail -1
  echo '```'
} > "$L/facts.md" 2>&1
nvidia-smi -q -d PCIE > "$L/nvidia-smi-pcie.txt" 2>&1

# Inputs, built in the background while the tests run: memory grows ~3 s per 8 GiB on these
# machines, and a tmpfs keeps the files in page-cache pages without a disk's write-back.
mkdir -p "$work"
mountpoint -q "$work" || mount -t tmpfs -o size=300G tmpfs "$work" 2> /dev/null ||
  note "no tmpfs at $work: files on its own file system"
bytes=$(python3 -c "import sys; sys.path.insert(0, 'corpus'); import make_corpus; print(make_corpus.parse_size('$size'))")
big=$work/ascii-$bytes.txt
bad=$work/mixed-1pct-512M.txt
four=$work/limits-2G.txt
cat > "$L/build_inputs.py" << 'EOF'
import os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
work, big, nbig, bad, four = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
nfour = min(2 << 30, nbig)
t0 = time.time()
def corpus(*args):
    subprocess.run([sys.executable, "corpus/make_corpus.py", *args], check=True, stdout=subprocess.DEVNULL)
def fill(dst, src, size, threads=16):  # dst = src repeated, cut at size (pwrite in parallel)
    data = memoryview(open(src, "rb").read())
    fd = os.open(dst + ".part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.ftruncate(fd, size)
    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(lambda at: os.pwrite(fd, data[:min(len(data), size - at)], at), range(0, size, len(data))))
    os.close(fd)
    os.rename(dst + ".part", dst)
corpus("tile", "--size", "64M", "--kind", "ascii", f"{work}/base-ascii.txt")
corpus("tile", "--size", "64M", "--kind", "mixed", f"{work}/base-mixed.txt")
corpus("tile", "--size", "16M", "--kind", "mixed", "--seed", "3", f"{work}/base-mixed16.txt")
corpus("inject", "--rate", "0.01", "--seed", "7", f"{work}/base-mixed16.txt", f"{work}/base-bad.txt")
fill(bad, f"{work}/base-bad.txt", 512 << 20)
print(f"{bad} after {time.time() - t0:.1f} s", flush=True)
fill(big, f"{work}/base-ascii.txt", nbig)
print(f"{big} after {time.time() - t0:.1f} s", flush=True)
fill(four, f"{work}/base-ascii.txt", nfour)
print(f"all inputs after {time.time() - t0:.1f} s", flush=True)
EOF
if [[ -f $big ]]; then
  echo "0 0" > "$L/inputs.rc"
else
  ( s=$SECONDS; timeout 400 python3 "$L/build_inputs.py" "$work" "$big" "$bytes" "$bad" "$four" \
      > "$L/inputs.log" 2>&1
    echo "$? $((SECONDS - s))" > "$L/inputs.rc" ) &
  inputs_pid=$!
fi

# ------------------------------------------------------------------- tests ----
if wants tests && ((ngpu > 0)); then
  test_limit=${GUTF8_MGPU_TEST_LIMIT:-200}
  later=10  # seconds kept for the phases after the tests, where any runs
  for p in failover codec e2e limits dask; do wants $p && later=200; done
  pend=$(phase_end "$test_limit" "$later")
  test_backend=${GUTF8_MGPU_TEST_BACKEND:-cuda}
  cli_shards=${GUTF8_MGPU_CLI_SHARDS:-4}
  cli_settings=${GUTF8_MGPU_CLI_DEVICES:-all $(seq -s' ' 0 $((ngpu - 1)))}
  note "tests:$(wants gpu_suite && echo " GPU suite (4 shards),") CLI suite on $test_backend with --device ${cli_settings// /, } ($cli_shards shards each)$(wants pytest && echo ", test_dask.py")"
  for d in $cli_settings; do
    cat > "$L/bin/gutf8-dev-$d" << EOF
#!/bin/sh
# gutf8 with --device $d added after the command, as the CLI suite's GUTF8_TEST_BACKEND adds --backend
case "\$1" in decode|encode|validate|stats) ;; *) exec "$bin" "\$@" ;; esac
for a in "\$@"; do case "\$a" in --device|--device=*|--help|-h|--version) exec "$bin" "\$@" ;; esac; done
c=\$1; shift
exec "$bin" "\$c" --device $d "\$@"
EOF
    chmod +x "$L/bin/gutf8-dev-$d"
  done
  wants gpu_suite && for s in 0 1 2 3; do
    vis=$(for ((j = 0; j < ngpu; j++)); do echo $(((j + s) % ngpu)); done | paste -sd,)
    bg gpu_tests_$s "$(lim "$test_limit")" env CUDA_VISIBLE_DEVICES="$vis" GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s \
      .device/tests/gutf8_gpu_tests
  done
  for d in $cli_settings; do
    for ((s = 0; s < cli_shards; ++s)); do
      bg cli_dev${d}_$s "$(lim "$test_limit")" env GUTF8_BIN="$L/bin/gutf8-dev-$d" GUTF8_TEST_BACKEND="$test_backend" GTEST_TOTAL_SHARDS=$cli_shards \
        GTEST_SHARD_INDEX=$s .device/tests/gutf8_cli_tests
    done
  done
  ((site_ok)) && wants pytest && bg pytest_dask "$(lim 150)" python3 -m pytest -q -rfEs -p no:cacheprovider tests/python/test_dask.py
  bg_wait
  {
    echo "## Tests"
    echo
    echo "| suite | shards rc (s) | passed | failed | skipped | failures |"
    echo "|---|---|---:|---:|---:|---|"
    gt_row() {  # gt_row LABEL LOGS...
      local label=$1 rcs="" passed=0 failed=0 skipped=0 names=""
      shift
      for l in "$@"; do
        read -r rc t <<< "$(rc_of "$l")"
        rcs+="$rc ($t) "
        # per test, not the final summary: a shard stopped at its limit still counts what ran
        passed=$((passed + $(cat "$L/$l.log" 2> /dev/null | grep -cE '^\[       OK \] [A-Za-z]')))
        skipped=$((skipped + $(grep -E '^\[  SKIPPED \] [A-Za-z]' "$L/$l.log" 2> /dev/null | sed 's/ (.*//' | sort -u | grep -c .)))
        failed=$((failed + $(grep -E '^\[  FAILED  \] [A-Za-z].* \([0-9]+ ms\)' "$L/$l.log" 2> /dev/null | grep -c .)))
        n=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$L/$l.log" 2> /dev/null | sed 's/^\[  FAILED  \] //; s/ (.*//' | sort -u | paste -sd' ')
        [[ -n $n ]] && names+="${names:+ }$n"
      done
      echo "| $label | $rcs| $passed | $failed | $skipped | ${names:0:400} |"
    }
    wants gpu_suite && gt_row "gutf8_gpu_tests (GPUs rotated per shard)" gpu_tests_0 gpu_tests_1 gpu_tests_2 gpu_tests_3
    for d in $cli_settings; do
      mapfile -t shard_logs < <(for ((s = 0; s < cli_shards; ++s)); do echo "cli_dev${d}_$s"; done)
      gt_row "CLI, $test_backend, --device $d" "${shard_logs[@]}"
    done
    if [[ -f $L/pytest_dask.log ]]; then
      read -r rc t <<< "$(rc_of pytest_dask)"
      echo "| tests/python/test_dask.py | $rc ($t) | $(tail -1 "$L/pytest_dask.log") | | | $(grep -E '^(FAILED|ERROR)' "$L/pytest_dask.log" | head -3 | paste -sd' ') |"
    fi
    echo
  } > "$L/tests.md"
  note "tests done"
fi

[[ -n ${inputs_pid:-} ]] && { note "waiting for the inputs"; wait "$inputs_pid"; }
read -r irc it <<< "$(rc_of inputs)"
note "inputs: rc $irc in ${it}s ($(tail -1 "$L/inputs.log" 2> /dev/null))"
[[ $irc == 0 ]] || { note "no inputs: the measurements need them"; skip+=" failover codec e2e limits dask "; }

# ---------------------------------------------------------------- failover ----
if wants failover && ((ngpu > 0)); then
  pend=$(phase_end 75 180)
  note "failover: --gpu-memory 64K on every GPU, then GPU $((ngpu - 1)) short of memory"
  last=$((ngpu - 1))
  f=$L/failover.log
  : > "$f"
  fo=()  # verdict lines
  # The CPU backend's answers: decode of $bad (md5 of the output), validate --json of $big.
  timeout 60 "$bin" decode --backend=cpu --errors=replace "$bad" -o "$work/fo.ref" 2>> "$f"
  ref_dec_rc=$?
  ref_dec=$(md5sum < "$work/fo.ref" | cut -c1-32)
  rm -f "$work/fo.ref"
  ref_val=$(timeout 60 "$bin" validate --json --backend=cpu "$big" 2>> "$f")
  ref_val_rc=$?
  echo "reference: decode of $bad rc $ref_dec_rc md5 $ref_dec; validate --json of $big rc $ref_val_rc: $ref_val" >> "$f"
  # verdict EXPECT RC SAME ERRFILE: EXPECT same (status and output as the CPU's), exit3 (status 3,
  # one line on stderr, no output file left: the spec's answer where no GPU can do the work) or
  # same_or_3 (either; which one depends on whether the GPU that failed was needed)
  verdict() {  # verdict EXPECT RC SAME ERRFILE FILES_LEFT
    local expect=$1 rc=$2 same=$3 err=$4 left=$5
    if [[ $expect != exit3 ]] && ((same)); then echo "PASS (same as the CPU; $(grep -oE 'fell back[^)]*|[0-9.]+ [KMGT]?i?B on the GPU' "$err" | head -1))"
    elif [[ $expect != same ]] && ((rc == 3)) && [[ -z $left ]] && (($(grep -c . "$err") == 1)); then echo "PASS (exit 3, no output left: $(head -c 100 "$err"))"
    else echo "FAIL (rc $rc, same output $same, files left: ${left:-none}, stderr: $(head -c 160 "$err" | tr '\n|' '  '))"; fi
  }
  decode_case() {  # decode_case LABEL EXPECT ARGS...: decode of $bad into -o, against the CPU's
    local label=$1 expect=$2 rc same=0
    shift 2
    rm -rf "$work/fo" && mkdir -p "$work/fo"
    timeout "$(lim 60)" "$bin" decode --errors=replace "$@" "$bad" -o "$work/fo/out" 2> "$L/.fo.err"
    rc=$?
    { echo "== $label: gutf8 decode --errors=replace $* $bad -o fo/out: rc $rc"; cat "$L/.fo.err"; } >> "$f"
    ((rc == ref_dec_rc)) && [[ -f $work/fo/out && $(md5sum < "$work/fo/out" | cut -c1-32) == "$ref_dec" ]] && same=1
    fo+=("| $label | decode $* | $(verdict "$expect" $rc $same "$L/.fo.err" "$(ls -A "$work/fo" | paste -sd' ')") |")
    rm -rf "$work/fo"
  }
  validate_case() {  # validate_case LABEL EXPECT ARGS...: validate --json --verbose of $big, against the CPU's
    local label=$1 expect=$2 rc o same=0
    shift 2
    o=$(timeout "$(lim 60)" "$bin" validate --json --verbose "$@" "$big" 2> "$L/.fo.err")
    rc=$?
    { echo "== $label: gutf8 validate --json --verbose $* $big: rc $rc, $o"; cat "$L/.fo.err"; } >> "$f"
    ((rc == ref_val_rc)) && [[ $o == "$ref_val" ]] && same=1
    # --verbose writes two lines of its own: keep the first line for the exit-3 check
    head -1 "$L/.fo.err" > "$L/.fo.err1"
    fo+=("| $label | validate --json $* | $(verdict "$expect" $rc $same "$([[ $rc == 3 ]] && echo "$L/.fo.err1" || echo "$L/.fo.err")" "") |")
  }
  decode_case "64K cap on every GPU, cuda" exit3 --backend=cuda --device all --gpu-memory 64K
  validate_case "64K cap on every GPU, auto beside 2 CPU workers (so that GPUs join)" same --backend=auto --threads 2 --device all --gpu-memory 64K
  # The last GPU short of memory: a CuPy process holds all but 256 MiB of it.
  CUDA_VISIBLE_DEVICES=$last python3 -c "
import sys, time, cupy
free, total = cupy.cuda.runtime.memGetInfo()
hold = cupy.cuda.runtime.malloc(free - (256 << 20))
print('holding', (free - (256 << 20)) >> 20, 'MiB of', total >> 20, flush=True)
time.sleep(600)" > "$L/hog.log" 2>&1 &
  hog_pid=$!
  for _ in $(seq 60); do grep -q holding "$L/hog.log" && break; sleep 0.5; done
  echo "hog: $(cat "$L/hog.log"); $(nvidia-smi --query-gpu=index,memory.used,memory.free --format=csv,noheader | paste -sd' ')" >> "$f"
  if grep -q holding "$L/hog.log"; then
    decode_case "GPU $last short of memory, cuda, all GPUs" same_or_3 --backend=cuda --device all
    decode_case "GPU $last short of memory, cuda, GPU $last alone" same_or_3 --backend=cuda --device $last
    validate_case "GPU $last short of memory, auto beside 2 CPU workers, all GPUs" same --backend=auto --threads 2 --device all
    validate_case "GPU $last short of memory, cuda, all GPUs" same_or_3 --backend=cuda --device all
  else
    fo+=("| GPU $last short of memory | (the CuPy process did not start: $(tail -1 "$L/hog.log")) | not run |")
  fi
  kill "$hog_pid" 2> /dev/null
  wait "$hog_pid" 2> /dev/null
  hog_pid=
  {
    echo "## A GPU that fails (docs/SPEC.md: cuda exits 3 and keeps no -o; auto lets the CPU workers finish)"
    echo
    echo "| case | command | verdict |"
    echo "|---|---|---|"
    printf '%s\n' "${fo[@]}"
    echo
  } > "$L/failover.md"
  note "failover done"
fi

# ------------------------------------------------------------------- codec ----
codec_rows() {  # codec_rows MODE DIR GPU: rows of one bench_codec run
  local csv=$2/codec.csv
  [[ -f $csv ]] && tail -n +2 "$csv" | awk -F, -v m="$1" -v g="$3" -v OFS=, '{print m, g, $6, $7, $8, $9, $10, $11, $12, $5}'
}
if wants codec && ((ngpu > 0)); then
  pend=$(phase_end 70 170)
  note "codec: bench_codec decode_fused_replace on each GPU alone, then on all at once"
  codec=(.device/bench/bench_codec --quick --inputs "ascii,mixed" --ops decode_fused_replace --runs 300 --size 256 --budget 40)
  echo "mode,gpu,input,invalid_pct,op,median_ms,gbps,roofline_gbps,fraction,copy_gbps" > "$out/codec.csv"
  for ((d = 0; d < ngpu; d++)); do
    ((d == 0 || $(pleft) > 30)) || break
    CUDA_VISIBLE_DEVICES=$d timeout "$(lim 40)" "${codec[@]}" --out "$L/codec-alone-$d" > "$L/codec-alone-$d.log" 2>&1
    codec_rows alone "$L/codec-alone-$d" $d >> "$out/codec.csv"
  done
  if (($(pleft) > 15)); then
    for ((d = 0; d < ngpu; d++)); do
      CUDA_VISIBLE_DEVICES=$d timeout "$(lim 40)" "${codec[@]}" --runs 1000 --out "$L/codec-all-$d" > "$L/codec-all-$d.log" 2>&1 &
      bg_pids+=($!)
    done
    bg_wait
    for ((d = 0; d < ngpu; d++)); do codec_rows all_at_once "$L/codec-all-$d" $d >> "$out/codec.csv"; done
  fi
  note "codec done"
fi

# --------------------------------------------------------------------- e2e ----
e2e_csv=$out/e2e.csv
echo "tool,op,backend,devices,threads,bytes,runs,median_s,gb_per_s,times_s,status,gpu" > "$e2e_csv"
cli_row() {  # cli_row OP BACKEND DEVICES THREADS REPS: wall clock of the CLI on $big, median of REPS
  local op=$1 b=$2 dev=$3 thr=$4 reps=$5 args times=() rc=0 t0 t1 r status=ok gpu med gbs
  args=("$op" --verbose "--backend=$b")
  [[ $op == decode ]] && args+=(--errors=replace)
  [[ -n $dev ]] && args+=(--device "$dev")
  [[ -n $thr ]] && args+=(--threads "$thr")
  for ((r = 0; r < reps; r++)); do
    (($(pleft) > 12)) || { status="budget after $r runs"; break; }
    t0=$(now)
    timeout "$(lim 90)" "$bin" "${args[@]}" "$big" > /dev/null 2> "$L/.err"
    rc=$?
    t1=$(now)
    { echo "== $(date +%T) gutf8 ${args[*]} (run $((r + 1))): rc $rc, $(secs "$t0" "$t1") s"; cat "$L/.err"; } >> "$L/e2e_verbose.log"
    ((rc == 0 || rc == 1)) || { status="exit $rc: $(head -c 120 "$L/.err" | tr ',\n' '; ')"; break; }
    times+=("$(secs "$t0" "$t1")")
  done
  status=${status//,/;}
  gpu=$(grep -oE '[0-9.]+ [KMGTP]?i?B on the GPU( after a start-up of [0-9.]+ s)?|the CPU did all the work|fell back[^)]*' "$L/.err" | head -1)
  med=$(printf '%s\n' "${times[@]}" | median)
  gbs=$([[ -n $med ]] && awk -v b="$bytes" -v t="$med" 'BEGIN {if (t > 0) printf "%.2f", b / t / 1e9}')
  [[ $b == cuda ]] && thr=0  # GPU lanes alone
  echo "gutf8,$op,$b,${dev//,/+},${thr:-$workers},$bytes,${#times[@]},$med,$gbs,$(echo "${times[*]}" | tr ' ' ';'),$status,$gpu" >> "$e2e_csv"
  note "  gutf8 ${args[*]}: ${med:-?} s, ${gbs:-?} GB/s ($status; $gpu)"
}
fp_row() {  # fp_row OP BACKEND DEVICES: bench_file_pipeline, one process, first run then 2 timed
  local op=$1 b=$2 dev=$3 line args
  (($(pleft) > 20)) || { echo "bench_file_pipeline,$op,$b,${dev//,/+},$workers,$bytes,0,,,,budget," >> "$e2e_csv"; return; }
  args=(--file "$big" --op "$op" --backend "$b" --reps 2)
  [[ -n $dev ]] && args+=(--devices "$dev")
  line=$(timeout "$(lim 120)" "$fp" "${args[@]}" 2>> "$L/fp.err")
  echo "== $(date +%T) $fp ${args[*]}: $line" >> "$L/e2e_verbose.log"
  # op,backend,settings,first_s,median_s,gb_per_s,gpu_share,gpu_startup_s
  # (the settings may hold commas, from a bench_file_pipeline that printed devices=0,1: read from the end)
  read -r first med gbs share startup <<< "$(awk -F, '{print $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF}' <<< "$line")"
  local settings=${line#*,*,}
  local status=ok
  if [[ -z $line ]]; then status="failed: $(tail -1 "$L/fp.err" | tr ',' ';')"
  elif [[ -n $dev && $settings != *devices=* ]]; then status="GPU 0 alone (this bench_file_pipeline has no --devices)"; fi
  echo "bench_file_pipeline,$op,$b,${dev//,/+},$([[ $b == cuda ]] && echo 0 || echo "$workers"),$bytes,2,$med,$gbs,first $first,$status,GPU share $share; start-up $startup s" >> "$e2e_csv"
  note "  bench_file_pipeline $op $b ${dev:+--devices $dev}: $med s, $gbs GB/s (first $first s, GPU share $share)"
}
if wants e2e; then
  pend=$(phase_end 200 110)
  note "e2e: $big ($bytes bytes), CLI median of 3, then bench_file_pipeline"
  if ((ngpu > 0)); then
    timeout $(($(pleft) + 5)) nvidia-smi dmon -s ut -o T -d 1 > "$L/dmon.log" 2>&1 &
    dmon_pid=$!
  fi
  for op in validate decode; do
    cli_row $op cpu "" "" 3
    for k in "${counts[@]}"; do cli_row $op cuda "$(devlist "$k")" "" 3; done
    for k in "${counts[@]}"; do cli_row $op auto "$(devlist "$k")" "" 3; done
  done
  for op in validate decode; do
    fp_row $op cpu ""
    for k in "${counts[@]}"; do fp_row $op auto "$(devlist "$k")"; done
    ((ngpu > 0)) && fp_row $op cuda 0
    ((ngpu > 1)) && fp_row $op cuda "$(devlist "$ngpu")"
  done
  for t in 8 16 32; do
    ((t < workers)) || continue
    for op in validate decode; do cli_row $op cpu "" $t 1; done
  done
  [[ -n ${dmon_pid:-} ]] && { kill "$dmon_pid" 2> /dev/null; wait "$dmon_pid" 2> /dev/null; dmon_pid=; }
  note "e2e done"
fi

# ------------------------------------------------------------------ limits ----
if wants limits && ((ngpu > 0)); then
  pend=$(phase_end 60 75)
  note "limits: PCIe alone and together (CuPy), host memory bandwidth, bench_host_limits"
  cat > "$L/pcie.py" << 'EOF'
# Pinned host <-> device copies, 256 MiB each, queued on every GPU of a set at once: each GPU's rate
# (CUDA events) and the set's total (wall clock). H2D, D2H, and both directions at once.
import sys, time
import cupy as cp
n, reps = 256 << 20, int(sys.argv[1]) if len(sys.argv) > 1 else 24
rt = cp.cuda.runtime
gpus = rt.getDeviceCount()
res = []
for d in range(gpus):
    with cp.cuda.Device(d):
        res.append(dict(dev=cp.empty(n, dtype=cp.uint8), dev2=cp.empty(n, dtype=cp.uint8),
                        h=cp.cuda.alloc_pinned_memory(n), h2=cp.cuda.alloc_pinned_memory(n),
                        s1=cp.cuda.Stream(non_blocking=True), s2=cp.cuda.Stream(non_blocking=True)))
def run(devs, mode):
    marks = []
    t0 = time.perf_counter()
    for d in devs:
        r = res[d]
        with cp.cuda.Device(d):
            start, e1, e2 = cp.cuda.Event(), cp.cuda.Event(), cp.cuda.Event()
            start.record(r["s1"])
            r["s2"].wait_event(start)
            for _ in range(reps):
                if mode in ("h2d", "both"):
                    rt.memcpyAsync(r["dev"].data.ptr, r["h"].ptr, n, rt.memcpyHostToDevice, r["s1"].ptr)
                if mode in ("d2h", "both"):
                    rt.memcpyAsync(r["h2"].ptr, r["dev2"].data.ptr, n, rt.memcpyDeviceToHost, r["s2"].ptr)
            e1.record(r["s1"])
            e2.record(r["s2"])
            marks.append((d, start, e1, e2))
    for d, start, e1, e2 in marks:
        e1.synchronize()
        e2.synchronize()
    wall = time.perf_counter() - t0
    moved = n * reps * (2 if mode == "both" else 1)
    per = {d: moved / (max(cp.cuda.get_elapsed_time(s, e1), cp.cuda.get_elapsed_time(s, e2)) / 1e3) / 1e9
           for d, s, e1, e2 in marks}
    return per, moved * len(devs) / wall / 1e9
run([0], "h2d")  # warm-up
print("| GPUs at once | direction | each GPU's GB/s | total GB/s |\n|---|---|---|---:|")
sets = [[d] for d in range(gpus)] + [list(range(k)) for k in (2, 4, 8) if k <= gpus]
if gpus not in (1, 2, 4, 8):
    sets.append(list(range(gpus)))
for devs in sets:
    for mode in ("h2d", "d2h", "both"):
        per, total = run(devs, mode)
        print(f"| {','.join(map(str, devs))} | {mode}{' (each way)' if mode == 'both' else ''} | "
              f"{' / '.join(f'{per[d]:.1f}' for d in devs)} | {total:.1f} |", flush=True)
EOF
  cat > "$L/membw.py" << 'EOF'
# Host memory: numpy copies of 128 MiB by P processes at once; GB/s counts bytes read + written.
import multiprocessing as mp, sys, time
import numpy as np
def worker(barrier, q, reps):
    a = np.ones(128 << 20, dtype=np.uint8); b = np.empty_like(a); np.copyto(b, a)
    barrier.wait(); t = time.perf_counter()
    for _ in range(reps): np.copyto(b, a)
    q.put(time.perf_counter() - t)
if __name__ == "__main__":
    print("| processes | copy GB/s (read + write) |\n|---:|---:|")
    for p in [int(x) for x in sys.argv[1].split(",")]:
        reps = 8
        barrier, q = mp.Barrier(p), mp.Queue()
        procs = [mp.Process(target=worker, args=(barrier, q, reps)) for _ in range(p)]
        for x in procs: x.start()
        times = [q.get() for _ in procs]
        for x in procs: x.join()
        print(f"| {p} | {p * reps * 2 * (128 << 20) / max(times) / 1e9:.1f} |", flush=True)
EOF
  timeout "$(lim 40)" python3 "$L/pcie.py" > "$L/pcie.md" 2>&1
  procs=$(printf '%s\n' 1 4 8 16 32 "$workers" | awk -v m="$workers" '$1 <= m' | sort -nu | paste -sd,)
  timeout "$(lim 30)" python3 "$L/membw.py" "$procs" > "$L/membw.md" 2>&1
  CUDA_VISIBLE_DEVICES=0 timeout "$(lim 45)" .device/bench/bench_host_limits --reps 3 --file "$four" > "$L/host_limits.md" 2>&1
  note "limits done"
fi
{
  cat "$L/facts.md"
  echo; echo "## Pinned copies, each GPU alone and several at once (CuPy, 256 MiB copies)"; echo
  cat "$L/pcie.md" 2> /dev/null
  echo; echo "## Host memory copy bandwidth (numpy, 128 MiB copies, P processes at once)"; echo
  cat "$L/membw.md" 2> /dev/null
  echo; echo "## bench_host_limits on GPU 0 (2 GiB file in memory)"; echo
  cat "$L/host_limits.md" 2> /dev/null
} > "$out/host.md"

# -------------------------------------------------------------------- dask ----
if wants dask && ((ngpu > 0 && site_ok)); then
  pend=$(phase_end 110 8)
  note "dask: bench/python/bench_python.py, validate_files on local_gpu_cluster of ${counts[*]} workers"
  timeout "$(lim 110)" python3 bench/python/bench_python.py --sections dask --dask-backend cuda --reps 3 \
    --workers "$(IFS=,; echo "${counts[*]}")" --files "${GUTF8_MGPU_DASK_FILES:-32}" \
    --file-size "${GUTF8_MGPU_DASK_MIB:-256}M" --workdir "$work" --out "$out/dask.md" > /dev/null 2> "$L/dask.err"
  note "dask done (rc $?)"
fi

exit 0  # finish (the EXIT trap) writes the summary and the tarball
