"""nvCOMP parts (bundles staged from a GUTF8_NVCOMP build: tests/gutf8_nvcomp_tests, bench/bench_nvcomp_zstd,
libnvcomp.so.6 in the bundle's lib/): the zstd lane's tests, memcheck over them, the probe of a frame the
CPU's structure check would keep from the GPU, and the batched decompression rate."""
from __future__ import annotations

import re

from .bench import commit_of
from .core import Context, Outcome, group, part, tail
from .files import text_file
from .tests import gtest, sanitize_one

PROGRAM = "tests/gutf8_nvcomp_tests"
CHECKED = "*-NvcompZstdUnchecked.*"  # the frames a GPU lane would take, and the host side
PROBE = "NvcompZstdUnchecked.*"  # undefined behaviour in nvCOMP's terms: run apart, never in the filters above


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


@part("nvcomp_bench", cap=240, needs=("bench/bench_nvcomp_zstd",),
      help="bench_nvcomp_zstd: 512 MiB of mixed text as 64 KiB and 1 MiB zstd -3 frames, device-resident")
def nvcomp_bench(ctx: Context) -> Outcome:
    text = text_file(ctx, "mixed", 512 << 20)
    table = ctx.out / "nvcomp_zstd.md"
    step = ctx.run("nvcomp_bench", [ctx.path("bench/bench_nvcomp_zstd"), "--input", text, "--frames", "65536,1048576",
                                    "--level", "3", "--runs", "7", "--commit", commit_of(ctx), "--out", table], 240)
    return Outcome("nvcomp_bench", "pass" if step.ok else "fail", f"rc {step.rc}; {table.name}",
                   details="```\n" + (table.read_text() if table.exists() else tail(step.log)) + "```\n")


group("nvcomp", ["nvcomp_tests", "nvcomp_memcheck", "nvcomp_probe", "nvcomp_bench"])
