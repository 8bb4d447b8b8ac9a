"""gutf8.columns on pyarrow arrays against CPython's codec, row by row."""
import random

import pytest

pa = pytest.importorskip("pyarrow")

import gutf8  # noqa: E402
import gutf8.columns as gc  # noqa: E402
from conftest import error_units, random_text  # noqa: E402

TYPES = [pa.binary(), pa.large_binary(), pa.string(), pa.large_string()]


def rows(seed, n, rate=0.05):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 7 == 3:
            out.append(None)
        else:
            out.append(random_text(rng, rng.choice([0, 1, 2, 3, 5, 17, 64, 300]), rate))
    return out


def column(values, dtype):
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return pa.array(values, dtype)
    # utf8 columns with invalid bytes (as other writers leave them): build from binary buffers
    return pa.array(values, pa.large_binary() if pa.types.is_large_string(dtype) else pa.binary()).view(dtype)


def decoded(values, errors):
    return [None if v is None else v.decode("utf-8", errors) for v in values]


def check_row_operations(col, values):
    """Every per-row operation on `col` (any Arrow producer) against CPython on `values`."""
    assert gc.is_valid(col).to_pylist() == [None if v is None else not error_units(v) for v in values]
    assert gc.make_valid(col).to_pylist() == decoded(values, "replace")
    assert gc.make_valid(col, "drop").to_pylist() == decoded(values, "ignore")
    assert gc.cast_to_utf8(col, errors="null").to_pylist() == [
        None if v is None or error_units(v) else v.decode() for v in values]
    assert gc.cast_to_utf8(col, errors="replace").to_pylist() == decoded(values, "replace")
    assert gc.count_code_points(col, "replace").to_pylist() == [
        None if v is None else len(v.decode("utf-8", "replace")) for v in values]
    assert gc.count_code_points(col, "drop").to_pylist() == [
        None if v is None else len(v.decode("utf-8", "ignore")) for v in values]
    bad = [i for i, v in enumerate(values) if v is not None and error_units(v)]
    if bad:
        with pytest.raises(gc.InvalidRowError) as info:
            gc.validate(col)
        assert (info.value.row, info.value.offset) == (bad[0], error_units(values[bad[0]])[0][0])
    else:
        assert gc.validate(col) is None


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 31, 1000])
def test_row_operations_match_cpython(dtype, n):
    values = rows(n, n)
    col = column(values, dtype)
    check_row_operations(col, values)
    large = pa.types.is_large_binary(dtype) or pa.types.is_large_string(dtype)
    assert gc.make_valid(col).type == (pa.large_string() if large else pa.string())


def test_strict_raises_for_the_first_invalid_row():
    values = [b"fine", None, b"also fine", b"ab\xe1\x80c", b"\xff"]
    col = pa.array(values, pa.binary())
    with pytest.raises(gc.InvalidRowError) as info:
        gc.validate(col)
    e = info.value
    assert isinstance(e, UnicodeDecodeError)
    assert (e.row, e.offset, e.start, e.end, e.object) == (3, 2, 2, 4, b"ab\xe1\x80c")
    with pytest.raises(gc.InvalidRowError):
        gc.cast_to_utf8(col)
    with pytest.raises(gc.InvalidRowError):
        gc.count_code_points(col)
    assert gc.validate(pa.array([b"ok", None], pa.binary())) is None


def test_slices_and_chunked_arrays():
    values = rows(5, 500)
    col = pa.array(values, pa.binary())
    part = col.slice(123, 200)
    assert gc.make_valid(part).to_pylist() == decoded(values[123:323], "replace")
    chunked = pa.chunked_array([col.slice(0, 100), col.slice(100, 0), col.slice(100)])
    out = gc.make_valid(chunked)
    assert isinstance(out, pa.ChunkedArray) and out.to_pylist() == decoded(values, "replace")
    bad = [i for i, v in enumerate(values) if v is not None and error_units(v)]
    with pytest.raises(gc.InvalidRowError) as info:
        gc.validate(chunked)
    assert info.value.row == bad[0]
    empty = gc.make_valid(pa.chunked_array([], pa.binary()))
    assert isinstance(empty, pa.ChunkedArray) and len(empty) == 0


