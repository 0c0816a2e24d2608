"""Content-addressed engine cache: engine bytes and their build report, on disk and in memory.

Files are written atomically (temporary file + rename) and checked on read (magic, length and
SHA-256), so a truncated or corrupted file is rebuilt, never trusted. One build per key at a
time, across threads (a lock per key) and processes (flock). The directory is capped in bytes,
least recently used first out. A directory that cannot be written degrades to memory only.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import struct
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ..base.budget import env_number
from ..base.files import atomic_write, cache_dir, evict_oldest
from .engine import BuildReport, BuildSettings

# Part of every key: 2 since networks are created STRONGLY_TYPED, 3 since every network (a layer's too) is keyed by
# its description and names its layers by key (older engines are not reused).
FORMAT = 3
MAGIC = b"TRTPG-ENGINE\n"
SUFFIX = ".engine"
DEFAULT_CAP_MB = 256
MEMORY_ENTRIES = 128  # hot entries kept decoded in memory, so a revisit reads no file


def cache_key(description: dict, backend, settings: BuildSettings) -> str:
    """The engine's key: what it is made of (`Network.describe()`, or an ONNX model's hash), the TensorRT that
    builds it, the GPU's compute capability and the builder's settings."""
    gpu = backend.gpu.compute_capability if backend.gpu else None
    blob = json.dumps(
        {
            "format": FORMAT,
            "network": description,
            "backend": [backend.name, backend.version],
            "compute_capability": gpu,
            "settings": vars(settings),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def encode(report: BuildReport) -> bytes:
    payload = report.engine or b""
    meta = json.dumps({**report.meta(), "sha256": hashlib.sha256(payload).hexdigest(), "length": len(payload)}).encode()
    return MAGIC + struct.pack("<I", len(meta)) + meta + payload


def _tensor_ok(t) -> bool:
    return (
        isinstance(t, dict)
        and isinstance(t.get("name"), str)
        and isinstance(t.get("format"), str)
        and isinstance(t.get("shape"), list)
        and all(type(d) is int for d in t["shape"])
    )


def _layer_ok(layer) -> bool:
    return (
        isinstance(layer, dict)
        and all(isinstance(layer.get(k), str) for k in ("name", "type", "tactic"))
        and all(isinstance(layer.get(k), list) and all(map(_tensor_ok, layer[k])) for k in ("inputs", "outputs"))
    )


# The metadata a cache file must hold, each field with the test its value must pass: a file is trusted
# whole or not at all (a field missing or of another type means a rebuild, never an error on the page).
_META = {
    "status": lambda v: v == "built",
    "build_ms": lambda v: type(v) in (int, float) and v >= 0,
    "output_shape": lambda v: v is None or (isinstance(v, list) and all(type(d) is int for d in v)),
    "layers": lambda v: isinstance(v, list) and all(map(_layer_ok, v)),
    "log": lambda v: (
        isinstance(v, list)
        and all(isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r) for r in v)
    ),
    "error": lambda v: v is None or isinstance(v, str),
    "length": lambda v: type(v) is int and v >= 0,
    "sha256": lambda v: isinstance(v, str),
}


def decode(blob: bytes) -> BuildReport:
    """The report in `blob`, or ValueError saying what is wrong with it."""
    if not blob.startswith(MAGIC):
        raise ValueError("not an engine cache file (bad header)")
    start = len(MAGIC) + 4
    if len(blob) < start:
        raise ValueError("truncated header")
    (n,) = struct.unpack("<I", blob[len(MAGIC) : start])
    if start + n > len(blob):
        raise ValueError("truncated metadata")
    try:
        meta = json.loads(blob[start : start + n])
    except ValueError:
        raise ValueError("unreadable metadata") from None
    if not isinstance(meta, dict):
        raise ValueError("metadata is not a record")
    bad = [k for k, ok in _META.items() if k not in meta or not ok(meta[k])]
    if bad:
        raise ValueError(f"metadata field {bad[0]} is missing or malformed")
    payload = blob[start + n :]
    if len(payload) != meta["length"] or hashlib.sha256(payload).hexdigest() != meta["sha256"]:
        raise ValueError("engine bytes truncated or corrupted (length or SHA-256 mismatch)")
    fields = {k: meta[k] for k in ("status", "build_ms", "output_shape", "layers", "log", "error")}
    return BuildReport(**fields, engine=payload or None)


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of `path` if it is a regular file of at most `limit` bytes; OSError or ValueError otherwise.
    Never follows a link (to /dev/zero, say) and never blocks on a fifo."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        data = f.read(limit + 1)  # bounded even if the file grows meanwhile
        if max(info.st_size, len(data)) > limit:
            raise ValueError(f"more than the {limit:,} bytes an engine file may take")
        return data


class EngineCache:
    def __init__(self, path: str | os.PathLike | None = None, cap_bytes: int | None = None):
        path = path or cache_dir()
        self.cap_bytes = (
            cap_bytes
            if cap_bytes is not None
            else int(env_number("PLAYGROUND_ENGINE_CACHE_MB", DEFAULT_CAP_MB, 1, 2**20, float) * 2**20)
        )
        self.warnings: list[str] = []
        self.path: Path | None = Path(path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.path, prefix=".probe-"):
                pass
        except OSError as exc:
            self.warnings.append(
                f"engine cache {path} is not usable ({exc.strerror or exc}); engines are kept in memory only"
            )
            self.path = None
        self._memory: OrderedDict[str, BuildReport] = OrderedDict()
        self._guard = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self.builds = 0  # builds this cache ran (tests and benchmarks read it)

    # -- lookup -------------------------------------------------------------------------------
    def file(self, key: str) -> Path | None:
        return self.path / f"{key}{SUFFIX}" if self.path else None

    def get(self, key: str, notes: list[str] | None = None) -> BuildReport | None:
        with self._guard:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        f = self.file(key)
        if f is None or not os.path.lexists(f):
            return None
        try:
            report = decode(read_regular_file(f, self.cap_bytes))  # a larger file was never written here
            os.utime(f)  # mtime is the LRU clock
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            (notes if notes is not None else self.warnings).append(
                f"engine cache file {f.name} was unreadable ({why}); rebuilt it"
            )
            with contextlib.suppress(OSError):
                f.unlink()
            return None
        self._remember(key, report)
        return report

    def put(self, key: str, report: BuildReport, notes: list[str] | None = None) -> None:
        self._remember(key, report)
        f = self.file(key)
        if f is None or report.status != "built":
            return  # failures are cheap to redo and stay in memory only
        blob = encode(report)
        if len(blob) > self.cap_bytes:  # a whole model's engine (VGG-19's: 550 MB) beyond the directory's cap
            (notes if notes is not None else self.warnings).append(
                f"the engine takes {len(blob) / 2**20:,.0f} MiB, more than the engine cache's cap of "
                f"{self.cap_bytes / 2**20:,.0f} MiB (PLAYGROUND_ENGINE_CACHE_MB): kept in memory only"
            )
            return
        try:
            atomic_write(f, blob)
        except OSError as exc:
            (notes if notes is not None else self.warnings).append(
                f"could not write {f.name} to the engine cache ({exc.strerror or exc}); kept in memory"
            )
            return
        self.evict()

    def get_or_build(self, key: str, build: Callable[[], BuildReport]) -> tuple[BuildReport, str, list[str]]:
        """(report, "cached" | "built", notes); concurrent callers of one key build it once."""
        notes: list[str] = []
        report = self.get(key, notes)
        if report is not None:
            return report, "cached", notes
        with self._guard:
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock, self._file_lock(key):
            report = self.get(key, notes)  # another thread or process may have built it meanwhile
            if report is not None:
                return report, "cached", notes
            report = build()
            self.builds += 1
            self.put(key, report, notes)
        return report, "built", notes

    # -- housekeeping --------------------------------------------------------------------------
    def _remember(self, key: str, report: BuildReport) -> None:
        with self._guard:
            self._memory[key] = report
            self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_ENTRIES or (
                self.path is None
                and sum(r.bytes for r in self._memory.values()) > self.cap_bytes
                and len(self._memory) > 1
            ):
                self._memory.popitem(last=False)

    @contextlib.contextmanager
    def _file_lock(self, key: str):
        if self.path is None:
            yield
            return
        try:
            handle = open(self.path / f".{key}.lock", "w")
        except OSError:
            yield
            return
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                with contextlib.suppress(OSError):
                    os.unlink(handle.name)

    def entries(self) -> list[Path]:
        return sorted(self.path.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime) if self.path else []

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.entries())

    def evict(self) -> None:
        """Delete least recently used files until the directory is under its cap."""
        entries = self.entries()
        for p in evict_oldest(
            entries, self.cap_bytes, keep=entries[-1] if entries else None
        ):  # the newest: just asked for
            with self._guard:
                self._memory.pop(p.stem, None)


# -- records beside the engines: a whole model's analysis and ONNX Runtime's tensors, per model digest --------------
RECORD_MAGIC = b"TRTPG-RECORD\n"
RECORDS = "models"  # the subdirectory of the engine cache's directory they are kept in
DEFAULT_RECORDS_MB = 1024
MAX_HEADER_BYTES = 16 << 20  # a record's index (a tensor's name, offset, type, shape and digest each)


class Records:
    """Checked records in the engine cache's store (its `models/` directory, or `PLAYGROUND_MODEL_CACHE`), capped by
    `PLAYGROUND_MODEL_CACHE_MB`
    (default 1024), least recently used first out. A record is a header (a JSON object) and a payload of parts,
    each part's offset, length and SHA-256 in the header: a part is read alone (one tensor of a model's run) and
    checked on reading, so a truncated or corrupted file is refused, deleted and made again, never trusted. Written
    atomically; a directory that cannot be written keeps nothing (the work is done again)."""

    def __init__(self, path: str | os.PathLike | None = None, cap_bytes: int | None = None):
        self.path = Path(path or os.environ.get("PLAYGROUND_MODEL_CACHE") or cache_dir() / RECORDS)
        self.cap_bytes = (
            cap_bytes
            if cap_bytes is not None
            else int(env_number("PLAYGROUND_MODEL_CACHE_MB", DEFAULT_RECORDS_MB, 1, 2**20, float) * 2**20)
        )
        self.warnings: list[str] = []

    def file(self, key: str, suffix: str) -> Path:
        return self.path / f"{key}{suffix}"

    def put(self, key: str, suffix: str, header: dict, parts: dict[str, bytes | memoryview]) -> bool:
        """Keep `parts` (name → bytes) under `key` with `header`; False (and a warning) where it cannot be written
        or is larger than the whole cap."""
        with self.writer(key, suffix) as w:
            for name, data in parts.items():
                w.add(name, data)
            return w.finish(header)

    def writer(self, key: str, suffix: str) -> RecordWriter:
        """A record kept under `key` written part by part (`RecordWriter`): no part need stay in memory."""
        return RecordWriter(self, key, suffix)

    def _evict(self, keep: Path) -> None:
        evict_oldest(
            [p for p in self.path.iterdir() if p.is_file() and not p.name.startswith(".")], self.cap_bytes, keep=keep
        )

    def open(self, key: str, suffix: str, notes: list[str] | None = None) -> Record | None:
        """The record kept under `key`, its header read and checked (its parts are read on demand), or None where
        there is none or it is unreadable (then it is deleted, and `notes` says so)."""
        f = self.file(key, suffix)
        if not os.path.lexists(f):
            return None
        try:
            fd = os.open(f, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
            handle = os.fdopen(fd, "rb")
        except OSError as exc:
            return self._unreadable(f, exc.strerror or exc, notes)
        try:
            size = os.fstat(fd).st_size
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError("not a regular file")
            start = len(RECORD_MAGIC) + 4
            head = handle.read(start)
            if len(head) < start or not head.startswith(RECORD_MAGIC):
                raise ValueError("not a cache record (bad header)")
            (n,) = struct.unpack("<I", head[len(RECORD_MAGIC) :])
            if n > min(MAX_HEADER_BYTES, size - start):
                raise ValueError("truncated header")
            meta = json.loads(handle.read(n))
            parts = meta.get("parts") if isinstance(meta, dict) else None
            ok = isinstance(parts, dict) and all(
                isinstance(v, list)
                and len(v) == 3
                and type(v[0]) is int
                and type(v[1]) is int
                and v[0] >= 0
                and v[1] >= 0
                and isinstance(v[2], str)
                for v in parts.values()
            )
            if not ok or not isinstance(meta.get("header"), dict):
                raise ValueError("header malformed")
            if sum(v[1] for v in parts.values()) != size - start - n:
                raise ValueError("truncated or extended (the parts do not fill the file)")
        except (OSError, ValueError) as exc:
            handle.close()
            return self._unreadable(f, exc.strerror if isinstance(exc, OSError) and exc.strerror else exc, notes)
        with contextlib.suppress(OSError):
            os.utime(f)  # mtime is the LRU clock
        return Record(self, f, handle, start + n, meta["header"], parts, notes)

    def _unreadable(self, f: Path, why, notes: list[str] | None) -> None:
        (notes if notes is not None else self.warnings).append(f"cache file {f.name} was unreadable ({why}); redone")
        with contextlib.suppress(OSError):
            f.unlink()
        return None


def _append(source, target, n: int) -> None:
    """The `n` bytes of `source` appended to `target`: by the kernel where it copies between files
    (`os.copy_file_range`), else through a buffer."""
    source.flush()
    target.flush()
    done = 0
    with contextlib.suppress(AttributeError, OSError):  # no such call here, or not between these files
        while done < n:
            step = os.copy_file_range(source.fileno(), target.fileno(), n - done, done)
            if step <= 0:
                break
            done += step
    if done < n:
        source.seek(done)
        target.seek(0, os.SEEK_END)
        shutil.copyfileobj(source, target, 1 << 20)


class RecordWriter:
    """A record written as its parts come (`add`): each appended to a temporary payload file, its SHA-256 taken as
    it is written; `finish` writes the header, then the payload, to a second temporary file and renames it to the
    record at once (a reader sees the whole record or none). A record past the store's cap, or a directory that
    cannot be written, keeps nothing (`finish` is False). Use it in a `with`: left unfinished, its files go."""

    def __init__(self, store: Records, key: str, suffix: str):
        self.store, self.file = store, store.file(key, suffix)
        self.index: dict[str, list] = {}
        self.size, self._payload, self._failed = 0, None, None

    def add(self, name: str, data: bytes | memoryview) -> None:
        n = memoryview(data).nbytes
        if self._failed or name in self.index:
            return
        if self.size + n > self.store.cap_bytes:
            self._fail(None)
            return
        try:
            if self._payload is None:
                self.store.path.mkdir(parents=True, exist_ok=True)
                self._payload = tempfile.NamedTemporaryFile(dir=self.store.path, prefix=".tmp-", delete=False)
            self._payload.write(data)
        except OSError as exc:
            self._fail(exc)
            return
        self.index[name] = [self.size, n, hashlib.sha256(data).hexdigest()]
        self.size += n

    def finish(self, header: dict) -> bool:
        """Write the record (`header` and the parts added); False (and a warning where it could not be written)
        where nothing is kept."""
        if self._failed:
            self.discard()
            return False
        head = json.dumps({"header": header, "parts": self.index}).encode()
        tmp = None
        try:
            self.store.path.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.store.path, prefix=".tmp-", delete=False) as tmp:
                tmp.write(RECORD_MAGIC + struct.pack("<I", len(head)) + head)
                if self._payload is not None:
                    _append(self._payload, tmp, self.size)
            os.replace(tmp.name, self.file)
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp.name)
            self._fail(exc)
            self.discard()
            return False
        self.discard()
        self.store._evict(self.file)
        return True

    def _fail(self, exc: OSError | None) -> None:
        self._failed = True
        if exc is not None:
            self.store.warnings.append(f"could not keep {self.file.name} in the cache ({exc.strerror or exc})")
        self.discard()

    def discard(self) -> None:
        """The payload written so far removed (the record, if `finish` wrote it, stays)."""
        if self._payload is not None:
            self._payload.close()
            with contextlib.suppress(OSError):
                os.unlink(self._payload.name)
            self._payload = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.discard()


class Record:
    """An open record: its `header`, and each part read alone and checked (`part`); close it when done."""

    def __init__(self, store: Records, file: Path, handle, base: int, header: dict, parts: dict, notes):
        self.store, self.file, self._handle, self._base = store, file, handle, base
        self.header, self.parts, self._notes = header, parts, notes

    def part(self, name: str) -> bytes:
        """The part's bytes, checked against its SHA-256; KeyError where there is none, ValueError (the file
        deleted, so the work is done again) where they do not match."""
        offset, length, sha = self.parts[name]
        self._handle.seek(self._base + offset)
        data = self._handle.read(length)
        if len(data) != length or hashlib.sha256(data).hexdigest() != sha:
            self.close()
            self.store._unreadable(self.file, f"part {name!r} truncated or corrupted", self._notes)
            raise ValueError(f"cache file {self.file.name}: part {name!r} is corrupted")
        return data

    def close(self) -> None:
        self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
