"""Slice: every mode against coordinates worked out by hand and against NumPy's own padding modes, the rules,
the picked cell, and TensorRT building every mode."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect

LAYER = get_layer("slice")
X = np.arange(1, 21, dtype=np.float32).reshape(1, 1, 4, 5)
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


def sliced(raw, x=X):
    return LAYER.reference(x, LAYER.resolve(raw, x.shape))


def test_hand_computed_slices():
    assert sliced({"start": "0,0,1,1", "shape": "1,1,2,3"})[0, 0].tolist() == [[7, 8, 9], [12, 13, 14]]
    assert sliced({"start": "0,0,3,4", "shape": "1,1,2,2", "stride": "1,1,-2,-3"})[0, 0].tolist() == [[20, 17], [10, 7]]
    # the defaults read half of each axis, so that a slider's first step is a valid slice
    assert sliced({})[0, 0].tolist() == X[0, 0, :2, :3].tolist()
    L = get_layer("slice")
    for name in ("start", "shape"):
        for axis in (2, 3):
            for step in (-1, 1) if name == "shape" else (1,):  # start is at 0: below is outside
                value = list(L.defaults(X.shape)[name])
                value[axis] += step
                L.resolve({name: ",".join(map(str, value))}, X.shape)  # raises where refused


@pytest.mark.parametrize("mode, numpy_mode", [("WRAP", "wrap"), ("CLAMP", "edge"), ("REFLECT", "reflect")])
def test_modes_around_the_input_are_numpys_padding_modes(mode, numpy_mode):
    """Two cells around every side: the same as np.pad with the matching mode (fewer than the size, so REFLECT
    does not fold twice)."""
    y = sliced({"start": "0,0,-2,-2", "shape": "1,1,8,9", "mode": mode})
    assert y[0, 0].tolist() == np.pad(X[0, 0], 2, mode=numpy_mode).tolist()


def test_fill_reads_the_fill_value_on_any_axis_outside():
    y = sliced({"start": "0,-1,-1,0", "shape": "1,2,5,5", "mode": "FILL", "fill": 7.5})
    assert (y[0, 0] == 7.5).all()  # channel −1: outside on that axis alone
    assert y[0, 1, 0].tolist() == [7.5] * 5 and y[0, 1, 1:].tolist() == X[0, 0].tolist()


def test_reflect_folds_again_past_twice_the_size():
    y = sliced({"start": "0,0,0,-9", "shape": "1,1,1,19", "mode": "REFLECT"})
    # period 2·(5 − 1) = 8: columns −9 … 9 read 1 0 1 2 3 4 3 2 1 0 1 2 3 4 3 2 1 0 1
    assert y[0, 0, 0].tolist() == [c + 1 for c in (1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1)]


@pytest.mark.parametrize(
    "raw, param, words",
    [
        ({"start": "0,0,0,3", "shape": "1,1,4,5"}, "shape", "axis 3 reads coordinates 3 … 7, outside 0 … 4"),
        ({"start": "0,0,-1,0", "shape": "1,1,2,2"}, "start", "under mode STRICT_BOUNDS"),
        ({"start": "0,0,0"}, "start", "needs one value per dimension of the input (4"),
        ({"mode": "MIRROR"}, "mode", "must be one of STRICT_BOUNDS, WRAP, CLAMP, FILL, REFLECT"),
    ],
)
def test_rules_name_the_parameter(raw, param, words):
    with pytest.raises(ValidationError) as err:
        LAYER.resolve(raw, X.shape)
    assert err.value.param == param and words in str(err.value)


def test_stride_0_repeats_the_start_cell_as_tensorrt_builds_it():
    y = sliced({"start": "0,0,1,2", "shape": "1,1,3,2", "stride": "1,1,0,1"})
    assert y[0, 0].tolist() == [[8, 9]] * 3  # row 1 three times: 6 7 8 9 10, from column 2
    assert LAYER.param("shape").offers(LAYER.resolve({"stride": "1,1,0,1"}, X.shape), X.shape)[2] == 64


def test_default_is_the_legacy_spelling_of_strict_bounds():
    assert LAYER.resolve({"mode": "DEFAULT"}, X.shape)["mode"] == "STRICT_BOUNDS"


def test_the_shape_slider_stops_inside_the_input_under_strict_bounds():
    offers = LAYER.param("shape").offers
    assert offers({"start": (0, 0, 1, 2), "stride": (1, 1, 1, 2), "mode": "STRICT_BOUNDS"}, X.shape) == (1, 1, 3, 2)
    assert offers({"start": (0, 0, 3, 4), "stride": (1, 1, -1, -2), "mode": "STRICT_BOUNDS"}, X.shape) == (1, 1, 4, 3)
    assert offers({"start": (0, 0, 0, 0), "stride": (1, 1, 1, 1), "mode": "WRAP"}, X.shape) is None


def test_the_picked_cell_reads_the_coordinate_and_where_the_mode_takes_it():
    p = LAYER.resolve({"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "REFLECT"}, X.shape)
    y = LAYER.reference(X, p)
    assert LAYER.reads(p, X.shape, (0, 0, 0, 0)) == [(0, 0, -1, -1), (0, 0, 1, 1)]
    assert LAYER.reads(p, X.shape, (0, 0, 1, 1)) == [(0, 0, 0, 0)]
    assert (
        LAYER.cell(X, p, (0, 0, 0, 0), y).line
        == "input(0, 0, -1, -1) is outside; REFLECT reads input(0, 0, 1, 1) = **7**"
    )
    fill = {**p, "mode": "FILL", "fill": -3.0}
    assert (
        LAYER.cell(X, fill, (0, 0, 5, 6), LAYER.reference(X, fill)).line
        == "input(0, 0, 4, 5) is outside: the fill value **-3**"
    )


@needs_trt
@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"start": "0,0,1,1", "shape": "1,1,2,2", "stride": "1,1,1,2"},
        {"start": "0,0,3,4", "stride": "1,1,-1,-1"},
        {"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "WRAP"},
        {"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "CLAMP"},
        {"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "REFLECT"},
        {"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "FILL", "fill": -1},
        {"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "FILL", "fill": 2, "precision": "FP16"},
    ],
    ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "defaults",
)
def test_tensorrt_builds_every_mode_and_agrees_on_the_shape(raw, tmp_path):
    from playground.trt.cache import EngineCache

    r = evaluate("slice", raw, cache=EngineCache(tmp_path))
    assert r.error is None and r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape


@pytest.mark.parametrize(
    "raw",
    [{}, {"stride": "1,1,2,2", "shape": "1,1,2,3"}, {"start": "0,0,-1,-1", "shape": "1,1,6,7", "mode": "FILL"}],
    ids=["default", "stride_2", "fill_around"],
)
def test_the_region_outlined_on_the_input_is_every_cell_the_output_reads(raw):
    """The answer's region (outlined on the input) is the union of the cells each output cell reads from: inside the
    input, FILL's outside reading none."""
    from playground.network.core import evaluate
    from playground.serve import protocol

    L = get_layer("slice")
    x = X if raw else None  # the default on the page's own example
    ev = evaluate("slice", raw, x, build=False)
    region = protocol.read_map(L, ev, None)["region"]
    shape = ev.input.shape
    read = {
        tuple(L.reads(ev.params, shape, i)[-1])
        for i in np.ndindex(*ev.output.shape)
        if all(0 <= v < n for v, n in zip(L.reads(ev.params, shape, i)[-1], shape))
    }
    assert sorted(map(tuple, region)) == sorted(read) and len(region) == len(read)
