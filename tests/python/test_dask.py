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
    real = gutf8.validate_files

    def grow_while_reading(ps, **kw):
        r = real(ps, **kw)
        for p in ps:
            with open(p, "ab") as f:
                f.write(b"more")
        return r

    monkeypatch.setattr(gutf8, "validate_files", grow_while_reading)
    monkeypatch.setattr(gutf8.dask, "_client", lambda c: None)  # run here, where the patch is
    frame = gutf8.dask.validate_files([str(path)])
    assert len(frame) == 1 and "changed" in frame.error[0] and pd.isna(frame.bytes[0])


def test_a_file_that_changes_while_repaired_leaves_no_output(tmp_path, monkeypatch):
    path = tmp_path / "moving.txt"
    path.write_bytes(b"a\xffc")
    real = gutf8.repair_file

    def grow_while_reading(p, out, *a, **kw):
        r = real(p, out, *a, **kw)
        with open(p, "ab") as f:
            f.write(b"more")
        return r

    monkeypatch.setattr(gutf8, "repair_file", grow_while_reading)
    monkeypatch.setattr(gutf8.dask, "_client", lambda c: None)  # run here, where the patch is
    frame = gutf8.dask.repair_files([str(path)], tmp_path / "out", backend="cpu")
    assert len(frame) == 1 and "changed" in frame.error[0] and pd.isna(frame.output[0])
    assert not (tmp_path / "out" / "moving.txt").exists()


def test_repair_in_place_keeps_the_repaired_files(tmp_path, monkeypatch):
    """out_dir = the inputs' directory: each file is replaced by its repair, never deleted."""
    contents = {tmp_path / "bad.txt": b"ab\xffcd\xe2\x82", tmp_path / "sub" / "good.txt": "na\u00efve".encode()}
    for path, data in contents.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    monkeypatch.setattr(gutf8.dask, "_client", lambda c: None)  # run here
    report = gutf8.dask.repair_files([str(p) for p in contents], tmp_path, backend="cpu")
    assert report.error.isna().all()
    for path, data in contents.items():
        assert path.read_bytes() == data.decode("utf-8", "replace").encode()
    assert sorted(report.output) == sorted(str(p) for p in contents)


def test_device_reaches_the_file_functions(tmp_path, monkeypatch):
    path = tmp_path / "a.txt"
    path.write_bytes(b"a\xff")
    seen = []
    for name in ("validate_files", "repair_file"):
        real = getattr(gutf8, name)
        monkeypatch.setattr(gutf8, name, lambda *a, real=real, **kw: seen.append(kw["device"]) or real(*a, **kw))
    monkeypatch.setattr(gutf8.dask, "_client", lambda c: None)  # run here, where the patch is
    assert gutf8.dask.validate_files([str(path)], backend="cpu", device=0).errors[0] == 1
    assert gutf8.dask.repair_files([str(path)], tmp_path / "out", backend="cpu").error.isna().all()
    assert seen == [0, None]


def test_small_files_go_in_batches(tmp_path, monkeypatch):
    """Small files share a task (one gutf8.validate_files run), big ones go alone; the rows are
    those of each file, in order, an unreadable one with its error."""
    monkeypatch.setattr(gutf8.dask, "BATCH_BYTES", 1000)
    monkeypatch.setattr(gutf8.dask, "BATCH_FILES", 7)
    rng = __import__("random").Random(5)
    contents = {}
    for k in range(40):
        p = tmp_path / f"f{k:02d}.txt"
        data = random_text(rng, 5000 if k == 17 else 10 + 7 * k, 0.05 if k % 5 == 0 else 0.0)
        p.write_bytes(data)
        contents[str(p)] = data
    paths = sorted(contents) + [str(tmp_path / "missing.txt")]
    batches = gutf8.dask._batches(paths)
    assert [p for b in batches for p in b] == paths
    assert all(len(b) <= 7 for b in batches)
    assert [str(tmp_path / "f17.txt")] in batches
    assert all(len(b) == 1 or sum(len(contents.get(p, b"")) for p in b) <= 1000 for b in batches)
    monkeypatch.setattr(gutf8.dask, "_client", lambda c: None)
    frame = gutf8.dask.validate_files(paths, backend="cpu")
    assert list(frame.path) == paths
    check_against_cpython(frame[frame.error.isna()], contents)
    assert frame.error.notna().tolist() == [False] * 40 + [True]


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


# --- GPU workers, one a GPU ---------------------------------------------------------------------

def fake_gpus(monkeypatch, count, visible=None):
    """This process sees `count` usable GPUs (gutf8's query answers so), under `visible`."""
    monkeypatch.setattr(gutf8, "cuda_devices", lambda: list(range(count)))
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)


def visible_devices(specs):
    return [spec["options"]["env"]["CUDA_VISIBLE_DEVICES"] for spec in specs.values()]


