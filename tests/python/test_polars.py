"""gutf8.polars's .gutf8 namespace against CPython's codec, row by row."""
import doctest
import re

import pytest

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars", reason="polars is not installed here (pip install '.[test]' has it)")

import gutf8.polars  # noqa: E402
from conftest import error_units  # noqa: E402
from engine_rows import decoded, first_error, rows, valid  # noqa: E402

N = 3001
LONG_AT = (5, 1500, 2999)


@pytest.fixture(scope="module")
def values():
    return rows(48, N, LONG_AT)


def expected(values):
    """method name and arguments -> CPython's answer per row."""
    def count(errors):
        return [None if v is None else len(v.decode("utf-8", errors)) for v in values]
    return {
        ("is_valid",): valid(values),
        ("make_valid",): decoded(values, "replace"),
        ("make_valid", "drop"): decoded(values, "ignore"),
        ("cast_to_utf8", "null"): [None if v is None or error_units(v) else v.decode() for v in values],
        ("cast_to_utf8", "replace"): decoded(values, "replace"),
        ("cast_to_utf8", "drop"): decoded(values, "ignore"),
        ("count_code_points", "replace"): count("replace"),
        ("count_code_points", "drop"): count("ignore"),
        ("count_code_points", "null"): [None if v is None or error_units(v) else len(v.decode()) for v in values],
    }


DTYPES = {"is_valid": pl.Boolean, "make_valid": pl.String, "cast_to_utf8": pl.String, "count_code_points": pl.UInt32}


def check_series(series, values):
    for (name, *args), want in expected(values).items():
        got = getattr(series.gutf8, name)(*args)
        assert got.dtype == DTYPES[name] and got.name == series.name, name
        assert got.to_list() == want, (name, args)


def test_series_match_cpython(values):
    check_series(pl.Series("text", values, dtype=pl.Binary), values)


def test_strict_cast_of_valid_rows(values):
    """A strict cast that finds no error gives the input's own rows (viewed as String)."""
    ok = [v for v in values if v is None or not error_units(v)]
    series = pl.Series("text", ok, dtype=pl.Binary)
    pieces = pl.concat([series.slice(3, 500), series.slice(900)], rechunk=False)
    for s, rows_ in ((series, ok), (pieces, ok[3:503] + ok[900:])):
        got = s.gutf8.cast_to_utf8()
        assert got.dtype == pl.String and got.to_list() == [None if v is None else v.decode() for v in rows_]
        assert s.gutf8.count_code_points().to_list() == [None if v is None else len(v.decode()) for v in rows_]


def test_sliced_and_chunked_series(values):
    series = pl.Series("text", values, dtype=pl.Binary)
    check_series(series.slice(7, 2000), values[7:2007])
    pieces = pl.concat([series.slice(0, 1000), series.slice(1000, 1), series.slice(1001)], rechunk=False)
    assert pieces.n_chunks() == 3
    check_series(pieces, values)
    row, offset = first_error(values[1001:])
    with pytest.raises(gutf8.polars.InvalidRowError) as info:
        pieces.slice(1001).gutf8.cast_to_utf8()
    assert (info.value.row, info.value.offset) == (row, offset)  # rows counted over the chunks


def test_strict_errors_name_row_and_offset(values):
    series = pl.Series("text", values, dtype=pl.Binary)
    row, offset = first_error(values)
    for call in (series.gutf8.cast_to_utf8, series.gutf8.count_code_points):
        with pytest.raises(gutf8.polars.InvalidRowError) as info:
            call()
        e = info.value
        assert isinstance(e, pl.exceptions.ComputeError) and isinstance(e, UnicodeDecodeError)
        assert (e.row, e.offset, e.object) == (row, offset, values[row])
        near = values[row][max(0, offset - 16):offset + 16]  # a long row is shown around its error
        assert str(e).startswith(f"row {row}: invalid UTF-8 at byte {offset} of the row {near!r}")


