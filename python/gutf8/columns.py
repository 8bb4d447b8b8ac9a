"""Per-row operations on string columns (Arrow utf8 / binary, large_utf8 / large_binary).

Inputs: anything that exports the Arrow PyCapsule interface (``__arrow_c_array__`` or
``__arrow_c_stream__``): pyarrow arrays and chunked arrays, polars series (``df["col"]``),
nanoarrow arrays. Results are pyarrow arrays (chunked when the input was a stream, as polars
series are). Every row is its own text: a sequence cut by the end of a row is an error of that
row; null rows stay null and are never read.

The view layouts (``string_view`` / ``binary_view``, which polars exports for String and
Binary) are cast to ``large_string`` / ``large_binary`` first (one copy of the rows' bytes,
about as long as :func:`is_valid` itself), so their results are those of the large types.
``keep_views=True`` reads them in place instead, with results in the view layouts
(``string_view`` repairs and casts, int32 counts): no copy, but a view repair keeps its long
rows in one int32-addressed buffer (ValueError past 2 GiB of them in a chunk).

>>> import pyarrow as pa, gutf8.columns as gc
>>> col = pa.array([b"ok", b"bad \\xff", None], pa.binary())
>>> gc.is_valid(col).to_pylist()
[True, False, None]
>>> gc.make_valid(col).to_pylist() == ["ok", "bad \\ufffd", None]   # as bytes.decode(..., 'replace')
True
>>> gc.cast_to_utf8(col, errors="null").to_pylist()
['ok', None, None]

Device data: an object that exports only ``__arrow_c_device_array__`` (cuDF columns, for example)
runs where its buffers are: host memory through the host API, CUDA memory on its GPU through
the device API (``stream=``: a CUDA stream handle or object). CUDA results are returned as a
:class:`DeviceColumn` (the Arrow device interface, consumable once); host results as pyarrow.
Its view layouts are not cast: the C++ takes them on the host and on the GPU, and gives
``string_view`` repairs and int32 counts.

``errors`` (:data:`ColumnErrors`): "strict" raises :class:`InvalidRowError` for the first invalid
row, "null" makes the row null, "replace" writes U+FFFD per error unit, "drop" (or "ignore")
removes the error units; :func:`make_valid` takes "replace" or "drop". Another value is a
ValueError naming the allowed ones.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, get_args

import pyarrow as pa

from . import DecodeError, RepairErrors, _choice, _gutf8, _stream_handle

__all__ = ["is_valid", "validate", "make_valid", "cast_to_utf8", "count_code_points", "InvalidRowError",
           "DeviceColumn", "ColumnErrors"]

#: What a cast or a count does with a row that is not UTF-8: raise, null, U+FFFD per error unit,
#: or the error units removed ("ignore": CPython's name for "drop").
ColumnErrors = Literal["strict", "null", "replace", "drop", "ignore"]
_CAST: tuple[str, ...] = get_args(ColumnErrors)
_REPAIR: tuple[str, ...] = get_args(RepairErrors)

_ARROW_DEVICE_CPU, _ARROW_DEVICE_CUDA_HOST = 1, 3


class InvalidRowError(DecodeError):
    """The first invalid row of a column under ``errors="strict"``; a :class:`UnicodeDecodeError`
    whose ``object`` is that row's bytes (``start``/``end``: its first error unit), with ``row``
    (0-based, in the whole column) and ``offset`` (the error's byte offset in the row)."""

    row: int = 0

    def __str__(self) -> str:
        return f"row {self.row}: invalid UTF-8 at byte {self.offset} of the row: {self.reason}"


class _Capsules:
    """Hands a result's (schema, array) capsules to pyarrow.array without a copy."""

    def __init__(self, capsules: tuple) -> None:
        self._capsules = capsules

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple:
        return self._capsules


class DeviceColumn:
    """A result in GPU memory, handed out through the Arrow C Device Data Interface: pass it to
    any consumer of ``__arrow_c_device_array__`` (it can be consumed once)."""

    def __init__(self, schema: Any, array: Any) -> None:
        self._capsules: Any = (schema, array)

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple:
        capsules, self._capsules = self._capsules, None
        if capsules is None:
            raise ValueError("this DeviceColumn was already consumed")
        return capsules


def _device_only(data: Any) -> bool:
    return (hasattr(data, "__arrow_c_device_array__") and not hasattr(data, "__arrow_c_array__")
            and not isinstance(data, (pa.Array, pa.ChunkedArray)))


def _device_result(result: tuple) -> Any:
    schema, array, device_type = result
    if device_type in (_ARROW_DEVICE_CPU, _ARROW_DEVICE_CUDA_HOST):
        return pa.Array._import_from_c_device_capsule(schema, array)
    return DeviceColumn(schema, array)


def _on_device(op: str, data: Any, errors: ColumnErrors, threads: int, stream: Any) -> Any:
    schema, array = data.__arrow_c_device_array__()
    try:
        result = _gutf8.col_device(op, schema, array, errors, threads, _stream_handle(stream))
    except _gutf8.InvalidRow as e:
        first: _gutf8.RowError = e.args[0]
        err = InvalidRowError("utf-8", b"", 0, 0, "invalid UTF-8")  # the row stays on its device
        err.row, err.offset, err.kind = first.row, first.offset, first.kind
        raise err from None
    if isinstance(result, _gutf8.RowValidity):
        return _device_result(result.valid)
    return None if result is None else _device_result(result)


def _imported(data: Any) -> tuple[list, bool, pa.DataType]:
    """(chunks, chunked, type) of any Arrow array or stream, imported without a copy."""
    if isinstance(data, pa.ChunkedArray):
        return data.chunks, True, data.type
    if isinstance(data, pa.Array):
        return [data], False, data.type
    if hasattr(data, "__arrow_c_array__"):
        try:
            arr = pa.array(data)
        except ValueError:  # an array in pieces that exports them as a stream (nanoarrow's)
            if not hasattr(data, "__arrow_c_stream__"):
                raise
        else:
            return [arr], False, arr.type
    if hasattr(data, "__arrow_c_stream__"):
        ca = pa.chunked_array(data)
        return ca.chunks, True, ca.type
    raise TypeError("expected an Arrow array: an object with __arrow_c_array__ or __arrow_c_stream__")


# The view layouts (Arrow utf8_view / binary_view: what polars exports for String and Binary)
# are cast here to their large layouts, one copy of the rows' bytes. The C++ columns take views
# (host and GPU; device-interface inputs reach them uncast), so deleting this table and the
# branch in _chunks that uses it only changes these results' types (to string_view, int32
# counts): a decision of its own (docs/SPEC.md, Python).
_VIEW_AS_LARGE = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}


