"""A ``.gutf8`` namespace on polars Series and expressions (``pip install gutf8[polars]``).

>>> import polars as pl, gutf8.polars
>>> s = pl.Series("text", [b"ok", b"a\\xe1\\x80b", None])
>>> s.gutf8.make_valid().to_list() == ["ok", "a\\ufffdb", None]
True
>>> pl.LazyFrame({"text": s}).select(pl.col("text").gutf8.is_valid()).collect()["text"].to_list()
[True, False, None]

====================================  =========  ==============================================
``is_valid()``                        Boolean    whether the row is well-formed UTF-8
``make_valid(errors="replace")``      String     one U+FFFD per maximal subpart, or none with
                                                 ``errors="drop"``
``cast_to_utf8(errors="strict")``     String     the row; where it is not UTF-8: raise
                                                 (``"strict"``), null (``"null"``), or repaired
                                                 (``"replace"``, ``"drop"``)
``count_code_points(errors=...)``     UInt32     characters per row, as ``str.len_chars()``
                                                 counts them (errors as for the cast)
====================================  =========  ==============================================

Inputs are Binary or String (a String series is always valid: the functions then only check
it) or Null; results equal ``bytes.decode('utf-8', 'replace' | 'ignore')`` row by row and null
stays null. The expressions are elementwise ``map_batches`` with their result types, so lazy
queries know their schema and the streaming engine may call them batch by batch; a strict
cast's :class:`InvalidRowError` then names the row within its batch.

Copies: polars hands its columns over through the Arrow PyCapsule interface, in its own view
layouts (``binary_view``, ``string_view``). ``is_valid``, ``count_code_points`` and the strict
``cast_to_utf8`` read them in place (:mod:`gutf8.columns` with ``keep_views=True``), and a strict
cast that finds no error returns the input's own buffers as String: no copy. ``make_valid`` and
the other casts return views too: a valid row's view points where polars already holds the row,
and only the repaired rows are written, into new buffers of at most 2 GiB each (one repaired row
past 2 GiB, more than a view holds, is a ValueError).
"""

from __future__ import annotations

from typing import Any, Callable, Literal, get_args

import polars as pl
import pyarrow as pa

from . import columns
from ._rows import shown

__all__ = ["SeriesNamespace", "ExprNamespace", "InvalidRowError"]

#: The policies of ``make_valid`` (Spark's names: no "ignore").
RepairErrors = Literal["replace", "drop"]
#: The policies of ``cast_to_utf8`` and ``count_code_points``.
CastErrors = Literal["strict", "null", "replace", "drop"]
_TEXT_ERRORS: tuple[str, ...] = get_args(RepairErrors)
_CAST_ERRORS: tuple[str, ...] = get_args(CastErrors)


class InvalidRowError(columns.InvalidRowError, pl.exceptions.ComputeError):
    """A row that is not UTF-8 under ``errors="strict"``: gutf8's
    :class:`~gutf8.columns.InvalidRowError` (``row``, ``offset``, the row's bytes in ``object``)
    and a polars ``ComputeError``, as polars' own strict cast raises. In an expression ``row``
    counts in the batch polars passed (``batch_rows`` long), so the message shows the row's bytes.
    Polars' in-memory engine raises it again with the expression added to its message, built
    from that message alone: the message still says all this, and the fields are then None."""

    batch_rows: int | None = None
    _message: str | None = None

    def __init__(self, *args: Any) -> None:
        if len(args) != 1:
            super().__init__(*args)
            return
        super().__init__("utf-8", b"", 0, 0, args[0])
        self._message, self.row, self.offset = args[0], None, None

    def __str__(self) -> str:
        if self._message is not None:
            return self._message
        where = f"row {self.row}" + ("" if self.batch_rows is None else f" of a batch of {self.batch_rows}")
        row = shown(self.object, self.offset)
        return f"{where}: invalid UTF-8 at byte {self.offset} of the row {row}: {self.reason}"


def _checked(errors: str | None, allowed: tuple) -> None:
    if errors not in allowed:
        raise ValueError(f"errors must be one of {', '.join(map(repr, allowed))}, not {errors!r}")


