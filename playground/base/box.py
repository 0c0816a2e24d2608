"""A box of cells: every index of a tensor between two corners, in row-major order, held as its ranges. A layer
whose output cell reads a whole group (a Normalization's group, a Reduce's axes) declares its window as a Box: it
iterates and counts as the list of cells it stands for, without making millions of tuples, and indexes an array as
one slice (`of`). A leaf module (imports nothing of the playground)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


class Box(Sequence):
    def __init__(self, ranges):
        """`ranges`: per axis a range of step 1 (or a one-element tuple, the index held)."""
        self.lo = tuple(int(r[0]) for r in ranges)
        self.hi = tuple(int(r[-1]) for r in ranges)

    def __len__(self) -> int:
        return math.prod(h - lo + 1 for lo, h in zip(self.lo, self.hi))

    def __iter__(self):
        return itertools.product(*(range(lo, h + 1) for lo, h in zip(self.lo, self.hi)))

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self)
        k = k + n if k < 0 else k
        if not 0 <= k < n:
            raise IndexError(k)
        cell = []
        for lo, h in zip(reversed(self.lo), reversed(self.hi)):
            cell.append(lo + k % (h - lo + 1))
            k //= h - lo + 1
        return tuple(reversed(cell))

    def of(self, a):
        """The box's cells of array `a`, as one view (its axes the box's)."""
        return a[tuple(slice(lo, h + 1) for lo, h in zip(self.lo, self.hi))]

    def __eq__(self, other) -> bool:
        if isinstance(other, Box):
            return (self.lo, self.hi) == (other.lo, other.hi)
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None