def _chunks(data: Any, keep_views: bool = False) -> tuple[list, bool, pa.DataType]:
    chunks, chunked, dtype = _imported(data)
    if dtype in _VIEW_AS_LARGE and not keep_views:
        dtype = _VIEW_AS_LARGE[dtype]
        chunks = [chunk.cast(dtype) for chunk in chunks]
    return chunks, chunked, dtype


def _arrow(chunk: pa.Array) -> tuple[Any, Any]:
    """The (schema, array) capsules of a chunk."""
    schema, array = chunk.__arrow_c_array__()
    return schema, array


def _data_bytes(chunk: pa.Array) -> int:
    buffers = chunk.buffers()
    return buffers[2].size if len(buffers) > 2 and buffers[2] is not None else -1


_AS_BYTES = {pa.string(): pa.binary(), pa.large_string(): pa.large_binary(), pa.string_view(): pa.binary_view()}


def _row_error(chunks: list, base: int, first: _gutf8.RowError) -> InvalidRowError:
    """The exception for row `first.row` of the chunk that starts at row `base` of the column, with
    the row's bytes and its first unit's extent."""
    row, offset = base + first.row, first.offset
    start = row
    for chunk in chunks:
        if start < len(chunk):
            break
        start -= len(chunk)
    cell = chunk.slice(start, 1)
    if cell.type in _AS_BYTES:  # a utf8 row that is not UTF-8: as_py() of its str would raise
        cell = cell.view(_AS_BYTES[cell.type])
    data = cell[0].as_py()
    unit = _gutf8.validate(data, "cpu", 1, -1).first  # the row alone has the same first error
    assert unit is not None  # the row is invalid
    e = InvalidRowError("utf-8", data, offset, offset + unit.length, unit.reason)
    e.row, e.offset, e.kind, e.line, e.column = row, offset, first.kind, unit.line, unit.column
    return e


def _map(data: Any, call: Callable[[pa.Array], tuple], keep_views: bool) -> Any:
    chunks, chunked, dtype = _chunks(data, keep_views)
    results, base = [], 0
    try:
        for chunk in chunks:
            results.append(pa.array(_Capsules(call(chunk))))
            base += len(chunk)
    except _gutf8.InvalidRow as e:
        raise _row_error(chunks, base, e.args[0]) from None
    if not chunked:
        return results[0]
    if not results:  # an empty chunked array: the result type from an empty chunk
        return pa.chunked_array([], type=pa.array(_Capsules(call(pa.array([], dtype)))).type)
    return pa.chunked_array(results)


