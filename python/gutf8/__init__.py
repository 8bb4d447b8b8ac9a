"""gutf8: UTF-8 validate, decode, repair and encode on NVIDIA GPUs and CPUs.

Errors follow the Unicode "maximal subparts" practice exactly (the same units as CPython's
``bytes.decode('utf-8', 'replace')``), and every backend gives the same result.

Flat buffers (anything with the buffer protocol: bytes, bytearray, memoryview, mmap, numpy):

>>> import gutf8
>>> gutf8.validate(b"caf\\xc3\\xa9 \\xff").valid
False
>>> gutf8.decode(b"h\\xc3\\xa9").tolist()          # numpy.uint32 code points
[104, 233]
>>> gutf8.repair(b"a\\xe1\\x80b")                  # one U+FFFD per maximal subpart
b'a\\xef\\xbf\\xbdb'
>>> gutf8.encode("h\\xe9")                         # str or UTF-32LE buffer -> UTF-8 bytes
b'h\\xc3\\xa9'

``errors`` (:data:`Errors`) is ``"strict"`` (raise :class:`DecodeError` / :class:`EncodeError`
at the first error unit), ``"replace"`` (U+FFFD) or ``"drop"`` (``"ignore"``, CPython's name, is
accepted as its alias). ``backend`` (:data:`Backend`) is ``"auto"`` (the GPU where one is usable
and the input is large enough to pay), ``"cpu"`` or ``"cuda"``. Any other value is a ValueError
naming the allowed ones. Reports (:class:`Report`, :class:`Stats`) are frozen dataclasses.

``device`` means the same in every function that takes it: ``None`` (the default) names no GPU,
so gutf8 may use any usable one (:func:`cuda_devices`): a GPU array runs on the GPU that holds
it, a host buffer on the first usable GPU (CUDA's device 0), a file run on all of them;
``device=N`` runs on GPU N alone (a GPU array held by another GPU is a ValueError). It matters
only where the GPU runs (``backend="cuda"``, ``"auto"`` when the GPU pays, GPU arrays).

Files (the library's input engine, all cores and, with ``backend="auto"``, the GPU when it
pays): :func:`validate_file`, :func:`decode_file`, :func:`repair_file` (written atomically),
each with an optional ``progress(done_bytes)`` callback. The GPU lanes a file run builds are kept
for the next run (:data:`gpu_lanes`).

Importing gutf8 creates nothing: no thread, lane cache or CUDA context; they are made by the
first call that needs them.

GPU arrays (``__cuda_array_interface__`` or DLPack, e.g. CuPy, PyTorch, Numba) run on their
GPU and the results stay there (CuPy arrays when CuPy is installed, else DLPack tensors).

String columns (Arrow utf8 / binary, pyarrow and any Arrow PyCapsule producer), row by row:
:mod:`gutf8.columns` (is_valid, validate, make_valid, cast_to_utf8, count_code_points).

The GIL is released while gutf8 works; calls from several threads at once are safe.
Cluster runs over many files and dataframes: :mod:`gutf8.dask`.
"""

from __future__ import annotations

import atexit
import operator
import os
import secrets
import stat
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Optional, Union, get_args

import numpy as np

from . import _gutf8
from ._gutf8 import ErrorKind, GpuLaneCache

__all__ = [
    "Report", "Stats", "DecodeError", "EncodeError", "ErrorKind", "Errors", "RepairErrors", "Backend", "ReadMethod",
    "validate", "stats", "decode", "repair", "encode",
    "validate_file", "validate_files", "decode_file", "repair_file", "GpuLaneCache", "gpu_lanes",
    "cuda_available", "cuda_devices", "built_with_cuda",
]
__version__ = "0.1.0"

