"""Shared helpers of the gutf8 Python tests: CPython's codec is the oracle."""
import codecs
import random

import pytest

# Pieces of text that random inputs are built from: every UTF-8 length, and every kind of
# error unit (stray continuation, never-valid bytes, overlongs, surrogates, > U+10FFFF,
# truncated sequences of each length).
VALID = ["a", "Z", "\n", " ", "\u00e9", "\u03a9", "\u0800", "\u4e2d", "\uffff", "\U00010000",
         "\U0001f600", "\U0010ffff"]
INVALID = [b"\x80", b"\xbf", b"\xc0", b"\xc1", b"\xf5", b"\xff", b"\xc0\xaf", b"\xe0\x80\xaf",
           b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe1\x80", b"\xf0\x9f\x98", b"\xf1", b"\xc3",
           b"\xe2\x82"]


def random_text(rng: random.Random, n: int, error_rate: float) -> bytes:
    """About n bytes of mixed-script UTF-8 with error units at the given rate."""
    out, size = [], 0
    while size < n:
        piece = rng.choice(INVALID) if rng.random() < error_rate else rng.choice(VALID).encode()
        out.append(piece)
        size += len(piece)
    return b"".join(out)[:n]


class ErrorLog:
    """CPython's decoder calls an error handler once per maximal subpart: record them."""

    def __init__(self):
        self.units = []

    def __call__(self, exc):
        self.units.append((exc.start, exc.end))
        return ("", exc.end)


def error_units(data: bytes) -> list:
    log = ErrorLog()
    codecs.register_error("gutf8-test-log", lambda e: log(e))
    bytes(data).decode("utf-8", "gutf8-test-log")
    return log.units


def line_column(data: bytes, offset: int) -> tuple:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


# Sizes around the boundaries that chunked and threaded paths cut at, and odd ones.
SIZES = [0, 1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 63, 64, 65, 127, 255, 1000, 4095, 4096, 4097, 65535,
         65537, 100_003, (1 << 20) - 1, (1 << 20) + 3]


@pytest.fixture
def rng():
    return random.Random(20261124)
