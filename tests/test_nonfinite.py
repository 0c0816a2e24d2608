"""NaN and ±Inf: data in an input is shown, never an error; in a parameter it is refused by name."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.base.params import Array, Float
from playground.layers import LAYERS, get_layer
from playground.network.core import evaluate
from playground.trt.cache import EngineCache


@pytest.mark.parametrize("name", LAYERS)
def test_nonfinite_input_flows_through_every_layer(name, tmp_path):
    layer = get_layer(name)
    x = layer.example_input(layer.example_shape).copy()
    x.flat[0], x.flat[1], x.flat[2] = np.nan, np.inf, -np.inf
    r = evaluate(name, {}, x, cache=EngineCache(tmp_path))  # pytest.ini turns RuntimeWarnings into errors
    assert r.error is None and r.output.shape == r.reference.shape
    if layer.inputs[0].data:
        assert np.isnan(r.output).any()  # the NaN cell reaches the output (through the kernel for convolution)
    else:  # a condition (Select's): NaN and ±Inf are nonzero, true: the cells of `then`
        assert np.array_equal(r.output.flat[:3], r.inputs[layer.input_names[1]].flat[:3])


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_nonfinite_parameters_are_refused_by_name(name, bad):
    layer = get_layer(name)
    numeric = [p for p in layer.params if isinstance(p.of, (Array, Float))]
    for p in numeric:
        with pytest.raises(ValidationError) as info:
            layer.resolve({p.name: bad}, layer.example_shape)
        assert info.value.param == p.name and "finite" in info.value.rule
