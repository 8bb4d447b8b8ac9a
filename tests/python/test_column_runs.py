"""The column paths that validate many rows as one text, and the repairs that share the input's
bytes (string_view results that point into the input): row by row against CPython, with rows
cut inside a character where the rows' concatenation is valid, rows apart in their buffers
(polars' Parquet layout), NULLs, empty rows, slices, chunks, and sizes around the run limits."""
import random
import struct

import pytest

pa = pytest.importorskip("pyarrow")

import gutf8.columns as gc  # noqa: E402
from conftest import error_units, random_text  # noqa: E402

RUN = 1 << 18  # the bytes of rows validated as one text

# Each group's concatenation is valid UTF-8; its rows are not (a character cut between rows).
CUT_ROWS = [
    [b"ab\xe2\x82", b"\xacxyz"],                 # euro sign cut after two bytes
    [b"ab\xe2", b"\x82\xac", b"ok"],             # ... after one byte
    [b"x\xf0\x9f", b"\x98\x80y"],                # a 4-byte sequence cut in half
    [b"x\xf0", b"\x9f", b"\x98", b"\x80"],       # ... and in single bytes
    [b"a\xe2\x82", b"", b"\xacb"],               # an empty row between the two halves
    [b"\xc3", b"\xa9t\xc3\xa9"],                 # a 2-byte sequence
]


def decoded(values, errors):
    return [None if v is None else v.decode("utf-8", errors) for v in values]


def check(col, values, keep_views=False):
    """Every operation on col (keep_views: on a view layout in place) against CPython."""
    assert gc.is_valid(col, keep_views=keep_views).to_pylist() == [
        None if v is None else not error_units(v) for v in values]
    for errors, python in (("replace", "replace"), ("drop", "ignore")):
        assert gc.make_valid(col, errors, keep_views=keep_views).to_pylist() == decoded(values, python)
    assert gc.count_code_points(col, "replace", keep_views=keep_views).to_pylist() == [
        None if v is None else len(v.decode("utf-8", "replace")) for v in values]
    bad = [i for i, v in enumerate(values) if v is not None and error_units(v)]
    if bad:
        with pytest.raises(gc.InvalidRowError) as info:
            gc.validate(col, keep_views=keep_views)
        assert (info.value.row, info.value.offset) == (bad[0], error_units(values[bad[0]])[0][0])


def check_sharing(col, values):
    """The string_view repairs and casts that point into col's buffers."""
    for errors, python in (("replace", "replace"), ("drop", "ignore")):
        out = gc._cast_sharing(col, errors)
        assert out.type == pa.string_view()
        assert out.to_pylist() == decoded(values, python)
        out.validate(full=True)
    assert gc._cast_sharing(col, "null").to_pylist() == [
        None if v is None or error_units(v) else v.decode() for v in values]


def gapped_views(values, gap=b"\xac\x80\xe2", split=None):
    """A binary_view array whose long rows lie apart in its data buffers, each after `gap` (bytes
    that continue or start a sequence, so a row read with its neighbours' bytes would change),
    the rows from `split` on in a second buffer."""
    buffers, views, validity = [bytearray(), bytearray()], bytearray(), []
    for i, v in enumerate(values):
        validity.append(v is not None)
        v = b"" if v is None else v
        if len(v) <= 12:
            views += struct.pack("<i", len(v)) + v.ljust(12, b"\0")
            continue
        index = 1 if split is not None and i >= split else 0
        buffers[index] += gap
        views += struct.pack("<i4sii", len(v), v[:4], index, len(buffers[index]))
        buffers[index] += v
    bits = pa.array(validity, pa.bool_()).buffers()[1] if None in values else None
    data = [pa.py_buffer(bytes(b)) for b in (buffers if split is not None else buffers[:1])]
    return pa.Array.from_buffers(pa.binary_view(), len(values), [bits, pa.py_buffer(bytes(views)), *data],
                                 null_count=values.count(None))


def with_cuts(rng, n, size, rate):
    """n rows of about `size` bytes, with CUT_ROWS groups, NULLs and empty rows among them."""
    out = []
    while len(out) < n:
        pick = rng.random()
        if pick < 0.1:
            out += rng.choice(CUT_ROWS)
        elif pick < 0.15:
            out.append(None)
        elif pick < 0.2:
            out.append(b"")
        else:
            out.append(random_text(rng, rng.randint(max(size - 7, 0), size + 7), rate))
    return out[:n]


@pytest.mark.parametrize("group", CUT_ROWS, ids=lambda g: b"|".join(g).hex())
def test_rows_cut_inside_a_character_are_invalid(group):
    values = [b"valid text before"] + group + [b"valid text after"]
    assert b"".join(values).decode()  # the concatenation is valid: the rows are not
    for dtype in (pa.binary(), pa.large_binary()):
        check(pa.array(values, dtype), values)
    check(gapped_views(values), values, keep_views=True)
    check(pa.array(values, pa.binary_view()), values, keep_views=True)
    check_sharing(pa.array(values, pa.binary()), values)
    check_sharing(gapped_views(values), values)