def test_gpu_worker_specs_give_each_worker_one_gpu(monkeypatch):
    fake_gpus(monkeypatch, 3)
    specs = gutf8.dask.gpu_worker_specs()
    assert list(specs) == ["gpu-0", "gpu-1", "gpu-2"] and visible_devices(specs) == ["0", "1", "2"]
    for spec in specs.values():
        assert spec["cls"] == "distributed.Nanny"
        assert spec["options"]["resources"] == {"GPU": 1} and spec["options"]["nthreads"] == 1
    assert visible_devices(gutf8.dask.gpu_worker_specs([2, 0])) == ["2", "0"]
    with pytest.raises(ValueError, match="not usable"):
        gutf8.dask.gpu_worker_specs([3])
    with pytest.raises(ValueError, match="twice"):
        gutf8.dask.gpu_worker_specs([1, 1])
    both = gutf8.dask.gpu_worker_specs([1], threads=2, env={"OMP_NUM_THREADS": "1"}, memory_limit="4GiB")
    assert both["gpu-1"]["options"] == {"nthreads": 2, "resources": {"GPU": 1}, "memory_limit": "4GiB",
                                        "env": {"OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "1"}}
    # Under CUDA_VISIBLE_DEVICES, GPU d is its d-th entry (an index, a UUID or a MIG name)
    fake_gpus(monkeypatch, 2, "6, GPU-1a2b3c")
    assert visible_devices(gutf8.dask.gpu_worker_specs()) == ["6", "GPU-1a2b3c"]
    assert visible_devices(gutf8.dask.gpu_worker_specs([1])) == ["GPU-1a2b3c"]
    fake_gpus(monkeypatch, 1, "3,9")  # CUDA stops at an entry it cannot use: GPU 9 is not seen
    assert visible_devices(gutf8.dask.gpu_worker_specs()) == ["3"]
    fake_gpus(monkeypatch, 0, "")
    assert gutf8.dask.gpu_worker_specs() == {}
    with pytest.raises(RuntimeError, match="no usable GPU"):
        gutf8.dask.local_gpu_cluster()


def test_gpus_command_prints_nothing_without_a_gpu():
    import subprocess
    import sys

    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # CUDA sees no GPU, whatever the machine has
    done = subprocess.run([sys.executable, "-m", "gutf8.dask", "gpus"], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "")
    wrong = subprocess.run([sys.executable, "-m", "gutf8.dask"], env=env, capture_output=True, text=True)
    assert wrong.returncode == 1 and "usage" in wrong.stderr


# Where a GPU is usable, distributed's NVML monitor (once started in this process) looks the
# pretended devices up and the cluster fails to start ("Invalid Argument"); the real test below
# covers the same plumbing there.
@pytest.mark.skipif(gutf8.cuda_available(), reason="a GPU is usable here: covered by test_gpu_workers_run_files_on_their_own_gpu")
def test_a_local_gpu_cluster_starts_each_worker_with_its_own_gpu(monkeypatch, corpus):
    """Without GPUs: the plumbing of the specs (each worker process's CUDA_VISIBLE_DEVICES and
    resources) on two pretended GPUs, and files run on those workers."""
    root, contents = corpus
    fake_gpus(monkeypatch, 2, "5,GPU-77")
    with gutf8.dask.local_gpu_cluster(dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        seen = c.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
        assert sorted(seen.values()) == ["5", "GPU-77"]
        workers = c.scheduler_info()["workers"].values()
        assert sorted((w["name"], w["resources"]["GPU"], w["nthreads"]) for w in workers) == [
            ("gpu-5", 1, 1), ("gpu-GPU-77", 1, 1)]
        paths = sorted(contents)[:40]
        frame = gutf8.dask.validate_files(paths, client=c, backend="cpu", resources={"GPU": 1})
    assert list(frame.path) == paths and frame.error.isna().all()
    check_against_cpython(frame, contents)


@pytest.mark.skipif(not gutf8.cuda_available(), reason="no usable GPU on this machine")
def test_gpu_workers_run_files_on_their_own_gpu(corpus, tmp_path):
    root, contents = corpus
    gpus = gutf8.dask._gpu_names(None)
    paths = sorted(contents)[::3]
    with gutf8.dask.local_gpu_cluster(dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        assert sorted(c.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"]).values()) == sorted(gpus)
        assert list(c.run(gutf8.cuda_devices).values()) == [[0]] * len(gpus)  # its own GPU alone
        for backend in ("cuda", "auto"):
            on_gpus = gutf8.dask.validate_files(paths, client=c, backend=backend, resources={"GPU": 1})
            assert on_gpus.error.isna().all(), on_gpus.error.dropna().tolist()[:3]
            check_against_cpython(on_gpus, contents)
        repaired = gutf8.dask.repair_files(paths, tmp_path / "out", "replace", client=c, backend="cuda")
    assert repaired.error.isna().all(), repaired.error.dropna().tolist()[:3]
    for row in repaired.itertuples():
        with open(row.output, "rb") as f:
            assert f.read() == contents[row.path].decode("utf-8", "replace").encode()
