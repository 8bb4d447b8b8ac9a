#!/usr/bin/env bash
# End-to-end benchmark of the gutf8 command line (file -> /dev/null, page cache warm), run ON the
# GPU host from the repository root with the staged binary (scripts/gpu/stage.sh -> .device/):
#
#   scripts/bench_e2e.sh [--size 4G] [--out DIR] [--reps 3] [--budget 360] [--bin .device/gutf8]
#                        [--work /tmp/gutf8-e2e] [--chunk SIZE] [--sweep "64M 256M 1G"]
#                        [--baseline-reps N] [--no-baselines] [--threads-sweep "4 8"]
#                        [--backends "cuda cpu auto"] [--kinds "ascii cjk"] [--ops "validate decode"]
#
# --backends: the --backend values timed (default "cuda cpu"); auto is CPU workers with the GPUs
# joining when they pay (src/codec/auto_model.hpp). --kinds: the input files (default all five).
# --ops: of validate, validate-replace, decode, encode, decode-file (default all).
# --chunk passes --chunk-size to every gutf8 run (default: gutf8's own).
# --sweep also times validate and decode of the first SIZE bytes of the mixed file on both
# backends, for each SIZE: where the GPU starts to pay (backend::auto's threshold).
# --threads-sweep times validate and decode of the mixed file on the CPU backend with --threads T
# for each T (the CPU side of backend::auto's model).
# --baseline-reps: runs of iconv, python3 and utfcpp_decode (default --reps; they take seconds
# each and have no start-up cost worth a median). --no-baselines times gutf8 only.
#
# Inputs (built once into --work and reused while their size matches): ascii, cjk, emoji, mixed
# and mixed with 1% invalid, each --size bytes. corpus/make_corpus.py tiles a 64 MiB base per kind
# (and injects the 1% errors into the mixed base), which is then repeated up to --size: the
# generator runs at ~0.1 GB/s (errors: ~0.01 GB/s), far too slow for 5 x 4 GiB in the budget.
#
# Timed (wall clock, median of --reps; a command that takes over 10 s is run once):
#   gutf8 validate | validate --replace | decode --errors=replace | encode --errors=replace,
#         each with --backend=cuda and --backend=cpu;
#   gutf8 decode -o FILE (output to a file on the local disk, removed after each run);
#   gutf8 validate of a 6-byte file: the fixed start-up cost of each backend;
#   iconv -f UTF-8 -t UTF-32LE (with -c on the invalid file, else it stops at the first error);
#   python3: bytes.decode('utf-8', errors='replace') of the whole file;
#   utfcpp_decode (bench/baseline/utfcpp_decode.cpp, beside gutf8 in bench/ of the bundle).
# encode reads UTF-32LE made by decoding the first quarter of each file (so about --size bytes
# for ascii); its GB/s is of UTF-32 input bytes. Everything else: GB/s of the UTF-8 file.
# The gutf8 runs come first; once --budget seconds have passed the rest is marked "skipped".
# Output: DIR/e2e.csv, DIR/e2e.md, DIR/e2e.log (gutf8 --verbose stage times of each last run).
# Needs only bash, coreutils, awk, python3 and iconv (no installs).
set -uo pipefail
cd "$(dirname "$0")/.."

size=4G reps=3 budget=360 bin=.device/gutf8 work=/tmp/gutf8-e2e out="" chunk=() sweep="" baseline_reps="" baselines=1
threads_sweep="" backends="cuda cpu" kinds="ascii cjk emoji mixed mixed-invalid-1pct"
ops="validate validate-replace decode encode decode-file"
while (($#)); do
  case $1 in
    --size) size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --chunk) chunk=(--chunk-size "$2"); shift 2 ;;
    --sweep) sweep=$2; shift 2 ;;
    --baseline-reps) baseline_reps=$2; shift 2 ;;
    --no-baselines) baselines=0; shift ;;
    --threads-sweep) threads_sweep=$2; shift 2 ;;
    --backends) backends=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    -h|--help) sed -n '2,44p' "$0"; exit 0 ;;
    *) echo "bench_e2e.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-bench-e2e-$(date +%Y%m%d-%H%M%S)}
[[ -x $bin ]] || { echo "bench_e2e.sh: no gutf8 binary at $bin (--bin)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench_e2e.sh: python3 is needed" >&2; exit 2; }
mkdir -p "$out" "$work"
bytes=$(python3 -c "import sys; sys.path.insert(0, 'corpus'); import make_corpus; print(make_corpus.parse_size('$size'))")
base=$((bytes < (64 << 20) ? bytes : (64 << 20)))
start=$SECONDS
log=$out/e2e.log
: >"$log"
echo "gutf8 end-to-end benchmark: $bytes bytes per file, $reps reps, budget ${budget}s, ${chunk[*]:-default chunk size}, $($bin --version | head -1)" | tee -a "$log"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /' | tee -a "$log"
echo "CPU: $(nproc) cores, $(awk -F: '/model name/{print $2; exit}' /proc/cpuinfo)" | tee -a "$log"

