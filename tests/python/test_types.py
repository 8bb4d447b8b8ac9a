"""The package's types: typed frozen reports, the allowed values of errors / backend / read, one
meaning of device=None, ErrorKind against the C++ enum, the stub against the module, and nothing
made at import."""
import ast
import dataclasses
import inspect
import json
import pickle
import re
import subprocess
import sys
import typing
from pathlib import Path

import numpy as np
import pytest

import gutf8
import gutf8.columns
import gutf8.dask
from gutf8 import _gutf8

ROOT = Path(__file__).resolve().parents[2]
BAD = b"ok\n\xe1\x80 then \xff"  # first error unit: 2 bytes at offset 3, line 2


def test_reports_are_frozen_typed_dataclasses(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(BAD)
    reports = [gutf8.validate(BAD), gutf8.stats(BAD), gutf8.validate_file(path), *gutf8.validate_files([path]),
               gutf8.repair_file(path, tmp_path / "out.txt")]
    for r in reports:
        assert dataclasses.is_dataclass(r) and isinstance(r, gutf8.Report)
        assert (r.bytes, r.errors, r.offset, r.line, r.column) == (len(BAD), 2, 3, 2, 1)
        assert r.kind is gutf8.ErrorKind.truncated and r.reason and not r.valid
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.errors = 0  # type: ignore[misc]
        assert pickle.loads(pickle.dumps(r)) == r
    stats = reports[1]
    assert isinstance(stats, gutf8.Stats) and stats.by_length == (9, 0, 0, 0) and stats.lines == 1
    assert reports[2].path == str(path) and reports[2].seconds is not None


def test_native_results_are_bound_structs_not_dicts(tmp_path):
    """The extension hands typed objects to the package: a misspelt field is an AttributeError,
    never a silent dict.get(...) of None."""
    s = _gutf8.validate(BAD, "cpu", 1, -1)
    assert isinstance(s, _gutf8.Summary) and not isinstance(s, typing.Mapping)
    assert isinstance(s.first, _gutf8.FirstError) and (s.first.offset, s.first.length) == (3, 2)
    assert s.first.reason == gutf8.validate(BAD).reason and s.first.unit == b""
    assert _gutf8.validate(b"fine", "cpu", 1, -1).first is None
    t = _gutf8.stats(BAD, "cpu", 1, -1)
    assert isinstance(t, _gutf8.TextStats) and isinstance(t, _gutf8.Summary) and list(t.by_length) == [9, 0, 0, 0]
    path = tmp_path / "bad.txt"
    path.write_bytes(BAD)
    f = _gutf8.validate_file(bytes(path), "cpu", 1, -1, None, None, "copy")
    assert f.first is not None and f.first.unit == b"\xe1\x80" and f.failure is None and f.seconds is not None
    missing = _gutf8.validate_files([bytes(tmp_path / "none")], "cpu", 1, -1, None, None, "copy")[0]
    assert "No such file" in missing.failure and missing.first is None
    with pytest.raises(AttributeError):
        s.offset  # type: ignore[attr-defined]
    import pyarrow as pa

    v = _gutf8.col_is_valid(*pa.array([b"a", b"\xff", b"\xc3"]).__arrow_c_array__(), 1, -1)
    assert isinstance(v, _gutf8.RowValidity) and v.invalid_rows == 2
    assert v.first is not None and (v.first.row, v.first.offset, v.first.kind) == (1, 0, gutf8.ErrorKind.invalid_byte)
    with pytest.raises(_gutf8.InvalidRow) as info:
        _gutf8.col_validate(*pa.array([b"a", b"b\xc3"]).__arrow_c_array__(), 1, -1)
    (first,) = info.value.args
    assert isinstance(first, _gutf8.RowError) and (first.row, first.offset) == (1, 1)


def _calls(tmp_path, with_dask=False):
    """name -> (a call of it on valid input taking keyword arguments, the Literal of its errors=)
    for every function that takes backend=."""
    path = tmp_path / "t.txt"
    path.write_bytes(b"abc")
    calls = {
        "gutf8.validate": (lambda **kw: gutf8.validate(b"a", **kw), None),
        "gutf8.stats": (lambda **kw: gutf8.stats(b"a", **kw), None),
        "gutf8.decode": (lambda **kw: gutf8.decode(b"a", **kw), gutf8.Errors),
        "gutf8.repair": (lambda **kw: gutf8.repair(b"a", **kw), gutf8.RepairErrors),
        "gutf8.encode": (lambda **kw: gutf8.encode("a", **kw), gutf8.Errors),
        "gutf8.validate_file": (lambda **kw: gutf8.validate_file(path, **kw), None),
        "gutf8.validate_files": (lambda **kw: gutf8.validate_files([path], **kw), None),
        "gutf8.decode_file": (lambda **kw: gutf8.decode_file(path, **kw), gutf8.Errors),
        "gutf8.repair_file": (lambda **kw: gutf8.repair_file(path, tmp_path / "o.txt", **kw), gutf8.RepairErrors),
    }
    if with_dask:
        calls["gutf8.dask.validate_files"] = (lambda **kw: gutf8.dask.validate_files([path], **kw), None)
        calls["gutf8.dask.repair_files"] = (lambda **kw: gutf8.dask.repair_files([path], tmp_path / "d", **kw),
                                            gutf8.RepairErrors)
    return calls


def test_errors_and_backend_take_their_literals_and_name_them_otherwise(tmp_path):
    assert typing.get_args(gutf8.Backend) == ("auto", "cpu", "cuda")
    assert typing.get_args(gutf8.Errors) == ("strict", "replace", "drop", "ignore")
    assert typing.get_args(gutf8.RepairErrors) == ("replace", "drop", "ignore")
    for name, (call, errors) in _calls(tmp_path, with_dask=True).items():
        for backend in ("auto", "cpu"):
            call(backend=backend)
        for bad in ("gpu", "CPU", "", None, 1):
            with pytest.raises(ValueError, match=r"backend must be one of 'auto', 'cpu', 'cuda', not " + re.escape(repr(bad))):
                call(backend=bad)  # dask: here, not as one failed row a file
        if errors is None:
            continue
        for value in typing.get_args(errors):
            call(errors=value, backend="cpu")
        allowed = ", ".join(map(repr, typing.get_args(errors)))
        for bad in ("lenient", "Strict", "null", None):
            if bad in typing.get_args(errors):
                continue
            with pytest.raises(ValueError, match=f"errors must be one of {re.escape(allowed)}, not {re.escape(repr(bad))}"):
                call(errors=bad)
    with pytest.raises(ValueError, match="read must be one of 'map', 'copy', not 'mmap'"):
        gutf8.validate_file(tmp_path / "t.txt", read="mmap")  # type: ignore[arg-type]


def test_column_errors_take_their_literals(tmp_path):
    import pyarrow as pa

    col = pa.array([b"a\xff", None])
    for value in typing.get_args(gutf8.columns.ColumnErrors):
        if value != "strict":
            gutf8.columns.cast_to_utf8(col, value)
            gutf8.columns.count_code_points(col, value)
    for value in typing.get_args(gutf8.RepairErrors):
        gutf8.columns.make_valid(col, value)
    with pytest.raises(ValueError, match="errors must be one of 'replace', 'drop', 'ignore', not 'null'"):
        gutf8.columns.make_valid(col, "null")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="errors must be one of 'strict', 'null', 'replace', 'drop', 'ignore', not 'x'"):
        gutf8.columns.cast_to_utf8(col, "x")  # type: ignore[arg-type]


