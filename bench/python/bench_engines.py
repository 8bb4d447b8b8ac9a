"""gutf8 inside DuckDB and Polars against what those engines offer without it, side by side.

Input: a Parquet file of one binary column `text`, --rows rows of 150-250 bytes of mixed-script
text (corpus/sample/*.txt, tiled; rows cut at character boundaries) where 1 % of the rows have one
byte overwritten by a byte that never appears in UTF-8 (FE, FF, C0, F5). Every figure is the
median of --reps runs (--slow-reps for the Python UDFs) in one process, after one warm-up run.

DuckDB (data in a DuckDB table, BLOB; results reduced with max(strlen(...)), which reads only
the string lengths): gutf8.duckdb's make_valid_utf8 and is_valid_utf8; a Python UDF of
bytes.decode('utf-8', 'replace') per row (DuckDB's native UDF) and per vector (an Arrow UDF with
a list comprehension); a no-op Arrow UDF (the engine's cost of handing a vector to Python and
back); from the Parquet file, read_parquet(..., utf8_validation='replace') (DuckDB's own
repair, which writes '?') against the same read with make_valid_utf8; and the first five again
with DuckDB on one thread (SET threads = 1).

Polars (data in a DataFrame, Binary): .gutf8.make_valid() / is_valid(); map_elements of
bytes.decode('utf-8', 'replace'); a no-op map_batches (in memory and streaming, whose calls
are counted); gutf8.columns.make_valid on polars' views in place (keep_views=True: a string_view
result with buffers of its own, where .gutf8.make_valid() returns views into polars' buffers)
and polars' import of that result; on the valid rows alone, polars' strict Binary -> String cast
against .gutf8.cast_to_utf8() (which returns the input's buffers).

  python bench/python/bench_engines.py --rows 10000000 --reps 5 --workdir /tmp/x \
      --out bench/results/engines_dev.md
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import gutf8
from bench_python import ROOT, current_commit, machine

NEVER_UTF8 = np.array([0xFE, 0xFF, 0xC0, 0xF5], np.uint8)


def make_parquet(path: Path, rows: int, invalid: float, seed: int = 47) -> tuple[int, int]:
    """Writes the input; returns (data bytes, invalid rows)."""
    base = np.frombuffer(b"".join(p.read_bytes() for p in sorted((ROOT / "corpus" / "sample").glob("*.txt"))),
                         np.uint8)
    rng = np.random.default_rng(seed)
    ends = np.cumsum(rng.integers(150, 251, rows))
    starts = np.flatnonzero((base & 0xC0) != 0x80)  # character starts in the (tiled) base text
    at = np.searchsorted(starts, ends % len(base))
    nxt = np.where(at < len(starts), starts[np.minimum(at, len(starts) - 1)], starts[0] + len(base))
    offsets = np.concatenate([[0], ends - ends % len(base) + nxt]).astype(np.int64)
    data = np.tile(base, int(offsets[-1]) // len(base) + 1)[: offsets[-1]]
    bad = rng.choice(rows, int(rows * invalid), replace=False)
    data[offsets[bad] + rng.integers(0, 150, len(bad))] = rng.choice(NEVER_UTF8, len(bad))
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    column = pa.LargeBinaryArray.from_buffers(pa.large_binary(), rows, buffers)
    pq.write_table(pa.table({"text": column}), path, use_dictionary=False, row_group_size=1 << 20)
    return int(offsets[-1]), len(bad)


def timed(label: str, call: Callable[[], Any], reps: int) -> float:
    """The median seconds of `reps` runs after a warm-up (printed as it goes: a run stopped by a
    time limit still leaves what it measured)."""
    call()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    print(f"{label}: {' '.join(f'{x:.3f}' for x in times)} s", flush=True)
    return statistics.median(times)


class Counter:
    """A pass-through Arrow / polars UDF that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, x: Any) -> Any:
        self.calls += 1
        return x


def duckdb_rows(path: Path, reps: int, slow_reps: int) -> list[Row]:
    import duckdb

    import gutf8.duckdb

    con = gutf8.duckdb.register(duckdb.connect())
    con.execute(f"CREATE TABLE t AS SELECT text FROM read_parquet('{path}')")
    blob, varchar = duckdb.sqltype("BLOB"), duckdb.sqltype("VARCHAR")
    noop = Counter()
    con.create_function("noop", noop, [blob], blob, type="arrow", null_handling="special")
    con.create_function("py_row", lambda b: b.decode("utf-8", "replace"), [blob], varchar)
    con.create_function("py_vector", lambda x: pa.array([None if b is None else b.decode("utf-8", "replace")
                                                         for b in x.to_pylist()], pa.string()),
                        [blob], varchar, type="arrow", null_handling="special")

    read = f"read_parquet('{path}')"
    runs = [("scan alone: max(octet_length(text))", "SELECT max(octet_length(text)) FROM t", reps),
            ("no-op Arrow UDF", "SELECT max(octet_length(noop(text))) FROM t", reps),
            ("gutf8 make_valid_utf8", "SELECT max(strlen(make_valid_utf8(text))) FROM t", reps),
            ("gutf8 is_valid_utf8", "SELECT count(*) FILTER (WHERE is_valid_utf8(text)) FROM t", reps),
            ("Python UDF per row: bytes.decode replace", "SELECT max(strlen(py_row(text))) FROM t", slow_reps),
            ("Python Arrow UDF per vector: decode loop", "SELECT max(strlen(py_vector(text))) FROM t", slow_reps),
            ("read_parquet as BLOB alone", f"SELECT max(octet_length(text)) FROM {read}", reps),
            ("read_parquet, utf8_validation='replace' (built-in)",
             f"SELECT max(strlen(text)) FROM {read[:-1]}, binary_as_string=true, utf8_validation='replace')", reps),
            ("read_parquet as BLOB + gutf8 make_valid_utf8", f"SELECT max(strlen(make_valid_utf8(text))) FROM {read}",
             reps)]
    # the same on one DuckDB thread: its threads take turns at the GIL around every Arrow UDF call
    runs += [(label + " (threads=1)", sql, n) for label, sql, n in runs[:5]]
    out = []
    for label, sql, n in runs:
        con.execute("SET threads = 1" if label.endswith("(threads=1)") else "RESET threads")
        noop.calls = 0
        seconds = timed(label, lambda: con.sql(sql).fetchall(), n)
        out.append((label, seconds, f"{noop.calls // (n + 1)} calls a run" if noop.calls else "", None))
    con.close()
    return out


def polars_rows(path: Path, reps: int, slow_reps: int) -> list[Row]:
    import polars as pl

    import gutf8.columns as gc
    import gutf8.polars  # noqa: F401  (the .gutf8 namespace)

    df = pl.read_parquet(path)
    valid = df.filter(pl.col("text").gutf8.is_valid())
    valid_bytes = int(valid["text"].bin.size().sum())
    kept = gc.make_valid(df["text"], keep_views=True)
    noop = Counter()
    text = pl.col("text")
    runs = [("gutf8 .gutf8.make_valid()", lambda: df.select(text.gutf8.make_valid()), reps, ""),
            ("gutf8 .gutf8.is_valid()", lambda: df.select(text.gutf8.is_valid()), reps, ""),
            ("map_elements: bytes.decode replace",
             lambda: df.select(text.map_elements(lambda b: b.decode("utf-8", "replace"), return_dtype=pl.String)),
             slow_reps, ""),
            ("no-op map_batches (in memory)", lambda: df.select(text.map_batches(noop, return_dtype=pl.Binary)), reps,
             "calls"),
            ("no-op map_batches (streaming engine)",
             lambda: df.lazy().select(text.map_batches(noop, return_dtype=pl.Binary, is_elementwise=True))
             .collect(engine="streaming"), reps, "calls"),
            ("streaming engine, no UDF: select(text)", lambda: df.lazy().select(text).collect(engine="streaming"),
             reps, ""),
            ("make_valid on the views (keep_views=True) + polars import",
             lambda: pl.from_arrow(gc.make_valid(df["text"], keep_views=True), rechunk=False), reps, ""),
            ("polars import of gutf8's string_view result", lambda: pl.from_arrow(kept, rechunk=False), reps, ""),
            ("valid rows: polars strict cast to String (built-in)", lambda: valid.select(text.cast(pl.String)), reps,
             ""),
            ("valid rows: gutf8 .gutf8.cast_to_utf8()", lambda: valid.select(text.gutf8.cast_to_utf8()), reps, ""),
            ("valid rows: gutf8 .gutf8.make_valid()", lambda: valid.select(text.gutf8.make_valid()), reps, "")]
    out = []
    for label, call, n, note in runs:
        noop.calls = 0
        seconds = timed(label, call, n)
        out.append((label, seconds, f"{noop.calls // (n + 1)} calls a run" if note else "",
                    valid_bytes if label.startswith("valid rows") else None))
    return out


