"""core's memo of reference outputs: a revisit is not recomputed, and nothing shared can be changed."""

import numpy as np
import pytest

from playground.layers import get_layer
from playground.network import core


class Counting:
    """A layer whose reference calls are counted."""

    def __init__(self, name="convolution"):
        self.layer, self.name, self.calls = get_layer(name), name, 0

    def reference(self, x, params):
        self.calls += 1
        return self.layer.reference(x, params)


def conv(raw=None, shape=(1, 1, 6, 9)):
    layer = get_layer("convolution")
    x = layer.example_input(shape)
    return x, layer.resolve(raw or {}, x.shape)


def test_a_revisit_returns_the_same_output_without_recomputing():
    refs, layer = core._References(), Counting()
    x, p = conv()
    first = refs.get(layer, p, x)
    assert refs.get(layer, p, x.copy()) is first and layer.calls == 1  # equal values, another array: a hit
    np.testing.assert_array_equal(first, get_layer("convolution").reference(x, p))
    x2, p2 = conv({"stride_nd": "2,2"})
    assert refs.get(layer, p2, x2).shape == (1, 1, 2, 4) and layer.calls == 2
    y = x.copy()
    y[0, 0, 0, 0] += 1  # one input value differs: recomputed
    assert not np.array_equal(refs.get(layer, p, y), first) and layer.calls == 3


def test_shared_outputs_are_read_only_and_the_input_stays_writable():
    refs = core._References()
    x, p = conv()
    out = refs.get(Counting(), p, x)
    with pytest.raises(ValueError):
        out[0, 0, 0, 0] = 0
    xa = get_layer("activation").example_input((1, 1, 3, 3))
    same = refs.get(type("Identity", (), {"name": "identity", "reference": staticmethod(lambda x, p: x)})(), {}, xa)
    xa[0, 0, 0, 0] = 5  # a reference that returned its input did not lock the caller's array
    assert same[0, 0, 0, 0] != 5


def test_the_memo_keeps_within_its_byte_budget():
    x, p = conv()
    one = get_layer("convolution").reference(x, p).nbytes
    refs, layer = core._References(max_bytes=2 * one), Counting()
    configs = [conv({"bias": str(b)})[1] for b in range(4)]  # outputs of one size, different values
    for q in configs:
        refs.get(layer, q, x)
    assert len(refs.items) == 2 and layer.calls == 4
    refs.get(layer, configs[-1], x)  # the newest is kept
    assert layer.calls == 4
    refs.get(layer, configs[0], x)  # the oldest was dropped
    assert layer.calls == 5


def test_a_digest_is_remembered_only_for_memory_nothing_can_write():
    a = np.arange(6, dtype=np.float32)
    before = core.digest(a)
    a[0] = 9  # writable: hashed afresh
    assert core.digest(a) != before
    view = a[:]
    view.setflags(write=False)  # a read-only view of memory that can still be written
    before = core.digest(view)
    a[1] = 7
    assert core.digest(view) != before
    a.setflags(write=False)
    assert core.digest(a) is core.digest(a)  # the same bytes object: remembered, not hashed again
