"""gutf8.dask on compressed shards (SPEC §3c): gzip, zstd, xz, bzip2 and lz4 files of one or several
members that cut characters, on a distributed.LocalCluster, report what CPython's codec gives for
the decompressed text; damaged shards are their row's error; repair_files writes each output in the
format its suffix names, which the standard tools decompress."""
import gzip
import os
import random
import shutil

import pytest

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed", reason="gutf8.dask needs dask[distributed] (the [dask] extra)")

import gutf8  # noqa: E402
import gutf8.dask  # noqa: E402
from compressed_data import decompress, members, tool  # noqa: E402
from conftest import error_units, line_column, random_text  # noqa: E402

SUFFIXES = [".gz", ".zst", ".xz", ".bz2", ".lz4"]


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Shards of every format in two folders (1 to 3 members, a third invalid, one empty text) and
    damaged ones: truncated, and with a corrupted byte inside their compressed data."""
    for s in SUFFIXES:
        tool(s)
    root = tmp_path_factory.mktemp("shards")
    rng = random.Random(48)
    texts, damaged = {}, []
    for i, suffix in enumerate(SUFFIXES * 4):
        folder = root / ("a" if i % 2 else "b")
        folder.mkdir(exist_ok=True)
        size = 0 if i == 3 else rng.choice([1, 4093, 65_537, 131_075]) + rng.randrange(0, 9000)
        data = random_text(rng, size, 0.01 if i % 3 == 0 else 0.0)
        path = folder / f"s{i:02d}.jsonl{suffix}"
        path.write_bytes(members(suffix, data, 1 + i % 3))
        texts[str(path)] = data
    for suffix in SUFFIXES:
        whole = members(suffix, random_text(rng, 50_021, 0.01), 2)
        cut = root / "b" / f"truncated.jsonl{suffix}"
        cut.write_bytes(whole[:-7])
        flipped = bytearray(whole)
        flipped[len(whole) // 3] ^= 0x55  # inside the first member's data: no tool takes it
        corrupt = root / "a" / f"corrupt.jsonl{suffix}"
        corrupt.write_bytes(bytes(flipped))
        damaged += [str(cut), str(corrupt)]
    return root, texts, damaged


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def check_against_cpython(frame, texts):
    for row in frame[frame.path.isin(list(texts))].itertuples():
        data = texts[row.path]
        units = error_units(data)
        assert pd.isna(row.error), row.error
        assert row.bytes == len(data) and row.errors == len(units) and row.valid == (not units), row.path
        if units:
            assert row.offset == units[0][0] and (row.line, row.column) == line_column(data, units[0][0])
        else:
            assert pd.isna(row.offset) and pd.isna(row.reason)


def check_damaged(frame, damaged):
    bad = frame[frame.path.isin(damaged)]
    assert len(bad) == len(damaged)
    for row in bad.itertuples():
        assert row.path in row.error and "compressed byte" in row.error, row.error
        assert pd.isna(row.bytes) and pd.isna(row.valid)


def test_validate_files_reads_the_text_of_compressed_shards(shards, client):
    root, texts, damaged = shards
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gutf8.dask, "BATCH_FILES", 4)  # several tasks, each a batch of formats
        frame = gutf8.dask.validate_files(str(root / "**" / "*.jsonl.*"), client=client, backend="cpu", threads=1)
    assert sorted(frame.path) == sorted(list(texts) + damaged)
    check_against_cpython(frame, texts)
    check_damaged(frame, damaged)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gutf8.dask, "_client", lambda c: None)  # no default client: run here
        here = gutf8.dask.validate_files(str(root / "**" / "*.jsonl.*"), backend="cpu", threads=1)
    pd.testing.assert_frame_equal(frame.drop(columns=["seconds"]), here.drop(columns=["seconds"]))


def _expected_output(path, root, out, suffix):
    relative = os.path.relpath(path, root)
    if suffix is None:
        return str(out / relative), os.path.splitext(relative)[1]
    return str(out / (os.path.splitext(relative)[0] + suffix)), suffix


@pytest.mark.parametrize("suffix", [None, ""] + SUFFIXES)
@pytest.mark.parametrize("errors", ["replace", "drop"])
def test_repair_files_writes_outputs_compressed_by_suffix(shards, client, tmp_path, suffix, errors):
    root, texts, damaged = shards
    paths = sorted(texts)[::2] + damaged[:2]  # every format, both folders, truncated and corrupt
    out = tmp_path / "out"
    frame = gutf8.dask.repair_files(paths, out, errors, client=client, suffix=suffix, backend="cpu", threads=1)
    assert list(frame.path) == paths
    check_against_cpython(frame, texts)
    check_damaged(frame, damaged[:2])
    codec = "replace" if errors == "replace" else "ignore"
    for row in frame.itertuples():
        if row.path in damaged:
            assert pd.isna(row.output) and not os.path.exists(_expected_output(row.path, root, out, suffix)[0])
            continue
        name, written_as = _expected_output(row.path, root, out, suffix)
        assert row.output == name
        with open(name, "rb") as f:
            assert decompress(written_as, f.read()) == texts[row.path].decode("utf-8", codec).encode()
    assert not [f for _, _, fs in os.walk(out) for f in fs if f.endswith(".tmp")]


def test_repair_files_in_place_keeps_each_shards_format(shards, tmp_path, client):
    _, texts, _ = shards
    for path in sorted(texts)[:len(SUFFIXES)]:  # folder a's first ones: every format
        shutil.copy(path, tmp_path / os.path.basename(path))
    copies = sorted(str(p) for p in tmp_path.iterdir())
    assert sorted(os.path.splitext(p)[1] for p in copies) == sorted(SUFFIXES)
    frame = gutf8.dask.repair_files(copies, tmp_path, client=client, backend="cpu")
    assert frame.error.isna().all() and list(frame.output) == copies
    originals = {os.path.basename(p): d for p, d in texts.items()}
    for p in copies:
        with open(p, "rb") as f:
            written = decompress(os.path.splitext(p)[1], f.read())
        assert written == originals[os.path.basename(p)].decode("utf-8", "replace").encode()


def test_repair_files_refuses_a_bad_suffix_and_outputs_that_collide(tmp_path):
    (tmp_path / "x.json").write_bytes(b"{}\n")
    (tmp_path / "x.json.gz").write_bytes(gzip.compress(b"{}\n"))
    with pytest.raises(ValueError, match="suffix"):
        gutf8.dask.repair_files([tmp_path / "x.json"], tmp_path / "out", suffix=".zip")
    with pytest.raises(ValueError, match="both"):
        gutf8.dask.repair_files([tmp_path / "x.json", tmp_path / "x.json.gz"], tmp_path / "out", suffix=".zst")
    assert not (tmp_path / "out").exists()
