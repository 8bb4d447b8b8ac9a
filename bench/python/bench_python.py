"""Benchmarks of the gutf8 Python package (issue 22), written as a markdown report.

1. Call overhead on small inputs: µs per call of gutf8.validate / decode / repair against
   bytes.decode (valid mixed-script text cut from corpus/sample/mixed.txt).
2. validate_file on one large file against the CLI (`gutf8 validate FILE`), wall clock.
3. gutf8.dask.validate_files over many files with 1, 2 and 4 local worker processes (CPU workers,
   or with --dask-backend cuda one GPU worker per device, gutf8.dask.local_gpu_cluster).

Every figure is the median of --reps runs. Sizes are arguments so the same script runs scaled
down on a small machine and at full size on a large one:

  python bench/python/bench_python.py --cli build/gutf8 --big-size 4G --files 256 \
      --file-size 64M --out bench/results/python_h100.md
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import gutf8

ROOT = Path(__file__).resolve().parents[2]


def size_arg(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def sample_text() -> bytes:
    return (ROOT / "corpus" / "sample" / "mixed.txt").read_bytes()


def valid_prefix(data: bytes, n: int) -> bytes:
    return data[:n].decode("utf-8", "ignore").encode()  # drops a sequence cut at n


def make_file(path: Path, size: int, seed_text: bytes, invalid_every: int = 0) -> int:
    """About `size` bytes of the sample tiled, cut after a newline (a character boundary); with
    invalid_every, a 0xFF byte every that many bytes. Returns the size written."""
    block = bytearray(seed_text * max(1, (4 << 20) // len(seed_text)))
    if invalid_every:
        block[invalid_every // 2::invalid_every] = b"\xff" * len(block[invalid_every // 2::invalid_every])
    written = 0
    with open(path, "wb") as f:
        while written < size:
            part = bytes(block[: min(size - written, len(block))])
            if len(part) < len(block):
                part = part[: part.rfind(b"\n") + 1] or part
            f.write(part)
            written += len(part)
            if len(part) < len(block):
                break
    return written


def overhead(reps: int, sizes: list[int]) -> list[str]:
    text = sample_text()
    rows = ["| bytes | bytes.decode | gutf8.validate | gutf8.decode (numpy) | gutf8.repair | decode ÷ bytes.decode |",
            "|---:|---:|---:|---:|---:|---:|"]
    for n in sizes:
        b = valid_prefix(text, n)
        calls = {
            "bytes.decode": lambda: b.decode("utf-8"),
            "validate": lambda: gutf8.validate(b, backend="cpu", threads=1),
            "decode": lambda: gutf8.decode(b, backend="cpu", threads=1),
            "repair": lambda: gutf8.repair(b, backend="cpu", threads=1),
        }
        us = {}
        for name, fn in calls.items():
            t = timeit.Timer(fn)
            loops = max(1, t.autorange()[0])
            us[name] = statistics.median(t.repeat(reps, loops)) / loops * 1e6
        rows.append(f"| {len(b)} | {us['bytes.decode']:.2f} | {us['validate']:.2f} | {us['decode']:.2f} | "
                    f"{us['repair']:.2f} | {us['decode'] / us['bytes.decode']:.1f}× |")
    return rows


def median_seconds(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def big_file(reps: int, size: int, cli: str | None, workdir: Path) -> list[str]:
    path = workdir / "big.txt"
    size = make_file(path, size, sample_text())
    gutf8.validate_file(path)  # into the page cache
    rows = ["| run | median s | GB/s |", "|---|---:|---:|"]
    py = median_seconds(lambda: gutf8.validate_file(path), reps)
    rows.append(f"| `gutf8.validate_file` (backend auto, all threads) | {py:.3f} | {size / py / 1e9:.2f} |")
    if cli:
        run = lambda: subprocess.run([cli, "validate", "--no-progress", str(path)], check=True)
        c = median_seconds(run, reps)
        rows.append(f"| `gutf8 validate` (CLI, process start included) | {c:.3f} | {size / c / 1e9:.2f} |")
        rows.append(f"| binding ÷ CLI time | {py / c:.2f}× | |")
    path.unlink()
    return rows


def cluster_of(workers: int, backend: str):
    """CPU workers of one thread each, or (cuda) one worker on each of the first `workers` GPUs."""
    from distributed import LocalCluster

    if backend == "cuda":
        return gutf8.dask.local_gpu_cluster(list(range(workers)), dashboard_address=None)
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")


def many_files(reps: int, count: int, size: int, workers: list[int], workdir: Path, backend: str) -> list[str]:
    try:
        from distributed import Client
    except ImportError:
        return ["Not run: `distributed` is not installed here (`pip install '.[dask]'`)."]

    import gutf8.dask

    folder = workdir / "many"
    folder.mkdir()
    text = sample_text()
    total = sum(make_file(folder / f"f{i:04d}.txt", size, text, invalid_every=(1 << 20) if i % 4 == 0 else 0)
                for i in range(count))
    pattern = str(folder / "*.txt")
    rows = ["| workers | median s | GB/s | speed-up |", "|---:|---:|---:|---:|"]
    base = None
    # CPU workers run one thread each; a GPU worker's tasks hold its GPU (resources), all of its threads.
    options = {"threads": 1} if backend == "cpu" else {"resources": {"GPU": 1}}
    for w in workers:
        with cluster_of(w, backend) as cluster, Client(cluster) as client:
            run = lambda: gutf8.dask.validate_files(pattern, client=client, backend=backend, **options)
            run()  # warm-up: CUDA's start-up on every worker
            s = median_seconds(run, reps)
        base = base or s
        rows.append(f"| {w} | {s:.3f} | {total / s / 1e9:.2f} | {base / s:.2f}× |")
    return rows


def current_commit() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node() or 'host'}: {model}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cli", help="path of the gutf8 CLI to compare validate_file with")
    ap.add_argument("--big-size", type=size_arg, default=size_arg("4G"))
    ap.add_argument("--files", type=int, default=256)
    ap.add_argument("--file-size", type=size_arg, default=size_arg("64M"))
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--dask-backend", choices=["cpu", "cuda"], default="cpu",
                    help="the dask workers: CPU processes of one thread, or one per GPU")
    ap.add_argument("--sections", default="overhead,file,dask", help="which of overhead, file, dask to run")
    ap.add_argument("--workdir", default=None, help="where the generated files go (default: a temporary dir)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    commit = current_commit()
    with tempfile.TemporaryDirectory(dir=a.workdir) as tmp:
        work = Path(tmp)
        wanted = set(a.sections.split(","))
        sections = [
            f"# gutf8 Python package benchmarks\n\nMachine: {machine()}. Commit {commit}. "
            f"gutf8 built with CUDA: {gutf8.built_with_cuda}, GPU usable: {gutf8.cuda_available()}. "
            f"Median of {a.reps} runs each.\n\nCommand: `python {' '.join(sys.argv)}`\n"]
        if "overhead" in wanted:
            sections += [
                "## Call overhead on small valid inputs (µs per call, CPU backend, 1 thread)\n\n"
                "Input: the first N bytes of `corpus/sample/mixed.txt` (cut at a character boundary).\n",
                "\n".join(overhead(a.reps, [0, 16, 64, 256, 1024, 4096]))]
        if "file" in wanted:
            sections += [
                f"\n## validate_file on one {a.big_size / 2**30:.2f} GiB file against the CLI\n\n"
                "Input: `corpus/sample/mixed.txt` tiled, in the page cache.\n",
                "\n".join(big_file(a.reps, a.big_size, a.cli, work))]
        if "dask" in wanted:
            workers = ("LocalCluster, worker processes of 1 thread, backend cpu, threads=1" if a.dask_backend == "cpu"
                       else "local_gpu_cluster, one worker process per GPU, backend cuda")
            sections += [
                f"\n## gutf8.dask.validate_files over {a.files} files × {a.file_size / 2**20:.0f} MiB ({workers})\n\n"
                "Input: `corpus/sample/mixed.txt` tiled; every fourth file has a 0xFF byte every MiB.\n",
                "\n".join(many_files(a.reps, a.files, a.file_size, [int(w) for w in a.workers.split(",")], work,
                                      a.dask_backend))]
    sections.append("\nLoad average (1 min) at the end of the run: %.1f on %d CPUs (other work on the machine "
                    "shows here)." % (os.getloadavg()[0], os.cpu_count()))
    Path(a.out).write_text("\n".join(sections) + "\n")
    print(Path(a.out).read_text())


if __name__ == "__main__":
    main()
