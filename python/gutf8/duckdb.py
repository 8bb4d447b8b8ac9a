"""Spark 4's UTF-8 functions in DuckDB SQL, run by gutf8 (``pip install gutf8[duckdb]``).

>>> import duckdb, gutf8.duckdb
>>> con = gutf8.duckdb.register(duckdb.connect())
>>> con.sql("SELECT make_valid_utf8('a\\\\xE1\\\\x80b'::BLOB)").fetchall() == [("a\\ufffdb",)]
True

=====================================  =========  ============================================
``is_valid_utf8(x)``                   BOOLEAN    whether the row is well-formed UTF-8
``make_valid_utf8(x [, errors])``      VARCHAR    one U+FFFD per maximal subpart (errors
                                                  'replace', the default) or none ('drop')
``validate_utf8(x)``                   VARCHAR    the row, or an error naming the byte offset
``try_validate_utf8(x)``               VARCHAR    the row, or NULL where it is not UTF-8
=====================================  =========  ============================================

``x`` is a BLOB (the bytes, the main path: ``read_parquet`` gives binary columns as BLOB) or a
VARCHAR (its bytes as they are: a VARCHAR scanned from Arrow data may hold invalid UTF-8, which
DuckDB passes on unchecked until it stores or prints it). Results are row by row those of
``bytes.decode('utf-8', 'replace' | 'ignore')``; NULL stays NULL. Another argument type is a
binder error listing these signatures.

The functions are DuckDB Arrow UDFs: each vector of rows crosses into gutf8 as an Arrow array
and gutf8 works on it with the GIL released. DuckDB does not tell a function which table row
it is given, so ``validate_utf8``'s error names the byte offset and shows the row's bytes
around it (as Spark's ``INVALID_UTF8_STRING`` shows the string); ``WHERE NOT
is_valid_utf8(x)`` finds the rows.
"""

from __future__ import annotations

from typing import Any, Callable

import duckdb
import pyarrow as pa

from . import columns
from ._rows import shown

__all__ = ["register", "FUNCTIONS"]

#: The SQL functions that :func:`register` creates (temporary macros over typed Arrow UDFs).
FUNCTIONS = ("is_valid_utf8", "make_valid_utf8", "validate_utf8", "try_validate_utf8")

_INPUTS = ("BLOB", "VARCHAR")
_TEXT = {pa.binary(): pa.string(), pa.large_binary(): pa.large_string()}
# make_valid_utf8(x, errors): one UDF a policy, so DuckDB folds a constant `errors` away
_BAD_ERRORS = ("error(format('make_valid_utf8: errors must be ''replace'' or ''drop'', not {}', "
               "coalesce('''' || errors || '''', 'NULL')))")


def _as_text(x: pa.ChunkedArray) -> pa.ChunkedArray:
    """Binary rows known to be UTF-8 as utf8: the same buffers, no copy."""
    target = _TEXT.get(x.type)
    return x if target is None else pa.chunked_array([c.view(target) for c in x.chunks], target)


def _validate(x: pa.ChunkedArray, threads: int) -> pa.ChunkedArray:
    try:
        columns.validate(x, threads=threads)
    except columns.InvalidRowError as e:
        raise ValueError(f"validate_utf8: invalid UTF-8 at byte {e.offset} of the row "
                         f"{shown(e.object, e.offset)}: {e.reason}") from None
    return _as_text(x)


def _cast(x: pa.ChunkedArray, errors: columns.ColumnErrors, threads: int) -> Any:
    """A repair or a cast to NULL: string_view around the vector's own bytes, which DuckDB reads
    back without a copy of the valid rows; utf8 for the large layouts."""
    shared = columns._cast_sharing(x, errors, threads)
    return columns.cast_to_utf8(x, errors, threads=threads) if shared is None else shared


def _udfs(threads: int) -> dict[str, tuple[Callable[[pa.ChunkedArray], Any], str]]:
    """The Arrow UDFs behind the macros: stem -> (function, DuckDB result type)."""
    return {
        "is_valid_utf8": (lambda x: columns.is_valid(x, threads=threads), "BOOLEAN"),
        "make_valid_utf8": (lambda x: _cast(x, "replace", threads), "VARCHAR"),
        "make_valid_utf8_drop": (lambda x: _cast(x, "drop", threads), "VARCHAR"),
        "validate_utf8": (lambda x: _validate(x, threads), "VARCHAR"),
        "try_validate_utf8": (lambda x: _cast(x, "null", threads), "VARCHAR"),
    }


def _udf_name(stem: str, input_type: str) -> str:
    return f"__gutf8_{stem}_{input_type.lower()}"


def _overloads(name: str, t: str) -> list[str]:
    """The macro `name`'s overloads for input type `t`."""
    udf = _udf_name(name, t)
    if name != "make_valid_utf8":
        return [f"(x {t}) AS {udf}(x)"]
    drop = _udf_name("make_valid_utf8_drop", t)
    return [f"(x {t}) AS {udf}(x)",
            f"(x {t}, errors VARCHAR) AS CASE errors WHEN 'replace' THEN {udf}(x) WHEN 'drop' THEN {drop}(x) "
            f"ELSE {_BAD_ERRORS} END"]


def _create(con: duckdb.DuckDBPyConnection, name: str, udf: Callable[[pa.ChunkedArray], Any], param: str,
            result: str) -> None:
    try:  # register() may run again on the same connection
        con.remove_function(name)
    except duckdb.InvalidInputException:
        pass
    con.create_function(name, udf, [duckdb.sqltype(param)], duckdb.sqltype(result), type="arrow",
                        null_handling="special")


def register(con: duckdb.DuckDBPyConnection | None = None, *, threads: int = 0) -> duckdb.DuckDBPyConnection:
    """Create :data:`FUNCTIONS` on ``con`` (default: DuckDB's default connection) and return it.

    ``threads``: gutf8's threads for each vector DuckDB hands over (0: as many as the vector's
    size is worth, up to every core; 1 keeps each call on DuckDB's calling thread). Running it
    again replaces them. The macros are temporary: they are not stored in a database file."""
    con = duckdb.default_connection() if con is None else con
    for stem, (udf, result) in _udfs(threads).items():
        for t in _INPUTS:
            _create(con, _udf_name(stem, t), udf, t, result)
    for name in FUNCTIONS:  # DuckDB picks the overload by argument type
        con.execute(f"CREATE OR REPLACE TEMP MACRO {name}" + ", ".join(o for t in _INPUTS for o in _overloads(name, t)))
    return con