#: What happens to an error unit: raise, U+FFFD, or removed ("ignore": CPython's name for "drop").
Errors = Literal["strict", "replace", "drop", "ignore"]
#: The policies of a repair, which always writes valid UTF-8.
RepairErrors = Literal["replace", "drop", "ignore"]
#: Where the work runs: "auto" (the GPU where it pays), "cpu" or "cuda".
Backend = Literal["auto", "cpu", "cuda"]
#: How the file functions read a big file: its pages in place ("map") or copied out ("copy").
ReadMethod = Literal["map", "copy"]

Progress = Optional[Callable[[int], Any]]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_lanes_made = threading.Lock()


def __getattr__(name: str) -> Any:
    """``gpu_lanes``: the GPU lanes the file functions keep from one call for the next (CUDA
    streams, device buffers and page-locked host memory each, at most 8), so that a second GPU run
    starts at once instead of building them again. Made by its first use, not at import.
    ``gpu_lanes.idle`` counts them, ``gpu_lanes.clear()`` frees them; they are freed at exit, while
    CUDA is still up. A run uses 2-3 lanes a GPU: on more than two GPUs set
    ``gutf8.gpu_lanes = gutf8.GpuLaneCache(24)``; ``gutf8.gpu_lanes = None`` keeps none."""
    if name == "gpu_lanes":
        return _gpu_lanes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _gpu_lanes() -> Optional[GpuLaneCache]:
    """The module's ``gpu_lanes`` (what a user set, else the default cache, made once)."""
    with _lanes_made:
        if "gpu_lanes" not in globals():
            globals()["gpu_lanes"] = GpuLaneCache()
            atexit.register(_free_lanes)
        return globals()["gpu_lanes"]  # type: ignore[no-any-return]


def _free_lanes() -> None:
    lanes = globals().get("gpu_lanes")
    if lanes is not None:
        lanes.clear()


@dataclass(frozen=True, slots=True)
class Report:
    """What a pass over the input found.

    ``bytes``: input bytes consumed (under strict: up to the first error); ``errors``: error
    units; ``offset``/``line``/``column``/``reason``/``kind``: the first error unit (None when
    valid). Offsets are 0-based bytes; line and column are 1-based, the column in bytes since
    the last LF (for UTF-32 input, in code points). ``path``: the file, for file functions;
    ``error``: why that file could not be read (:func:`validate_files` only; then not valid).
    """

    bytes: int
    errors: int
    offset: Optional[int] = None
    line: Optional[int] = None
    column: Optional[int] = None
    reason: Optional[str] = None
    kind: Optional[ErrorKind] = None
    path: Optional[str] = None
    seconds: Optional[float] = None
    error: Optional[str] = None

    @property
    def valid(self) -> bool:
        """True when the input was read and no error unit was found."""
        return self.errors == 0 and self.error is None

    def __bool__(self) -> bool:  # `if gutf8.validate(b):` reads as "is valid"
        return self.valid


@dataclass(frozen=True, slots=True)
class Stats(Report):
    """A :class:`Report` plus counts: well-formed code points, lines (LF bytes, as ``wc -l``),
    and well-formed sequences of 1, 2, 3 and 4 bytes."""

    code_points: int = 0
    lines: int = 0
    by_length: tuple[int, int, int, int] = (0, 0, 0, 0)


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    e = cls(*args)
    e.__dict__.update(state)
    return e


class _Picklable:
    """Pickles args and gutf8's fields as they are, also through picklers that rebuild exceptions
    their own way (tblib's, which Dask installs, loses UnicodeError's start/end/reason)."""

    args: tuple[Any, ...]  # BaseException's

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class DecodeError(_Picklable, UnicodeDecodeError):
    """Invalid UTF-8 under ``errors="strict"``; a :class:`UnicodeDecodeError`.

    Standard fields: ``encoding`` ('utf-8'), ``object``, ``start``, ``end`` (the error unit is
    ``object[start:end]``), ``reason``. gutf8 adds ``offset`` (byte offset in the whole input or
    file), ``line``, ``column``, ``kind`` (:class:`ErrorKind`) and ``path`` (file functions).
    For flat buffers ``object`` is the input and ``start == offset``; for files ``object`` holds
    only the error unit's bytes (``start == 0``), since a file can be far larger than memory;
    for GPU input ``object`` is empty (the input stays on the device).
    """

    offset: int = 0
    line: int = 1
    column: int = 1
    kind: Optional[ErrorKind] = None
    path: Optional[str] = None

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return (f"{where}invalid UTF-8 at byte {self.offset} (line {self.line}, "
                f"column {self.column}): {self.reason}")


