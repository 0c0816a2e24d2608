"""Elementwise passes over a large tensor, a slice at a time: each slice's temporaries stay in the CPU's cache
instead of a float64 copy of a 32 MiB tensor per step, and above THRESHOLD values the slices are shared by a
small pool of threads, one per core but one (NumPy's ufuncs release the GIL; the core left is the server's other
requests': on a 2-CPU server there is no pool, as one participant's largest work leaves the other core to the room,
see budget.py). A leaf: NumPy and the standard library.

Only passes whose every value depends on its own cell alone are cut so (a cast, a difference, a logarithm), and
reductions only where their order cannot change the result (max, min, counts): the answer is the same bits as
one pass over the whole tensor."""

from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

SLICE = 1 << 15  # values per slice: a few float64 temporaries of it fit a core's L2 cache
THRESHOLD = 1 << 20  # below, one thread (a pool's hand-offs cost more than the slices save)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def cores() -> int:
    """The cores this process may run on (its affinity where the system says it, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def workers() -> int:
    """The pool's threads: one per core but one, left to the server's other requests (fewer than 2: no pool)."""
    return cores() - 1


def _pooled(size: int) -> bool:
    """Whether work over `size` values goes to the pool: large, a pool of 2 threads or more, and not asked for by
    work already on it (the pool's threads never wait for each other)."""
    return size > THRESHOLD and workers() >= 2 and not threading.current_thread().name.startswith("chunks")


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="chunks")
        return _pool


def each(n: int, work) -> list:
    """work(slice) for consecutive slices of range(n), their results in order; in the shared pool where n is above
    THRESHOLD and there is one (`_pooled`)."""
    parts = [slice(i, min(i + SLICE, n)) for i in range(0, n, SLICE)]
    if not _pooled(n):
        return [work(s) for s in parts]
    state = np.geterr()  # the caller's errstate: a thread does not inherit it

    def guarded(s):
        with np.errstate(**state):
            return work(s)

    return list(_shared_pool().map(guarded, parts))


def beside(make, size: int):
    """A function that returns make(): started now on the shared pool where `size` (values) is above THRESHOLD
    and there is one (`_pooled`), so that the caller's own work runs beside it; else made when asked for."""
    if not _pooled(size):
        return make
    return _shared_pool().submit(contextvars.copy_context().run, make).result


def flat(a: np.ndarray) -> np.ndarray:
    """A tensor's values as one C-ordered row (a view where it already is one)."""
    return np.ascontiguousarray(a).reshape(-1)


def apply(a, fn, dtype) -> np.ndarray:
    """fn(a) for an elementwise `fn` whose result has `dtype`, a slice at a time (a C-ordered new array)."""
    a = np.asarray(a)
    if a.size <= THRESHOLD:
        return np.asarray(fn(a), dtype)
    src, out = flat(a), np.empty(a.shape, dtype)  # the array itself, not a view of one: core.digest knows it
    dst = out.reshape(-1)

    def work(s):
        dst[s] = fn(src[s])

    each(a.size, work)
    return out
