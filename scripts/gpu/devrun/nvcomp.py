"""nvCOMP parts (bundles staged from a GUTF8_NVCOMP build: gutf8, tests/gutf8_nvcomp_tests, bench/bench_nvcomp,
libnvcomp.so.6 in the bundle's lib/): the zstd lane's tests, memcheck over them, the probe of a frame the
CPU's structure check would keep from the GPU, the batched decompression rate, and the engine's GPU
lanes decompressing zstd files with nvCOMP (tests, then gutf8 validate --backend=cpu against cuda).
The group nvcomp_landing (about 7 minutes): each test in its own process under a time limit, gutf8 on
frames with flipped payload bytes (each run ends), cpu against cuda at 1 GiB and 4 GiB, memcheck over
the corrupt-frame cases."""
from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from .bench import commit_of
from .core import Context, Outcome, group, markdown_table, median, part, tail
from .files import read_through, text_file, work
from .tests import gtest, sanitize_one

PROGRAM = "tests/gutf8_nvcomp_tests"
CHECKED = "NvcompZstd*:NvcompXxh64*-NvcompZstdUnchecked.*"  # the frames a GPU lane would take, and the host side
PROBE = "NvcompZstdUnchecked.*"  # undefined behaviour in nvCOMP's terms: run apart, never in the filters above
ENGINE = "NvcompEngine.*"  # the engine's GPU lanes on zstd files, against the CPU backend


@part("nvcomp_tests", cap=150, needs=(PROGRAM,), help="gutf8_nvcomp_tests: nvCOMP's zstd lane against libzstd's frames")
def nvcomp_tests(ctx: Context) -> Outcome:
    return gtest(ctx, "nvcomp_tests", PROGRAM, 150, args=[f"--gtest_filter={CHECKED}"])


@part("nvcomp_memcheck", cap=300, needs=(PROGRAM,), tools=("compute-sanitizer",),
      help="compute-sanitizer memcheck over gutf8_nvcomp_tests (the corrupt-frame fuzz included)")
def nvcomp_memcheck(ctx: Context) -> Outcome:
    word, clean = sanitize_one(ctx, "memcheck", "nvcomp_tests", ctx.path(PROGRAM),
                               [f"--gtest_filter={CHECKED}", "--gtest_color=no"], 300)
    return Outcome("nvcomp_memcheck", "pass" if clean else "fail", f"errors: {word}")


@part("nvcomp_probe", cap=150, needs=(PROGRAM,), tools=("compute-sanitizer",),
      help="a frame cut mid-block given to nvCOMP anyway: what it reports, and memcheck's count")
def nvcomp_probe(ctx: Context) -> Outcome:
    plain = gtest(ctx, "nvcomp_probe", PROGRAM, 60, args=[f"--gtest_filter={PROBE}"])
    said = re.search(r"frame cut mid-block: .*", ctx.logs.joinpath("nvcomp_probe.log").read_text(errors="replace"))
    word, clean = sanitize_one(ctx, "memcheck", "nvcomp_probe", ctx.path(PROGRAM),
                               [f"--gtest_filter={PROBE}", "--gtest_color=no"], 80)
    return Outcome("nvcomp_probe", plain.status, f"{said.group(0) if said else plain.summary}; memcheck errors: {word}"
                   + ("" if clean else " (the CPU's structure check keeps such frames)"))


def bench_rows(ctx: Context, name: str, fmt: str, level: str) -> Outcome:
    text = text_file(ctx, "mixed", 512 << 20)
    table = ctx.out / f"nvcomp_{fmt}.md"
    step = ctx.run(name, [ctx.path("bench/bench_nvcomp"), "--input", text, "--format", fmt, "--frames", "65536,1048576",
                          "--level", level, "--runs", "7", "--commit", commit_of(ctx), "--out", table], 240)
    return Outcome(name, "pass" if step.ok else "fail", f"rc {step.rc}; {table.name}",
                   details="```\n" + (table.read_text() if table.exists() else tail(step.log)) + "```\n")


@part("nvcomp_bench", cap=240, needs=("bench/bench_nvcomp",),
      help="bench_nvcomp: 512 MiB of mixed text as 64 KiB and 1 MiB zstd -3 frames, device-resident")