_SHARABLE = (pa.binary(), pa.string(), pa.binary_view(), pa.string_view())


def _sharing_chunk(chunk: pa.Array, errors: ColumnErrors, threads: int) -> pa.Array:
    """One chunk's cast as string_view around the chunk's own data buffers (pyarrow's Buffer
    objects keep them alive), followed by gutf8's buffers of repaired rows."""
    out = pa.array(_Capsules(_gutf8.col_cast_sharing_input(*_arrow(chunk), errors, threads,
                                                            _data_bytes(chunk))))
    shared = [b for b in chunk.buffers()[2:] if b is not None]  # gutf8 leaves out a missing one
    mine = out.buffers()
    return pa.Array.from_buffers(pa.string_view(), len(chunk), [mine[0], mine[1], *shared, *mine[2 + len(shared):]],
                                 null_count=out.null_count)


def _cast_sharing(data: Any, errors: ColumnErrors, threads: int = 0) -> Any:
    """cast_to_utf8 under errors "null", "replace" or "drop" as string_view whose valid rows keep
    the input's bytes where they are (no copy of them; only repaired rows are written), for the
    engines that take views (polars, DuckDB); None for the large types, which a view cannot
    point into."""
    chunks, chunked, dtype = _imported(data)
    if dtype not in _SHARABLE:
        return None
    results = [_sharing_chunk(chunk, errors, threads) for chunk in chunks]
    return pa.chunked_array(results, pa.string_view()) if chunked else results[0]


def is_valid(data: Any, *, threads: int = 0, stream: Any = None, keep_views: bool = False) -> Any:
    """A boolean array: whether each row is well-formed UTF-8 (null rows stay null)."""
    if _device_only(data):
        return _on_device("is_valid", data, "strict", threads, stream)
    return _map(data, lambda c: _gutf8.col_is_valid(*_arrow(c), threads, _data_bytes(c)).valid,
                keep_views)


def validate(data: Any, *, threads: int = 0, stream: Any = None, keep_views: bool = False) -> None:
    """Raise :class:`InvalidRowError` for the first invalid row; return None when all are valid."""
    if _device_only(data):
        return _on_device("validate", data, "strict", threads, stream)
    chunks, _, _ = _chunks(data, keep_views)
    base = 0
    for chunk in chunks:
        try:
            _gutf8.col_validate(*_arrow(chunk), threads, _data_bytes(chunk))
        except _gutf8.InvalidRow as e:
            raise _row_error(chunks, base, e.args[0]) from None
        base += len(chunk)


def make_valid(data: Any, errors: RepairErrors = "replace", *, threads: int = 0, stream: Any = None,
               keep_views: bool = False) -> Any:
    """A utf8 array (large_utf8 for the large types) with every invalid row repaired: equal,
    row by row, to ``bytes.decode('utf-8', 'replace' | 'ignore')`` (errors "replace" | "drop")."""
    _choice("errors", errors, _REPAIR)
    if _device_only(data):
        return _on_device("make_valid", data, errors, threads, stream)
    return _map(data, lambda c: _gutf8.col_make_valid(*_arrow(c), errors, threads, _data_bytes(c)),
                keep_views)


def cast_to_utf8(data: Any, errors: ColumnErrors = "strict", *, threads: int = 0, stream: Any = None,
                 keep_views: bool = False) -> Any:
    """binary -> utf8 (large_binary -> large_utf8); an invalid row raises, becomes null, or is
    repaired, by `errors` ("strict", "null", "replace", "drop")."""
    _choice("errors", errors, _CAST)
    if _device_only(data):
        return _on_device("cast_to_utf8", data, errors, threads, stream)
    return _map(data, lambda c: _gutf8.col_cast_to_utf8(*_arrow(c), errors, threads, _data_bytes(c)),
                keep_views)


def count_code_points(data: Any, errors: ColumnErrors = "strict", *, threads: int = 0, stream: Any = None,
                      keep_views: bool = False) -> Any:
    """Characters per row (int32, int64 for the large types), as ``len(row.decode('utf-8',
    errors))``; an invalid row raises, is null, or counts its error units as one character
    ("replace") or none ("drop")."""
    _choice("errors", errors, _CAST)
    if _device_only(data):
        return _on_device("count_code_points", data, errors, threads, stream)
    return _map(data, lambda c: _gutf8.col_count_code_points(*_arrow(c), errors, threads,
                                                             _data_bytes(c)), keep_views)
