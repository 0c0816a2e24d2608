"""Every spec example (playground.network.presets) through playground.network.core.evaluate: the reference output
matches the spec's table within the preset's tolerance, and TensorRT's inferred output shape
(`Evaluation.report.output_shape`) is the spec's shape. Building needs only TensorRT (no GPU);
on a GPU that TensorRT supports, the `gpu` test compares TensorRT's own output too."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from playground.base.examples import CANCELLING
from playground.cli import parse_sets
from playground.layers import LAYERS, get_layer
from playground.network import presets as P
from playground.network.core import evaluate
from playground.trt.backend import detect
from playground.trt.cache import EngineCache

ALL = P.all_presets()
IDS = [f"{p.layer}-{p.name}" for p in ALL]
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT installed: nothing to build")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fresh engine cache, so every configuration is really built by this TensorRT."""
    return EngineCache(tmp_path_factory.mktemp("engines"))


# --- the catalogue -----------------------------------------------------------------------------

SPEC_LAYERS = ("activation", "prelu", "leaky_relu", "scale", "convolution")  # the layers the spec documents


def test_every_layer_has_examples_from_the_spec_or_derived_by_hand():
    """The spec's five layers have its examples (and no others); every later layer has hand-derived ones."""
    assert set(P.PRESETS) == set(LAYERS)
    for layer, presets in P.PRESETS.items():
        assert presets, layer
        assert all(p.hand_derived != (layer in SPEC_LAYERS) for p in presets), layer


def test_names_are_unique_slugs_and_layers_match():
    for layer, presets in P.PRESETS.items():
        names = [p.name for p in presets]
        assert len(names) == len(set(names)), layer
        for p in presets:
            assert re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", p.name), p.name
            assert p.layer == layer and p.title
            assert p.hand_derived or p.source.split(" § ")[0].endswith(".txt"), p.source


def test_spec_coverage():
    conv = [
        "default",
        "kernel_attributes",
        "stride_nd_2_2",
        "stride_nd_2_1",
        "stride_nd_1_2",
        "padding_nd_1_1",
        "padding_nd_1_0",
        "padding_nd_0_1",
        "pre_padding_1_1",
        "pre_padding_1_0",
        "pre_padding_0_1",
        "post_padding_1_1",
        "post_padding_1_0",
        "post_padding_0_1",
        "padding_mode_same_upper",
        "padding_mode_same_lower",
        "padding_mode_explicit_round_up",
        "padding_mode_explicit_round_down",
        "padding_mode_caffe_round_up",
        "padding_mode_caffe_round_down",
        "dilation_nd_2_2",
        "dilation_nd_2_1",
        "dilation_nd_1_2",
        "num_groups_2",
        "conv_3d",
        "int8",
    ]
    assert {k: [p.name for p in v] for k, v in P.PRESETS.items() if k in SPEC_LAYERS} == {
        "activation": ["relu", "clip"],
        "prelu": ["spec_per_channel"],
        "leaky_relu": ["scale_relu_sum", "activation", "parametric_relu"],
        "scale": ["uniform", "channel", "elementwise", "channel_axis_0", "channel_axis_1"],
        "convolution": conv,
    }


def test_shape_only_presets_are_the_ones_the_spec_prints_no_table_for():
    shape_only = {(p.layer, p.name) for p in ALL if p.expected is None}
    assert shape_only == {
        ("convolution", n)
        for n in (
            "stride_nd_2_1",
            "padding_mode_same_upper",
            "padding_mode_same_lower",
            "dilation_nd_2_1",
            "dilation_nd_1_2",
        )
    }
    for p in ALL:
        if p.expected is None:
            assert not p.printed and "only the output shape" in p.note
        if not p.printed:
            assert p.note, p.name  # where the values come from, if not from a printed table


def test_notes_record_the_spec_errors():
    assert "-1.5." in P.find("prelu", "spec_per_channel").note
    assert "(1,2,7)" in P.find("convolution", "stride_nd_2_1").note
    assert "(1,4,4)" in P.find("convolution", "stride_nd_1_2").note
    assert "(3,3,3)" in P.find("scale", "uniform").note
    assert "EXPLICIT_ROUND_UP" in P.find("convolution", "padding_mode_caffe_round_up").note


def test_presets_are_frozen_and_their_tables_read_only():
    p = P.find("convolution", "default")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.name = "x"
    with pytest.raises(ValueError):
        p.expected[0, 0, 0, 0] = 1
    assert hash(p) == hash(p) and p == p and p != P.find("convolution", "int8")


def test_expected_tables_are_float32_of_the_expected_shape():
    for p in ALL:
        if p.expected is not None:
            assert p.expected.dtype == np.float32 and p.expected.shape == p.expected_shape, p.name


def test_find():
    assert P.find("scale", "channel_axis_0").params["channel_axis"] == 0
    with pytest.raises(KeyError, match="has no preset 'nope'; it has relu, clip"):
        P.find("activation", "nope")
    with pytest.raises(KeyError, match="no presets for layer 'no_such_layer'"):
        P.find("no_such_layer", "default")


@pytest.mark.parametrize("preset", ALL, ids=IDS)
def test_params_are_cli_values_and_round_trip_through_the_cli(preset):
    layer = get_layer(preset.layer)
    for value in preset.params.values():
        assert isinstance(value, (str, int, float, bool, list)), (preset.name, value)
    shape = preset.input_shape
    args = preset.cli_args()
    assert args[::2] == ["--set"] * len(preset.params)
    direct = layer.resolve(preset.params, shape)
    via_cli = layer.resolve(parse_sets(preset.layer, args[1::2]), shape)
    assert direct.keys() == via_cli.keys()
    for k in direct:
        a, b = direct[k], via_cli[k]
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, (preset.name, k, a, b)