def nvcomp_bench(ctx: Context) -> Outcome:
    return bench_rows(ctx, "nvcomp_bench", "zstd", "3")


@part("nvcomp_gzip_bench", cap=240, needs=("bench/bench_nvcomp",),
      help="bench_nvcomp --format gzip: the same text as gutf8's gzip members (libdeflate -6) of 64 KiB and 1 MiB, "
           "nvCOMP's gzip API (naive, look-ahead) and raw deflate API, device-resident")
def nvcomp_gzip_bench(ctx: Context) -> Outcome:
    return bench_rows(ctx, "nvcomp_gzip_bench", "gzip", "6")



def zstd_inputs(ctx: Context, text: Path, size: int, only: tuple = ()) -> dict:
    """The benchmark's inputs, written once by the bundle's bench_nvcomp (the host has no zstd tool):
    name -> files. zstd -3 frames of 1 MiB without checksums in one file and in 64 shards, and with checksums
    (verified on the GPU) in one file: what the GPU lanes take; 64 shards of one frame each (frames of more
    than 4 MiB: read in order by the CPU's decoder, as before)."""
    folder = work(ctx) / f"nvcomp-engine-{size}"
    folder.mkdir(parents=True, exist_ok=True)
    kinds = {"framed 1 MiB": ("framed.zst", 1 << 20, 0, 1), "64 shards of 1 MiB frames": ("shards.zst", 1 << 20, 0, 64),
             "64 shards, one frame each": ("single.zst", 0, 0, 64), "framed 1 MiB, checksums": ("checked.zst", 1 << 20, 1, 1)}
    inputs = {}
    for name, (file, frame, checksum, shards) in kinds.items():
        if only and name not in only:
            continue
        out = folder / file
        files = [out] if shards == 1 else [folder / f"{out.stem}-{k:03d}.zst" for k in range(shards)]
        if not all(f.exists() for f in files):
            step = ctx.run(f"nvcomp_write_{out.stem}", [ctx.path("bench/bench_nvcomp"), "--input", text, "--size", size,
                                                        "--write", out, "--frames", frame, "--level", 3,
                                                        "--checksum", checksum, "--shards", shards], 120)
            if not step.ok:
                continue
        for f in files:
            read_through(f)
        inputs[name] = files
    return inputs


def rate(size: int, seconds: float | None) -> str:
    return f"{size / seconds / 1e9:.2f}" if seconds else "failed"


def validate_seconds(ctx: Context, name: str, files: list, backend: str, runs: int) -> tuple[float | None, str, int]:
    """gutf8 validate --backend=B over the files: the median wall clock of runs after a warm-up, the
    --verbose line of the last run (what the GPU decompressed) and its exit status."""
    seconds, verbose, rc = [], "", -1
    for k in range(runs + 1):
        t0 = time.monotonic()
        step = ctx.run(f"{name}_{backend}_{k}", [ctx.path("gutf8"), "validate", f"--backend={backend}", "--verbose",
                                                 *files], 60)
        rc = step.rc
        if rc not in (0, 1):
            return None, tail(step.log, 3), rc
        if k > 0:
            seconds.append(time.monotonic() - t0)
        verbose = step.text()
    found = re.search(r"read and process .*", verbose)
    return median(seconds), found.group(0) if found else "", rc


@part("nvcomp_engine", cap=240, needs=("gutf8", PROGRAM, "bench/bench_nvcomp"),
      help="the engine's GPU lanes on zstd files (nvCOMP): NvcompEngine tests, then gutf8 validate cpu vs cuda")
