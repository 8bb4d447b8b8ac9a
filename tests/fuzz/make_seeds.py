#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets into tests/fuzz/corpus/<target>/.

Deterministic: running it again gives the same files (the checked-in corpus is its output).
Seeds: the SPEC §1 example, Unicode 3.9 Tables 3-8 to 3-12, each error kind, boundary scalar
values, SIMD-block-sized runs with a defect at the edges, and short excerpts cut from
corpus/sample (whole UTF-8 sequences, so that the samples themselves stay valid).

The decompress seeds are small gzip, zstd, xz, bzip2 and lz4 files written by those tools.

Findings from fuzzing go to tests/fuzz/corpus/<target>/crash-* (kept by hand, not written
here); tests/cpu/regression_test.cpp replays every file of each directory.
"""
import os
import pathlib
import struct
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent
SAMPLES = ROOT.parent.parent / "corpus" / "sample"

SPEC_EXAMPLE = bytes.fromhex("E1 80 E2 F0 91 92 F1 BF 41")
UNICODE_TABLES = {
    "table3-8": bytes.fromhex("61 F1 80 80 E1 80 C2 62 80 63 80 BF 64"),
    "table3-9": bytes.fromhex("C0 AF E0 80 BF F0 81 82 41"),
    "table3-10": bytes.fromhex("ED A0 80 ED BF BF ED AF 41"),
    "table3-11": bytes.fromhex("F4 91 92 93 FF 41 80 BF 42"),
    "table3-12": SPEC_EXAMPLE,
}
ERROR_KINDS = {
    "stray": b"a\x80b\xbf",
    "invalid-bytes": b"\xc0\x80\xc1\xbf\xf5\x80\xff\xfe",
    "overlong": b"\xe0\x9f\xbf\xf0\x8f\xbf\xbf",
    "surrogate": b"\xed\xa0\x80\xed\xbf\xbf",
    "too-large": b"\xf4\x90\x80\x80\xf4\xbf\xbf\xbf",
    "truncated": b"\xe2\x82A\xf0\x9f\x98B\xc3",
    "truncated-at-end": b"ok\xf0\x9f\x98",
    "lines": b"one\ntwo\r\nthree\n\xe2\x82\n\xff",
    "bom": b"\xef\xbb\xbfBOM",
}
EDGE_SCALARS = [0x00, 0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFEFF, 0xFFFD,
                0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF, 0x0A]


def utf8(cps):
    return "".join(chr(c) for c in cps).encode("utf-8", "surrogatepass")


def sample_cuts():
    """Short valid excerpts of the multilingual sample: ~48 and ~200 bytes of each file."""
    cuts = {}
    for path in sorted(SAMPLES.glob("*.txt")):
        text = path.read_bytes().decode("utf-8")
        middle = len(text) // 2
        for size in (48, 200):
            excerpt = text[middle:middle + size].encode("utf-8")
            cuts[f"sample-{path.stem}-{size}"] = excerpt
    return cuts


def utf8_seeds():
    seeds = {"spec-example": SPEC_EXAMPLE, "empty": b""}
    seeds.update(UNICODE_TABLES)
    seeds.update(ERROR_KINDS)
    seeds["edge-scalars"] = utf8(EDGE_SCALARS)
    seeds["every-lead"] = bytes(range(0xC0, 0x100))
    seeds["every-continuation"] = bytes(range(0x80, 0xC0))
    # A defect right at the edges of 16-, 32- and 64-byte vector blocks.
    for width in (16, 32, 64):
        seeds[f"ascii{width}-cut-lead"] = b"x" * (width - 1) + b"\xe2\x82\xac" + b"y" * width
        seeds[f"ascii{width}-bad-last"] = b"x" * (width - 1) + b"\xff" + b"y" * width
        seeds[f"ascii{width}-4byte-split"] = b"x" * (width - 2) + b"\xf0\x9f\x98\x80" * 3
    seeds["emoji-run"] = "😀🎉👍🏽".encode() * 8
    seeds["cjk-with-errors"] = "漢字かな".encode() + b"\xe6\xbc" + "한국어".encode() + b"\xed\xa0\x80"
    seeds.update(sample_cuts())
    return seeds


def utf32(values, tail=b""):
    return b"".join(struct.pack("<I", v) for v in values) + tail


def encode_seeds():
    seeds = {
        "empty": b"",
        "edge-scalars": utf32(EDGE_SCALARS),
        "surrogates": utf32([0x41, 0xD800, 0x42, 0xDBFF, 0xDC00, 0xDFFF, 0x43]),
        "too-large": utf32([0x110000, 0x41, 0xFFFFFFFF, 0x7FFFFFFF, 0x0A, 0x10FFFF]),
        "ragged-1": utf32([0x41, 0x42], b"\x41"),
        "ragged-2": utf32([0x41, 0x0A, 0x42], b"\x41\x00"),
        "ragged-3": utf32([0x20AC], b"\x00\xd8\x00"),
        "lines": utf32([0x61, 0x0A, 0x62, 0x0A, 0x0A, 0xD800, 0x63]),
        "ascii16": utf32(list(range(0x41, 0x51)) + [0xDFFF] + list(range(0x61, 0x71))),
        "spec-example-as-utf32": utf32(list(SPEC_EXAMPLE)),
    }
    for name, excerpt in list(sample_cuts().items())[::3]:
        seeds[name] = utf32([ord(c) for c in excerpt.decode("utf-8")])
    return seeds


def stream_seed(header, lengths, text):
    assert len(lengths) == header & 15
    return bytes([header]) + bytes(lengths) + text


def stream_seeds():
    u = utf8_seeds()
    seeds = {
        "empty": b"",
        "spec-every-byte": stream_seed(1, [1], SPEC_EXAMPLE),
        "spec-with-empty-chunks": stream_seed(3, [0, 2, 1], SPEC_EXAMPLE),
        "table3-8-pairs": stream_seed(2, [2, 3], UNICODE_TABLES["table3-8"]),
        "truncated-at-end-into": stream_seed(16 | 1, [2], ERROR_KINDS["truncated-at-end"]),
        "lines-threads": stream_seed(64 | 2, [5, 1], ERROR_KINDS["lines"]),
        "emoji-3-5-7": stream_seed(3, [3, 5, 7], u["emoji-run"]),
        "edge-scalars-into": stream_seed(16 | 1, [4], u["edge-scalars"]),
        "utf32-ragged": stream_seed(2, [3, 6], encode_seeds()["ragged-3"]),
        "utf32-lines": stream_seed(1, [5], encode_seeds()["lines"]),
        "ascii64-cut": stream_seed(1, [64], u["ascii64-cut-lead"]),
        "ascii16-4byte": stream_seed(4, [15, 1, 16, 2], u["ascii16-4byte-split"]),
    }
    for i, (name, excerpt) in enumerate(list(sample_cuts().items())[1::2]):
        seeds[name] = stream_seed(i % 4 + 1 | (16 if i % 2 else 0), [7, 1, 13, 2][: i % 4 + 1], excerpt)
    return seeds


FORMATS = ["gzip", "zstd", "xz", "bzip2", "lz4"]  # the order of src/compress's format, from 1


def compressed(tool, text, options=()):
    """text compressed by the standard tool (gzip, zstd, xz, bzip2, lz4 must be installed)."""
    return subprocess.run([tool, "-q", "-c", *options], input=text, capture_output=True, check=True).stdout


def decompress_seed(fmt, chunk, target, data):
    """Byte 0: the format (bits 0-2), the chunk-size index (bits 3-5), the parts' target (6-7)."""
    return bytes([FORMATS.index(fmt) | chunk << 3 | target << 6]) + data


