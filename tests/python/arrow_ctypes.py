"""A minimal producer and reader of the Arrow C Device Data Interface, with ctypes, for the tests:
a binary column whose offsets and data live wherever the caller's pointers say (host memory or a
CUDA device), as cuDF would hand one over."""
import ctypes

ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA = 1, 2


class ArrowSchema(ctypes.Structure):
    pass


class ArrowArray(ctypes.Structure):
    pass


SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))

ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))), ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", SCHEMA_RELEASE), ("private_data", ctypes.c_void_p)]
ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)), ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)), ("release", ARRAY_RELEASE), ("private_data", ctypes.c_void_p)]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [("array", ArrowArray), ("device_id", ctypes.c_int64), ("device_type", ctypes.c_int32),
                ("sync_event", ctypes.c_void_p), ("reserved", ctypes.c_int64 * 3)]


@SCHEMA_RELEASE
def _release_schema(p):
    p.contents.release = SCHEMA_RELEASE()


@ARRAY_RELEASE
def _release_array(p):
    p.contents.release = ARRAY_RELEASE()


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class BinaryColumn:
    """Exports a binary ("z") column of `length` rows, no nulls, int32 offsets at `offsets_ptr`
    and bytes at `data_ptr`, on `device_type` / `device_id`; the owner of that memory must
    outlive this object."""

    def __init__(self, length, offsets_ptr, data_ptr, device_type, device_id=0):
        self.schema = ArrowSchema(format=b"z", name=b"text", flags=2, release=_release_schema)
        self.buffers = (ctypes.c_void_p * 3)(None, offsets_ptr, data_ptr)
        self.array = ArrowDeviceArray(
            array=ArrowArray(length=length, null_count=0, offset=0, n_buffers=3, buffers=self.buffers,
                             release=_release_array),
            device_id=device_id, device_type=device_type)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return (_new_capsule(ctypes.addressof(self.schema), b"arrow_schema", None),
                _new_capsule(ctypes.addressof(self.array), b"arrow_device_array", None))


def read_device_column(column):
    """(length, null bitmap pointer, offsets pointer, data pointer, device type, offset, format) of
    a DeviceColumn result, which is released afterwards by its capsule."""
    schema_capsule, array_capsule = column.__arrow_c_device_array__()
    schema = ArrowSchema.from_address(_capsule_pointer(schema_capsule, b"arrow_schema"))
    dev = ArrowDeviceArray.from_address(_capsule_pointer(array_capsule, b"arrow_device_array"))
    a = dev.array
    buffers = [a.buffers[i] for i in range(a.n_buffers)]
    return a.length, buffers, dev.device_type, a.offset, schema.format, (schema_capsule, array_capsule)


def packed(values):
    """int32 offsets and the bytes of rows (no nulls) as numpy arrays."""
    import numpy as np

    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(v) for v in values])
    data = np.frombuffer(b"".join(values) or b"\0", dtype=np.uint8).copy()
    return offsets, data