class EncodeError(_Picklable, UnicodeEncodeError):
    """A surrogate, a value above U+10FFFF or a ragged tail under ``errors="strict"``.

    ``start``/``end`` index code points; ``object`` is the input str (empty when the input was a
    UTF-32LE buffer, whose values need not be representable as a str). gutf8 adds ``offset``
    (byte offset in the UTF-32LE input), ``line``, ``column`` (in code points) and ``kind``.
    """

    offset: int = 0
    line: int = 1
    column: int = 1
    kind: Optional[ErrorKind] = None

    def __str__(self) -> str:
        return (f"cannot encode the value at byte {self.offset} of the UTF-32 input (line "
                f"{self.line}, column {self.column}): {self.reason}")


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a usable GPU is present."""
    return _gutf8.cuda_available()


def cuda_devices() -> list[int]:
    """The usable GPUs, numbered as ``device=`` takes them (CUDA's numbering in this process,
    after ``CUDA_VISIBLE_DEVICES``); empty where none is, or in a build without CUDA."""
    return _gutf8.cuda_devices()


built_with_cuda: bool = _gutf8.built_with_cuda


def _report(s: _gutf8.Summary, path: Optional[str] = None) -> Report:
    f = s.first
    if f is None:
        return Report(s.bytes, s.errors, path=path, seconds=s.seconds, error=s.failure)
    return Report(s.bytes, s.errors, f.offset, f.line, f.column, f.reason, f.kind, path, s.seconds, s.failure)


def _stats(s: _gutf8.TextStats) -> Stats:
    r = _report(s)
    one, two, three, four = s.by_length
    return Stats(r.bytes, r.errors, r.offset, r.line, r.column, r.reason, r.kind, code_points=s.code_points,
                 lines=s.lines, by_length=(one, two, three, four))


def _decode_error(obj: bytes, start: int, f: _gutf8.FirstError, path: Optional[str] = None) -> DecodeError:
    e = DecodeError("utf-8", obj, start, start + f.length, f.reason)
    e.offset, e.line, e.column, e.kind, e.path = f.offset, f.line, f.column, f.kind, path
    return e


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """A ValueError naming the allowed values of argument `name` unless `value` is one of them."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, not {value!r}")


_STRICT: tuple[str, ...] = get_args(Errors)
_REPAIR: tuple[str, ...] = get_args(RepairErrors)
_BACKENDS: tuple[str, ...] = get_args(Backend)


def _checked(errors: str, allowed: tuple[str, ...], backend: str) -> None:
    _choice("errors", errors, allowed)
    _choice("backend", backend, _BACKENDS)


def _device(device: Optional[int]) -> int:
    """The native layer's GPU number: device=None (any usable GPU) is -1."""
    if device is None:
        return -1
    try:
        number = -1 if isinstance(device, bool) else operator.index(device)  # numpy integers too
    except TypeError:
        number = -1
    if number < 0:
        raise ValueError(f"device must be None (any usable GPU) or a GPU number >= 0, not {device!r}")
    return number

# --- device inputs -------------------------------------------------------------------------

_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13