Row = tuple[str, float, str, "int | None"]  # label, median seconds, note, input bytes (None: all)


def table(title: str, rows: list[Row], data_bytes: int, ratios: list[tuple[str, str]]) -> list[str]:
    """The runs, then each ratio: the first run's time over the second's."""
    lines = [f"### {title}", "", "| run | median s | GB/s of input | note |", "|---|---:|---:|---|"]
    for label, seconds, note, nbytes in rows:
        lines.append(f"| {label} | {seconds:.3f} | {(nbytes or data_bytes) / seconds / 1e9:.2f} | {note} |")
    times = {row[0]: row[1] for row in rows}
    lines += ["", "| time of ÷ time of | ratio |", "|---|---:|"]
    for first, second in ratios:
        lines.append(f"| {first} ÷ {second} | {times[first] / times[second]:.2f} |")
    return lines + [""]


def versions() -> str:
    out = [f"gutf8 {gutf8.__version__} (CUDA build: {gutf8.built_with_cuda})", f"pyarrow {pa.__version__}",
           f"numpy {np.__version__}"]
    for name in ("duckdb", "polars"):
        try:
            out.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            out.append(f"{name} absent")
    return ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--invalid", type=float, default=0.01)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--slow-reps", type=int, default=None, help="runs of the Python UDFs (default --reps)")
    ap.add_argument("--engines", default="duckdb,polars")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--commit", default=None, help="the commit to name (default: git's HEAD)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    slow = a.slow_reps or a.reps
    with tempfile.TemporaryDirectory(dir=a.workdir) as work:
        path = Path(work) / "text.parquet"
        data_bytes, bad = make_parquet(path, a.rows, a.invalid)
        load = os.getloadavg()[0]
        lines = ["# gutf8 in DuckDB and Polars", "",
                 f"- commit {a.commit or current_commit()}; {machine()}",
                 f"- {versions()}",
                 f"- input: {a.rows:,} rows, {data_bytes / 1e9:.2f} GB of text, {bad:,} invalid rows; Parquet "
                 f"{path.stat().st_size / 1e9:.2f} GB (snappy, no dictionary)",
                 f"- median of {a.reps} runs ({slow} for the Python UDFs) after a warm-up; load average "
                 f"{load:.1f} at the start", ""]
        print("\n".join(lines), flush=True)
        if "duckdb" in a.engines:
            lines += table("DuckDB", duckdb_rows(path, a.reps, slow), data_bytes, [
                ("Python UDF per row: bytes.decode replace", "gutf8 make_valid_utf8"),
                ("Python Arrow UDF per vector: decode loop", "gutf8 make_valid_utf8"),
                ("read_parquet as BLOB + gutf8 make_valid_utf8", "read_parquet, utf8_validation='replace' (built-in)"),
                ("gutf8 make_valid_utf8", "no-op Arrow UDF"),
                ("Python UDF per row: bytes.decode replace (threads=1)", "gutf8 make_valid_utf8 (threads=1)"),
                ("gutf8 make_valid_utf8", "gutf8 make_valid_utf8 (threads=1)")])
            Path(a.out).write_text("\n".join(lines) + "\n")  # what is done, should the next part not end
        if "polars" in a.engines:
            lines += table("Polars", polars_rows(path, a.reps, slow), data_bytes, [
                ("map_elements: bytes.decode replace", "gutf8 .gutf8.make_valid()"),
                ("make_valid on the views (keep_views=True) + polars import", "gutf8 .gutf8.make_valid()"),
                ("valid rows: gutf8 .gutf8.cast_to_utf8()", "valid rows: polars strict cast to String (built-in)")])
        lines.append(f"load average {os.getloadavg()[0]:.1f} at the end")
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[lines.index("") + 1:]))

if __name__ == "__main__":
    main()