def _device_takers():
    """Every public function of the package that takes device=."""
    found = {}
    for module in (gutf8, gutf8.columns, gutf8.dask):
        for name in module.__all__:
            f = getattr(module, name)
            if inspect.isfunction(f) and "device" in inspect.signature(f).parameters:
                found[f"{module.__name__}.{name}"] = f
    return found


def test_device_none_is_the_default_everywhere_and_means_one_thing(tmp_path):
    takers = _device_takers()
    assert {"gutf8.validate", "gutf8.decode", "gutf8.validate_file", "gutf8.dask.validate_files"} <= set(takers)
    for name, f in takers.items():
        p = inspect.signature(f).parameters["device"]
        assert p.default is None and p.kind is p.KEYWORD_ONLY, name
        assert "Optional[int]" in str(p.annotation) or "int | None" in str(p.annotation), name
    assert "``device`` means the same in every function" in gutf8.__doc__
    assert gutf8._device(None) == -1 and gutf8._device(3) == 3 and gutf8._device(np.int64(2)) == 2
    # None and a named GPU are the only values, in every function that takes device=
    calls = _calls(tmp_path, with_dask=True)
    assert set(takers) == set(calls)
    for name, (call, _) in calls.items():
        assert call(backend="cpu", device=None) is not None, name
        for bad in (-1, "0", True, 1.0):
            with pytest.raises(ValueError, match=r"device must be None \(any usable GPU\) or a GPU number >= 0"):
                call(backend="cpu", device=bad)