def _device_view(data: Any) -> Optional[tuple[int, int, int]]:
    """(pointer, bytes, device) when `data` lives in GPU memory, else None."""
    cai = getattr(data, "__cuda_array_interface__", None)
    if cai is not None:
        shape, typestr, strides = cai["shape"], cai["typestr"], cai.get("strides")
        itemsize = int(typestr[2:])
        count = int(np.prod(shape)) if shape else 1
        if strides is not None and strides != _c_strides(shape, itemsize):
            raise ValueError("gutf8 needs a C-contiguous device array")
        return cai["data"][0], count * itemsize, -1  # -1: the GPU that owns the pointer
    dev = getattr(data, "__dlpack_device__", None)
    if dev is not None and not isinstance(data, np.ndarray):
        kind, _ = dev()
        if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            if not _gutf8.built_with_cuda:
                raise RuntimeError("gutf8 was built without CUDA; copy the array to the host")
            return tuple(_gutf8.dlpack_view(data))  # type: ignore[return-value]
    return None


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _stream_handle(stream: Any) -> int:
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attr in ("ptr", "cuda_stream", "handle"):  # CuPy, PyTorch, Numba
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError("stream must be an int handle or an object with __cuda_stream__ / .ptr")


def _device_array(arr: Any) -> Any:
    try:
        import cupy  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return arr
    return cupy.from_dlpack(arr)


def _on_device(op: str, view: tuple[int, int, int], errors: Errors, device: Optional[int],
               stream: Any) -> tuple[Any, _gutf8.Summary]:
    if not _gutf8.built_with_cuda:
        raise RuntimeError("gutf8 was built without CUDA")
    ptr, nbytes, where = view
    if where < 0:  # a __cuda_array_interface__ does not name its GPU: ask CUDA
        where = _gutf8.device_of(ptr)
    if device is not None and device != where:
        raise ValueError(f"the array is on GPU {where}, not on device={device}")
    out, s = _gutf8.device_call(op, ptr, nbytes, where, _stream_handle(stream), errors)
    return (None if out is None else _device_array(out)), s


# --- flat buffers --------------------------------------------------------------------------

def validate(data: Any, *, backend: Backend = "auto", threads: int = 0, device: Optional[int] = None,
             stream: Any = None) -> Report:
    """Count the error units of UTF-8 `data` and locate the first one. Never raises for bad text.

    `backend`: "auto" (GPU when usable and the input is large enough to pay), "cpu" or "cuda";
    `threads`: CPU threads (0 = all); `device`: the GPU (None: any usable one, see the module's
    text). GPU arrays run on their own GPU (`stream`: a CUDA stream handle or object).
    """
    _choice("backend", backend, _BACKENDS)
    gpu = _device(device)
    view = _device_view(data)
    if view is not None:
        return _report(_on_device("validate", view, "strict", device, stream)[1])
    return _report(_gutf8.validate(data, backend, threads, gpu))


def stats(data: Any, *, backend: Backend = "auto", threads: int = 0, device: Optional[int] = None) -> Stats:
    """A :class:`Stats` of UTF-8 `data`: the validate report plus code point, line and
    sequence-length counts (host buffers only)."""
    _choice("backend", backend, _BACKENDS)
    gpu = _device(device)
    if _device_view(data) is not None:
        raise TypeError("gutf8.stats takes host buffers; copy the GPU array to the host first")
    return _stats(_gutf8.stats(data, backend, threads, gpu))


def decode(data: Any, errors: Errors = "strict", *, backend: Backend = "auto", threads: int = 0,
           device: Optional[int] = None, stream: Any = None) -> Any:
    """UTF-8 `data` -> code points as a ``numpy.uint32`` array (a device array for GPU input).

    Equals ``numpy.frombuffer(data.decode('utf-8', errors).encode('utf-32-le'), '<u4')`` for
    "strict" and "replace", and for "drop" with CPython's "ignore". Strict raises
    :class:`DecodeError` at the first error unit. The array owns the memory gutf8 wrote into.
    """
    _checked(errors, _STRICT, backend)
    gpu = _device(device)
    view = _device_view(data)
    if view is not None:
        out, s = _on_device("decode", view, errors, device, stream)
        if errors == "strict" and s.first is not None:
            raise _decode_error(b"", 0, s.first)
        return out
    out, s = _gutf8.decode(data, errors, backend, threads, gpu)
    if errors == "strict" and s.first is not None:
        raise _decode_error(bytes(memoryview(data).cast("B")), s.first.offset, s.first)
    return out


