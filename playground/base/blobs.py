"""What a link names by hash and the server keeps: uploaded ONNX models, and weights too large for a URL.

A link to a node of an uploaded model is `/LAYER?onnx=DIGEST&node=NAME`; a weight array of more than
`URL_VALUES` values travels as `@w:DIGEST` (the URL, the stage's requests). The files are content-addressed
(the digest is the SHA-256 of the bytes, checked on every read), written atomically, and bounded:
`PLAYGROUND_BLOB_MB` (default 512) for the directory, least recently used first out. The directory is
`PLAYGROUND_BLOBS`, else `blobs/` in the engine cache's directory: processes that share one share these too.
A link whose file is gone (evicted, another server) says so; nothing else is lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import threading
from pathlib import Path

import numpy as np

from .budget import env_number
from .errors import PlaygroundError
from .files import atomic_write, cache_dir, evict_oldest
from .memo import Memo

URL_VALUES = 256  # an array of more values (a model's weights) goes into links by reference: its text would pass
# protocol.MAX_TEXT (4096 characters: 256 float32 values of up to 15 characters each fit)
WEIGHTS = "@w:"
DIGEST = re.compile(r"^[0-9a-f]{64}$")
DEFAULT_CAP_MB = 512


class Missing(PlaygroundError):
    """A digest this server does not hold (never stored here, evicted, or its file damaged)."""


class BlobStore:
    def __init__(self, path: str | os.PathLike | None = None, cap_bytes: int | None = None):
        root = path or os.environ.get("PLAYGROUND_BLOBS") or cache_dir() / "blobs"  # beside the engines
        self.path = Path(root)
        self.cap_bytes = (
            cap_bytes
            if cap_bytes is not None
            else int(env_number("PLAYGROUND_BLOB_MB", DEFAULT_CAP_MB, 1, 2**20, float) * 2**20)
        )
        self._memory: dict[str, bytes] = {}  # where the directory cannot be written
        self._guard = threading.Lock()

    def put(self, data: bytes, suffix: str) -> str:
        digest = hashlib.sha256(data).hexdigest()
        f = self.path / f"{digest}{suffix}"
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            if f.exists():
                os.utime(f)  # mtime is the LRU clock
            else:
                atomic_write(f, data)
                evict_oldest(
                    [p for p in self.path.iterdir() if p.is_file() and not p.name.startswith(".")],
                    self.cap_bytes,
                    keep=f,
                )
        except OSError:
            with self._guard:
                self._memory[digest + suffix] = data
        return digest

    def get(self, digest: str, suffix: str, limit: int) -> bytes:
        if not DIGEST.match(digest or ""):
            raise Missing("is not a content digest (64 hexadecimal digits)")
        with self._guard:
            if digest + suffix in self._memory:
                return self._memory[digest + suffix]
        f = self.path / f"{digest}{suffix}"
        try:
            with open(f, "rb") as handle:
                data = handle.read(limit + 1)
            os.utime(f)
        except OSError:
            raise Missing("is not held by this server (it may have been evicted): open the model again") from None
        if len(data) > limit or hashlib.sha256(data).hexdigest() != digest:
            with contextlib.suppress(OSError):
                f.unlink()
            raise Missing("is damaged on this server: open the model again")
        return data


_store: BlobStore | None = None


def store() -> BlobStore:
    global _store
    if _store is None:
        _store = BlobStore()
    return _store


# The arrays links named lately, read-only, by their reference: a page's every change names its model's weights
# again, and is answered without reading, checking and hashing their megabytes each time.
HELD_BYTES = 256 << 20
_held = Memo(HELD_BYTES, weight=lambda a: a.nbytes)


def weights_ref(a: np.ndarray) -> str:
    """`@w:DIGEST` for the array `a`, kept by the store (a .npy file, never a pickle)."""
    # the array a link named, or a view of it with its layout: the same bytes (held alive and read-only here, so
    # its memory is not another array's, nor written)
    ref = _held.find(
        lambda held: (
            a.ctypes.data == held.ctypes.data
            and (a.shape, a.strides, a.dtype) == (held.shape, held.strides, held.dtype)
        )
    )
    if ref is not None:
        return ref
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(a, np.float32), allow_pickle=False)
    return WEIGHTS + store().put(buffer.getvalue(), ".npy")


def weights(ref: str, limit_values: int) -> np.ndarray:
    """The array `@w:DIGEST` names, read-only; Missing where this server does not hold it."""
    held = _held.get(ref)
    if held is not None:
        return held
    data = store().get(ref[len(WEIGHTS) :], ".npy", limit_values * 4 + 4096)
    try:  # a file another process sharing the store left (a pickle, an object array) is refused, never unpickled
        a = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError):
        a = None
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "biuf":
        raise Missing("is not a plain numeric array (.npy of numbers) on this server: open the model again")
    a.setflags(write=False)  # shared by every request that names it
    _held.put(ref, a)
    return a