def _cpp_error_kinds():
    """The enumerators of gutf8::error_kind, read from the public header that defines it."""
    for header in sorted((ROOT / "include").rglob("*.hpp")):
        found = re.search(r"enum class error_kind\b[^{]*\{(.*?)\};", header.read_text(), re.S)
        if found:
            body = re.sub(r"//[^\n]*", "", found.group(1))
            return [e.split("=")[0].strip() for e in body.split(",") if e.strip()]
    raise AssertionError("no `enum class error_kind` under include/")


def test_error_kind_has_every_cpp_kind():
    kinds = _cpp_error_kinds()
    assert len(kinds) >= 11 and kinds[0] == "none"
    assert [k.name for k in gutf8.ErrorKind] == kinds  # grow the binding (python/src/reports.cpp) and the stub
    assert [k.value for k in gutf8.ErrorKind] == list(range(len(kinds)))
    stub = ast.parse((ROOT / "python/gutf8/_gutf8.pyi").read_text())
    (enum,) = [n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "ErrorKind"]
    assert [t.id for n in enum.body if isinstance(n, ast.Assign) for t in n.targets] == kinds


def test_stub_names_what_the_module_has():
    stub = ast.parse((ROOT / "python/gutf8/_gutf8.pyi").read_text())
    named = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    named |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    public = {n for n in dir(_gutf8) if not n.startswith("_")}
    cuda_only = {"device_call", "dlpack_view", "device_of"}
    assert public - named == set()
    assert named - public - cuda_only == set()
    classes = {n.name: n for n in stub.body if isinstance(n, ast.ClassDef)}
    for name in ("FirstError", "Summary", "TextStats", "RowError", "RowValidity"):
        props = {f.name for f in classes[name].body if isinstance(f, ast.FunctionDef)}
        assert props == {p for p in vars(getattr(_gutf8, name)) if not p.startswith("_")}, name


IMPORT_PROBE = r"""
import json, os, sys
import numpy, pyarrow, pandas, polars, duckdb, dask, distributed  # their own threads come first

def threads():
    return len(os.listdir("/proc/self/task"))

def cuda_driver():
    return "libcuda.so" in open("/proc/self/maps").read()

before, cuda_before = threads(), cuda_driver()
import gutf8, gutf8.columns, gutf8.dask, gutf8.duckdb, gutf8.polars
after, cuda_after = threads(), cuda_driver()
made = "gpu_lanes" in vars(gutf8)
lanes = gutf8.gpu_lanes  # made by its first use
print(json.dumps({"before": before, "after": after, "cuda_before": cuda_before, "cuda_after": cuda_after,
                  "made_at_import": made, "lanes": type(lanes).__name__, "kept": gutf8.gpu_lanes is lanes,
                  "idle": lanes.idle}))
"""


def test_import_creates_no_state():
    """`import gutf8` and its submodules start no thread, make no lane cache and load no CUDA
    driver (a CUDA context needs it); the lane cache is made by its first use."""
    out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["after"] == got["before"], got
    assert got["cuda_after"] == got["cuda_before"] and not got["made_at_import"], got
    assert got["lanes"] == "GpuLaneCache" and got["kept"] and got["idle"] == 0, got


def test_gpu_lanes_can_be_replaced_or_dropped(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"abc")
    kept = gutf8.gpu_lanes
    try:
        gutf8.gpu_lanes = None
        assert gutf8._gpu_lanes() is None and gutf8.validate_file(path).valid
        mine = gutf8.GpuLaneCache(3)
        gutf8.gpu_lanes = mine
        assert gutf8._gpu_lanes() is mine and gutf8.validate_file(path, backend="cpu").valid
    finally:
        gutf8.gpu_lanes = kept


def test_flat_calls_with_device_none_and_zero_agree_on_the_cpu(rng):
    data = bytes(rng.randrange(256) for _ in range(4099))
    assert gutf8.validate(data, backend="cpu") == gutf8.validate(data, backend="cpu", device=0)
    np.testing.assert_array_equal(gutf8.decode(data, "replace", backend="cpu"),
                                  gutf8.decode(data, "replace", backend="cpu", device=0))