# ------------------------------------------------------------------------ inputs ----
# repeat SRC DST BYTES: DST = SRC repeated, cut at BYTES.
repeat() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, 'rb').read()
with open(dst, 'wb') as f:
    left = n
    while left > 0:
        piece = data[:left]
        f.write(piece)
        left -= len(piece)
EOF
}
files=()
for kind in $kinds; do
  f=$work/$kind-$bytes.txt
  files+=("$f")
  [[ -f $f && $(stat -c %s "$f") == "$bytes" ]] && continue
  if [[ $kind == mixed-invalid-1pct ]]; then
    python3 corpus/make_corpus.py tile --size "$base" --kind mixed "$work/base-mixed.txt" >>"$log" 2>&1
    python3 corpus/make_corpus.py inject --rate 0.01 --seed 7 "$work/base-mixed.txt" "$work/base-$kind.txt" \
      >>"$log" 2>&1
  else
    python3 corpus/make_corpus.py tile --size "$base" --kind "$kind" "$work/base-$kind.txt" >>"$log" 2>&1
  fi
  repeat "$work/base-$kind.txt" "$f" "$bytes" || { echo "cannot build $f" >&2; exit 3; }
done
# UTF-32LE inputs for encode: the first quarter of each file, decoded.
wants encode && for f in "${files[@]}"; do
  u=${f%.txt}.u32
  [[ -f $u && $u -nt $f ]] && continue
  head -c $((bytes / 4)) "$f" | "$bin" decode --backend=cpu --errors=replace -o "$u" - || exit 3
done
echo "inputs ready after $((SECONDS - start)) s" | tee -a "$log"
for f in "${files[@]}"; do cat "$f" "${f%.txt}.u32" >/dev/null 2>&1; done  # warm the page cache

# ------------------------------------------------------------------------ timing ----
csv=$out/e2e.csv
echo "file,input_bytes,tool,backend,operation,runs,median_s,gb_per_s,status" >"$csv"

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# measure NAME INPUT_BYTES TOOL BACKEND OPERATION -- COMMAND... (stdout to /dev/null)
measure() {
  local name=$1 in_bytes=$2 tool=$3 backend=$4 operation=$5
  shift 6
  if ((SECONDS - start > budget)); then
    echo "$name,$in_bytes,$tool,$backend,$operation,0,,,skipped (budget)" >>"$csv"
    echo "  skipped (budget): $tool $backend $operation $name"
    return
  fi
  local times=() status=ok rc t0 t1 r
  for ((r = 0; r < reps; r++)); do
    [[ -n ${pre:-} ]] && eval "$pre"  # untimed set-up of each run
    t0=$(now)
    timeout 300 "$@" >/dev/null 2>"$out/.stderr"
    rc=$?
    t1=$(now)
    # gutf8 and iconv exit 1 for invalid input: that is a result, not a failure.
    if ((rc != 0 && rc != 1)); then
      status="failed (exit $rc: $(head -c 200 "$out/.stderr" | tr '\n,' '  '))"
      break
    fi
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')")
    if [[ $tool == gutf8 ]]; then
      { echo "== $tool $backend $operation $name (run $((r + 1)))"; cat "$out/.stderr"; } >>"$log"
    fi
    awk -v t="${times[-1]}" 'BEGIN {exit !(t > 10)}' && break  # slow: once is enough
  done
  local med gbs
  med=$(printf '%s\n' "${times[@]}" | median)
  gbs=$(awk -v b="$in_bytes" -v t="$med" 'BEGIN {if (t > 0) printf "%.3f", b / t / 1e9}')
  echo "$name,$in_bytes,$tool,$backend,$operation,${#times[@]},$med,$gbs,$status" >>"$csv"
  printf '  %-6s %-5s %-17s %-22s %8ss %8s GB/s %s\n' "$tool" "$backend" "$operation" "$name" "$med" "$gbs" \
    "$([[ $status == ok ]] || echo "$status")"
}

utfcpp=$(dirname "$bin")/bench/utfcpp_decode
printf 'hello\n' >"$work/tiny.txt"
wants() { [[ " $ops " == *" $1 "* ]]; }
for backend in $backends; do
  measure tiny 6 gutf8 $backend "validate (start-up)" -- "$bin" validate --verbose --backend=$backend "$work/tiny.txt"