def nvcomp_engine(ctx: Context) -> Outcome:
    tests = gtest(ctx, "nvcomp_engine_tests", PROGRAM, 120, args=[f"--gtest_filter={ENGINE}"])
    size = int(ctx.options.get("nvcomp_size", 1 << 30))
    text = text_file(ctx, "mixed", size)
    rows, ratios = [], []
    for name, files in zstd_inputs(ctx, text, size).items():
        if ctx.limit(240) < 30:
            rows.append([name, "budget", "", "", "", "", ""])
            continue
        cpu, _, cpu_rc = validate_seconds(ctx, "nvcomp_cpu", files, "cpu", 3)
        cuda, said, cuda_rc = validate_seconds(ctx, "nvcomp_cuda", files, "cuda", 3)
        ratio = cpu / cuda if cpu and cuda and cpu_rc == cuda_rc else None  # the same verdict, or no figure
        if ratio and name in ("framed 1 MiB", "64 shards of 1 MiB frames"):  # the inputs
            ratios.append(ratio)
        compressed = sum(os.path.getsize(f) for f in files)
        rows.append([name, f"{size / compressed:.2f}", rate(size, cpu), rate(size, cuda), f"{ratio:.2f}x" if ratio else "-",
                     f"{cpu_rc}/{cuda_rc}", said.split("; ")[2] if said.count("; ") >= 2 else said])
    table = (f"gutf8 validate of {size} bytes of mixed text as zstd -3, from the page cache, median of 3 after a warm-up; "
             f"machine {os.uname().nodename} ({os.cpu_count()} CPUs), commit {commit_of(ctx)}\n\n"
             + markdown_table(["input", "ratio", "cpu GB/s of text", "cuda GB/s of text", "cuda / cpu", "exit cpu/cuda",
                               "cuda --verbose"],
                              rows))
    (ctx.out / "nvcomp_engine.md").write_text(table)
    print(table, flush=True)
    status = "pass" if tests.status == "pass" and len(ratios) == 2 else "fail"
    return Outcome("nvcomp_engine", status, f"tests {tests.summary}; cuda/cpu {', '.join(f'{r:.2f}x' for r in ratios)}"
                   " (target 3x)", details="```\n" + table + "```\n")


# ---------------------------------------------------------------- landing the GPU lanes ----
# Each test in a process of its own under a time limit (a frame that makes nvCOMP spin gives the GPU
# up for its process; a frame the probe hands over anyway loses the CUDA context), memcheck over the
# corrupt-frame cases, and gutf8 validate cpu against cuda at 1 GiB and 4 GiB.

# Damaged frames given to nvCOMP by hand (the structure check refuses them, or a proof would), then
# damaged files through the engine (no damaged frame may reach the GPU: proofs, compress/proof.hpp).
CORRUPT = "NvcompZstdCorrupt.*:NvcompEngine.CorruptFramesFallBackToTheCpuReport"
FLIPPED = "NvcompEngine.FlippedPayloadBytes*:NvcompEngine.FuzzedFilesEqualCpu"


def test_names(ctx: Context) -> list[str]:
    step = ctx.run("nvcomp_list", [ctx.path(PROGRAM), "--gtest_list_tests"], 30)
    names, suite = [], ""
    for line in step.text().splitlines():
        if line and not line.startswith(" "):
            suite = line.split()[0]
        elif line.strip() and suite:
            names.append(suite + line.split()[0])
    return names


@part("nvcomp_each", cap=240, needs=(PROGRAM,),
      help="every gutf8_nvcomp_tests test in its own process under a 60 s limit: verdict and seconds")
def nvcomp_each(ctx: Context) -> Outcome:
    rows, failed = [], []
    for name in test_names(ctx):
        if ctx.limit(240) < 20:
            rows.append([name, "budget", ""])
            failed.append(name)
            continue
        step = ctx.run(f"each_{name.replace('.', '_')}", [ctx.path(PROGRAM), "--gtest_color=no",
                                                          f"--gtest_filter={name}"], 60)
        text = step.text()
        verdict = ("time limit" if step.timed_out else "skipped" if "[  SKIPPED ]" in text and step.ok
                   else "pass" if step.ok else f"fail rc {step.rc}")
        said = re.findall(r"^(?:.*: a GPU failure: .*|frame \d+ with flipped bytes: .*|frame cut mid-block: .*|"
                          r"\d+ corrupt frames passed .*|.*did not finish.*)$", text, re.M)
        rows.append([name, verdict, f"{step.seconds:.1f}", "; ".join(said)[:160]])
        if verdict.startswith("fail") or verdict == "time limit":
            failed.append(name)
    table = markdown_table(["test", "verdict", "s", "said"], rows)
    (ctx.out / "nvcomp_each.md").write_text(table)
    probe_only = all(n.startswith("NvcompZstdUnchecked.") for n in failed)  # the probe may lose the context
    return Outcome("nvcomp_each", "pass" if probe_only and rows else "fail",
                   f"{len(rows)} tests, failed: {', '.join(failed) or 'none'}", details="```\n" + table + "```\n")


