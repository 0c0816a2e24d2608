"""What every session of the process shares: the backend, the engine cache and the speculative builder, made
once (`shared`), and the objects alive at startup set out of the garbage collector's sight
(`freeze_startup_objects`). The pages and the stage's route both use them; no Streamlit here."""

from __future__ import annotations

import functools
import gc
import hashlib
import os

import numpy as np

from ..base.memo import Memo
from ..trt.backend import Backend, detect
from ..trt.cache import EngineCache


def shared(maxsize: int | None = None):
    """A cache of the process, for what every session shares (the engine cache, the backend, the prefetcher).

    Not st.cache_resource: any client can ask Streamlit to clear those ("Clear cache", which a client sends
    even with the menu hidden), and one participant would drop what the whole room uses. Arguments are
    keyed by value, arrays by dtype, shape and bytes; the least recently used of `maxsize` entries goes."""

    def decorate(fn):
        memo = Memo(maxsize if maxsize is not None else float("inf"))

        def part(v):
            if isinstance(v, np.ndarray):
                return (
                    v.dtype.str,
                    v.shape,
                    hashlib.blake2b(np.ascontiguousarray(v).tobytes(), digest_size=16).digest(),
                )
            return repr(v)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            key = (tuple(map(part, args)), tuple((k, part(v)) for k, v in sorted(kwargs.items())))
            return memo.get_or_make(key, lambda: fn(*args, **kwargs))

        cached.clear = memo.clear  # for tests that point the process at another engine directory
        return cached

    return decorate


@shared()
def backend() -> Backend:
    return detect()


@shared()
def engine_cache() -> EngineCache:
    # One per process: its in-memory entries are what make a revisited configuration instant.
    return EngineCache()


@shared()
def prefetcher():
    """One per process: it builds into the shared engine cache, for every session."""
    from ..network.core import evaluate
    from .prefetch import Prefetcher

    return Prefetcher(evaluate, enabled=os.environ.get("PLAYGROUND_PREFETCH", "1").strip() != "0")


@shared()
def freeze_startup_objects() -> int:
    """Once per server, after its first page: move every object alive (TensorRT, NumPy, pandas, Plotly and
    their modules) out of the garbage collector's sight (gc.freeze). Python's own full collections then
    walk only what the app made since: about 25 ms each instead of 120 (bench/RESULTS.md)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
