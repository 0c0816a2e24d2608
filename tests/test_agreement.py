"""ONNX Runtime's agreement with a layer is judged cell by cell as Polygraphy judges (|a − b| ≤ atol + rtol·|b|,
both 1e-5), never by a tolerance the tensor's largest value sets for every cell; a sum's cell may also be within
rtol of its terms' magnitude (a second, named term); a non-finite cell agrees only with the same value."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from playground.base import precision as P  # noqa: E402
from playground.layers import get_layer  # noqa: E402
from playground.model import whole  # noqa: E402
from playground.onnx import reading, runtime


def _exp_model():
    graph = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["y"], name="exp")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return reading.load_model(onnx.shape_inference.infer_shapes(m).SerializeToString())


def _exp_verdict(monkeypatch, off):
    """The Exp node of exp([0, 20, 1]) (a cell of 4.85e8 beside one of 1) with the reference changed by `off`."""
    real = P.emulate
    monkeypatch.setattr(P, "emulate", lambda layer, x, p: off(real(layer, x, p)))
    x = np.float32([[[[0, 20, 1]]]])
    return whole.analyze(_exp_model(), "m.onnx", {"x": x}, engine=False)["nodes"][0]


def test_a_small_cell_is_judged_at_its_own_size(monkeypatch):
    exact = _exp_verdict(monkeypatch, lambda y: y)
    assert exact["agrees"] is True and exact["tolerance"]["atol"] == exact["tolerance"]["rtol"] == 1e-5

    def one_cell_off(y):
        y = y.copy()
        y.flat[0] += 1e-3  # exp(0) = 1 off by 0.001: within 1e-5 of 4.85e8, not of 1
        return y

    bad = _exp_verdict(monkeypatch, one_cell_off)
    assert bad["agrees"] is False and bad["cells_differ"] == 1, bad
    worst = bad["worst"]
    assert worst["index"] == [0, 0, 0, 0] and worst["reference"] == pytest.approx(1.001)
    assert worst["tolerance"] == pytest.approx(1e-5 + 1e-5 * 1.001, rel=1e-6)
    assert worst["abs_diff"] == pytest.approx(1e-3, rel=1e-4)


def test_a_non_finite_cell_agrees_only_with_the_same(monkeypatch):
    y = np.float32([1, np.inf, np.nan, -np.inf])
    assert runtime.compare(y, y.copy())["agrees"] is True  # NaN with NaN, +inf with +inf
    for other in ([1, np.nan, np.nan, -np.inf], [1, np.inf, np.nan, np.inf], [1, np.inf, 0, -np.inf]):
        verdict = runtime.compare(y, np.float32(other))
        assert verdict["agrees"] is False and verdict["cells_differ"] == 1, (other, verdict)
    swapped = runtime.compare(y, np.float32([1, -np.inf, np.nan, -np.inf]))
    assert swapped["worst"]["index"] == [1] and swapped["worst"]["term"] == "non-finite: equal"


def test_a_sums_cell_is_also_judged_by_its_terms_and_named():
    """A SUM that cancels: 1e5 + (−1e5 + 0.01) is 0.01 exactly, float32 gives 0 or 0.0078: within 1e-5 of the
    terms' 2e5 (the second term, named), not of 0.01; a PROD has no such term."""
    layer = get_layer("elementwise")
    a, b = np.float32([[[[1e5]]]]), np.float32([[[[-1e5 + 0.01]]]])
    feed = {"a": a, "b": b}
    exact = np.float32([[[[0.01]]]])
    rounded = a + b  # float32's own sum
    assert abs(float(rounded.flat[0]) - 0.01) > 1e-5 + 1e-5 * 0.01
    summed = runtime.compare(rounded, exact, lambda: runtime.terms(layer, feed, {"operation": "SUM"}))
    assert summed["agrees"] is True and summed["worst"]["term"] == "sums" and "sums" in summed["tolerance"]
    product = runtime.compare(rounded, exact, lambda: runtime.terms(layer, feed, {"operation": "PROD"}))
    assert product["agrees"] is False