def repair(data: Any, errors: RepairErrors = "replace", *, backend: Backend = "auto", threads: int = 0,
           device: Optional[int] = None, stream: Any = None) -> Any:
    """UTF-8 `data` -> valid UTF-8 ``bytes``: each error unit becomes U+FFFD ("replace") or is
    removed ("drop"). Equals ``data.decode('utf-8', 'replace' | 'ignore').encode()``.
    GPU input gives a uint8 device array."""
    _checked(errors, _REPAIR, backend)
    gpu = _device(device)
    view = _device_view(data)
    if view is not None:
        return _on_device("repair", view, errors, device, stream)[0]
    return _gutf8.repair(data, errors, backend, threads, gpu)[0]


def _check_utf32_buffer(data: Any) -> None:
    """A host buffer for encode: bytes of UTF-32LE, or 32-bit integers in little-endian order
    (numpy uint32 / int32); anything else (int64, big-endian, floats) would be read as its raw
    bytes and give text that was never meant."""
    try:
        view = memoryview(data)
    except TypeError:
        return  # not a buffer: the extension says so
    fmt = view.format
    raw = view.itemsize == 1 and fmt.lstrip("@=<") in ("B", "b", "c")
    little = fmt.startswith("<") or (not fmt.startswith((">", "!")) and sys.byteorder == "little")
    if not raw and not (view.itemsize == 4 and fmt[-1:] in ("I", "i", "L", "l") and little):
        raise TypeError("encode takes a str or a UTF-32LE buffer (bytes, or 32-bit little-endian "
                        f"integers), not a buffer of format {fmt!r} with {view.itemsize}-byte items")


def encode(data: Any, errors: Errors = "strict", *, backend: Backend = "auto", threads: int = 0,
           device: Optional[int] = None, stream: Any = None) -> Any:
    """Code points -> UTF-8 ``bytes``. `data` is a str or a UTF-32LE buffer (e.g. a
    ``numpy.uint32`` array). Error units: a surrogate, a value above U+10FFFF, 1-3 trailing
    bytes of a buffer; "replace" writes U+FFFD for each, "drop" removes it, "strict" raises
    :class:`EncodeError`. GPU input gives a uint8 device array."""
    _checked(errors, _STRICT, backend)
    gpu = _device(device)
    text = data if isinstance(data, str) else None
    if text is not None:
        data = text.encode("utf-32-le", "surrogatepass")  # marshalling only: values unchanged
    view = None if text is not None else _device_view(data)
    if view is not None:
        out, s = _on_device("encode", view, errors, device, stream)
    else:
        if text is None:
            _check_utf32_buffer(data)
        out, s = _gutf8.encode(data, errors, backend, threads, gpu)
    f = s.first
    if errors == "strict" and f is not None:
        start = f.offset // 4
        e = EncodeError("utf-8", text or "", start, start + 1, f.reason)
        e.offset, e.line, e.column, e.kind = f.offset, f.line, f.column, f.kind
        raise e
    return out


# --- files ---------------------------------------------------------------------------------

def _file_options(backend: str, read: str, device: Optional[int]) -> int:
    """Checks the file functions' options; the native GPU number (-1: every usable GPU)."""
    _choice("backend", backend, _BACKENDS)
    _choice("read", read, get_args(ReadMethod))
    return _device(device)