def _run(s: pl.Series, op: Callable[[Any], Any], dtype: Any, batch: bool) -> pl.Series:
    """One gutf8.columns operation on a series, as a series of `dtype` (`batch`: polars passed it)."""
    if s.dtype == pl.Null:  # all rows null: nothing to read
        return pl.Series(s.name, [None] * len(s), dtype=dtype)
    if s.dtype not in (pl.Binary, pl.String):
        raise TypeError(f"gutf8 takes a Binary or String column, not {s.dtype} (column {s.name!r})")
    try:
        result = pl.from_arrow(op(s), rechunk=False)
    except columns.InvalidRowError as e:
        err = InvalidRowError(*e.args)
        err.__dict__.update(e.__dict__)
        err.batch_rows = len(s) if batch else None
        raise err from None
    return (result if result.dtype == dtype else result.cast(dtype)).alias(s.name)


def _checked_text(s: pl.Series) -> pa.ChunkedArray:
    """A strict cast: rows all UTF-8 come back as the input's own buffers, viewed as string_view."""
    columns.validate(s, keep_views=True)
    return pa.chunked_array([c.view(pa.string_view()) for c in pa.chunked_array(s).chunks], pa.string_view())


def _op(name: str, errors: Any) -> tuple[Callable[[Any], Any], Any]:
    """(operation on an Arrow producer, polars result type) of a method and its errors argument."""
    if name == "is_valid":
        return lambda s: columns.is_valid(s, keep_views=True), pl.Boolean
    if name == "make_valid":  # valid rows stay in polars' buffers: only repairs are written
        _checked(errors, _TEXT_ERRORS)
        return lambda s: columns._cast_sharing(s, errors), pl.String
    _checked(errors, _CAST_ERRORS)
    if name == "cast_to_utf8" and errors == "strict":
        return _checked_text, pl.String
    if name == "cast_to_utf8":
        return lambda s: columns._cast_sharing(s, errors), pl.String
    return lambda s: columns.count_code_points(s, errors, keep_views=True), pl.UInt32


@pl.api.register_series_namespace("gutf8")
class SeriesNamespace:
    """``series.gutf8``: gutf8's row operations on a Binary or String series."""

    def __init__(self, series: pl.Series) -> None:
        self._s = series

    def _call(self, name: str, errors: str | None = None) -> pl.Series:
        op, dtype = _op(name, errors)
        return _run(self._s, op, dtype, batch=False)

    def is_valid(self) -> pl.Series:
        """Boolean: whether each row is well-formed UTF-8 (null stays null)."""
        return self._call("is_valid")

    def make_valid(self, errors: RepairErrors = "replace") -> pl.Series:
        """String: each row repaired, U+FFFD per maximal subpart ("replace") or none ("drop")."""
        return self._call("make_valid", errors)

    def cast_to_utf8(self, errors: CastErrors = "strict") -> pl.Series:
        """String: a row that is not UTF-8 raises :class:`InvalidRowError` ("strict"), is null
        ("null") or is repaired ("replace", "drop")."""
        return self._call("cast_to_utf8", errors)

    def count_code_points(self, errors: CastErrors = "strict") -> pl.Series:
        """UInt32: characters per row; errors as for :meth:`cast_to_utf8` ("replace" counts an
        error unit as one character, "drop" as none)."""
        return self._call("count_code_points", errors)


@pl.api.register_expr_namespace("gutf8")
class ExprNamespace:
    """``pl.col(...).gutf8``: the same operations as expressions (lazy queries included)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._e = expr

    def _call(self, name: str, errors: str | None = None) -> pl.Expr:
        op, dtype = _op(name, errors)
        return self._e.map_batches(lambda s: _run(s, op, dtype, batch=True), return_dtype=dtype,
                                   is_elementwise=True)

    def is_valid(self) -> pl.Expr:
        """Boolean: whether each row is well-formed UTF-8 (null stays null)."""
        return self._call("is_valid")

    def make_valid(self, errors: RepairErrors = "replace") -> pl.Expr:
        """String: each row repaired, U+FFFD per maximal subpart ("replace") or none ("drop")."""
        return self._call("make_valid", errors)

    def cast_to_utf8(self, errors: CastErrors = "strict") -> pl.Expr:
        """String: a row that is not UTF-8 raises :class:`InvalidRowError` ("strict"), is null
        ("null") or is repaired ("replace", "drop")."""
        return self._call("cast_to_utf8", errors)

    def count_code_points(self, errors: CastErrors = "strict") -> pl.Expr:
        """UInt32: characters per row; errors as for :meth:`cast_to_utf8`."""
        return self._call("count_code_points", errors)
