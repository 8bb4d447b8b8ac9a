"""gutf8.duckdb's SQL functions against CPython's codec, row by row."""
import re

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed here (pip install '.[test]' has it)")

import gutf8.duckdb  # noqa: E402
from conftest import error_units  # noqa: E402
from engine_rows import decoded, first_error, rows, valid  # noqa: E402

N = 10_007  # five DuckDB vectors of 2048 rows and an uneven one
LONG_AT = (2047, 2048, 6000, 10_006)


@pytest.fixture(scope="module")
def values():
    return rows(47, N, LONG_AT)


@pytest.fixture(scope="module")
def con(values):
    """A connection with the functions and table t: id, b (BLOB), s (the same bytes as VARCHAR,
    scanned from Arrow: DuckDB stores no invalid VARCHAR, but passes these on)."""
    c = gutf8.duckdb.register(duckdb.connect())
    raw = pa.array(values, pa.binary())
    c.register("arrow_t", pa.table({"id": pa.array(range(N), pa.int64()), "b": raw, "s": raw.view(pa.string())}))
    c.execute("CREATE TABLE blobs AS SELECT id, b FROM arrow_t")  # BLOB in DuckDB's own storage
    c.execute("CREATE VIEW t AS SELECT id, blobs.b, arrow_t.s FROM blobs JOIN arrow_t USING (id)")
    return c


def column(con, expr, where=""):
    return [r[0] for r in con.sql(f"SELECT {expr} FROM t {where} ORDER BY id").fetchall()]


@pytest.mark.parametrize("x", ["b", "s"], ids=["BLOB", "VARCHAR"])
def test_functions_match_cpython(con, values, x):
    assert column(con, f"is_valid_utf8({x})") == valid(values)
    assert column(con, f"make_valid_utf8({x})") == decoded(values, "replace")
    assert column(con, f"make_valid_utf8({x}, 'replace')") == decoded(values, "replace")
    assert column(con, f"make_valid_utf8({x}, 'drop')") == decoded(values, "ignore")
    assert column(con, f"try_validate_utf8({x})") == [
        None if v is None or error_units(v) else v.decode() for v in values]
    ok = [v.decode() for v in values if v is not None and not error_units(v)]
    assert column(con, f"validate_utf8({x})", f"WHERE is_valid_utf8({x})") == ok


def test_large_arrow_buffers(values):
    """With arrow_large_buffer_size DuckDB hands large_binary / large_string vectors over."""
    c = gutf8.duckdb.register(duckdb.connect())
    c.execute("SET arrow_large_buffer_size = true")
    part = values[:3000]
    raw = pa.array(part, pa.binary())
    c.register("big", pa.table({"id": range(len(part)), "b": raw, "s": raw.view(pa.string())}))
    got = c.sql("SELECT make_valid_utf8(b, 'drop'), is_valid_utf8(s), try_validate_utf8(s) FROM big"
                " ORDER BY id").fetchall()
    assert [g[0] for g in got] == decoded(part, "ignore")
    assert [g[1] for g in got] == valid(part)
    assert [g[2] for g in got] == [None if v is None or error_units(v) else v.decode() for v in part]


def test_result_types(con):
    types = con.sql("SELECT typeof(is_valid_utf8(b)), typeof(make_valid_utf8(b)), typeof(validate_utf8(s)),"
                    " typeof(try_validate_utf8(b)) FROM t LIMIT 1").fetchall()[0]
    assert types == ("BOOLEAN", "VARCHAR", "VARCHAR", "VARCHAR")


