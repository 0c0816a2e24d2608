"""LRN: the squares of a window of channels, weighted by α/window, to the power β; ONNX's LRN."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate

LAYER = get_layer("lrn")
X = np.float32([1, 2, 3, 4, 5]).reshape(1, 5, 1, 1)


def test_the_window_is_centred_and_cut_at_the_edges_by_hand():
    y = evaluate("lrn", {"window": 3, "alpha": 3.0, "beta": 1.0, "k": 1.0}, X, run=False).output.ravel()
    want = [1 / (1 + 5), 2 / (1 + 14), 3 / (1 + 29), 4 / (1 + 50), 5 / (1 + 41)]  # α/3 = 1: plain sums of squares
    np.testing.assert_allclose(y, want, rtol=1e-6)
    p = LAYER.resolve({"window": 3}, X.shape)
    assert LAYER.reads(p, X.shape, (0, 4, 0, 0)) == [(0, 3, 0, 0), (0, 4, 0, 0)]


def test_an_even_window_is_refused_by_name():
    with pytest.raises(ValidationError) as e:
        evaluate("lrn", {"window": 4}, X, run=False)
    assert e.value.param == "window" and "odd" in e.value.rule


def test_onnx_lrn_opens_with_its_size_alpha_beta_and_bias_and_agrees():
    from onnx_cases import node_model

    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    model = node_model("LRN", (1, 6, 3, 3), size=5, alpha=0.5, beta=0.6, bias=2.0)
    opened = opening.open_node(reading.load_model(model.SerializeToString()))
    assert opened.raw == {"window": 5, "alpha": 0.5, "beta": pytest.approx(0.6), "k": 2.0}
    x = np.random.default_rng(2).standard_normal((1, 6, 3, 3)).astype(np.float32)
    ev = evaluate("lrn", opened.raw, opened.to_layer(x), run=False)
    assert second_opinions(ev, opened)["onnxruntime"]["agrees"] is True
