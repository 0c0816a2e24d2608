"""Speculative builds of the moved slider's neighbours: which configurations, and that they fill the cache."""

from __future__ import annotations

import threading

import numpy as np

from playground.layers import get_layer
from playground.network import core
from playground.serve.prefetch import Position, Prefetcher
from playground.serve.prefetch import neighbours as _neighbours
from playground.trt.cache import EngineCache


def neighbours(layer, before, after):
    """Raw values as the CLI and tests give them: canonical already."""
    return _neighbours(layer, Position(before, before), Position(after, after))


def test_neighbours_of_the_one_parameter_that_moved():
    conv = get_layer("convolution")
    got = neighbours(conv, {"stride_nd": (1, 1), "num_output_maps": 1}, {"stride_nd": (2, 1), "num_output_maps": 1})
    assert [g["stride_nd"] for g in got] == [(3, 1), (1, 1)]
    got = neighbours(conv, {"padding_mode": "EXPLICIT_ROUND_DOWN"}, {"padding_mode": "EXPLICIT_ROUND_UP"})
    assert [g["padding_mode"] for g in got] == ["SAME_UPPER", "EXPLICIT_ROUND_DOWN"]
    got = neighbours(conv, {"num_output_maps": 64}, {"num_output_maps": 63})
    assert [g["num_output_maps"] for g in got] == [64, 62]
    got = neighbours(conv, {"num_output_maps": 1}, {"num_output_maps": 64})
    assert [g["num_output_maps"] for g in got] == [63]  # 65 is past the slider (the budget bounds a model's)
    assert (
        neighbours(conv, {"num_output_maps": 1, "stride_nd": (1, 1)}, {"num_output_maps": 2, "stride_nd": (2, 1)}) == []
    )  # two moved: nothing to guess
    leaky = get_layer("leaky_relu")
    got = neighbours(leaky, {"alpha": 0.1}, {"alpha": 0.11})
    assert np.allclose([g["alpha"] for g in got], [0.12, 0.10])


def test_prefetched_neighbours_are_cache_hits(tmp_path):
    cache = EngineCache(tmp_path)
    pre = Prefetcher(core.evaluate)
    x = get_layer("convolution").example_input((1, 1, 6, 9))
    pre.offer("convolution", [{"stride_nd": (2, 1)}, {"stride_nd": (1, 2)}], x, cache=cache)
    assert pre.idle(60)
    assert pre.built == 2
    for raw in ({"stride_nd": (2, 1)}, {"stride_nd": (1, 2)}):
        ev = core.evaluate("convolution", raw, x, cache=cache)
        assert ev.engine_status in ("cached", "not_built"), ev.engine_status  # not_built: no TensorRT here


def test_no_speculative_build_starts_while_a_foreground_evaluation_runs(tmp_path):
    started = threading.Event()
    pre = Prefetcher(lambda *a, **k: started.set())
    x = np.zeros((1, 1, 3, 3), np.float32)
    with pre.foreground():
        pre.offer("activation", [{"type": "TANH"}], x)
        assert not started.wait(0.5), "a speculative build started during a foreground evaluation"
    assert started.wait(5), "the speculative build did not start once the foreground was done"


def test_a_busy_server_prefetches_nothing():
    """Foreground evaluations closer together than QUIET_S (a room of sessions) leave no gap to build in."""
    import time

    from playground.serve.prefetch import QUIET_S

    started = threading.Event()
    pre = Prefetcher(lambda *a, **k: started.set())
    x = np.zeros((1, 1, 3, 3), np.float32)
    with pre.foreground():  # the server offers neighbours right after the evaluation a user waited for; every gap
        left = time.monotonic()  # is timed from inside an evaluation, before the prefetcher's own clock starts
    pre.offer("activation", [{"type": "TANH"}], x)
    deadline, widest = time.monotonic() + 4 * QUIET_S, 0.0
    while time.monotonic() < deadline:
        widest = max(widest, time.monotonic() - left)
        with pre.foreground():
            time.sleep(0.01)
            left = time.monotonic()
        time.sleep(QUIET_S / 5)
        widest = max(widest, time.monotonic() - left)  # a loaded machine may oversleep into a real gap
        assert not started.is_set() or widest >= QUIET_S, (
            "a speculative build started between close foreground evaluations"
        )
    assert started.wait(5)


def test_an_invalid_neighbour_is_skipped(tmp_path):
    pre = Prefetcher(core.evaluate)
    x = get_layer("convolution").example_input((1, 1, 6, 9))
    pre.offer("convolution", [{"num_groups": 2}], x, cache=EngineCache(tmp_path))  # 2 does not divide C = 1
    assert pre.idle(30) and pre.failed == 1 and pre.built == 0


def test_close_waits_for_the_running_build_and_drops_the_rest():
    """At exit the worker must not be inside a build: TensorRT's logger calling into a finalizing interpreter
    from a daemon thread aborts the process."""
    import time

    from playground.serve.prefetch import QUIET_S

    started, done = threading.Event(), []

    def slow(layer, raw, x, **kwargs):
        started.set()
        time.sleep(0.5)
        done.append(raw)

    pre = Prefetcher(slow)
    x = np.zeros((1, 1, 3, 3), np.float32)
    pre.offer("activation", [{"type": "TANH"}, {"type": "RELU"}], x)
    assert started.wait(QUIET_S + 5)
    pre.close()
    assert done == [{"type": "TANH"}] and not pre._thread.is_alive()  # the second was dropped, the first finished
    pre.offer("activation", [{"type": "ELU"}], x)  # closed: nothing more starts
    assert not pre._thread.is_alive() and done == [{"type": "TANH"}]