@pytest.mark.parametrize("size", [1, 11, 12, 13, 31, 32, 33, 47, 48, 49, 200, 4097])
def test_runs_of_rows_match_cpython(size):
    rng = random.Random(size * 7 + 1)
    values = with_cuts(rng, 300, size, 0.01)
    col = pa.array(values, pa.binary())
    check(col, values)
    check(gapped_views(values, split=150), values, keep_views=True)
    check_sharing(col, values)
    check_sharing(gapped_views(values, split=150), values)
    check_sharing(col.slice(7, 200), values[7:207])
    check_sharing(pa.chunked_array([col.slice(0, 100), col.slice(100)]), values)


@pytest.mark.parametrize("delta", [-2, -1, 0, 1, 3])
def test_errors_and_cuts_at_the_run_limit(delta):
    """A row that ends near RUN bytes from the start, followed by a cut row or an error."""
    head = random_text(random.Random(delta), 1000, 0)
    first = (head * (RUN // 1000 + 1))[: RUN + delta]
    while first and (first[-1] & 0xC0) == 0x80 or first[-1] >= 0xC0:  # end on a whole character
        first = first[:-1]
    for tail in ([b"\xe2\x82", b"\xac"], [b"\xff", b"ok"], [b"", b"\x80"], [b"x" * 40]):
        values = [first] + tail + [b"after"]
        check(pa.array(values, pa.binary()), values)
        check(gapped_views(values), values, keep_views=True)
        check_sharing(pa.array(values, pa.binary()), values)


@pytest.mark.parametrize("size", [RUN // 2 - 1, RUN // 2, RUN // 2 + 1, RUN + 5])
def test_long_rows_beside_short_ones(size):
    """Rows too long to gather with the others are validated where they are."""
    rng = random.Random(size)
    long_valid = random_text(rng, size, 0)
    long_bad = long_valid[: size // 2] + b"\xf0\x9f" + long_valid[size // 2:]
    values = [b"short", long_valid, b"\x9f cut?", long_bad, None, b"", long_valid[:13] + b"\xe2\x82",
              b"\xac end"]
    values = [v.decode("utf-8", "replace").encode() if i == 1 else v for i, v in enumerate(values)]
    check(pa.array(values, pa.large_binary()), values)
    check(gapped_views(values, split=3), values, keep_views=True)
    check_sharing(gapped_views(values, split=3), values)
    check_sharing(pa.array(values, pa.binary()), values)


def test_sharing_keeps_the_input_bytes_and_types():
    values = [b"a valid row longer than twelve bytes", b"bad \xff row longer than twelve", None, b"",
              b"short\xc0", b"ok"]
    col = pa.array(values, pa.binary())
    out = gc._cast_sharing(col, "replace")
    # the valid long row's view points into the input's own data buffer (no copy)
    assert out.buffers()[2].address == col.buffers()[2].address
    assert gc._cast_sharing(pa.array(values, pa.large_binary()), "replace") is None
    for dtype in (pa.string(), pa.binary_view(), pa.string_view()):
        check_sharing(pa.array(values, pa.binary()).view(dtype) if dtype == pa.string()
                      else pa.array(values, pa.binary()).cast(pa.binary_view()).view(dtype), values)
    check_sharing(pa.array([None, b"", None], pa.binary()), [None, b"", None])
    check_sharing(pa.array([], pa.binary()), [])
    check_sharing(pa.chunked_array([], pa.binary()), [])
    with pytest.raises(gc.InvalidRowError):
        gc.cast_to_utf8(col, "strict")


def test_polars_parquet_rows_with_cuts(tmp_path):
    """polars reads a Parquet binary column into views whose rows lie apart in its buffers."""
    pl = pytest.importorskip("polars")
    import gutf8.polars  # noqa: F401

    values = with_cuts(random.Random(5), 3000, 60, 0.01)
    pl.DataFrame({"t": pl.Series(values, dtype=pl.Binary)}).write_parquet(tmp_path / "t.parquet")
    s = pl.read_parquet(tmp_path / "t.parquet")["t"]
    assert s.gutf8.make_valid().to_list() == decoded(values, "replace")
    assert s.gutf8.make_valid("drop").to_list() == decoded(values, "ignore")
    assert s.gutf8.cast_to_utf8("null").to_list() == [
        None if v is None or error_units(v) else v.decode() for v in values]
    assert s.gutf8.is_valid().to_list() == [None if v is None else not error_units(v) for v in values]
    assert s.slice(11, 2000).gutf8.make_valid().to_list() == decoded(values[11:2011], "replace")


def test_duckdb_vectors_with_cuts():
    duckdb = pytest.importorskip("duckdb")
    import gutf8.duckdb

    values = with_cuts(random.Random(6), 5000, 60, 0.01)  # a few DuckDB vectors of 2048 rows
    con = gutf8.duckdb.register(duckdb.connect())
    con.register("v", pa.table({"i": pa.array(range(len(values))), "b": pa.array(values, pa.binary())}))
    got = con.sql("SELECT make_valid_utf8(b), make_valid_utf8(b, 'drop'), try_validate_utf8(b) FROM v ORDER BY i")
    rows = got.fetchall()
    assert [r[0] for r in rows] == decoded(values, "replace")
    assert [r[1] for r in rows] == decoded(values, "ignore")
    assert [r[2] for r in rows] == [None if v is None or error_units(v) else v.decode() for v in values]
