"""validate_file / decode_file / repair_file against the flat-buffer API and CPython."""
import os

import numpy as np
import pytest

import gutf8
from conftest import error_units, line_column, random_text

PIECE = 2 << 20  # gutf8::run_config's default piece: sequences and errors placed across pieces


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.fixture
def files(rng, tmp_path):
    """Files of several sizes, valid and invalid, with sequences cut at the read boundaries."""
    cut = "\u4e2d".encode()
    out = {
        "empty": b"",
        "valid": random_text(rng, 300_001, 0.0),
        "invalid": random_text(rng, 300_001, 0.01),
        "split_at_chunk": b"a" * (PIECE - 1) + cut + b"b\n" * 1000,
        "split_later": random_text(rng, 4 * PIECE - 2, 0.0).ljust(4 * PIECE - 2, b".") + "\U0001f600".encode() + b"z",
        "error_at_chunk": b"x\n" * ((PIECE - 2) // 2) + b"\xe2\x82" + b"tail",
        "errors_everywhere": random_text(rng, 3 * PIECE + 5, 0.02),
        "truncated_end": b"abc" * 1000 + b"\xf0\x9f\x98",
    }
    return {k: (write(tmp_path, k, v), v) for k, v in out.items()}


def test_validate_file(files):
    for name, (path, data) in files.items():
        r = gutf8.validate_file(path)
        units = error_units(data)
        assert r.path == str(path) and r.bytes == len(data) and r.errors == len(units), name
        if units:
            assert r.offset == units[0][0] and (r.line, r.column) == line_column(data, r.offset), name
        assert r.seconds is not None and r.seconds >= 0


def test_validate_files_in_one_run(files, tmp_path, rng):
    """Many files in one run: one report a path, in order, each what validate_file says of it; an
    unreadable path (missing, a directory) is reported in its place and the others go on."""
    small = {write(tmp_path, f"small{k}", random_text(rng, 1 + k * 37, 0.03 if k % 4 == 0 else 0.0)): None
             for k in range(150)}
    paths = [p for p, _ in files.values()] + list(small) + [tmp_path / "missing", tmp_path]
    for read in ("map", "copy"):
        for threads in (1, 3, 0):
            reports = gutf8.validate_files(paths, backend="cpu", threads=threads, read=read)
            assert [r.path for r in reports] == [str(p) for p in paths]
            for p, r in zip(paths[:-2], reports):
                data = open(p, "rb").read()
                units = error_units(data)
                assert r.error is None and r.bytes == len(data) and r.errors == len(units), p
                if units:
                    assert r.offset == units[0][0] and (r.line, r.column) == line_column(data, r.offset), p
            missing, folder = reports[-2:]
            assert "No such file" in missing.error and not missing.valid
            assert "directory" in folder.error and not folder.valid
    assert gutf8.validate_files([]) == []


def test_read_copy_equals_map(files):
    for name, (path, data) in files.items():
        assert gutf8.validate_file(path, read="copy").errors == len(error_units(data)), name
    with pytest.raises(ValueError):
        gutf8.validate_file(files["valid"][0], read="mmap")


def test_decode_file(files):
    for name, (path, data) in files.items():
        for errors, cp in (("replace", "replace"), ("drop", "ignore")):
            expected = np.frombuffer(data.decode("utf-8", cp).encode("utf-32-le"), "<u4")
            np.testing.assert_array_equal(gutf8.decode_file(path, errors), expected, err_msg=name)
        units = error_units(data)
        if not units:
            np.testing.assert_array_equal(gutf8.decode_file(path), gutf8.decode(data))
            continue
        with pytest.raises(gutf8.DecodeError) as info:
            gutf8.decode_file(path)
        e = info.value
        assert e.path == str(path) and e.offset == units[0][0], name
        assert e.object == data[units[0][0]:units[0][1]] and (e.start, e.end) == (0, len(e.object))
        assert str(path) in str(e)


def test_repair_file(files, tmp_path):
    for name, (path, data) in files.items():
        for errors, cp in (("replace", "replace"), ("drop", "ignore")):
            out = tmp_path / f"{name}.{errors}.out"
            r = gutf8.repair_file(path, out, errors)
            assert out.read_bytes() == data.decode("utf-8", cp).encode(), name
            assert r.errors == len(error_units(data))
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_progress_is_called_in_order_up_to_the_size(files):
    path, data = files["split_at_chunk"]
    seen = []
    gutf8.validate_file(path, progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == len(data)


def test_a_failing_run_leaves_no_output(files, tmp_path):
    path, _ = files["split_at_chunk"]
    out = tmp_path / "kept.txt"
    out.write_bytes(b"old")

    def stop(done):
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt):
        gutf8.repair_file(path, out, progress=stop)
    assert out.read_bytes() == b"old"
    fresh = tmp_path / "fresh.txt"
    with pytest.raises(KeyboardInterrupt):
        gutf8.repair_file(path, fresh, progress=stop)
    assert not fresh.exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_names_that_are_not_utf8_and_errno_subclasses(tmp_path):
    """Any name the system allows (bytes, or str from os.fsdecode), and OSError subclasses by errno."""
    raw = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9.txt")
    with open(raw, "wb") as f:
        f.write(b"ok\xff")
    for name in (raw, os.fsdecode(raw)):
        assert gutf8.validate_file(name, backend="cpu").errors == 1
        assert gutf8.repair_file(name, tmp_path / "out.txt", backend="cpu").errors == 1
        assert (tmp_path / "out.txt").read_bytes() == b"ok\xef\xbf\xbd"
    with pytest.raises(FileNotFoundError) as info:
        gutf8.validate_file(tmp_path / "missing")
    assert "missing" in str(info.value)
    with pytest.raises(FileNotFoundError):
        gutf8.decode_file(os.path.join(os.fsencode(str(tmp_path)), b"gone\xe9"))


def test_repair_file_output_as_the_cli(tmp_path):
    """Through a symbolic link to its file, an existing file's mode kept, a device written directly."""
    src = tmp_path / "in.txt"
    src.write_bytes(b"a\xffb")
    target = tmp_path / "target.txt"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    os.symlink(target, link)
    gutf8.repair_file(src, link, backend="cpu")
    assert link.is_symlink() and target.read_bytes() == b"a\xef\xbf\xbdb"
    assert (os.stat(target).st_mode & 0o777) == 0o640
    assert gutf8.repair_file(src, os.devnull, backend="cpu").errors == 1
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_unreadable_paths_raise_oserror(tmp_path):
    with pytest.raises(OSError):
        gutf8.validate_file(tmp_path / "missing")
    with pytest.raises(OSError):
        gutf8.validate_file(tmp_path)  # a directory
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    with pytest.raises(OSError):
        gutf8.decode_file(tmp_path / "dangling")
    with pytest.raises(OSError):
        gutf8.repair_file(tmp_path / "missing", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_gpu_lanes_stay_idle_on_the_cpu(files):
    """The file functions' GpuLaneCache holds nothing after CPU runs; a cache of its own is empty."""
    path, data = files["invalid"]
    gutf8.gpu_lanes.clear()
    built = gutf8.gpu_lanes.built
    assert gutf8.validate_file(path, backend="cpu").errors == len(error_units(data))
    assert gutf8.gpu_lanes.idle == 0 and gutf8.gpu_lanes.built == built
    own = gutf8.GpuLaneCache(2)
    assert (own.idle, own.built) == (0, 0)
    own.clear()
    gutf8.gpu_lanes.clear()
