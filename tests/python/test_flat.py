"""Flat buffers against CPython's codec: validate, stats, decode, repair, encode."""
import array
import mmap
import pickle
import random
import sys
import threading
import typing

import numpy as np
import pytest

import gutf8
from conftest import SIZES, error_units, line_column, random_text

RATES = [0.0, 0.001, 0.05, 0.5]


def expected_decode(data: bytes, errors: str) -> np.ndarray:
    text = data.decode("utf-8", {"drop": "ignore"}.get(errors, errors))
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rate", RATES)
def test_validate_and_policies_match_cpython(rng, size, rate):
    data = random_text(rng, size, rate)
    units = error_units(data)
    report = gutf8.validate(data, backend="cpu")
    assert report.errors == len(units)
    assert report.valid == (not units)
    assert report.bytes == len(data)
    if units:
        assert report.offset == units[0][0]
        assert (report.line, report.column) == line_column(data, units[0][0])
        assert report.reason and report.kind is not None
    else:
        assert report.offset is None
    for errors in ("replace", "drop"):
        np.testing.assert_array_equal(gutf8.decode(data, errors, backend="cpu"), expected_decode(data, errors))
        assert gutf8.repair(data, errors, backend="cpu") == data.decode(
            "utf-8", "replace" if errors == "replace" else "ignore").encode()
    if units:
        with pytest.raises(gutf8.DecodeError) as info:
            gutf8.decode(data, backend="cpu")
        with pytest.raises(UnicodeDecodeError) as cpython:
            data.decode("utf-8")
        e = info.value
        assert (e.start, e.end) == (cpython.value.start, cpython.value.end)
        assert e.object == data and e.encoding == "utf-8"
        assert e.offset == e.start and (e.line, e.column) == line_column(data, e.start)
    else:
        np.testing.assert_array_equal(gutf8.decode(data), expected_decode(data, "strict"))


@pytest.mark.parametrize("rate", RATES)
def test_stats_match_cpython(rng, rate):
    data = random_text(rng, 50_001, rate)
    text = data.decode("utf-8", "ignore")
    s = gutf8.stats(data)
    assert isinstance(s, gutf8.Stats)
    assert s.code_points == len(text)
    assert s.lines == data.count(b"\n")
    assert s.errors == len(error_units(data))
    lengths = [len(c.encode()) for c in text]
    assert s.by_length == tuple(lengths.count(k) for k in (1, 2, 3, 4))


def test_unicode_worked_example():
    # SPEC §1: E1 80 E2 F0 91 92 F1 BF 41 is four error units, then "A".
    data = bytes.fromhex("E1 80 E2 F0 91 92 F1 BF 41")
    assert gutf8.validate(data).errors == 4
    assert gutf8.repair(data).decode() == "\ufffd\ufffd\ufffd\ufffdA"
    assert gutf8.decode(data, "drop").tolist() == [0x41]


def test_every_two_byte_sequence_matches_cpython():
    data = b"".join(bytes([a, b]) + b"." for a in range(0x80, 0x100) for b in range(0x70, 0x100, 3))
    assert gutf8.repair(data) == data.decode("utf-8", "replace").encode()
    assert gutf8.validate(data).errors == len(error_units(data))


@pytest.mark.parametrize("make", [
    bytes, bytearray, memoryview,
    lambda b: memoryview(b"xx" + b + b"yy")[2:-2],
    lambda b: np.frombuffer(b, dtype=np.uint8),
    lambda b: array.array("B", b),
])
def test_buffer_protocol_inputs(rng, make):
    data = random_text(rng, 10_007, 0.01)
    obj = make(data)
    assert gutf8.validate(obj).errors == len(error_units(data))
    np.testing.assert_array_equal(gutf8.decode(obj, "replace"), expected_decode(data, "replace"))
    assert gutf8.repair(obj, "drop") == data.decode("utf-8", "ignore").encode()