done
for backend in $backends; do
  for f in "${files[@]}"; do
    name=$(basename "${f%-*}")
    u=${f%.txt}.u32
    ub=$(stat -c %s "$u" 2>/dev/null || echo 0)
    wants validate && measure "$name" "$bytes" gutf8 $backend validate -- "$bin" validate --verbose --backend=$backend "${chunk[@]}" "$f"
    wants validate-replace && measure "$name" "$bytes" gutf8 $backend "validate --replace" -- \
      "$bin" validate --verbose --replace --backend=$backend "${chunk[@]}" "$f"
    wants decode && measure "$name" "$bytes" gutf8 $backend decode -- "$bin" decode --verbose --errors=replace --backend=$backend "${chunk[@]}" "$f"
    wants encode && measure "$name" "$ub" gutf8 $backend encode -- "$bin" encode --verbose --errors=replace --backend=$backend "${chunk[@]}" "$u"
  done
done
wants decode-file && for backend in $backends; do
  for f in "${files[@]}"; do
    name=$(basename "${f%-*}")
    [[ $name == cjk || $name == mixed ]] || continue  # ascii's 16 GiB of output would crowd the disk
    pre='rm -f "$work/out.u32"' measure "$name" "$bytes" gutf8 $backend "decode -o file" -- \
      "$bin" decode --verbose --errors=replace --backend=$backend "${chunk[@]}" -o "$work/out.u32" "$f"
  done
done
rm -f "$work/out.u32"
sweep_kind=${kinds%% *}  # sweeps cut the first kind's file
mixed=$work/$sweep_kind-$bytes.txt
for s in $sweep; do
  sb=$(python3 -c "import sys; sys.path.insert(0, 'corpus'); import make_corpus; print(make_corpus.parse_size('$s'))")
  part=$work/sweep-$sb.txt
  head -c "$sb" "$mixed" >"$part"
  for backend in $backends; do
    measure "$sweep_kind-$s" "$sb" gutf8 $backend validate -- "$bin" validate --verbose --backend=$backend "$part"
    measure "$sweep_kind-$s" "$sb" gutf8 $backend decode -- "$bin" decode --verbose --errors=replace --backend=$backend "$part"
  done
  rm -f "$part"
done
for t in $threads_sweep; do
  measure "$sweep_kind" "$bytes" gutf8 "cpu --threads $t" validate -- "$bin" validate --verbose --backend=cpu --threads "$t" "$mixed"
  measure "$sweep_kind" "$bytes" gutf8 "cpu --threads $t" decode -- \
    "$bin" decode --verbose --errors=replace --backend=cpu --threads "$t" "$mixed"
done
reps=${baseline_reps:-$reps}
((baselines)) && for f in "${files[@]}"; do
  name=$(basename "${f%-*}")
  flags=()
  [[ $name == *invalid* ]] && flags=(-c)
  measure "$name" "$bytes" iconv - "decode${flags:+ (-c)}" -- iconv "${flags[@]}" -f UTF-8 -t UTF-32LE "$f"
  measure "$name" "$bytes" python3 - "decode (replace)" -- \
    python3 -c "import sys; sys.stdout.write(str(len(open(sys.argv[1], 'rb').read().decode('utf-8', errors='replace'))))" "$f"
  [[ -x $utfcpp ]] && measure "$name" "$bytes" utfcpp - "decode" -- "$utfcpp" "$f"
done
rm -f "$out/.stderr"

# ---------------------------------------------------------------------- markdown ----
{
  echo "# gutf8 end-to-end ($bytes-byte files, page cache warm, output to /dev/null)"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- CPU: $(nproc) cores, $(awk -F: '/model name/{print $2; exit}' /proc/cpuinfo | sed 's/^ *//')"
  echo "- Binary: $($bin --version | head -1)$([[ -f $(dirname "$bin")/COMMIT ]] && echo ", bundle of commit $(tr '\n' ' ' <"$(dirname "$bin")/COMMIT")")"
  echo "- Date: $(date -u +%Y-%m-%d)"
  echo
  echo "Wall clock, median of up to $reps runs; GB/s of input bytes (encode: UTF-32LE input)."
  echo
  echo "| file | tool | backend | operation | median s | GB/s | runs | status |"
  echo "|---|---|---|---|---:|---:|---:|---|"
  tail -n +2 "$csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $3, $4, $5, $7, $8, $6, $9}'
} >"$out/e2e.md"
echo "done in $((SECONDS - start)) s: $csv, $out/e2e.md, $log"