def test_inputs():
    ramp = np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3)
    assert np.array_equal(P.input_for(P.find("activation", "relu")), ramp)
    scale_x = np.arange(1, 28, dtype=np.float32).reshape(1, 3, 3, 3)
    assert np.array_equal(P.input_for(P.find("scale", "uniform")), scale_x)
    zeros = P.input_for(P.find("scale", "channel_axis_0"))
    assert zeros.shape == (2, 2, 3, 4) and not zeros.any()
    groups = P.input_for(P.find("convolution", "num_groups_2"))
    assert groups.shape == (1, 2, 6, 9) and np.array_equal(groups[0, 0], groups[0, 1])
    assert groups[0, 0, :3, :3].ravel().tolist() == list(range(1, 10))
    x3 = P.input_for(P.find("convolution", "conv_3d"))
    assert x3.shape == (1, 1, 2, 6, 9) and np.array_equal(x3[0, 0, 0], groups[0, 0])
    fresh = P.input_for(P.find("convolution", "default"))
    fresh[...] = 0  # writable, and a copy
    assert P.input_for(P.find("convolution", "default")).any()
    for p in ALL:
        x = P.input_for(p)
        if isinstance(x, dict):  # a layer of several inputs: the feed dict, one array per declared input
            names = get_layer(p.layer).input_names  # the inputs it reads, in declared order
            assert list(x) == [n for n in names if n in x] and names[0] in x, p.name
            assert {n: a.shape for n, a in x.items()} == p.input_shape and all(
                a.dtype == np.float32 for a in x.values()
            )
        else:
            assert x.dtype == np.float32 and x.shape == p.input_shape
    ew = P.input_for(P.find("elementwise", "sum_row"))
    assert np.array_equal(ew["a"], ramp) and ew["b"].ravel().tolist() == [1, 2, 3]


# --- compare -----------------------------------------------------------------------------------


def test_compare_table():
    p = P.find("convolution", "stride_nd_2_2")
    ok = P.compare(p, p.expected * np.float32(1 + 3e-7))
    assert ok.matches and ok.shape_ok and ok.tolerance == "rtol=1e-06, atol=0" and "within" in ok.message
    off = p.expected.copy()
    off[0, 0, 1, 2] += 1
    bad = P.compare(p, off)
    assert not bad.matches and bad.shape_ok and bad.max_abs_diff == pytest.approx(1, rel=1e-2)
    assert "1 of 8 cells" in bad.message and "(0, 0, 1, 2)" in bad.message


def test_compare_shape_only_and_wrong_shape():
    p = P.find("convolution", "padding_mode_same_upper")
    c = P.compare(p, np.zeros((1, 1, 3, 5), np.float32))
    assert c.matches and c.max_abs_diff is None and "only the shape" in c.message
    c = P.compare(p, np.zeros((1, 1, 2, 4), np.float32))
    assert not c.matches and not c.shape_ok and "(1, 1, 2, 4)" in c.message and "(1, 1, 3, 5)" in c.message
    c = P.compare(P.find("convolution", "default"), np.zeros((1, 1, 4, 6)))
    assert not c.matches and c.max_abs_diff is None


def test_compare_exact_and_nan():
    p = P.find("convolution", "int8")
    assert P.compare(p, p.expected).message.startswith("matches the spec's table exactly")
    assert P.compare(p, p.expected).tolerance == "exact"
    assert not P.compare(p, p.expected + np.float32(1e-3)).matches
    nan = p.expected.copy()
    nan[0, 0, 0, 0] = np.nan
    c = P.compare(p, nan)
    assert not c.matches and c.max_abs_diff == np.inf


# --- every preset, through the playground --------------------------------------------------------


@pytest.mark.parametrize("preset", ALL, ids=IDS)
def test_reference_matches_spec(preset):
    layer = get_layer(preset.layer)
    x = P.input_for(preset)
    out = layer.forward(layer.feed(x), layer.resolve(preset.params, preset.input_shape))
    c = P.compare(preset, out)
    assert c.matches, c.message
    if preset.expected is not None and preset.tolerance.rtol:
        # Tighter than the tolerance: each float cell is within 1 float32 ulp of the reference, so no
        # digit typo hides under rtol=1e-6 (the spec prints TensorRT's float32 sums, ±1 ulp of the exact one).
        ulps = np.abs(out.view(np.int32).astype(np.int64) - preset.expected.view(np.int32).astype(np.int64))
        assert ulps.max() <= 1 or preset.tolerance is CANCELLING, (preset.name, ulps.max())


@needs_trt
@pytest.mark.parametrize("preset", ALL, ids=IDS)
def test_evaluate_builds_and_tensorrt_infers_the_spec_shape(preset, cache):
    r = evaluate(preset.layer, preset.params, P.input_for(preset), cache=cache, run=False)
    assert r.error is None and r.engine_status in ("built", "cached"), r.error
    assert tuple(r.report.output_shape) == preset.expected_shape
    assert r.reference.shape == preset.expected_shape
    c = P.compare(preset, r.reference)
    assert c.matches, c.message


@pytest.mark.gpu
@pytest.mark.parametrize("preset", ALL, ids=IDS)
def test_tensorrt_output_on_gpu_matches_spec(preset, cache):
    if not detect().can_run:
        pytest.skip(detect().why_not_run)
    r = evaluate(preset.layer, preset.params, P.input_for(preset), cache=cache)
    assert r.output_source == "tensorrt", r.messages
    c = P.compare(preset, r.output)
    assert c.matches, c.message