def decompress_seeds():
    """Small compressed inputs of every format: one and two members, empty, with trailing bytes."""
    excerpt = list(sample_cuts().values())[4]
    seeds = {}
    for i, fmt in enumerate(FORMATS):
        one = compressed(fmt, excerpt)
        seeds[f"{fmt}-one"] = decompress_seed(fmt, i % 8, 0, one)
        seeds[f"{fmt}-two"] = decompress_seed(fmt, (i + 3) % 8, 1, one + compressed(fmt, SPEC_EXAMPLE))
        seeds[f"{fmt}-empty"] = decompress_seed(fmt, 2, 2, compressed(fmt, b""))
        seeds[f"{fmt}-trailing"] = decompress_seed(fmt, 5, 3, one + b"\0\0\0\0junk")
    seeds["xz-blocks"] = decompress_seed("xz", 1, 0, compressed("xz", excerpt * 40, ["--block-size=1000"]))
    seeds["lz4-skippable"] = decompress_seed("zstd", 6, 0, b"P*M\x18\x02\0\0\0hi" + compressed("lz4", excerpt))
    return seeds


def main():
    for target, seeds in (("utf8", utf8_seeds()), ("encode", encode_seeds()), ("stream", stream_seeds()),
                          ("decompress", decompress_seeds())):
        folder = ROOT / "corpus" / target
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("seed-*"):
            old.unlink()
        for name, data in seeds.items():
            (folder / f"seed-{name}").write_bytes(data)
        print(f"{target}: {len(seeds)} seeds, {sum(len(d) for d in seeds.values())} bytes")


if __name__ == "__main__":
    main()