def validate_file(path: PathLike, *, backend: Backend = "auto", threads: int = 0,
                  device: Optional[int] = None, progress: Progress = None, read: ReadMethod = "map") -> Report:
    """Validate a file through the library's input engine (CPU threads and, where `backend`
    allows and they pay, every usable GPU, or only `device`); a :class:`Report` with ``path`` and
    ``seconds``. `progress(done_bytes)` is called as the work advances (what it raises stops the
    run). Unreadable files raise OSError. `read`: "map" scans a big file's pages in place, as the
    CLI does (a file that another process truncates meanwhile ends this one with SIGBUS, as with
    :mod:`mmap`); "copy" copies them out (then that is an OSError)."""
    gpu = _file_options(backend, read, device)
    p = os.fsdecode(path)  # a str of any name (os.fsencode gives its bytes back)
    return _report(_gutf8.validate_file(os.fsencode(p), backend, threads, gpu, progress, _gpu_lanes(), read), p)


def validate_files(paths: Iterable[PathLike], *, backend: Backend = "auto", threads: int = 0,
                   device: Optional[int] = None, progress: Progress = None,
                   read: ReadMethod = "map") -> list[Report]:
    """Validate many files in one run of the input engine (threads made once, small files read
    whole many at a time, big ones over every thread): one :class:`Report` a path, in order. A file
    that cannot be read does not stop the others: its report's ``error`` says why (and it is not
    valid). Options as :func:`validate_file`; ``seconds`` is the whole run's."""
    gpu = _file_options(backend, read, device)
    ps = [os.fsdecode(p) for p in paths]
    reports = _gutf8.validate_files([os.fsencode(p) for p in ps], backend, threads, gpu, progress, _gpu_lanes(),
                                    read)
    return [_report(s, p) for s, p in zip(reports, ps)]


def decode_file(path: PathLike, errors: Errors = "strict", *, backend: Backend = "auto", threads: int = 0,
                device: Optional[int] = None, progress: Progress = None,
                read: ReadMethod = "map") -> np.ndarray:
    """Decode a whole UTF-8 file into a ``numpy.uint32`` array (see :func:`decode`)."""
    _choice("errors", errors, _STRICT)
    gpu = _file_options(backend, read, device)
    p = os.fsdecode(path)
    out, s = _gutf8.decode_file(os.fsencode(p), errors, backend, threads, gpu, progress, _gpu_lanes(), read)
    if errors == "strict" and s.first is not None:
        raise _decode_error(s.first.unit, 0, s.first, p)  # the unit read back from the file's text
    return out


def repair_file(path: PathLike, out: PathLike, errors: RepairErrors = "replace", *, backend: Backend = "auto",
                threads: int = 0, device: Optional[int] = None, progress: Progress = None,
                read: ReadMethod = "map") -> Report:
    """Write the repaired UTF-8 of file `path` to `out` (U+FFFD per error unit, or dropped) and
    return the input's :class:`Report`. `out` is written to a temporary file beside it and
    renamed on success, so a failure never leaves a partial `out` (an existing one stays, and
    keeps its mode); as with the CLI's ``-o``, a symbolic link is written through to its file, and a
    device or pipe is written directly."""
    _choice("errors", errors, _REPAIR)
    gpu = _file_options(backend, read, device)
    p, o = os.fsdecode(path), os.fsdecode(out)
    o = os.path.realpath(o) if os.path.islink(o) else o  # through a link to its file, as the CLI
    try:
        existing: Optional[os.stat_result] = os.stat(o)
    except FileNotFoundError:
        existing = None
    lanes = _gpu_lanes()

    def run(fd: int) -> _gutf8.Summary:
        return _gutf8.repair_file(os.fsencode(p), fd, os.fsencode(o), errors, backend, threads, gpu, progress,
                                  lanes, read)

    if existing is not None and not stat.S_ISREG(existing.st_mode):  # a device or a pipe: no rename
        fd = os.open(o, os.O_WRONLY | os.O_CLOEXEC)
        try:
            return _report(run(fd), p)
        finally:
            os.close(fd)
    tmp = os.path.join(os.path.dirname(os.path.abspath(o)),
                       f".{os.path.basename(o)}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)  # umask applies
    try:
        try:
            if existing is not None:
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))  # OUT keeps its mode, as with the CLI
            s = run(fd)
        finally:
            os.close(fd)
        os.replace(tmp, o)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return _report(s, p)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
