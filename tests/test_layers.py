"""Layer declarations: defaults, every validation rule, and real TensorRT builds on this machine."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import LAYERS, get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect

needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")


@pytest.mark.parametrize("name", LAYERS)
def test_defaults_resolve_and_every_param_is_declared(name):
    layer = get_layer(name)
    params = layer.defaults()
    assert list(params) == list(layer.param_names)
    for p in layer.params:
        assert p.help and p.kind, p.name


@pytest.mark.parametrize(
    "layer, raw, shape, param",
    [
        ("activation", {"type": "SWISH"}, (1, 1, 3, 3), "type"),
        ("activation", {"alpha": "abc"}, (1, 1, 3, 3), "alpha"),
        ("activation", {"alpha": "nan"}, (1, 1, 3, 3), "alpha"),
        ("activation", {"beta": 1e9}, (1, 1, 3, 3), "beta"),
        ("activation", {"gamma": 1}, (1, 1, 3, 3), "gamma"),
        ("activation", {}, (1, 3, 3), "input"),
        ("activation", {}, (1, 0, 3, 3), "input"),
        ("prelu", {"slopes": "1,2"}, (1, 3, 3, 3), "slopes"),
        ("prelu", {"granularity": "element", "slopes": "1,2,3"}, (1, 3, 3, 3), "slopes"),
        ("prelu", {"slopes": "inf"}, (1, 3, 3, 3), "slopes"),
        ("prelu", {"slopes": "no_such_preset"}, (1, 3, 3, 3), "slopes"),
        ("leaky_relu", {"construction": "magic"}, (1, 1, 3, 3), "construction"),
        ("leaky_relu", {"alpha": 5}, (1, 1, 3, 3), "alpha"),
        ("scale", {"mode": "CHANNEL", "shift": "1,2"}, (1, 3, 3, 3), "shift"),
        ("scale", {"mode": "ELEMENTWISE", "scale": "1,2,3"}, (1, 3, 3, 3), "scale"),
        ("scale", {"mode": "CHANNEL", "channel_axis": 4}, (1, 3, 3, 3), "channel_axis"),
        ("scale", {"channel_axis": -1}, (1, 3, 3, 3), "channel_axis"),
        ("convolution", {"num_groups": 2}, (1, 1, 6, 9), "num_groups"),
        ("convolution", {"num_groups": 2, "num_output_maps": 3}, (1, 2, 6, 9), "num_groups"),
        ("convolution", {"num_output_maps": 0}, (1, 1, 6, 9), "num_output_maps"),
        ("convolution", {"kernel_size_nd": "7,3"}, (1, 1, 6, 9), "kernel_size_nd"),
        ("convolution", {"kernel_size_nd": "0,3"}, (1, 1, 6, 9), "kernel_size_nd"),
        ("convolution", {"kernel_size_nd": "3,3,3"}, (1, 1, 6, 9), "kernel_size_nd"),
        ("convolution", {"dilation_nd": "3,1"}, (1, 1, 6, 9), "dilation_nd"),
        ("convolution", {"stride_nd": "0,1"}, (1, 1, 6, 9), "stride_nd"),
        ("convolution", {"padding_nd": "-1"}, (1, 1, 6, 9), "padding_nd"),
        ("convolution", {"stride_nd": "1.5"}, (1, 1, 6, 9), "stride_nd"),
        ("convolution", {"kernel": "1,2,3"}, (1, 1, 6, 9), "kernel"),
        ("convolution", {"bias": "1,2"}, (1, 1, 6, 9), "bias"),
        ("convolution", {"padding_mode": "VALID"}, (1, 1, 6, 9), "padding_mode"),
        ("convolution", {"int8": "maybe"}, (1, 1, 6, 9), "int8"),
        ("convolution", {"int8": True, "quantize_scale": -1}, (1, 1, 6, 9), "quantize_scale"),
        ("activation", {"precision": "FP64"}, (1, 1, 3, 3), "precision"),
    ],
)
def test_validation_names_the_parameter(layer, raw, shape, param):
    with pytest.raises(ValidationError) as info:
        get_layer(layer).resolve(raw, shape)
    assert info.value.param == param
    assert str(info.value).startswith(f"{layer}.{param}: ")
    assert info.value.rule


def test_per_axis_values_broadcast_and_aliases_resolve():
    p = get_layer("convolution").resolve({"stride_nd": "2", "padding_mode": "caffe_round_up"}, (1, 1, 6, 9))
    assert p["stride_nd"] == (2, 2) and p["padding_mode"] == "EXPLICIT_ROUND_UP"
    p3 = get_layer("convolution").resolve({}, (1, 1, 2, 6, 9))
    assert p3["kernel_size_nd"] == (2, 3, 3) and p3["kernel"].shape == (1, 1, 2, 3, 3)


def test_activation_defaults_follow_the_type():
    layer = get_layer("activation")
    assert layer.resolve({"type": "HARD_SIGMOID"}, (1, 1, 3, 3))["alpha"] == pytest.approx(0.2)
    selu = layer.resolve({"type": "SELU"}, (1, 1, 3, 3))
    assert (selu["alpha"], selu["beta"]) == (pytest.approx(1.6732632), pytest.approx(1.050701))
    assert layer.unused(layer.resolve({"type": "RELU"}, (1, 1, 3, 3))) == ["alpha", "beta", "quantize_scale"]
    assert layer.unused(layer.resolve({"type": "CLIP"}, (1, 1, 3, 3))) == ["quantize_scale"]


def test_prelu_slope_granularities_broadcast():
    layer = get_layer("prelu")
    shapes = {
        g: layer.resolve({"granularity": g, "slopes": "0.5"}, (2, 3, 4, 5))["slopes"].shape
        for g in ("tensor", "channel", "element")
    }
    assert shapes == {"tensor": (1, 1, 1, 1), "channel": (1, 3, 1, 1), "element": (1, 3, 4, 5)}


def test_scale_nan_is_an_output_not_an_error():
    r = evaluate("scale", {"power": 0.5})
    assert np.isnan(r.output).sum() == 13  # x·0.5 − 7 < 0 for x = 1 … 13; x = 14 gives 0
    assert any("NaN" in m for m in r.messages)


# -- real builds (TensorRT-RTX builds without a GPU) ---------------------------------------------
SPREAD = (
    [("activation", {"type": t}, None) for t in get_layer("activation").param("type").choices]
    + [("prelu", {"granularity": g, "slopes": "ramp"}, None) for g in ("tensor", "channel", "element")]
    + [
        ("leaky_relu", {"construction": c, "alpha": 0.2}, None)
        for c in ("activation", "parametric_relu", "scale_relu_sum")
    ]
    + [
        ("scale", {"mode": "UNIFORM", "power": 2}, None),
        ("scale", {"mode": "CHANNEL", "shift": "-2.5,-7,-11.5"}, None),
        ("scale", {"mode": "ELEMENTWISE", "scale": "0.5"}, None),
        ("scale", {"mode": "CHANNEL", "channel_axis": 0, "shift": "2,3"}, (2, 2, 3, 4)),
        ("scale", {"mode": "CHANNEL", "channel_axis": 2}, (1, 2, 3, 4)),
        ("convolution", {}, None),
        ("convolution", {"stride_nd": "2,1"}, None),
        ("convolution", {"padding_nd": "1,0"}, None),
        ("convolution", {"pre_padding": "0,1", "post_padding": "1,0"}, None),
        ("convolution", {"padding_mode": "SAME_LOWER", "stride_nd": 2}, None),
        ("convolution", {"padding_mode": "EXPLICIT_ROUND_UP", "stride_nd": 2}, None),
        ("convolution", {"dilation_nd": "2,2"}, None),
        ("convolution", {"num_groups": 2, "num_output_maps": 2}, (1, 2, 6, 9)),
        ("convolution", {"num_output_maps": 4, "kernel": "random", "bias": "1,2,3,4"}, (2, 3, 8, 8)),
        ("convolution", {}, (1, 1, 2, 6, 9)),
        ("convolution", {"stride_nd": "1,2,2", "padding_mode": "SAME_UPPER"}, (1, 2, 4, 6, 9)),
        ("convolution", {"int8": True}, None),
        ("convolution", {"int8": True, "quantize_scale": 100, "num_output_maps": 2, "kernel": "random"}, (1, 2, 6, 9)),
    ]
)


@needs_trt
@pytest.mark.parametrize(
    "layer, raw, shape",
    SPREAD,
    ids=lambda v: str(v) if not isinstance(v, dict) else ",".join(f"{k}={v[k]}" for k in v) or "defaults",
)
def test_tensorrt_builds_and_agrees_on_the_output_shape(layer, raw, shape, tmp_path):
    from playground.trt.cache import EngineCache

    x = None if shape is None else np.random.default_rng(0).uniform(-4, 4, shape).astype(np.float32)
    r = evaluate(layer, raw, x, cache=EngineCache(tmp_path))
    assert r.error is None, r.error
    assert r.engine_status == "built" and r.report.bytes > 1000
    assert tuple(r.report.output_shape) == r.reference.shape
    assert r.report.layers and all(layer["type"] for layer in r.report.layers)
    assert r.output_source == ("tensorrt" if r.backend.can_run else "reference")


@needs_trt
def test_tensorrt_refusal_is_reported_with_its_message(tmp_path, monkeypatch):
    # A network TensorRT rejects although our validation passed: report TensorRT's own words.
    from playground.layers import convolution
    from playground.trt.cache import EngineCache

    def bad_build(trt, network, x, p):
        return network.add_convolution_nd(x, 1, (3, 3), np.ones(5, np.float32)).get_output(0)

    layer = get_layer("convolution")
    monkeypatch.setitem(LAYERS, "convolution", type(layer)(**{**vars(layer), "build": bad_build}))
    r = evaluate("convolution", {}, cache=EngineCache(tmp_path))
    assert r.engine_status == "refused" and f"{r.backend.name} {r.backend.version} refused the network" in r.error
    assert r.output_source == "reference" and r.engine_summary()["refusal"] == r.error
    assert convolution.LAYER is layer


@needs_trt
def test_builds_of_different_configurations_run_side_by_side_each_with_its_own_log(monkeypatch):
    """The builder pool: concurrent builds each get a builder of their own (no more than the pool's size)
    and report their own layers and log, as the same builds in turn do."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from playground.trt import engine

    backend, layer, shape = detect(), get_layer("leaky_relu"), (1, 1, 3, 3)
    monkeypatch.setattr(engine, "_builders_for", lambda trt, pool=engine._BuilderPool(backend.trt, 2): pool)
    made, busy, most = [], [0], [0]
    guard, real = threading.Lock(), engine._new_builder

    def counted(trt):
        made.append(real(trt))
        return made[-1]

    calls, overlap = [0], threading.Barrier(2, timeout=30)

    def counting_network(trt, builder, *args):
        with guard:
            calls[0] += 1
            first_two = calls[0] <= 2
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        if first_two:  # the first two builds meet, so the pool must make a second builder
            overlap.wait()
        try:
            return real_network(trt, builder, *args)
        finally:
            with guard:
                busy[0] -= 1

    real_network = engine.network_from
    monkeypatch.setattr(engine, "_new_builder", counted)
    monkeypatch.setattr(engine, "network_from", counting_network)
    configs = [
        layer.resolve({"alpha": 0.1 + i / 100, "construction": c}, shape)
        for i, c in enumerate(["activation", "parametric_relu", "scale_relu_sum"] * 2)
    ]
    with ThreadPoolExecutor(6) as pool:
        side_by_side = list(pool.map(lambda p: engine.build_engine(backend, layer, p, shape), configs))
    in_turn = [engine.build_engine(backend, layer, p, shape) for p in configs]
    assert len(made) == 2 and most[0] <= 2
    for a, b in zip(side_by_side, in_turn):
        assert a.status == b.status == "built"
        assert [(l["type"], l["inputs"], l["outputs"]) for l in a.layers] == [
            (l["type"], l["inputs"], l["outputs"]) for l in b.layers
        ]


def test_a_builder_that_cannot_be_made_frees_its_place_in_the_pool(monkeypatch):
    from playground.trt import engine

    def broken(trt):  # full TensorRT on a machine without a GPU it can use
        raise TypeError("pybind11::init(): factory function returned nullptr")

    monkeypatch.setattr(engine, "_new_builder", broken)
    pool = engine._BuilderPool(None, 1)
    for _ in range(2):  # the second would wait forever if the first had kept the only place
        with pytest.raises(TypeError, match="nullptr"):
            with pool.builder():
                pass
    assert pool.made == 0 and pool.free == []


def test_a_builder_that_cannot_be_made_is_a_failed_build_that_says_why(monkeypatch):
    from playground.trt import engine

    backend, layer = detect(), get_layer("activation")
    monkeypatch.setattr(engine, "_builders_for", lambda trt, pool=engine._BuilderPool(backend.trt, 1): pool)
    monkeypatch.setattr(engine, "_new_builder", lambda trt: (_ for _ in ()).throw(TypeError("returned nullptr")))
    report = engine.build_engine(backend, layer, layer.resolve({}, layer.example_shape), layer.example_shape)
    assert report.status == "failed" and report.engine is None
    assert report.error == f"{backend.name} {backend.version} could not make a builder here: returned nullptr"
