#!/usr/bin/env bash
# Per-kernel registers, spills, shared memory and SASS instruction count of the CUDA sources,
# compiled for sm_90 without a GPU: compares a kernel refactor before the H100 A/B run.
#   scripts/dev/sass_fingerprint.sh OUT.tsv [FILE.cu ...]   (default: the library's device sources)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1; shift
srcs=("$@")
[[ ${#srcs[@]} -gt 0 ]] || srcs=("$root"/src/cuda/device_*.cu "$root"/kernels/utf8/kernel_stats.cu)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || echo "$(dirname "$nvcc")/cuobjdump")}  # also on PyPI: nvidia-cuda-cuobjdump
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
: > "$out"
for src in "${srcs[@]}"; do
  cubin=$tmp/$(basename "$src").cubin
  "$nvcc" -cubin -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr -std=c++20 \
    -I"$root/src" -I"$root/include" -I"$root/kernels" -I"$root/build/include" -o "$cubin" "$src"
  "$cuobjdump" -res-usage "$cubin" | awk -v f="$(basename "$src")" '
    /Function/ {name=$2; sub(":$","",name)}
    /REG:/ {for (i=1;i<=NF;i++) {split($i,kv,":"); r[kv[1]]=kv[2]}; print f "\t" name "\tREG=" r["REG"] "\tSTACK=" r["STACK"] "\tSHARED=" r["SHARED"] "\tLOCAL=" r["LOCAL"]}' > "$tmp/res"
  "$cuobjdump" -sass "$cubin" | awk '
    /Function :/ {name=$3}
    /^ +\/\*[0-9a-f]+\*\// {n[name]++}
    END {for (k in n) print k "\t" n[k]}' > "$tmp/sass"
  awk -F'\t' 'NR==FNR {cnt[$1]=$2; next} {print $0 "\tSASS=" cnt[$2]}' "$tmp/sass" "$tmp/res" >> "$out"
done
sort -o "$out" "$out"
