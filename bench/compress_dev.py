#!/usr/bin/env python3
"""One core's compressed-input rates, gutf8 (bench_cpu_compress) beside the standard tools.

Runs bench_cpu_compress (median of --repeats runs, CPU time) with GUTF8_BENCH_DUMP so that it
writes its text and compressed files, then times each tool on the very same files (`TOOL -d -c`
and `TOOL -c` at its default level, to /dev/null; the median CPU time, user + system, of the
tool's process over --repeats runs) and prints a markdown table of MB/s of text (10^6 bytes).

    python3 bench/compress_dev.py --bench build/bench/bench_cpu_compress --repeats 5
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile

FORMATS = [("gzip", ".gz"), ("zstd", ".zst"), ("xz", ".xz"), ("bzip2", ".bz2"), ("lz4", ".lz4")]


def child_cpu(command, stdin_path):
    """CPU seconds (user + system) of one run of command, its input from stdin_path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin_path, "rb") as stdin, open(os.devnull, "wb") as devnull:
        subprocess.run(command, stdin=stdin, stdout=devnull, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tool_rate(command, path, text_bytes, repeats):
    return text_bytes / statistics.median(child_cpu(command, path) for _ in range(repeats)) / 1e6


def bench_rates(bench, dump, repeats):
    env = dict(os.environ, GUTF8_BENCH_DUMP=dump)
    out = subprocess.run([bench, f"--benchmark_repetitions={repeats}", "--benchmark_report_aggregates_only=true",
                          "--benchmark_format=json"], env=env, check=True, capture_output=True, text=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rates[b["run_name"]] = (b["bytes_per_second"] / 1e6, b.get("ratio"))
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/bench/bench_cpu_compress")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as dump:
        rates = bench_rates(args.bench, dump, args.repeats)
        text = os.path.join(dump, "text.txt")
        size = os.path.getsize(text)
        print("| format | ratio (parts) | gutf8 parts, whole | gutf8 parts, 64 KiB reads | tool -d, parts file "
              "| ratio (stream) | gutf8 stream | tool -d, stream file | gutf8 compress parts | gutf8 compress stream | tool -c |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, suffix in FORMATS:
            parts, ratio = rates[f"decode_parts/{name}"]
            parts64, _ = rates[f"decode_parts_64k/{name}"]
            stream, stream_ratio = rates[f"decode_stream/{name}"]
            encode, _ = rates[f"encode_parts/{name}"]
            encode_stream, _ = rates[f"encode_stream/{name}"]
            tool_parts = tool_rate([name, "-d", "-c"], os.path.join(dump, "parts" + suffix), size, args.repeats)
            tool_stream = tool_rate([name, "-d", "-c"], os.path.join(dump, "stream" + suffix), size, args.repeats)
            tool_c = tool_rate([name, "-c"], text, size, max(1, args.repeats // 2 if name in ("xz", "bzip2") else args.repeats))
            print(f"| {name} | {ratio:.2f} | {parts:.0f} | {parts64:.0f} | {tool_parts:.0f} | {stream_ratio:.1f} "
                  f"| {stream:.0f} | {tool_stream:.0f} | {encode:.1f} | {encode_stream:.1f} | {tool_c:.1f} |")
        for peer in ("peer_libdeflate_gzip_parts", "peer_zstd_one_shot_parts"):
            print(f"\n{peer}: {rates[peer][0]:.0f} MB/s", end="")
        print()


if __name__ == "__main__":
    main()