def test_arrow_pycapsule_producers():
    values = rows(9, 50)

    class Producer:  # only the PyCapsule interface, as polars or nanoarrow export it
        def __init__(self, arr):
            self.arr = arr

        def __arrow_c_array__(self, requested_schema=None):
            return self.arr.__arrow_c_array__(requested_schema)

    assert gc.make_valid(Producer(pa.array(values, pa.binary()))).to_pylist() == decoded(values, "replace")
    with pytest.raises(TypeError):
        gc.is_valid([b"a"])


def view_column(values, view):
    """A binary_view or string_view array (the latter with invalid rows, as a view of bytes)."""
    return pa.array(values, pa.binary()).cast(pa.binary_view()).view(view)


@pytest.mark.parametrize("view", [pa.binary_view(), pa.string_view()], ids=str)
def test_view_layouts(view):
    values = rows(17, 700) + [b"a row longer than the twelve bytes a view holds inline \xe1\x80"]
    col = view_column(values, view)
    check_row_operations(col, values)
    check_row_operations(col.slice(5, 600), values[5:605])
    chunked = pa.chunked_array([col.slice(0, 333), col.slice(333)])
    check_row_operations(chunked, values)
    assert isinstance(gc.make_valid(chunked), pa.ChunkedArray)
    # cast to the large layouts until the C++ columns take views: their result types
    assert gc.make_valid(col).type == pa.large_string()
    assert gc.count_code_points(col, "replace").type == pa.int64()
    assert gc.make_valid(pa.chunked_array([], view)).type == pa.large_string()


@pytest.mark.parametrize("view", [pa.binary_view(), pa.string_view()], ids=str)
def test_view_layouts_kept(view):
    """keep_views=True: the views are read in place and the results keep the view layouts."""
    values = rows(23, 700) + [b"a row longer than the twelve bytes a view holds inline \xe1\x80"]
    col = pa.chunked_array([view_column(values[:300], view), view_column(values[300:], view)])
    repaired = gc.make_valid(col, keep_views=True)
    assert repaired.type == pa.string_view() and repaired.to_pylist() == decoded(values, "replace")
    assert gc.cast_to_utf8(col, "null", keep_views=True).to_pylist() == [
        None if v is None or error_units(v) else v.decode() for v in values]
    counts = gc.count_code_points(col, "drop", keep_views=True)
    assert counts.type == pa.int32() and counts.to_pylist() == [
        None if v is None else len(v.decode("utf-8", "ignore")) for v in values]
    assert gc.is_valid(col, keep_views=True).to_pylist() == [None if v is None else not error_units(v) for v in values]
    bad = next(i for i, v in enumerate(values) if i >= 300 and v is not None and error_units(v))
    with pytest.raises(gc.InvalidRowError) as info:  # found in the second chunk, named in the column
        gc.validate(col.slice(300), keep_views=True)
    assert (info.value.row, info.value.offset, info.value.object) == (
        bad - 300, error_units(values[bad])[0][0], values[bad])


def test_polars_series_and_dataframe_columns():
    pl = pytest.importorskip("polars", reason="polars is not installed here (pip install '.[test]' has it)")
    values = rows(13, 600)
    series = pl.Series("text", values, dtype=pl.Binary)  # exported as binary_view
    check_row_operations(series, values)
    assert isinstance(gc.is_valid(series), pa.ChunkedArray)  # a polars series is an Arrow stream
    frame = pl.DataFrame({"id": range(len(values)), "text": series})
    check_row_operations(frame["text"], values)
    check_row_operations(frame.get_column("text").slice(7, 400), values[7:407])
    pieces = pl.concat([series.slice(0, 250), series.slice(250)], rechunk=False)
    assert pieces.n_chunks() == 2
    check_row_operations(pieces, values)  # rows numbered over the whole series
    strings = pl.Series("s", ["h\u00e9llo", None, "\U0001f600" * 20, ""])  # String (string_view)
    assert gc.is_valid(strings).to_pylist() == [True, None, True, True]
    assert gc.count_code_points(strings).to_pylist() == [5, None, 20, 0]
    assert gc.make_valid(strings).to_pylist() == ["h\u00e9llo", None, "\U0001f600" * 20, ""]