@part("nvcomp_memcheck_corrupt", cap=190, needs=(PROGRAM,), tools=("compute-sanitizer",),
      help="compute-sanitizer memcheck over the corrupt-frame cases (flipped payload bytes apart)")
def nvcomp_memcheck_corrupt(ctx: Context) -> Outcome:
    os.environ["GUTF8_NVCOMP_WAIT_SECONDS"] = "20"  # memcheck's kernels run many times slower; a fuzz frame may still spin
    try:
        word, clean = sanitize_one(ctx, "memcheck", "nvcomp_corrupt", ctx.path(PROGRAM),
                                   [f"--gtest_filter={CORRUPT}", "--gtest_color=no"], 120)
    finally:
        del os.environ["GUTF8_NVCOMP_WAIT_SECONDS"]
    flipped, flipped_clean = sanitize_one(ctx, "memcheck", "nvcomp_flipped", ctx.path(PROGRAM),
                                          [f"--gtest_filter={FLIPPED}", "--gtest_color=no"], 60)
    return Outcome("nvcomp_memcheck_corrupt", "pass" if clean and flipped_clean else "fail",
                   f"lying sizes, checksums, truncation, fuzz: {word}; flipped payload bytes: {flipped}")


@part("nvcomp_e2e", cap=240, needs=("gutf8", "bench/bench_nvcomp"),
      help="gutf8 validate --backend=cpu vs cuda on zstd files of 1 MiB frames, 1 GiB and 4 GiB of text")
def nvcomp_e2e(ctx: Context) -> Outcome:
    rows, agree = [], True
    for size in (1 << 30, 4 << 30):
        text = text_file(ctx, "mixed", size)
        for name, files in zstd_inputs(ctx, text, size, ("framed 1 MiB", "64 shards of 1 MiB frames")).items():
            if ctx.limit(240) < 40:
                rows.append([f"{size >> 30} GiB", name, "budget", "", "", "", ""])
                continue
            cpu, _, cpu_rc = validate_seconds(ctx, f"e2e{size >> 30}_cpu", files, "cpu", 3)
            cuda, said, cuda_rc = validate_seconds(ctx, f"e2e{size >> 30}_cuda", files, "cuda", 3)
            agree = agree and cpu_rc == cuda_rc and cpu_rc in (0, 1)
            ratio = cpu / cuda if cpu and cuda and cpu_rc == cuda_rc else None
            rows.append([f"{size >> 30} GiB", name, rate(size, cpu), rate(size, cuda), f"{ratio:.2f}x" if ratio else "-",
                         f"{cpu_rc}/{cuda_rc}", said.split("; ")[2] if said.count("; ") >= 2 else said])
    table = (f"gutf8 validate of mixed text as zstd -3 frames of 1 MiB, page cache, median of 3 after a warm-up; "
             f"machine {os.uname().nodename} ({os.cpu_count()} CPUs), commit {commit_of(ctx)}\n\n"
             + markdown_table(["text", "input", "cpu GB/s", "cuda GB/s", "cuda / cpu", "exit cpu/cuda", "cuda --verbose"],
                              rows))
    (ctx.out / "nvcomp_e2e.md").write_text(table)
    print(table, flush=True)
    return Outcome("nvcomp_e2e", "pass" if agree and rows else "fail",
                   "exit statuses agree" if agree else "exit statuses differ", details="```\n" + table + "```\n")


def zstd_blocks(data: bytes):
    """Each zstd frame's blocks, as (offset of the block header, type, content bytes) lists."""
    at = 0
    while at + 8 <= len(data):
        if 0x184D2A50 <= int.from_bytes(data[at:at + 4], "little") <= 0x184D2A5F:  # skippable
            at += 8 + int.from_bytes(data[at + 4:at + 8], "little")
            continue
        fhd = data[at + 4]
        single = (fhd >> 5) & 1
        p = at + 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
        blocks = []
        while p + 3 <= len(data):
            v = int.from_bytes(data[p:p + 3], "little")
            kind, size = (v >> 1) & 3, v >> 3
            blocks.append((p, kind, 1 if kind == 1 else size))
            p += 3 + (1 if kind == 1 else size)
            if v & 1:
                break
        at = p + (4 if (fhd >> 2) & 1 else 0)
        yield blocks


