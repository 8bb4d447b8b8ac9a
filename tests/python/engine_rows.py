"""Rows the engine tests share, with CPython's codec as their oracle."""
import random

from conftest import error_units, random_text

# Rows that end inside a character (each is an error of its own row) and what holds no text.
CUT = ["h\u00e9".encode()[:-1], "\U0001f600".encode()[:2], "\U0001f600".encode()[:3], b"abc\xe2\x82", b"\xe4"]


def rows(seed: int, n: int, long_at: tuple = ()) -> list:
    """n rows of mixed text, 5 % of their pieces invalid: nulls, empty rows, the CUT rows, and
    rows longer than 64 KiB (one valid, one invalid near its end) at the positions long_at."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 11 == 4:
            out.append(None)
        elif i % 13 == 6:
            out.append(b"")
        elif i % 17 == 9:
            out.append(CUT[i % len(CUT)])
        else:
            out.append(random_text(rng, rng.choice([1, 2, 3, 7, 40, 200, 333]), 0.05))
    for k, i in enumerate(long_at):
        text = random_text(rng, 70_001 + k, 0.0).decode("utf-8", "ignore").encode()  # not cut in a character
        out[i] = text if k % 2 == 0 else text + b"\xed\xa0\x80z"  # a surrogate after 64 KiB
    return out


def decoded(values: list, errors: str) -> list:
    return [None if v is None else v.decode("utf-8", errors) for v in values]


def valid(values: list) -> list:
    return [None if v is None else not error_units(v) for v in values]


def first_error(values: list) -> tuple:
    """(row, byte offset in the row) of the first row that is not UTF-8."""
    row = next(i for i, v in enumerate(values) if v is not None and error_units(v))
    return row, error_units(values[row])[0][0]
