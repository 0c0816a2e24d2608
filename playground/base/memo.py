"""The one least-recently-used map of the playground, safe across threads: engines, references, read maps, the
arrays links name and the process's shared objects are each one `Memo`. A leaf module (imports nothing of the
playground), so every layer of it may use one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class Memo:
    """A thread-safe least-recently-used map whose values are made on a miss; `weight` measures a value
    against `limit` (one each by default). The newest entry is always kept, whatever it weighs."""

    def __init__(self, limit: float, weight: Callable[[Any], float] = lambda value: 1):
        self.limit, self.weight, self.total = limit, weight, 0
        self.items: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key, default=None):
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        return default

    def put(self, key, value) -> None:
        with self.lock:
            if key in self.items:
                self.total -= self.weight(self.items.pop(key))
            self.items[key] = value
            self.total += self.weight(value)
            while len(self.items) > 1 and self.total > self.limit:
                self.total -= self.weight(self.items.popitem(last=False)[1])

    def get_or_make(self, key, make: Callable[[], Any]):
        """The value kept for `key`, else `make()` kept (made outside the lock: two threads may both make it; the
        first kept wins)."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        value = make()
        with self.lock:
            if key in self.items:
                return self.items[key]
        self.put(key, value)
        return value

    def values(self) -> list:
        with self.lock:
            return list(self.items.values())

    def find(self, match: Callable[[Any], bool]):
        """The key of the first value `match` accepts, else None."""
        with self.lock:
            return next((k for k, v in self.items.items() if match(v)), None)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.total = 0

    def __len__(self) -> int:
        return len(self.items)