def test_nanoarrow_arrays():
    na = pytest.importorskip("nanoarrow", reason="nanoarrow is not installed here (pip install '.[test]' has it)")
    values = rows(19, 500)
    for dtype in (na.binary(), na.large_binary()):  # (nanoarrow 0.9.0 crashes making view arrays)
        check_row_operations(na.Array(values, dtype), values)
    check_row_operations(na.Array(column(values, pa.string())), values)  # utf8 with invalid rows
    check_row_operations(na.c_array(values, na.binary()), values)  # __arrow_c_array__ alone
    assert isinstance(gc.make_valid(na.c_array(values, na.binary())), pa.Array)
    pieces = na.Array.from_chunks([na.c_array(values[:200], na.binary()), na.c_array(values[200:], na.binary())])
    check_row_operations(pieces, values)  # several chunks: exported as a stream, not as one array
    assert isinstance(gc.make_valid(pieces), pa.ChunkedArray)


def test_bad_column_types_are_errors():
    with pytest.raises(ValueError):
        gc.is_valid(pa.array([1, 2, 3]))
    with pytest.raises(ValueError):
        gc.make_valid(pa.array([b"a"], pa.binary()), "strict")


def test_docstring_examples():
    import doctest

    result = doctest.testmod(gc, verbose=False)
    assert result.attempted >= 4 and result.failed == 0


class DeviceInterfaceOnly:
    """Exports an array through the Arrow C Device Data Interface alone (as cuDF does), here
    with its buffers in host memory (ARROW_DEVICE_CPU)."""

    def __init__(self, arr):
        self.arr = arr

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.arr.__arrow_c_device_array__(requested_schema, **kwargs)


@pytest.mark.parametrize("dtype", TYPES, ids=str)
def test_device_interface_producers_in_host_memory(dtype):
    values = rows(21, 400)
    col = column(values, dtype).slice(7)
    expect = values[7:]
    dev = DeviceInterfaceOnly(col)
    assert gc.is_valid(dev).to_pylist() == [None if v is None else not error_units(v) for v in expect]
    assert gc.make_valid(dev, "drop").to_pylist() == decoded(expect, "ignore")
    assert gc.cast_to_utf8(dev, "replace").to_pylist() == decoded(expect, "replace")
    assert gc.count_code_points(dev, "null").to_pylist() == [
        None if v is None or error_units(v) else len(v.decode()) for v in expect]
    bad = [i for i, v in enumerate(expect) if v is not None and error_units(v)]
    with pytest.raises(gc.InvalidRowError) as info:
        gc.validate(dev)
    assert info.value.row == bad[0] and info.value.offset == error_units(expect[bad[0]])[0][0]
    assert gc.validate(DeviceInterfaceOnly(pa.array([b"ok", None], pa.binary()))) is None


def test_a_device_interface_column_built_by_hand_in_host_memory():
    from arrow_ctypes import ARROW_DEVICE_CPU, BinaryColumn, packed

    values = [v if v is not None else b"" for v in rows(33, 300)]
    offsets, data = packed(values)
    col = BinaryColumn(len(values), offsets.ctypes.data, data.ctypes.data, ARROW_DEVICE_CPU)
    assert gc.make_valid(col).to_pylist() == decoded(values, "replace")
    assert gc.is_valid(col).to_pylist() == [not error_units(v) for v in values]
