#!/usr/bin/env bash
# Runs ON the GPU host from the repository root: gutf8 in DuckDB and Polars on the host's CPUs
# (bench/python/bench_engines.py, and the engine tests), from carried wheels, since that host has
# no package registry. Builds nothing.
#   scripts/gpu/engines.sh OUT_DIR [duckdb] [polars]      (default: both)
# Wheels for its Python 3.12 (cp312, manylinux x86-64): the gutf8 wheel of
# scripts/gpu/stage_python.sh (.device-python/, or in .whl/), and in .whl/ those of
# scripts/gpu/stage_wheels.sh duckdb (25 MB) or polars (55 MB); pyarrow and numpy are the host's
# own. Both engines' wheels together pass a device call's 64 MiB: one call an engine, each with
# its own .whl/ and OUT_DIR.
# GUTF8_ENGINES_ROWS (default 10000000), GUTF8_ENGINES_REPS (5), GUTF8_ENGINES_SLOW_REPS (3:
# the Python UDFs, which take most of the time) scale the benchmark to the call's time.
# Writes OUT_DIR/engines_h200.md, engines_tests.log, engines.log, pip.log; prints a summary last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: engines.sh OUT_DIR [duckdb] [polars]}
shift
engines=$(IFS=,; echo "${*:-duckdb,polars}")
mkdir -p "$out"
site=${GUTF8_SITE:-/tmp/site}  # where the wheels are installed (pip --target)
wheels=(.whl/*.whl)
compgen -G '.device-python/*.whl' > /dev/null && wheels+=(.device-python/*.whl)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
  "${wheels[@]}" > "$out/pip.log" 2>&1 || { echo "engines.sh: pip failed (pip.log):"; tail -5 "$out/pip.log"; exit 1; }
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
[[ -d .device-python/lib ]] && export LD_LIBRARY_PATH=$PWD/.device-python/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
commit=$(cat .device-python/COMMIT 2> /dev/null || git rev-parse --short HEAD 2> /dev/null || echo unknown)
tests=()
[[ $engines == *duckdb* ]] && tests+=(tests/python/test_duckdb.py)
[[ $engines == *polars* ]] && tests+=(tests/python/test_polars.py)
timeout 120 python3 -m pytest -q -rfEs -p no:cacheprovider "${tests[@]}" > "$out/engines_tests.log" 2>&1
tests_rc=$?
work=$(mktemp -d /dev/shm/gutf8-engines.XXXXXX)
trap 'rm -rf "$work"' EXIT
timeout 400 python3 bench/python/bench_engines.py --rows "${GUTF8_ENGINES_ROWS:-10000000}" \
  --reps "${GUTF8_ENGINES_REPS:-5}" --slow-reps "${GUTF8_ENGINES_SLOW_REPS:-3}" --engines "$engines" \
  --workdir "$work" --commit "$commit" --out "$out/engines_h200.md" > "$out/engines.log" 2>&1
bench_rc=$?
echo "== engine tests (rc $tests_rc): $(tail -1 "$out/engines_tests.log")"
echo "== bench_engines (rc $bench_rc), wheel $commit, $(nproc) CPUs: $out/engines_h200.md"
grep -E '^- |^### |÷' "$out/engines_h200.md" 2> /dev/null || tail -20 "$out/engines.log"
