"""Files the server keeps (engines, timing caches, blobs): written whole or not at all, evicted oldest first.

A leaf module: the engine cache and the blob store both use it, and a parameter's `@w:` reference reaches the blob
store, so nothing here may import the rest of the playground."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

CACHE_DIR = Path(__file__).resolve().parents[2] / "engine_cache"  # where no PLAYGROUND_ENGINE_CACHE says otherwise


def cache_dir() -> Path:
    return Path(os.environ.get("PLAYGROUND_ENGINE_CACHE") or CACHE_DIR)


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temporary file and a rename, so readers never see half a file; OSError on failure,
    with no temporary file left behind."""
    tmp = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as tmp:
            tmp.write(data)
        os.replace(tmp.name, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp.name)
        raise


def evict_oldest(files: list[Path], cap_bytes: int, keep: Path | None = None) -> list[Path]:
    """Unlink the least recently used of `files` (oldest mtime first; `keep` never) until they hold at most
    `cap_bytes`; the ones removed. Unlinking, not truncating: a process reading one (another replica) reads on."""
    sized = []
    for p in sorted(files, key=lambda p: p.stat().st_mtime):
        with contextlib.suppress(OSError):
            sized.append((p, p.stat().st_size))
    total, removed = sum(s for _, s in sized), []
    for p, size in sized:
        if total <= cap_bytes:
            break
        if p != keep:
            with contextlib.suppress(OSError):
                p.unlink()
                total -= size
                removed.append(p)
    return removed
