"""A large tensor's emulation and error figures, worked a slice at a time over a pool of threads
(playground.base.chunks), are the same bits as the plain whole-tensor arithmetic written out here."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from playground.base import chunks
from playground.base import precision as P
from playground.layers import get_layer
from playground.network import core
from playground.serve import protocol

SHAPE = (1, 5, 512, 512)  # 1.3 M values: above chunks.THRESHOLD, so the slices go to the pool where there is one


@pytest.fixture(autouse=True, params=[2, 4], ids=["2 cores", "4 cores"])
def cores(request, monkeypatch):
    """Each test on a 2-CPU machine (no pool: every slice in the caller's thread) and on a 4-core one (a pool of 3)."""
    monkeypatch.setattr(chunks, "cores", lambda: request.param)
    return request.param


def plain_errors(y, truth, precision: str) -> dict:
    """precision.errors as one pass over the whole tensors in float64 (the arithmetic it had before slices)."""
    y, t = np.asarray(y, np.float64), np.asarray(truth, np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(y - t)
    odd = np.isnan(diff)
    if odd.any():
        agree = (y[odd] == t[odd]) | (np.isnan(y[odd]) & np.isnan(t[odd]))
        diff[odd] = np.where(agree, 0.0, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.divide(diff, np.abs(t), out=np.zeros_like(diff), where=t != 0)
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float(np.fmax.reduce(rel, axis=None)) if rel.size else 0.0
    max_rel = 0.0 if np.isnan(max_rel) else max_rel
    exact = diff == 0
    least = float(np.min(diff, where=~exact, initial=np.inf))
    floor = float(np.log10(least)) - 1 if 0 < least < np.inf else -8.0
    with np.errstate(divide="ignore"):
        log_error = np.log10(diff, out=np.empty(diff.shape, np.float32))
    log_error[exact] = floor
    out = {
        "max_abs_error": max_abs,
        "max_rel_error": max_rel,
        "exact_cells": int(exact.sum()),
        "error": diff.astype(np.float32),
        "log_error": log_error,
        "exact_at": floor,
    }
    if precision == "INT8":
        out["error_units"] = max_abs / P.output_step(t)
    elif precision in P.EPSILON:
        out["error_units"] = max_rel / P.EPSILON[precision]
    return out


def same(got: dict, want: dict) -> None:
    for k, v in want.items():
        if isinstance(v, np.ndarray):  # the same bits: −0 and 0, and every NaN, where they were
            assert got[k].dtype == v.dtype and got[k].shape == v.shape and got[k].tobytes() == v.tobytes(), k
        else:
            assert type(got[k]) is type(v) and (got[k] == v or (v != v and got[k] != got[k])), (k, got[k], v)


def hostile(rng) -> np.ndarray:
    """A truth of every magnitude float64 holds, with zeros, infinities and NaN scattered through it."""
    t = rng.standard_normal(SHAPE) * 10.0 ** rng.integers(-320, 300, SHAPE)
    for value, count in ((0.0, 5000), (-0.0, 500), (np.inf, 300), (-np.inf, 300), (np.nan, 300)):
        t.flat[rng.integers(0, t.size, count)] = value
    return t


@pytest.mark.parametrize("precision", ["FP16", "BF16", "INT8", "FP16 − BF16"])
def test_error_figures_of_a_large_tensor_are_the_plain_arithmetics_bits(precision):
    rng = np.random.default_rng(7)
    t = hostile(rng)
    with np.errstate(over="ignore"):
        y = P.round_to(t.astype(np.float32), "BF16" if precision == "BF16" else "FP16")
        truth = t if " − " not in precision else P.round_to(t.astype(np.float32), "BF16")  # compare mode: 2 outputs
    y.flat[rng.integers(0, y.size, 300)] = np.nan
    y.flat[rng.integers(0, y.size, 300)] = -np.inf
    with np.errstate(over="ignore"):  # INT8's step: the truth's float32 amax overflows here
        got, want = P.errors(y, truth, precision, 1.0), plain_errors(y, truth, precision)
    assert got["exact_cells"] > 0 and got["max_abs_error"] == np.inf  # the rare cells' rule ran
    same(got, want)


def test_error_figures_where_every_cell_is_exact_or_the_tensor_is_empty():
    for y, t in ((np.ones(SHAPE, np.float32), np.ones(SHAPE)), (np.zeros((0, 3), np.float32), np.zeros((0, 3)))):
        got = P.errors(y, t, "FP16", 1.0)
        assert got["exact_at"] == -8.0 and got["max_abs_error"] == 0.0
        same(got, plain_errors(y, t, "FP16"))


@pytest.mark.parametrize("precision", ["FP16", "BF16"])
def test_rounding_a_large_tensor_is_the_plain_casts_bits(precision):
    x = hostile(np.random.default_rng(3))
    with np.errstate(over="ignore"):
        x = x.astype(np.float32)
        want = x.astype(P.numpy_type(precision)).astype(np.float32)
    assert P.round_to(x, precision).tobytes() == want.tobytes()


@pytest.mark.parametrize("layer", ["activation", "prelu", "softmax"])
def test_a_heavy_configurations_answer_is_the_plain_arithmetics(layer):
    """The error map a large FP16 configuration's answer carries, and its stats, against the error worked out the
    plain way from the same output and truth; the output against the layer run on the plainly rounded input."""
    x = np.random.default_rng(11).uniform(-4, 4, SHAPE).astype(np.float32)
    ev = core.evaluate(layer, {"precision": "FP16"}, x, build=False)
    spec = get_layer(layer)
    rounded = {
        p.name: P._rounded(ev.params[p.name], "FP16") if p.is_weight(ev.params) else ev.params[p.name]
        for p in spec.params
    }
    with np.errstate(all="ignore"):
        want = spec.reference(x.astype(np.float16).astype(np.float32), rounded)
        want = np.asarray(want, np.float32).astype(np.float16).astype(np.float32)
    assert ev.output.tobytes() == want.tobytes()
    same(ev.precision_error, plain_errors(ev.output, ev.truth, "FP16"))
    out = protocol.answer(spec, ev, held=None)
    error = next(f for f in out["figures"] if f["which"] == "error")["tensor"]
    log_error = plain_errors(ev.output, ev.truth, "FP16")["log_error"]
    assert error["stats"] == protocol.stats(log_error)
    assert error["id"] == protocol.tensor_id(log_error)


def test_the_pool_is_used_only_above_the_threshold_beside_a_core_left_free_and_keeps_the_callers_errstate(cores):
    seen = []

    def work(s):
        seen.append((s, threading.current_thread().name))
        return np.geterr()["over"]

    with np.errstate(over="raise"):
        small = chunks.each(chunks.THRESHOLD, work)
        large = chunks.each(chunks.THRESHOLD + 1, work)
    assert len(small) == chunks.THRESHOLD // chunks.SLICE and set(small) == {"raise"}
    assert len(large) == len(small) + 1 and set(large) == {"raise"}  # the pool's threads had the caller's rule
    parts, names = zip(*seen[len(small) :])
    assert sorted(s.start for s in parts) == list(range(0, chunks.THRESHOLD + 1, chunks.SLICE))
    here = threading.current_thread().name
    assert {n for _, n in seen[: len(small)]} == {here}  # small: in the caller's thread
    if cores == 2:  # one core is the room's: no pool
        assert set(names) == {here}
    else:
        assert all(n.startswith("chunks") for n in names)


def test_work_made_beside_runs_on_the_pool_with_the_callers_context_and_small_work_when_asked(cores):
    from playground.base import reference as ref

    def where():
        return threading.current_thread().name, ref.result_type()

    with ref.exact():
        large = chunks.beside(where, chunks.THRESHOLD + 1)
        small = chunks.beside(where, chunks.THRESHOLD)
    here = (threading.current_thread().name, np.float32)  # made when asked, outside exact()
    assert small() == here
    if cores == 2:  # no pool: the large one too
        assert large() == here
    else:
        name, kind = large()
        assert kind is np.float64 and name.startswith("chunks")
