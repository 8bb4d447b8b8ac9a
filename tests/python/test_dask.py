"""gutf8.dask on a distributed.LocalCluster of 2 worker processes against a sequential run."""
import os
import random

import pytest

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed", reason="gutf8.dask needs dask[distributed] (the [dask] extra)")

import gutf8  # noqa: E402
import gutf8.dask  # noqa: E402
from conftest import error_units, line_column, random_text  # noqa: E402

N_FILES = 300


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A few hundred files in two folders, a third of them invalid, one unreadable."""
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(7)
    contents = {}
    for i in range(N_FILES):
        folder = root / ("a" if i % 2 else "b")
        folder.mkdir(exist_ok=True)
        data = random_text(rng, rng.randrange(0, 20_000), 0.01 if i % 3 == 0 else 0.0)
        path = folder / f"f{i:03d}.txt"
        path.write_bytes(data)
        contents[str(path)] = data
    os.symlink(root / "gone.txt", root / "a" / "unreadable.txt")  # root reads every mode: dangle
    return root, contents


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def check_against_cpython(frame, contents):
    for row in frame.itertuples():
        if row.path not in contents:
            continue
        data = contents[row.path]
        units = error_units(data)
        assert row.bytes == len(data) and row.errors == len(units) and row.valid == (not units)
        if units:
            assert row.offset == units[0][0] and (row.line, row.column) == line_column(data, units[0][0])
        else:
            assert pd.isna(row.offset) and pd.isna(row.reason)


def comparable(frame):
    return frame.drop(columns=["seconds"]).reset_index(drop=True)


def test_validate_files_on_a_cluster_equals_a_sequential_run(corpus, client):
    root, contents = corpus
    pattern = str(root / "**" / "*.txt")
    on_cluster = gutf8.dask.validate_files(pattern, client=client, backend="cpu", threads=1)
    assert len(on_cluster) == N_FILES + 1 and list(on_cluster.path) == sorted(on_cluster.path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gutf8.dask, "_client", lambda c: None)  # no default client: run here
        here = gutf8.dask.validate_files(pattern, backend="cpu", threads=1)
    pd.testing.assert_frame_equal(comparable(on_cluster), comparable(here))
    check_against_cpython(on_cluster, contents)
    bad = on_cluster[on_cluster.error.notna()]
    assert list(bad.path) == [str(root / "a" / "unreadable.txt")]
    assert bad.bytes.isna().all() and bad.valid.isna().all()
    assert on_cluster[on_cluster.error.isna()].seconds.ge(0).all()
    assert (~on_cluster.valid.fillna(True)).sum() == sum(bool(error_units(d)) for d in contents.values())


def test_repair_files_on_a_cluster(corpus, client, tmp_path):
    root, contents = corpus
    paths = sorted(contents)[::5] + [str(root / "a" / "unreadable.txt")]  # both folders
    report = gutf8.dask.repair_files(paths, tmp_path / "out", "replace", client=client, backend="cpu")
    assert len(report) == len(paths)
    check_against_cpython(report, contents)
    for row in report.itertuples():
        if row.path in contents:
            assert row.output == str(tmp_path / "out" / os.path.relpath(row.path, root))
            with open(row.output, "rb") as f:
                assert f.read() == contents[row.path].decode("utf-8", "replace").encode()
        else:
            assert pd.notna(row.error) and pd.isna(row.output)
    leftovers = [f for _, _, fs in os.walk(tmp_path / "out") for f in fs if f.endswith(".tmp")]
    assert not leftovers


def test_a_file_that_changes_is_reported(tmp_path, monkeypatch):
    path = tmp_path / "moving.txt"
    path.write_bytes(b"abc")
    real = gutf8.validate_file

    def grow_while_reading(p, **kw):
        r = real(p, **kw)
        with open(p, "ab") as f:
            f.write(b"more")
        return r

    monkeypatch.setattr(gutf8, "validate_file", grow_while_reading)
    monkeypatch.setattr(gutf8.dask, "_client", lambda c: None)  # run here, where the patch is
    frame = gutf8.dask.validate_files([str(path)])
    assert len(frame) == 1 and "changed" in frame.error[0] and pd.isna(frame.bytes[0])


def test_expand_paths(tmp_path):
    for name in ("b.txt", "a.txt", "c.bin"):
        (tmp_path / name).write_bytes(b"x")
    assert gutf8.dask.expand_paths(str(tmp_path / "*.txt")) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert gutf8.dask.expand_paths([tmp_path / "c.bin"]) == [str(tmp_path / "c.bin")]


def test_a_worker_that_dies_is_a_row_with_an_error():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        die = lambda path: os._exit(3)  # noqa: E731  (pickled by value to the worker)
        frame = gutf8.dask._run(die, ["first.txt", "second.txt"], c, (), None)
    assert list(frame.path) == ["first.txt", "second.txt"]
    assert frame.error.str.contains("KilledWorker").all() and frame.bytes.isna().all()


def test_make_valid_on_a_parquet_dataset(tmp_path, client):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    dd = pytest.importorskip("dask.dataframe")
    rng = random.Random(11)
    values = [None if i % 9 == 4 else random_text(rng, rng.randrange(0, 80), 0.05) for i in range(3000)]
    src = tmp_path / "lake"
    src.mkdir()
    for part in range(6):  # several files, text stored as binary since it is not valid UTF-8
        rows = range(part * 500, (part + 1) * 500)
        table = pa.table({"id": pa.array(list(rows), pa.int64()),
                          "text": pa.array([values[i] for i in rows], pa.binary())})
        pq.write_table(table, src / f"part-{part}.parquet")
    ddf = dd.read_parquet(str(src))
    fixed = gutf8.dask.make_valid(ddf, ["text"], errors="replace")
    checks = gutf8.dask.is_valid(ddf, ["text"])
    out = tmp_path / "clean"
    fixed.to_parquet(str(out))
    back = pq.read_table(out).to_pydict()
    order = sorted(range(len(back["id"])), key=back["id"].__getitem__)
    assert [back["id"][i] for i in order] == list(range(3000))
    assert [back["text"][i] for i in order] == [None if v is None else v.decode("utf-8", "replace") for v in values]
    valid = checks.compute()["text"].tolist()
    assert [None if pd.isna(v) else bool(v) for v in valid] == [
        None if v is None else not error_units(v) for v in values]
    dropped = gutf8.dask.make_valid(ddf, ["text"], errors="drop").compute()["text"].tolist()
    assert [None if pd.isna(v) else v for v in dropped] == [
        None if v is None else v.decode("utf-8", "ignore") for v in values]