def flipped_copy(source: Path, target: Path, every: int = 16) -> int:
    """source with 4 bytes flipped inside each compressed block of every `every`-th frame (what made
    nvCOMP spin in stage 1; the structure check still passes): how many frames were damaged."""
    data = bytearray(source.read_bytes())
    damaged = 0
    for k, blocks in enumerate(zstd_blocks(bytes(data))):
        if k % every != every // 2:
            continue
        for at, kind, content in blocks:
            if kind == 2 and content > 8:
                for q in range(1, 5):
                    data[at + 3 + (content - 1) * q // 4] ^= 0x5A
        damaged += 1
    target.write_bytes(bytes(data))
    return damaged


# Runs a command with its output lines stamped with the seconds since its start (a run killed at its
# time limit still shows which line came when).
STAMPED = (
    "import subprocess, sys, time\n"
    "t0 = time.monotonic()\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n"
    "print(f'[{time.monotonic() - t0:6.2f} s] started', flush=True)\n"
    "for line in p.stdout:\n"
    "    print(f'[{time.monotonic() - t0:6.2f} s] ' + line.decode(errors='replace').rstrip(), flush=True)\n"
    "rc = p.wait()\n"
    "print(f'[{time.monotonic() - t0:6.2f} s] exit {rc}', flush=True)\n"
    "sys.exit(rc if rc >= 0 else 128 - rc)\n")


@part("nvcomp_hang_exit", cap=200, needs=("gutf8", "bench/bench_nvcomp"),
      help="gutf8 validate cpu vs cuda (CUDA's lazy and eager kernel loading) on 64 MiB of zstd frames with flipped "
           "payload bytes: exit status, seconds, the output's last lines stamped with their second")
def nvcomp_hang_exit(ctx: Context) -> Outcome:
    size = 64 << 20
    text = text_file(ctx, "mixed", size)
    rows, ended = [], True
    runs = (("cpu", "", {}), ("cuda", "lazy", {}), ("cuda", "eager", {"CUDA_MODULE_LOADING": "EAGER"}))
    for name, files in zstd_inputs(ctx, text, size, ("framed 1 MiB", "framed 1 MiB, checksums")).items():
        damaged = files[0].with_name(files[0].stem + "-flipped.zst")
        frames = flipped_copy(files[0], damaged)
        for backend, loading, env in runs:
            step = ctx.run(f"flipped_{files[0].stem}_{backend}{'_' + loading if loading else ''}",
                           [sys.executable, "-u", "-c", STAMPED, ctx.path("gutf8"), "validate", f"--backend={backend}",
                            "--verbose", damaged], 30, env=env)
            lines = [line for line in step.text().splitlines() if not re.search(r"\] (started|plan:)", line)]
            ended = ended and not step.timed_out and (step.rc == 3 or backend == "cuda" and step.rc in (0, 1, 3))
            rows.append([name, str(frames), f"{backend} {loading}".strip(), "time limit" if step.timed_out else str(step.rc),
                         f"{step.seconds:.1f}", " / ".join(lines[-3:])[:300]])
    table = markdown_table(["input", "damaged frames", "backend", "exit", "s", "output's last lines (second: line)"], rows)
    (ctx.out / "nvcomp_hang_exit.md").write_text(table)
    print(table, flush=True)
    return Outcome("nvcomp_hang_exit", "pass" if ended and rows else "fail",
                   "every run ended" if ended else "a run did not end, or cpu did not exit 3",
                   details="```\n" + table + "```\n")


group("nvcomp", ["nvcomp_tests", "nvcomp_memcheck", "nvcomp_probe", "nvcomp_bench", "nvcomp_engine"])
group("nvcomp_landing", ["nvcomp_each", "nvcomp_hang_exit", "nvcomp_e2e", "nvcomp_memcheck_corrupt"])