def test_mmap_and_wide_numpy_inputs(rng, tmp_path):
    data = random_text(rng, 4 * 3001, 0.01)
    f = tmp_path / "m.bin"
    f.write_bytes(data)
    with open(f, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert gutf8.repair(m) == data.decode("utf-8", "replace").encode()
    wide = np.frombuffer(data, dtype=np.uint32)  # bytes of any dtype are read as they lie
    assert gutf8.validate(wide).errors == len(error_units(data))


def test_bad_inputs_and_arguments():
    with pytest.raises(TypeError):
        gutf8.validate("text")
    with pytest.raises(TypeError):
        gutf8.validate(12)
    strided = np.arange(20, dtype=np.uint8)[::2]
    with pytest.raises((BufferError, ValueError)):
        gutf8.validate(strided)
    with pytest.raises(ValueError):
        gutf8.decode(b"a", "lenient")
    with pytest.raises(ValueError):
        gutf8.repair(b"a", "strict")
    with pytest.raises(ValueError):
        gutf8.validate(b"a", backend="gpu")


def test_cuda_backend_without_gpu_is_a_clear_error():
    if gutf8.cuda_available():
        pytest.skip("a GPU is usable here: covered by test_device.py")
    with pytest.raises(RuntimeError, match=r"(?i)cuda|gpu|device"):
        gutf8.decode(b"abc", backend="cuda")


def test_cuda_devices_are_the_usable_gpus():
    devices = gutf8.cuda_devices()
    assert devices == list(range(len(devices))) and bool(devices) == gutf8.cuda_available()


def test_decode_returns_an_owning_uint32_array():
    out = gutf8.decode("h\u00e9\U0001f600".encode())
    assert out.dtype == np.uint32 and out.ndim == 1 and out.flags.writeable
    assert out.tolist() == [0x68, 0xE9, 0x1F600]
    out[0] = 0x41  # the array owns its memory
    assert gutf8.decode(b"").shape == (0,)


def test_decode_error_is_a_unicode_decode_error_and_pickles():
    data = b"ok\nab\xf0\x9f\x98z"
    with pytest.raises(UnicodeDecodeError) as info:
        gutf8.decode(data)
    e = info.value
    assert isinstance(e, gutf8.DecodeError)
    assert (e.start, e.end, e.offset, e.line, e.column) == (5, 8, 5, 2, 3)
    assert e.kind == gutf8.ErrorKind.truncated
    assert "byte 5 (line 2, column 3)" in str(e)
    try:  # Dask installs tblib's exception pickling: exceptions cross processes through it
        import tblib.pickling_support

        tblib.pickling_support.install(e)
    except ImportError:
        pass
    for again in (pickle.loads(pickle.dumps(e)), pickle.loads(pickle.dumps(e, protocol=2))):
        assert type(again) is gutf8.DecodeError
        assert (again.start, again.end, again.offset, again.line, again.column, again.reason, again.object) == (
            e.start, e.end, e.offset, e.line, e.column, e.reason, e.object)


def code_points(rng, n):
    """Random UTF-32 values: mostly scalar values, some surrogates and values above U+10FFFF."""
    pool = [0x41, 0x0A, 0xE9, 0x4E2D, 0x1F600, 0x10FFFF, 0xFFFD]
    bad = [0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x110000, 0xFFFFFFFF]
    return [rng.choice(bad) if rng.random() < 0.02 else rng.choice(pool) for _ in range(n)]


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 1024, 1025, 65_537])
def test_encode_matches_cpython(rng, n):
    values = code_points(rng, n)
    buf = np.array(values, dtype="<u4")
    good = lambda v: v < 0x110000 and not 0xD800 <= v <= 0xDFFF
    replaced = "".join(chr(v) if good(v) else "\ufffd" for v in values).encode()
    dropped = "".join(chr(v) for v in values if good(v)).encode()
    assert gutf8.encode(buf, "replace") == replaced
    assert gutf8.encode(buf, "drop") == dropped
    bad = [i for i, v in enumerate(values) if not good(v)]
    if bad:
        with pytest.raises(gutf8.EncodeError) as info:
            gutf8.encode(buf)
        assert isinstance(info.value, UnicodeEncodeError)
        assert info.value.start == bad[0] and info.value.offset == 4 * bad[0]
    else:
        assert gutf8.encode(buf) == replaced


