"""The file functions on compressed paths (SPEC §3c): the text a gzip, zstd, xz, bzip2 or lz4 file
holds (several members, characters cut across them) is what CPython's codecs see; repair_file writes
the format its output's suffix names, which the standard tools decompress."""
import os

import numpy as np
import pytest

import gutf8
from compressed_data import TOOLS, decompress, members
from conftest import error_units, line_column, random_text

@pytest.fixture
def text(rng):
    return random_text(rng, 70_001, 0.01)


@pytest.mark.parametrize("suffix", list(TOOLS))
def test_file_functions_read_the_text(suffix, text, tmp_path):
    path = tmp_path / f"in.{suffix}"
    path.write_bytes(members(suffix, text, 3))
    units = error_units(text)
    r = gutf8.validate_file(path, backend="cpu")
    assert r.bytes == len(text) and r.errors == len(units)
    assert r.offset == units[0][0] and (r.line, r.column) == line_column(text, r.offset)
    [again] = gutf8.validate_files([path], backend="cpu")
    assert again.errors == r.errors and again.offset == r.offset
    for errors, cp in (("replace", "replace"), ("drop", "ignore")):
        expected = np.frombuffer(text.decode("utf-8", cp).encode("utf-32-le"), "<u4")
        np.testing.assert_array_equal(gutf8.decode_file(path, errors, backend="cpu"), expected)
    with pytest.raises(gutf8.DecodeError) as info:
        gutf8.decode_file(path, backend="cpu")
    assert info.value.offset == units[0][0] and info.value.object == text[units[0][0]:units[0][1]]
    out = tmp_path / "out.txt"
    gutf8.repair_file(path, out, backend="cpu")
    assert out.read_bytes() == text.decode("utf-8", "replace").encode()


@pytest.mark.parametrize("suffix", list(TOOLS))
def test_repair_file_writes_the_suffix_format(suffix, text, tmp_path):
    src = tmp_path / "in.gz"
    src.write_bytes(members("gz", text, 2))
    out = tmp_path / f"out.txt.{suffix}"
    r = gutf8.repair_file(src, out, "drop", backend="cpu")
    assert r.errors == len(error_units(text))
    assert decompress(suffix, out.read_bytes()) == text.decode("utf-8", "ignore").encode()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_damaged_file_raises_and_leaves_no_output(text, tmp_path):
    whole = members("zst", text, 2)
    bad = tmp_path / "bad.zst"
    bad.write_bytes(whole[:-9])
    with pytest.raises(OSError, match="compressed byte"):
        gutf8.validate_file(bad, backend="cpu")
    out = tmp_path / "out.gz"
    with pytest.raises(OSError, match="bad.zst"):
        gutf8.repair_file(bad, out, backend="cpu")
    assert not out.exists() and not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
