#!/usr/bin/env python3
"""The big-file engine's tuning knobs swept side by side with the simdutf peer, in one call.

For each big file and thread count, the operations of --ops: validate (gutf8 at several
pieces-in-flight windows and one worker fewer, beside `simdutf_files validate`), decode to
/dev/null (gutf8 at several piece sizes, release steps and lower ISAs (GUTF8_CPU_ISA), beside
`simdutf_files decode`) and `validate --replace -o /dev/null` (against gutf8's validate).
Knobs are the CLI's environment variables GUTF8_PIECE_BYTES (a big file's pieces before the
operation scales them), GUTF8_PIECES_AHEAD (pieces in flight beyond the commit),
GUTF8_RELEASE_BYTES (how much of a mapped file's pages leave the process at a time), GUTF8_PIECE_GROWTH
(how far a big file's pieces may double; 1: never), and any given
with --env (GUTF8_POPULATE=0: each piece's pages faulted in as scanned, not mapped by one call first;
GUTF8_RESULTS_BATCH: pieces done before the committing thread is woken).
Rounds are interleaved (every variant once a round); wall clock from process start, files in the
page cache, median of --reps. Writes CSV rows to --out and prints a compact table last.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str], env: dict[str, str]) -> float:
    full = dict(os.environ, **env)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=full)
    s = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} (env {env}) exited {r.returncode}: {r.stderr.decode()[-400:]}")
    return s


def variants(a: argparse.Namespace, path: str, t: int) -> list[tuple[str, str, list[str], dict[str, str]]]:
    """(op, label, command, env) for one file and thread count."""
    g = [a.gutf8]
    th = ["--threads", str(t)]
    out = []
    if "validate" in a.ops:
        if a.simdutf:
            out.append(("validate", "simdutf", [a.simdutf, "validate", path, str(t)], {}))
        out.append(("validate", "gutf8", g + ["validate"] + th + [path], {}))
        for ahead in a.ahead:
            out.append(("validate", f"gutf8 ahead={ahead}", g + ["validate"] + th + [path], {"GUTF8_PIECES_AHEAD": ahead}))
        for release in a.release:
            out.append(("validate", f"gutf8 release={release}", g + ["validate"] + th + [path],
                        {"GUTF8_RELEASE_BYTES": release}))
        for setting, env in a.env:
            out.append(("validate", f"gutf8 {setting}", g + ["validate"] + th + [path], env))
        if t > 1:
            out.append(("validate", f"gutf8 {t - 1} workers", g + ["validate", "--threads", str(t - 1), path], {}))
    if "decode" in a.ops:
        decode = g + ["decode"] + th + ["-o", "/dev/null", path]
        if a.simdutf:
            out.append(("decode", "simdutf", [a.simdutf, "decode", path, str(t)], {}))
        out.append(("decode", "gutf8", decode, {}))
        for piece in a.decode_pieces:
            out.append(("decode", f"gutf8 pieces={piece}", decode, {"GUTF8_PIECE_BYTES": piece}))
        for isa in a.decode_isas:
            out.append(("decode", f"gutf8 isa={isa}", decode, {"GUTF8_CPU_ISA": isa}))
        for release in a.decode_release:
            out.append(("decode", f"gutf8 release={release}", decode, {"GUTF8_RELEASE_BYTES": release}))
        for setting, env in a.env:
            out.append(("decode", f"gutf8 {setting}", decode, env))
    if "replace" in a.ops:
        out.append(("replace", "gutf8 --replace", g + ["validate", "--replace"] + th + ["-o", "/dev/null", path], {}))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gutf8", required=True)
    p.add_argument("--simdutf", default="")
    p.add_argument("--files", default="", help="comma-separated big files (in the page cache)")
    p.add_argument("--work", default="", help="else made here as bench/host_engine.py makes them")
    p.add_argument("--sizes", default="2G", help="with --work: the files' sizes")
    p.add_argument("--kinds", default="ascii,cjk", help="with --work: the files' kinds")
    p.add_argument("--threads", default="16", help="comma-separated thread counts")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--ahead", default="", help="GUTF8_PIECES_AHEAD values for validate, comma-separated")
    p.add_argument("--release", default="", help="GUTF8_RELEASE_BYTES values for validate, comma-separated")
    p.add_argument("--decode-pieces", default="8M,1M,512K", help="GUTF8_PIECE_BYTES values for decode")
    p.add_argument("--decode-isas", default="", help="GUTF8_CPU_ISA values for decode (avx2, portable: below the host's)")
    p.add_argument("--decode-release", default="", help="GUTF8_RELEASE_BYTES values for decode, comma-separated")
    p.add_argument("--env", default="", help="more validate and decode variants, comma-separated, each NAME=VALUE environment "
                   "settings joined by + (e.g. GUTF8_POPULATE=0,GUTF8_POPULATE=0+GUTF8_RESULTS_BATCH=16)")
    p.add_argument("--ops", default="validate,decode,replace", help="which operations' variants to run")
    p.add_argument("--out", default="engine_knobs.csv")
    a = p.parse_args()
    a.ahead = [x for x in a.ahead.split(",") if x]
    a.decode_pieces = [x for x in a.decode_pieces.split(",") if x]
    a.decode_isas = [x for x in a.decode_isas.split(",") if x]
    a.decode_release = [x for x in a.decode_release.split(",") if x]
    a.ops = set(x for x in a.ops.split(",") if x)
    a.release = [x for x in a.release.split(",") if x]
    # NAME=VALUE settings, several joined by +
    a.env = [(x, dict(part.partition("=")[::2] for part in x.split("+"))) for x in a.env.split(",") if x]
    files = [x for x in a.files.split(",") if x]
    if a.work:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import host_engine  # the same inputs as the engine's benchmark
        os.makedirs(a.work, exist_ok=True)
        # Whole lines: a size that cuts the tile inside a character would make every run exit 1.
        files += [host_engine.text_file(a.work, kind, host_engine.parse_size(s), whole_lines=True)
                  for s in a.sizes.split(",") for kind in a.kinds.split(",")]
    rows = []
    for path in files:
        size = os.path.getsize(path)
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # into the page cache
        for t in (int(x) for x in a.threads.split(",")):
            vs = variants(a, path, t)
            times: list[list[float]] = [[] for _ in vs]
            for _ in range(a.reps):
                for k, (_, _, cmd, env) in enumerate(vs):
                    times[k].append(timed(cmd, env))
            for (op, label, _, env), ts in zip(vs, times):
                m = statistics.median(ts)
                rows.append({"input": os.path.basename(path), "threads": t, "op": op, "variant": label,
                             "median_s": f"{m:.4f}", "gb_per_s": f"{size / m / 1e9:.2f}",
                             "runs": " ".join(f"{x:.4f}" for x in ts)})
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    # The table: each row's GB/s, and its ratio to the op's reference (the peer; replace: validate).
    ref: dict[tuple[str, int, str], float] = {}
    for r in rows:
        key = (r["input"], r["threads"], r["op"])
        if r["variant"] == "simdutf" or (r["op"] == "validate" and r["variant"] == "gutf8" and not a.simdutf):
            ref[key] = float(r["gb_per_s"])
        if r["op"] == "validate" and r["variant"] == "gutf8":
            ref[(r["input"], r["threads"], "replace")] = float(r["gb_per_s"])
    print(f"{'input':<22} {'T':>3} {'op':<9} {'variant':<26} {'GB/s':>7} {'ratio':>6}")
    for r in rows:
        base = ref.get((r["input"], r["threads"], r["op"]))
        ratio = f"{float(r['gb_per_s']) / base:.2f}" if base else ""
        print(f"{r['input']:<22} {r['threads']:>3} {r['op']:<9} {r['variant']:<26} {r['gb_per_s']:>7} {ratio:>6}")


if __name__ == "__main__":
    main()