def test_validate_names_the_offset(con, values):
    for x in ("b", "s"):
        with pytest.raises(duckdb.Error, match=r"validate_utf8: invalid UTF-8 at byte \d+ of the row b"):
            con.sql(f"SELECT validate_utf8({x}) FROM t").fetchall()
    first, _ = first_error(values)
    cut = next(i for i, v in enumerate(values) if v is not None and v.startswith(b"abc\xe2"))
    for row in (first, cut):
        at = error_units(values[row])[0][0]
        with pytest.raises(duckdb.Error, match=rf"at byte {at} of the row {re.escape(repr(values[row]))}: "):
            con.sql(f"SELECT validate_utf8(s) FROM t WHERE id = {row}").fetchall()
    long_row, size = LONG_AT[1], len(values[LONG_AT[1]])  # its error is after 64 KiB: bytes around it are shown
    at = error_units(values[long_row])[0][0]
    with pytest.raises(duckdb.Error, match=rf"at byte {at} of the row b.*\(bytes {at - 16}-{size} of {size}\): "):
        con.sql(f"SELECT validate_utf8(b) FROM t WHERE id = {long_row}").fetchall()


def test_nulls_constants_and_per_row_errors(con):
    assert con.sql("SELECT is_valid_utf8(NULL), make_valid_utf8(NULL), validate_utf8(NULL),"
                   " try_validate_utf8(NULL), make_valid_utf8(NULL::BLOB, 'drop')").fetchall()[0] == (None,) * 5
    one = con.sql(r"SELECT make_valid_utf8('a\xE1\x80b'::BLOB), make_valid_utf8('a\xE1\x80b'::BLOB, 'drop'),"
                  r" is_valid_utf8('\xF0\x9F\x98\x80'::BLOB), try_validate_utf8('\xC3'::BLOB)").fetchall()[0]
    assert one == ("a\ufffdb", "ab", True, None)
    per_row = con.sql(r"SELECT make_valid_utf8(x, e) FROM (VALUES ('\xFFa'::BLOB, 'drop'), ('\xFFa'::BLOB, 'replace'),"
                      r" (NULL, 'drop')) v(x, e)").fetchall()
    assert per_row == [("a",), ("\ufffda",), (None,)]


def test_wrong_arguments_are_clear_errors(con):
    with pytest.raises(duckdb.BinderException, match=r"is_valid_utf8\(x BLOB\)"):
        con.sql("SELECT is_valid_utf8(42)")
    with pytest.raises(duckdb.BinderException, match="make_valid_utf8"):
        con.sql("SELECT make_valid_utf8(b, 'drop', 1) FROM t")
    for bad in ("'ignore'", "NULL"):
        with pytest.raises(duckdb.Error, match=r"errors must be 'replace' or 'drop', not "):
            con.sql(f"SELECT make_valid_utf8(b, {bad}) FROM t").fetchall()


def test_register_again_and_on_the_default_connection(con):
    assert gutf8.duckdb.register(con) is con
    assert con.sql(r"SELECT make_valid_utf8('\xFF'::BLOB)").fetchall()[0] == ("\ufffd",)
    default = gutf8.duckdb.register()
    assert default.sql(r"SELECT is_valid_utf8('\xFF'::BLOB)").fetchall()[0] == (False,)


def test_parquet_round_trip(tmp_path, values):
    """The README's example: binary text with invalid UTF-8 read, repaired, written as strings."""
    pq.write_table(pa.table({"id": range(N), "text": pa.array(values, pa.binary())}), tmp_path / "raw.parquet")
    c = gutf8.duckdb.register(duckdb.connect())
    c.execute(f"COPY (SELECT * REPLACE (make_valid_utf8(text) AS text) FROM read_parquet('{tmp_path / 'raw.parquet'}'))"
              f" TO '{tmp_path / 'clean.parquet'}'")
    clean = pq.read_table(tmp_path / "clean.parquet").sort_by("id")
    assert clean["id"].to_pylist() == list(range(N))
    assert pa.types.is_string(clean["text"].type) and clean["text"].to_pylist() == decoded(values, "replace")


def test_docstring_example():
    import doctest
    result = doctest.testmod(gutf8.duckdb, verbose=False)
    assert result.attempted > 0 and result.failed == 0
