"""Shuffle: the three steps against NumPy's transpose/reshape and tables worked out by hand, the placeholders,
the rules, the element trail, and TensorRT building a spread of shuffles."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect

LAYER = get_layer("shuffle")
X = np.arange(1, 25, dtype=np.float32).reshape(1, 2, 3, 4)
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


def shuffled(raw, x=X):
    return LAYER.reference(x, LAYER.resolve(raw, x.shape))


def test_hand_computed_shuffles():
    assert shuffled({"first_transpose": "0,1,3,2"})[0, 0].tolist() == [[1, 5, 9], [2, 6, 10], [3, 7, 11], [4, 8, 12]]
    assert shuffled({"first_transpose": "0,2,3,1"})[0, 0, :2].tolist() == [[1, 13], [2, 14]]
    assert shuffled({"reshape_dims": "0,-1,2", "second_transpose": "0,2,1"})[0].tolist() == [
        list(range(1, 25, 2)),
        list(range(2, 25, 2)),
    ]


@pytest.mark.parametrize(
    "first, dims, second",
    [((0, 3, 1, 2), (2, -1, 4), (2, 0, 1)), ((3, 2, 1, 0), None, (1, 0, 3, 2)), ((1, 0, 2, 3), (0, 0, 12), (0, 1, 2))],
)
def test_the_three_steps_are_numpys(first, dims, second):
    raw = {"first_transpose": first, "second_transpose": second}
    y = np.transpose(X, first)
    if dims is not None:
        raw["reshape_dims"] = dims
        y = y.reshape([y.shape[i] if d == 0 else d for i, d in enumerate(dims)])
    assert np.array_equal(shuffled(raw), np.transpose(y, second))


def test_zero_is_placeholder_and_minus_one():
    p = LAYER.resolve({"reshape_dims": "0,6,-1"}, X.shape)
    assert shuffled({"reshape_dims": "0,6,-1"}).shape == (1, 6, 4) and p["second_transpose"] == (0, 1, 2)
    y = shuffled({"first_transpose": "1,0,2,3", "reshape_dims": "0,0,-1"})  # 0 copies the transposed axes
    assert y.shape == (2, 1, 12)


@pytest.mark.parametrize(
    "raw, param, words",
    [
        ({"first_transpose": "0,1,1,2"}, "first_transpose", "must be a permutation of 0 … 3"),
        ({"reshape_dims": "0,5,-1"}, "reshape_dims", "resolves to (1, 5, 4) = 20 values; the input holds 24"),
        ({"reshape_dims": "0,6,-1", "zero_is_placeholder": False}, "reshape_dims", "zero_is_placeholder is false"),
        ({"reshape_dims": "-1,-1"}, "reshape_dims", "at most one −1"),
        ({"reshape_dims": "24"}, "reshape_dims", "needs 2 to 5 values"),
        ({"reshape_dims": "0,0,-1", "second_transpose": "0,2,2"}, "second_transpose", "must be a permutation of 0 … 2"),
    ],
)
def test_rules_name_the_parameter(raw, param, words):
    with pytest.raises(ValidationError) as err:
        LAYER.resolve(raw, X.shape)
    assert err.value.param == param and words in str(err.value)


def test_the_trail_names_where_each_element_came_from():
    p = LAYER.resolve({"first_transpose": "0,2,3,1"}, X.shape)
    y = LAYER.reference(X, p)
    for index in np.ndindex(*y.shape):
        (at,) = LAYER.reads(p, X.shape, index)
        assert X[at] == y[index]
    assert LAYER.cell(X, p, (0, 1, 2, 1), y).line == "input(0, 1, 1, 2) = **19**"


@needs_trt
@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"first_transpose": "0,2,3,1"},
        {"reshape_dims": "0,-1"},
        {"reshape_dims": "0,-1,2", "second_transpose": "0,2,1"},
        {"first_transpose": "3,2,1,0", "reshape_dims": "2,2,3,2", "second_transpose": "1,0,3,2"},
        {"reshape_dims": "1,2,3,2,2", "precision": "FP16"},
    ],
    ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "defaults",
)
def test_tensorrt_builds_and_agrees_on_the_shape(raw, tmp_path):
    from playground.trt.cache import EngineCache

    r = evaluate("shuffle", raw, cache=EngineCache(tmp_path))
    assert r.error is None and r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape
