"""gutf8 on a Dask cluster: per-file reports and repairs over many files.

Install with ``pip install .[dask]`` (dask, distributed, pandas, pyarrow)::

    from distributed import Client, LocalCluster
    import gutf8.dask
    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    report = gutf8.dask.validate_files("/data/crawl/**/*.txt", client=client)
    report[~report.valid.fillna(True)]           # one row per file, never a missing row

Every file is read by the worker that runs its task, so the paths must name the same file on
every worker (a shared or replicated file system). ``client=None`` uses the current Dask client
when there is one (``distributed.get_client``), else runs the files one after the other here.

GPU workers, one a GPU: each worker process is started with ``CUDA_VISIBLE_DEVICES`` naming
its GPU alone, so it sees that GPU (as device 0) and no other, and gutf8 with
``backend="cuda"`` or ``"auto"`` runs there. On one machine, :func:`local_gpu_cluster`::

    with gutf8.dask.local_gpu_cluster() as cluster, Client(cluster) as client:
        report = gutf8.dask.validate_files("/data/**/*.txt", client=client, backend="cuda")

Machines of a cluster::

    dask scheduler                                   # on one machine (port 8786)
    dask worker tcp://SCHEDULER:8786 --nworkers 4 --nthreads 1        # on each CPU machine
    # on each GPU machine, one worker per GPU that this shell may use, each owning its device:
    for g in $(python -m gutf8.dask gpus); do
      CUDA_VISIBLE_DEVICES=$g dask worker tcp://SCHEDULER:8786 --nthreads 1 \\
        --resources GPU=1 --name "$(hostname)-gpu-$g" &
    done; wait

then ``Client("tcp://SCHEDULER:8786")`` and, for the GPU workers,
``validate_files(..., backend="cuda", resources={"GPU": 1})`` (the resource keeps GPU work off
the CPU workers). ``python -m gutf8.dask gpus`` prints the ``CUDA_VISIBLE_DEVICES`` entry of
each usable GPU, one a line (from the shell's own ``CUDA_VISIBLE_DEVICES`` where it is set, so
a batch system's allocation is kept). dask-cuda's ``LocalCUDACluster`` lists every GPU to each
worker, its own first: pass ``device=0`` there.

Column operations on a ``dask.dataframe`` (one task a partition, ``map_partitions``): e.g. a
Parquet dataset whose text columns hold invalid UTF-8, read as binary, repaired, written back::

    import dask.dataframe as dd
    ddf = dd.read_parquet("lake/")                   # text stored as binary
    gutf8.dask.make_valid(ddf, ["text"]).to_parquet("lake-clean/")

The report's columns: ``path``, ``bytes``, ``valid``, ``errors`` (invalid sequences),
``offset``/``line``/``column``/``reason`` of the first one, ``seconds`` (on the worker: for
:func:`validate_files`, the whole batch the file was validated in) and ``error``: why a file could
not be checked (unreadable, vanished, changed while read, a worker that died), with the other
columns empty. ``repair_files`` adds ``output``.

Compressed shards (gzip, zstd, xz, bzip2, lz4: ``*.jsonl.gz``, ``*.jsonl.zst``, ..., recognized by
their magic numbers) are read as their text: ``bytes``, ``offset``, ``line`` and ``column`` count
in the decompressed text, and a damaged shard's ``error`` names the position in its compressed
bytes. :func:`repair_files` writes each output in the format its name's suffix says: the input's
own, or another with ``suffix=``::

    gutf8.dask.repair_files("crawl/**/*.json.gz", "clean/", suffix=".zst")  # clean/**/*.json.zst

:func:`validate_files` sends small files to the workers in batches (up to ``BATCH_BYTES`` or
``BATCH_FILES`` files a task, each batch one :func:`gutf8.validate_files` run on the worker:
threads made once for the batch), so that thousands of small files cost a few tasks, not one
task each; a file of ``BATCH_BYTES`` or more is a task of its own.
"""

from __future__ import annotations

import glob
import os
import time
from typing import Any, Callable, Iterable, Optional, Union

import pandas as pd

import gutf8
from gutf8 import Backend, RepairErrors

__all__ = ["validate_files", "repair_files", "expand_paths", "make_valid", "is_valid", "local_gpu_cluster",
           "gpu_worker_specs"]

Paths = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

BATCH_BYTES = 64 << 20  # small files share a task up to this many bytes ...
BATCH_FILES = 1024      # ... or this many files

COLUMNS = ["path", "bytes", "valid", "errors", "offset", "line", "column", "reason", "seconds", "error"]
_DTYPES = {"bytes": "Int64", "valid": "boolean", "errors": "Int64", "offset": "Int64", "line": "Int64",
           "column": "Int64", "reason": "string", "seconds": "float64", "error": "string", "path": "string",
           "output": "string"}


def expand_paths(paths_or_glob: Paths) -> list[str]:
    """A glob pattern (``**`` recurses) or a path -> the sorted matching paths; an iterable of
    paths -> those paths, in order. Expanded on the client."""
    if isinstance(paths_or_glob, (str, os.PathLike)):
        pattern = os.fspath(paths_or_glob)
        if glob.has_magic(pattern):
            return sorted(glob.glob(pattern, recursive=True))
        return [pattern]
    return [os.fspath(p) for p in paths_or_glob]


def _identity(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


class _Work:
    """One file's job for _row, called on its path. replaces_input: whether it replaces the file
    itself (whose identity then changes by design); discard: undoes what it wrote, for a file that
    changed while it was read."""

    def __call__(self, path: str) -> tuple[gutf8.Report, dict[str, Any]]:
        raise NotImplementedError

    def replaces_input(self, path: str) -> bool:
        return False

    def discard(self, path: str) -> None:
        pass


def _row(path: str, work: _Work) -> dict:
    """Runs `work` on one file; what goes wrong becomes the row's `error`, never an exception."""
    start = time.perf_counter()
    row: dict[str, Any] = {"path": path}
    try:
        in_place = work.replaces_input(path)
        before = _identity(path)
        report, extra = work(path)
        if not in_place and _identity(path) != before:  # the work is of a file that no longer exists as read
            work.discard(path)
            raise OSError(f"{path}: the file changed while it was read")
        row.update(bytes=report.bytes, valid=report.valid, errors=report.errors, offset=report.offset,
                   line=report.line, column=report.column, reason=report.reason, **extra)
    except Exception as e:  # one file's failure is that file's row
        row["error"] = f"{type(e).__name__}: {e}"
    row["seconds"] = time.perf_counter() - start
    return row


COMPRESSED_SUFFIXES = (".gz", ".zst", ".xz", ".bz2", ".lz4")  # what repair_file writes compressed


def _output_path(path: str, root: str, out_dir: str, suffix: Optional[str]) -> str:
    """Where repair_files writes `path`: its place under `root` moved to `out_dir`, with its
    compression suffix (if any) replaced by `suffix` unless that is None."""
    out = os.path.join(out_dir, os.path.relpath(os.path.abspath(path), root))
    if suffix is None:
        return out
    stem = next((out[:-len(s)] for s in COMPRESSED_SUFFIXES if out.endswith(s)), out)
    return stem + suffix


class _Repair(_Work):
    def __init__(self, root: str, out_dir: str, suffix: Optional[str], errors: RepairErrors, backend: Backend,
                 threads: int, device: Optional[int]) -> None:
        self.root, self.out_dir, self.suffix, self.errors = root, out_dir, suffix, errors
        self.backend, self.threads, self.device = backend, threads, device

    def _output(self, path: str) -> str:
        return _output_path(path, self.root, self.out_dir, self.suffix)

    def replaces_input(self, path: str) -> bool:
        """In place (out_dir is the inputs' directory): the rename replaces the input, so its
        identity changes by design and cannot tell another writer's change."""
        out = self._output(path)
        return os.path.exists(out) and os.path.samefile(path, out)

    def discard(self, path: str) -> None:
        os.unlink(self._output(path))

    def __call__(self, path: str) -> tuple[gutf8.Report, dict]:
        out = self._output(path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        report = gutf8.repair_file(path, out, self.errors, backend=self.backend, threads=self.threads,
                                   device=self.device)
        return report, {"output": out}


def _identity_or_none(path: str) -> Optional[tuple[int, int, int]]:
    try:
        return _identity(path)
    except OSError:
        return None


def _validate_batch_task(paths: list[str], backend: Backend, threads: int, device: Optional[int]) -> list[dict]:
    """One gutf8.validate_files run over a batch of files; one row a file, as _row makes them."""
    start = time.perf_counter()
    before = [_identity_or_none(p) for p in paths]
    try:
        reports = gutf8.validate_files(paths, backend=backend, threads=threads, device=device)
    except Exception as e:  # the whole batch failed (e.g. no GPU): every file says why
        return [{"path": p, "error": f"{type(e).__name__}: {e}", "seconds": time.perf_counter() - start}
                for p in paths]
    seconds = time.perf_counter() - start
    rows = []
    for p, was, r in zip(paths, before, reports):
        row: dict[str, Any] = {"path": p, "seconds": seconds}
        if r.error is not None:
            row["error"] = f"OSError: {p}: {r.error}"
        elif was is None or _identity_or_none(p) != was:
            row["error"] = f"OSError: {p}: the file changed while it was read"
        else:
            row.update(bytes=r.bytes, valid=r.valid, errors=r.errors, offset=r.offset, line=r.line,
                       column=r.column, reason=r.reason)
        rows.append(row)
    return rows


def _batches(paths: list[str]) -> list[list[str]]:
    """Consecutive paths grouped for one task each: small files together, big ones alone."""
    batches: list[list[str]] = []
    current: list[str] = []
    held = 0
    for p in paths:
        try:
            size = os.stat(p).st_size
        except OSError:
            size = 0  # the worker says why
        if current and (size >= BATCH_BYTES or held + size > BATCH_BYTES or len(current) >= BATCH_FILES):
            batches.append(current)
            current, held = [], 0
        current.append(p)
        held += size
    if current:
        batches.append(current)
    return batches


def _repair_task(path: str, root: str, out_dir: str, suffix: Optional[str], errors: RepairErrors, backend: Backend,
                 threads: int, device: Optional[int]) -> dict:
    return _row(path, _Repair(root, out_dir, suffix, errors, backend, threads, device))


def _client(client: Any) -> Any:
    if client is not None:
        return client
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


def _run(task: Callable[..., dict], paths: list[str], client: Any, args: tuple,
         resources: Optional[dict], extra_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    client = _client(client)
    if client is None:
        rows = [task(p, *args) for p in paths]
    else:
        futures = client.map(task, paths, *[[a] * len(paths) for a in args], pure=False,
                             resources=resources)
        rows = [_gather_one(f, p, extra_columns) for f, p in zip(futures, paths)]
    frame = pd.DataFrame(rows, columns=COLUMNS + list(extra_columns))
    return frame.astype({c: _DTYPES[c] for c in frame.columns})


def _run_batches(task: Callable[..., list[dict]], paths: list[str], client: Any, args: tuple,
                 resources: Optional[dict]) -> pd.DataFrame:
    client = _client(client)
    batches = _batches(paths)
    if client is None:
        rows = [row for b in batches for row in task(b, *args)]
    else:
        futures = client.map(task, batches, *[[a] * len(batches) for a in args], pure=False, resources=resources)
        rows = []
        for f, b in zip(futures, batches):
            got = _gather_one(f, b, ())
            rows.extend(got if isinstance(got, list) else [{**got, "path": p} for p in b])
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.astype({c: _DTYPES[c] for c in frame.columns})


def _gather_one(future: Any, path: Any, extra_columns: tuple[str, ...]) -> Any:
    """A task's row, or a row that says why the task failed (e.g. its workers kept dying)."""
    try:
        return future.result()
    except Exception as e:
        row: dict[str, Any] = {"path": path, "error": f"{type(e).__name__}: {e}"}
        row.update({c: None for c in extra_columns})
        return row
    finally:
        future.release()


def validate_files(paths_or_glob: Paths, client: Any = None, *, backend: Backend = "auto", threads: int = 0,
                   device: Optional[int] = None, resources: Optional[dict] = None) -> pd.DataFrame:
    """Validate many files, small ones in batches (see the module's text), big ones a Dask task
    each; a pandas DataFrame with one row per path, in the order of :func:`expand_paths`.
    `backend`/`threads`/`device` are those of :func:`gutf8.validate_files` on each worker
    (threads=0: all of the worker's cores, so with several workers a machine give each its share;
    device=None: every GPU the worker sees, which on a GPU worker of :func:`local_gpu_cluster` is
    its own alone); `resources` is passed to ``client.map`` (e.g. ``{"GPU": 1}``: GPU workers only)."""
    gutf8._choice("backend", backend, gutf8._BACKENDS)  # here, not as one error a file
    gutf8._device(device)
    paths = expand_paths(paths_or_glob)
    return _run_batches(_validate_batch_task, paths, client, (backend, threads, device), resources)


def repair_files(paths_or_glob: Paths, out_dir: Union[str, "os.PathLike[str]"], errors: RepairErrors = "replace",
                 client: Any = None, *, suffix: Optional[str] = None, backend: Backend = "auto", threads: int = 0,
                 device: Optional[int] = None, resources: Optional[dict] = None) -> pd.DataFrame:
    """Repair many files into `out_dir` (U+FFFD per error unit, or dropped with
    ``errors="drop"``), keeping their paths relative to the inputs' common directory; each file
    is written atomically (temporary + rename), so `out_dir` may be the inputs' own directory
    (repair in place). Returns the :func:`validate_files` report of the inputs with an ``output``
    column (None where the file failed).

    Compressed inputs (gzip, zstd, xz, bzip2, lz4: by magic number) are repaired as their text,
    and an output is written in the format its name's suffix says (``.gz``, ``.zst``, ``.xz``,
    ``.bz2``, ``.lz4``; else plain text). `suffix`: None keeps each input's name, so
    ``x.json.gz`` gives ``x.json.gz``; one of those suffixes or ``""`` replaces the input's
    compression suffix (added where it has none): ``suffix=".zst"`` makes ``x.json.gz`` and
    ``x.json`` ``x.json.zst``, ``suffix=""`` makes ``x.json.gz`` plain ``x.json``."""
    gutf8._choice("errors", errors, gutf8._REPAIR)  # here, not as one error a file
    gutf8._choice("backend", backend, gutf8._BACKENDS)
    if suffix is not None:
        gutf8._choice("suffix", suffix, ("",) + COMPRESSED_SUFFIXES)
    gutf8._device(device)
    paths = expand_paths(paths_or_glob)
    absolute = [os.path.abspath(p) for p in paths]
    root = os.path.commonpath([os.path.dirname(p) for p in absolute]) if absolute else os.getcwd()
    out = os.path.abspath(os.fspath(out_dir))
    seen: dict[str, str] = {}
    for p in absolute:  # two inputs repaired into one output would overwrite each other
        target = _output_path(p, root, out, suffix)
        if seen.setdefault(target, p) != p:
            raise ValueError(f"{seen[target]} and {p} would both be repaired into {target}")
    return _run(_repair_task, paths, client, (root, out, suffix, errors, backend, threads, device), resources,
                ("output",))


# --- column operations on dask dataframes ---------------------------------------------------

def _arrow_values(series: pd.Series) -> Any:
    """A column as Arrow: bytes -> binary, str -> utf8, Arrow-backed as is; no rows' type -> binary."""
    import pyarrow as pa

    values = pa.array(series, from_pandas=True)
    return values.cast(pa.binary()) if pa.types.is_null(values.type) else values


def _arrow_series(series: pd.Series, values: Any) -> pd.Series:
    return pd.Series(pd.arrays.ArrowExtensionArray(values), index=series.index, name=series.name)


def _make_valid_partition(frame: pd.DataFrame, columns: list, errors: RepairErrors, threads: int) -> pd.DataFrame:
    import gutf8.columns

    out = frame.copy()
    for c in columns:
        out[c] = _arrow_series(frame[c], gutf8.columns.make_valid(_arrow_values(frame[c]), errors, threads=threads))
    return out


def _is_valid_partition(frame: pd.DataFrame, columns: list, threads: int) -> pd.DataFrame:
    import gutf8.columns

    return pd.DataFrame({c: _arrow_series(frame[c], gutf8.columns.is_valid(_arrow_values(frame[c]), threads=threads))
                         for c in columns}, index=frame.index)


def make_valid(ddf: Any, columns: Iterable[str], errors: RepairErrors = "replace", *, threads: int = 1) -> Any:
    """The dask dataframe with each of `columns` (binary or string) repaired row by row as
    ``bytes.decode('utf-8', 'replace' | 'ignore')`` would, as Arrow-backed string columns (null
    rows stay null). Lazy, one task a partition; `threads`: CPU threads a task (1 suits one
    worker a core)."""
    columns = list(columns)
    meta = _make_valid_partition(ddf._meta, columns, errors, threads)
    return ddf.map_partitions(_make_valid_partition, columns, errors, threads, meta=meta)


def is_valid(ddf: Any, columns: Iterable[str], *, threads: int = 1) -> Any:
    """A dask dataframe of booleans (Arrow-backed, null for null rows): whether each row of each
    of `columns` is well-formed UTF-8."""
    columns = list(columns)
    meta = _is_valid_partition(ddf._meta, columns, threads)
    return ddf.map_partitions(_is_valid_partition, columns, threads, meta=meta)


# --- GPU workers: one worker process a GPU ---------------------------------------------------

def _gpu_names(devices: Optional[Iterable[int]]) -> list[str]:
    """The ``CUDA_VISIBLE_DEVICES`` entry that shows a process GPU `d` alone, for each of
    `devices` (numbered as here; None: every usable GPU)."""
    usable = gutf8.cuda_devices()
    chosen = list(usable if devices is None else devices)
    for d in chosen:
        if d not in usable:
            raise ValueError(f"GPU {d} is not usable here (usable: {usable})")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"a GPU is named twice in {chosen}: each worker owns its own")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:  # CUDA numbers every GPU of the machine
        return [str(d) for d in chosen]
    names = [v.strip() for v in visible.split(",")]  # device d is the d-th entry of the list
    return [names[d] for d in chosen]


def gpu_worker_specs(devices: Optional[Iterable[int]] = None, *, threads: int = 1,
                     **worker_options: Any) -> dict[str, dict]:
    """Worker specifications (``distributed.SpecCluster(workers=...)``) of one worker process
    per GPU of this machine, named ``gpu-`` and its GPU's entry. Each is started with ``CUDA_VISIBLE_DEVICES``
    naming its GPU alone, so gutf8 (and any CUDA library) in it sees that GPU as device 0 and no
    other, and each offers the resource ``GPU=1`` (``resources={"GPU": 1}`` sends work to GPU
    workers alone in a cluster that also has CPU workers). `devices`: the GPUs, numbered as
    :func:`gutf8.cuda_devices` numbers them (None: all of them); `threads`: tasks at a time a
    worker; `worker_options` go to each ``distributed.Nanny`` (e.g. ``memory_limit``, ``env``)."""
    specs = {}
    for name in _gpu_names(devices):
        options = {"nthreads": threads, "resources": {"GPU": 1}, **worker_options}
        options["env"] = {**worker_options.get("env", {}), "CUDA_VISIBLE_DEVICES": name}
        specs[f"gpu-{name}"] = {"cls": "distributed.Nanny", "options": options}
    return specs


def local_gpu_cluster(devices: Optional[Iterable[int]] = None, *, threads_per_worker: int = 1,
                      dashboard_address: Optional[str] = ":8787", **worker_options: Any) -> Any:
    """A ``distributed.SpecCluster`` on this machine with one worker process per GPU (see
    :func:`gpu_worker_specs`), each owning its device, so gutf8.dask's functions with
    ``backend="cuda"`` or ``"auto"`` run on the worker's own GPU::

        with gutf8.dask.local_gpu_cluster() as cluster, distributed.Client(cluster) as client:
            report = gutf8.dask.validate_files("crawl/**/*.txt", client=client, backend="cuda")

    Raises RuntimeError where no GPU is usable. The scheduler and workers listen on 127.0.0.1:
    a cluster of several machines is made of ``dask scheduler`` and ``dask worker`` processes
    (the module's help)."""
    from distributed import SpecCluster

    workers = gpu_worker_specs(devices, threads=threads_per_worker, **{"host": "127.0.0.1", **worker_options})
    if not workers:
        raise RuntimeError("no usable GPU here (gutf8.cuda_devices() is empty): use a LocalCluster of CPU workers")
    scheduler = {"cls": "distributed.Scheduler",
                 "options": {"host": "127.0.0.1", "dashboard": dashboard_address is not None,
                             "dashboard_address": dashboard_address}}
    return SpecCluster(workers=workers, scheduler=scheduler, name="gutf8-gpu")


if __name__ == "__main__":  # python -m gutf8.dask gpus
    import sys

    if sys.argv[1:] != ["gpus"]:
        sys.exit("usage: python -m gutf8.dask gpus   (prints the CUDA_VISIBLE_DEVICES entry of each usable GPU)")
    for entry in _gpu_names(None):
        print(entry)
