"""How the engine bindings show a row that is not UTF-8 in their error messages."""

from __future__ import annotations

_SHOWN = 16  # bytes shown on each side of the error


def shown(row: bytes, offset: int) -> str:
    """The row's bytes around `offset` (all of a short row), as Python writes bytes."""
    lo, hi = max(0, offset - _SHOWN), min(len(row), offset + _SHOWN)
    cut = f" (bytes {lo}-{hi} of {len(row)})" if (lo, hi) != (0, len(row)) else ""
    return repr(row[lo:hi]) + cut