def test_string_and_null_series():
    text = ["h\u00e9llo", None, "\U0001f600" * 20, ""]
    strings = pl.Series("s", text)
    assert strings.gutf8.is_valid().to_list() == [True, None, True, True]
    assert strings.gutf8.cast_to_utf8().to_list() == text
    assert strings.gutf8.count_code_points().to_list() == [5, None, 20, 0]
    assert strings.gutf8.count_code_points().to_list() == strings.str.len_chars().to_list()
    nulls = pl.Series("n", [None, None])
    assert nulls.gutf8.make_valid().dtype == pl.String and nulls.gutf8.make_valid().to_list() == [None, None]
    empty = pl.Series("e", [], dtype=pl.Binary)
    assert empty.gutf8.make_valid().dtype == pl.String and empty.gutf8.is_valid().len() == 0


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_lazy_queries(values, engine):
    frame = pl.DataFrame({"id": range(N), "text": pl.Series(values, dtype=pl.Binary)})
    lazy = frame.lazy().with_columns(
        pl.col("text").gutf8.is_valid().alias("valid"),
        pl.col("text").gutf8.make_valid().alias("replaced"),
        pl.col("text").gutf8.make_valid("drop").alias("dropped"),
        pl.col("text").gutf8.cast_to_utf8("null").alias("cast"),
        pl.col("text").gutf8.count_code_points("replace").alias("chars"),
    ).filter(pl.col("id") % 3 != 1)
    schema = lazy.collect_schema()
    assert [schema[c] for c in ("valid", "replaced", "dropped", "cast", "chars")] == [
        pl.Boolean, pl.String, pl.String, pl.String, pl.UInt32]
    out = lazy.collect(engine=engine)
    kept = [v for i, v in enumerate(values) if i % 3 != 1]
    want = expected(kept)
    assert out["valid"].to_list() == want[("is_valid",)]
    assert out["replaced"].to_list() == want[("make_valid",)]
    assert out["dropped"].to_list() == want[("make_valid", "drop")]
    assert out["cast"].to_list() == want[("cast_to_utf8", "null")]
    assert out["chars"].to_list() == want[("count_code_points", "replace")]


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_lazy_strict_cast_names_the_offset(values, engine):
    only = [None if v is not None and error_units(v) else v for v in values]  # one invalid row: no race
    only[2000] = values[LONG_AT[1]]
    offset = error_units(only[2000])[0][0]
    lazy = pl.LazyFrame({"text": pl.Series(only, dtype=pl.Binary)}).select(pl.col("text").gutf8.cast_to_utf8())
    near = only[2000][offset - 16:offset + 16]
    pattern = rf"row \d+ of a batch of \d+: invalid UTF-8 at byte {offset} of the row {re.escape(repr(near))}"
    with pytest.raises(gutf8.polars.InvalidRowError, match=pattern) as info:
        lazy.collect(engine=engine)
    assert isinstance(info.value, pl.exceptions.ComputeError)


def test_wrong_types_and_arguments():
    with pytest.raises(TypeError, match="Binary or String column, not Int64"):
        pl.Series("n", [1, 2]).gutf8.is_valid()
    with pytest.raises(TypeError, match="Binary or String column, not Int64"):
        pl.LazyFrame({"n": [1, 2]}).select(pl.col("n").gutf8.make_valid()).collect()
    with pytest.raises(ValueError, match="errors must be one of 'replace', 'drop'"):
        pl.col("t").gutf8.make_valid("strict")
    with pytest.raises(ValueError, match="not 'ignore'"):
        pl.Series("t", [b"a"]).gutf8.cast_to_utf8("ignore")


def test_parquet_round_trip(tmp_path, values):
    """The README's example: binary text with invalid UTF-8 read, repaired, written as strings."""
    pl.DataFrame({"text": pl.Series(values, dtype=pl.Binary)}).write_parquet(tmp_path / "raw.parquet")
    (pl.scan_parquet(tmp_path / "raw.parquet")
       .with_columns(pl.col("text").gutf8.make_valid())
       .sink_parquet(tmp_path / "clean.parquet"))
    clean = pl.read_parquet(tmp_path / "clean.parquet")["text"]
    assert clean.dtype == pl.String and clean.to_list() == decoded(values, "replace")


def test_docstring_examples():
    result = doctest.testmod(gutf8.polars, verbose=False)
    assert result.attempted > 0 and result.failed == 0
