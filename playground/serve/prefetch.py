"""Speculative builds: while the user looks, build the neighbouring values of the parameter moved last (one step
each way), so that sweeping a slider with the arrow keys is answered from the engine cache.

One background thread builds one configuration at a time. It starts a build only once no foreground evaluation
(one a user waits for) has run for QUIET_S, so a busy server (a room of sessions) prefetches nothing, and it runs
at the lowest CPU priority (its own nice value, on Linux), so a foreground build that starts meanwhile gets the
CPU first. Newer requests replace older ones: only the latest slider position matters.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..base.layer import Layer
from ..base.params import same_value

QUIET_S = 0.25  # no foreground evaluation for this long before a speculative build starts


@dataclass(frozen=True)
class Position:
    """A configuration a slider reached, both ways: `raw`, as its request spells it (texts such as '2,1', the
    values given only), and `canonical`, as `Layer.resolve` made it (numbers and tuples: what is stepped)."""

    raw: dict
    canonical: dict


def neighbours(layer: Layer, before: Position, after: Position) -> list[dict]:
    """Raw parameter sets one step either side of the one parameter set differently in `after` than in `before`
    (their raw values), stepped from its canonical values: ints and floats by their step, per-axis ints on the axis
    that moved, enums to the adjacent members. The other raw values stay as given, so values that follow the moved
    one (a kernel sized by the output maps) follow it in the neighbours too. None where nothing or several things
    changed."""
    changed = [n for n in after.raw if n in before.raw and not same_value(before.raw[n], after.raw[n])]
    changed += [n for n in set(before.raw) ^ set(after.raw)]
    if len(changed) != 1 or changed[0] not in layer.param_names:
        return []
    p = layer.param(changed[0])
    return [{**after.raw, p.name: v} for v in p.of.steps(p, before.canonical[p.name], after.canonical[p.name])]


class Prefetcher:
    """The background builder (see the module's doc). `foreground()` wraps every evaluation a user waits for."""

    def __init__(self, evaluate, enabled: bool = True):
        self._evaluate = evaluate  # core.evaluate-like: (layer, raw, x, backend=, cache=, run=False)
        self.enabled = enabled  # PLAYGROUND_PREFETCH=0 turns it off (benchmarks compare both)
        self._pending: deque = deque()  # the latest position's neighbours: two at most
        self._active = 0
        self._busy = False  # a speculative build is running
        self._last_foreground = 0.0  # time.monotonic() when the last foreground evaluation ended
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.built = 0  # speculative evaluations done (tests and benchmarks read these)
        self.failed = 0

    @contextlib.contextmanager
    def foreground(self):
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._last_foreground = time.monotonic()
                self._cond.notify_all()

    def offer(self, layer: str, raws: list[dict], x: np.ndarray, **kwargs) -> None:
        """Queue these configurations (the newest first), dropping what was queued for an older position."""
        if not raws or not self.enabled:
            return
        with self._cond:
            self._pending.clear()
            for raw in raws:
                self._pending.append((layer, raw, x, kwargs))
            self._start()
            self._cond.notify_all()

    def idle(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is queued or building (tests, benchmarks)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self, timeout: float = 120.0) -> None:
        """Drop what is queued and wait for a running build to end. Registered to run at exit: a daemon thread
        stopped inside TensorRT's builder (its logger calling back into a finalizing interpreter) aborts the
        process."""
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def _start(self) -> None:
        if not self._closed and (self._thread is None or not self._thread.is_alive()):
            if self._thread is None:
                atexit.register(self.close)  # once, with the first thread
            self._thread = threading.Thread(target=self._work, name="playground-prefetch", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        with contextlib.suppress(Exception):  # lowest priority for this thread alone (Linux: per-thread nice)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while True:
            with self._cond:
                while True:
                    self._cond.wait_for(lambda: self._closed or (self._pending and self._active == 0))
                    if self._closed:
                        return
                    quiet = time.monotonic() - self._last_foreground
                    if quiet >= QUIET_S:
                        break
                    self._cond.wait(QUIET_S - quiet)  # a foreground evaluation may come (or end) meanwhile
                layer, raw, x, kwargs = self._pending.popleft()
                self._busy = True
            try:
                self._evaluate(layer, raw, x, run=False, **kwargs)
                self.built += 1
            except Exception:  # noqa: BLE001 - an invalid neighbour (or any failure) is simply not prefetched
                self.failed += 1
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
