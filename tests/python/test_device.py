"""GPU-resident inputs (CUDA array interface, DLPack) against the host API and CPython."""
import dataclasses

import numpy as np
import pytest

import gutf8
from conftest import SIZES, error_units, random_text

if not gutf8.built_with_cuda:
    pytest.skip("gutf8 was built without CUDA (no nvcc at build time)", allow_module_level=True)
if not gutf8.cuda_available():
    pytest.skip("no usable GPU on this machine", allow_module_level=True)
cp = pytest.importorskip("cupy", reason="the device tests make their GPU arrays with CuPy")


class DLPackOnly:
    """Exposes a CuPy array through DLPack alone (no __cuda_array_interface__)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.parametrize("size", SIZES + [(16 << 20) + 5])
@pytest.mark.parametrize("rate", [0.0, 0.01, 0.5])
@pytest.mark.parametrize("wrap", [lambda a: a, DLPackOnly], ids=["cai", "dlpack"])
def test_device_matches_host_and_cpython(rng, size, rate, wrap):
    data = random_text(rng, size, rate)
    d_in = wrap(cp.asarray(np.frombuffer(data, np.uint8)))
    r = gutf8.validate(d_in)
    units = error_units(data)
    assert r.errors == len(units) and (not units or r.offset == units[0][0])
    for errors, cpy in (("replace", "replace"), ("drop", "ignore")):
        out = gutf8.decode(d_in, errors)
        assert isinstance(out, cp.ndarray) and out.dtype == cp.uint32
        expected = np.frombuffer(data.decode("utf-8", cpy).encode("utf-32-le"), "<u4")
        np.testing.assert_array_equal(cp.asnumpy(out), expected)
        fixed = gutf8.repair(d_in, errors)
        assert cp.asnumpy(fixed).tobytes() == data.decode("utf-8", cpy).encode()
    if units:
        with pytest.raises(gutf8.DecodeError) as info:
            gutf8.decode(d_in)
        assert info.value.offset == units[0][0] and info.value.end - info.value.start == units[0][1] - units[0][0]


def test_device_encode_and_stream(rng):
    values = np.array([0x41, 0xE9, 0xD800, 0x1F600, 0x110000, 0x4E2D] * 1001, dtype="<u4")
    good = "".join(chr(v) if v < 0x110000 and not 0xD800 <= v <= 0xDFFF else "\ufffd" for v in values)
    stream = cp.cuda.Stream(non_blocking=True)
    out = gutf8.encode(cp.asarray(values), "replace", stream=stream)
    assert cp.asnumpy(out).tobytes() == good.encode()
    with pytest.raises(gutf8.EncodeError) as info:
        gutf8.encode(cp.asarray(values), stream=stream.ptr)
    assert info.value.offset == 8


def test_device_argument_must_match_the_array():
    a = cp.asarray(np.frombuffer(b"abc", np.uint8))
    with pytest.raises(ValueError):
        gutf8.validate(a, device=a.device.id + 1)


def test_host_backend_cuda_matches_cpu(rng):
    data = random_text(rng, (4 << 20) + 3, 0.01)
    assert gutf8.repair(data, backend="cuda") == gutf8.repair(data, backend="cpu")
    assert gutf8.validate(data, backend="cuda") == gutf8.validate(data, backend="cpu")


def test_cuda_string_columns_through_the_device_interface(rng):
    pytest.importorskip("pyarrow")
    import gutf8.columns as gc
    from arrow_ctypes import ARROW_DEVICE_CUDA, BinaryColumn, packed, read_device_column

    values = [random_text(rng, rng.choice([0, 1, 3, 40, 300, 5000]), 0.02) for _ in range(3001)]
    offsets, data = packed(values)
    d_offsets, d_data = cp.asarray(offsets), cp.asarray(data)
    col = BinaryColumn(len(values), d_offsets.data.ptr, d_data.data.ptr, ARROW_DEVICE_CUDA, d_offsets.device.id)

    def host_copy(ptr, nbytes, dtype):
        out = np.empty(nbytes // np.dtype(dtype).itemsize, dtype)
        if nbytes:
            cp.cuda.runtime.memcpy(out.ctypes.data, ptr, nbytes, cp.cuda.runtime.memcpyDeviceToHost)
        return out

    fixed = gc.make_valid(col, "replace")
    assert isinstance(fixed, gc.DeviceColumn)
    length, buffers, device_type, offset, fmt, _keep = read_device_column(fixed)
    assert (length, device_type, offset, fmt) == (len(values), ARROW_DEVICE_CUDA, 0, b"u")
    h_offsets = host_copy(buffers[1], 4 * (length + 1), np.int32)
    h_data = host_copy(buffers[2], int(h_offsets[-1]), np.uint8).tobytes()
    rows_out = [h_data[h_offsets[i]:h_offsets[i + 1]].decode() for i in range(length)]
    assert rows_out == [v.decode("utf-8", "replace") for v in values]

    flags = gc.is_valid(col)
    length, buffers, device_type, offset, fmt, _keep = read_device_column(flags)
    assert (length, device_type, fmt) == (len(values), ARROW_DEVICE_CUDA, b"b")
    bits = np.unpackbits(host_copy(buffers[1], (length + 7) // 8, np.uint8), bitorder="little")[:length]
    assert bits.astype(bool).tolist() == [not error_units(v) for v in values]

    bad = [i for i, v in enumerate(values) if error_units(v)]
    with pytest.raises(gc.InvalidRowError) as info:
        gc.validate(col)
    assert info.value.row == bad[0] and info.value.offset == error_units(values[bad[0]])[0][0]


def test_file_runs_keep_their_gpu_lanes(rng, tmp_path):
    """A second GPU run of a file takes the lanes the first built (gutf8.gpu_lanes): same results
    as the CPU, no lane built again; clear() frees them. GPU 0 alone: 7 lanes, within the 8 kept."""
    gutf8.gpu_lanes.clear()
    paths = []
    for i in range(3):
        p = tmp_path / f"f{i}.txt"
        p.write_bytes(random_text(rng, 3_000_001 + i, 0.001))
        paths.append(p)
    built = None
    for p in paths:
        data = p.read_bytes()
        on_gpu, on_cpu = gutf8.validate_file(p, backend="cuda", device=0), gutf8.validate_file(p, backend="cpu")
        assert dataclasses.replace(on_gpu, seconds=None) == dataclasses.replace(on_cpu, seconds=None)
        out = tmp_path / (p.name + ".out")
        gutf8.repair_file(p, out, "replace", backend="cuda", device=0)
        assert out.read_bytes() == data.decode("utf-8", "replace").encode()
        np.testing.assert_array_equal(gutf8.decode_file(p, "drop", backend="cuda", device=0),
                                      np.frombuffer(data.decode("utf-8", "ignore").encode("utf-32-le"), "<u4"))
        if built is not None:
            assert gutf8.gpu_lanes.built == built
        built = gutf8.gpu_lanes.built
        assert gutf8.gpu_lanes.idle > 0
    gutf8.gpu_lanes.clear()
    assert gutf8.gpu_lanes.idle == 0