def test_encode_str_and_ragged_tail():
    assert gutf8.encode("a\u00e9\U0001f600") == "a\u00e9\U0001f600".encode()
    with pytest.raises(UnicodeEncodeError) as info:
        gutf8.encode("ab\ud800c")
    with pytest.raises(UnicodeEncodeError) as cpython:
        "ab\ud800c".encode("utf-8")
    assert info.value.start == cpython.value.start and info.value.object == "ab\ud800c"
    assert gutf8.encode("ab\ud800c", "replace") == "ab\ufffdc".encode()
    ragged = "ab".encode("utf-32-le") + b"\x41\x00"
    assert gutf8.encode(ragged, "replace") == b"ab\xef\xbf\xbd"
    with pytest.raises(gutf8.EncodeError) as info:
        gutf8.encode(ragged)
    assert info.value.kind == gutf8.ErrorKind.ragged_tail and info.value.offset == 8


def test_encode_takes_only_utf32le_buffers():
    text = "H\u00e9\U0001f600"
    values = [ord(c) for c in text]
    for dtype in ("<u4", "=u4", "<i4", "u4"):
        assert gutf8.encode(np.array(values, dtype=dtype)) == text.encode()
    assert gutf8.encode(bytearray(text.encode("utf-32-le"))) == text.encode()
    assert gutf8.encode(memoryview(text.encode("utf-32-le"))) == text.encode()
    for dtype in ("int64", ">u4", "<u2", "float32"):  # raw bytes that are not UTF-32LE code points
        with pytest.raises(TypeError, match="UTF-32LE"):
            gutf8.encode(np.array([0x48, 0x69], dtype=dtype))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_cpu_threads_give_the_same_result(rng, threads):
    data = random_text(rng, (3 << 20) + 11, 0.001)
    assert gutf8.repair(data, backend="cpu", threads=threads) == data.decode("utf-8", "replace").encode()
    assert gutf8.validate(data, backend="cpu", threads=threads).errors == len(error_units(data))


def test_many_python_threads_at_once(rng):
    inputs = [random_text(random.Random(i), 200_000 + i * 37, 0.002 * (i % 3)) for i in range(8)]
    expected = [d.decode("utf-8", "replace").encode() for d in inputs]
    counts = [len(error_units(d)) for d in inputs]
    results, failures = [None] * len(inputs), []

    def work(i):
        try:
            for _ in range(5):
                results[i] = gutf8.repair(inputs[i])
                assert gutf8.validate(inputs[i]).errors == counts[i]
        except Exception as e:  # surfaced below: a thread's assertion must fail the test
            failures.append(e)

    pool = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not failures
    assert results == expected


def test_help_reads_well():
    doc = gutf8.__doc__
    assert "maximal subparts" in doc and "validate_file" in doc
    for name in gutf8.__all__:
        obj = getattr(gutf8, name)
        if callable(obj) and typing.get_origin(obj) is not typing.Literal:  # the Literal aliases are types
            assert obj.__doc__, name


def test_docstring_examples():
    import doctest

    result = doctest.testmod(gutf8, verbose=False)
    assert result.attempted >= 4 and result.failed == 0


def test_the_gil_is_released_while_gutf8_works(rng):
    """While one thread is inside gutf8, another runs Python code. With a long switch interval a
    call that held the GIL would keep the other thread out until it returned: 0 spins (as
    bytes.decode('latin-1') or bytes.translate of the same data give)."""
    data = random_text(rng, 1 << 20, 0.01) * 48  # 48 MiB: tens of milliseconds of work
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    started = threading.Event()
    result = []

    def work():
        started.set()
        result.append(gutf8.repair(data, backend="cpu", threads=1))

    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()
        spins = 0
        while t.is_alive():
            spins += 1
        t.join()
    finally:
        sys.setswitchinterval(previous)
    assert result == [data.decode("utf-8", "replace").encode()]
    assert spins > 1000
