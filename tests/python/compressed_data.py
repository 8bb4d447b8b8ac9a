"""Compressed test data through the standard tools (the oracle SPEC §3c names): one member of a
format, every member of a file, and text cut into members inside characters. A suffix is the
format's file suffix, with or without its dot; "" is plain text."""
import shutil
import subprocess

import pytest

TOOLS = {"gz": "gzip", "zst": "zstd", "xz": "xz", "bz2": "bzip2", "lz4": "lz4"}


def tool(suffix):
    """The format's tool; the test is skipped where it is not installed."""
    name = TOOLS[suffix.lstrip(".")]
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")
    return name


def compress(suffix, data):
    """One member (stream, frame) of the format holding data."""
    return subprocess.run([tool(suffix), "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout


def decompress(suffix, data):
    """Every member, as the format's tool reads a file."""
    if suffix == "":
        return data
    return subprocess.run([tool(suffix), "-q", "-d", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout


def members(suffix, data, count):
    """data in `count` members of the format, cut inside characters where there are any."""
    cuts = [0]
    for k in range(1, count):
        at = len(data) * k // count
        while at < len(data) and data[at] & 0xC0 != 0x80:
            at += 1
        cuts.append(max(at, cuts[-1]))
    cuts.append(len(data))
    return b"".join(compress(suffix, data[a:b]) for a, b in zip(cuts, cuts[1:]))
