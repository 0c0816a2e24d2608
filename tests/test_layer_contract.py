"""The contract every layer in the registry keeps, present and future, with no copy of its own.

- Its reference ends in the result type (float32, float64 within reference.exact()), or a precision's error
  would silently read 0; a finite input gives a finite output except where the layer's own rule says
  (`Layer.undefined`) or float32 overflows.
- On a seeded fuzz of valid configurations drawn from its declaration (tests/layer_fuzz.py), TensorRT-RTX's
  builder agrees on the output shape; every configuration the builder refuses is one the layer declares
  (`Layer.limits`, said before the build and reported as a refusal).
- Every refusal by its own rules is one TensorRT's builder makes too, unless the rule says why it is stricter
  (`errors.Stricter`).
- Every input it declares is fed, shaped and built on its own (a layer of several inputs draws each input's shape).
- It has examples, and for every float parameter they set, one example whose output would change were the value
  mirrored across its range (an example at blend 0.5 alone cannot tell the blend from its reverse).
"""

import numpy as np
import pytest
from layer_fuzz import build_unchecked, configurations, refusals_to_build

from playground.base import precision as P
from playground.base import reference as ref
from playground.base.errors import ValidationError
from playground.base.params import Enum, Float
from playground.layers import LAYERS
from playground.network.presets import input_for
from playground.trt.backend import detect

NAMES = sorted(LAYERS)
VALID = 50


def _valid(layer) -> int:
    """VALID, or five draws per choice of the layer's longest enum (elementwise's 14 operations)."""
    return max([VALID] + [5 * len(p.choices) for p in layer.params if isinstance(p.of, Enum)])


SEED = 27
_FLOAT32_MAX = float(np.finfo(np.float32).max)


@pytest.fixture(scope="module", params=NAMES)
def fuzzed(request):
    layer = LAYERS[request.param]
    good, refused = configurations(layer, SEED, valid=_valid(layer))
    return layer, good, refused


def _input(layer, shape, seed=0) -> dict:
    """The feed dict: every declared input, uniform in [-4, 4), each of its own shape and seed."""
    shapes = layer.shapes_of(shape)
    return {
        n: np.random.default_rng(seed + i).uniform(-4, 4, shapes[n]).astype(np.float32)
        for i, n in enumerate(layer.input_names)
    }


def _arg(layer, xs):
    """What the layer's own callables (undefined, cell) take: the one array, or the feed dict."""
    return xs if layer.several else xs[layer.input_names[0]]


def test_the_fuzz_finds_enough_valid_configurations(fuzzed):
    layer, good, _ = fuzzed
    assert len(good) >= _valid(layer), f"{layer.name}: only {len(good)} valid configurations drawn"
    for p in layer.params:  # every choice of every enum is drawn among the valid ones
        if isinstance(p.of, Enum):
            seen = {d.params[p.name] for d in good}
            assert seen == set(p.choices), (layer.name, p.name, set(p.choices) - seen)


def test_the_reference_ends_in_the_result_type_and_is_finite_by_rule(fuzzed):
    layer, good, _ = fuzzed
    for d in good:
        x = _input(layer, d.shape)
        p = P.with_data_scale(d.params, x)
        with np.errstate(all="ignore"):
            y = layer.forward(x, p)
            with ref.exact():
                truth = layer.forward(x, {**p, "precision": "FP32"})
        assert y.dtype == np.float32, (layer.name, d.raw, y.dtype)
        assert truth.dtype == np.float64, (layer.name, d.raw, truth.dtype)
        assert y.shape == truth.shape
        allowed = layer.undefined(_arg(layer, x), p) if layer.undefined else np.zeros(y.shape, bool)
        with np.errstate(invalid="ignore"):
            allowed = allowed | (np.abs(truth) > _FLOAT32_MAX)
        bad = ~np.isfinite(y) & ~allowed
        assert not bad.any(), (layer.name, d.raw, d.shape, f"{int(bad.sum())} non-finite cells with no rule")


needs_rtx = pytest.mark.skipif(
    detect("tensorrt_rtx").name != "tensorrt_rtx" or not detect("tensorrt_rtx").can_build,
    reason="TensorRT for RTX cannot build here",
)


@needs_rtx
def test_tensorrt_rtx_agrees_on_every_shape_and_refuses_only_what_the_layer_declares(fuzzed):
    from playground.trt import engine as eng

    layer, good, _ = fuzzed
    backend = detect("tensorrt_rtx")
    undeclared = []
    for d in good:
        x = _input(layer, d.shape)
        p = P.with_data_scale(d.params, x)
        report = eng.build_engine(backend, layer, p, d.shape)
        known = layer.limits(p, backend.name) if layer.limits else None
        if report.status == "refused":
            if known is None:
                undeclared.append((d.raw, d.shape, report.error[:300]))
            continue
        assert report.status == "built", report.error
        assert known is None, (layer.name, d.raw, "declared refused, but built")
        with np.errstate(all="ignore"):
            shape = layer.forward(x, p).shape
        assert tuple(report.output_shape) == shape, (layer.name, d.raw, d.shape, report.output_shape, shape)
    assert not undeclared, undeclared


@needs_rtx
def test_the_network_has_one_input_per_input_in_use_each_of_its_own_shape(fuzzed):
    from playground.trt import engine as eng

    layer, good, _ = fuzzed
    backend = detect("tensorrt_rtx")
    d = next((d for d in good if len(set(layer.shapes_of(d.shape).values())) > 1), good[0])  # shapes differ if any do
    shapes = layer.shapes_of(d.shape)
    with eng._builders_for(backend.trt).builder() as builder:
        network, _kept = eng.network_from_layer(backend.trt, builder, layer, d.params, d.shape)
        given = [(network.get_input(i).name, tuple(network.get_input(i).shape)) for i in range(network.num_inputs)]
    used = layer.used_inputs(d.params)  # a concatenation of 2 of its 4: those two
    assert given == [(eng.network_inputs(layer)[n], shapes[n]) for n in used], (layer.name, given)


@needs_rtx
def test_every_refusal_by_the_layers_rules_is_tensorrts_too_or_says_why_it_is_stricter(fuzzed):
    """Built unchecked in a child process: TensorRT's refusal may be a crash (which counts as one)."""
    layer, _, refused = fuzzed
    indices = refusals_to_build(layer, refused)
    statuses = build_unchecked(layer.name, SEED, _valid(layer), indices)
    built = [(str(refused[i].refusal), refused[i].shape) for i in indices if statuses[i] == "built"]
    assert not built, built
    crashed = sum(s == "crashed" for s in statuses.values())
    assert crashed <= len(indices) // 2, f"{layer.name}: {crashed} of {len(indices)} builds crashed"


def _mirrored_changes(layer, preset, name) -> bool | None:
    """Whether `preset`'s output changes with parameter `name` mirrored across its range (None: no valid mirror)."""
    p = layer.param(name)
    value = float(preset.params[name])
    mirror = (p.low + p.high) - value
    x = layer.feed(input_for(preset))
    try:
        a = layer.forward(x, layer.resolve(preset.params, preset.input_shape))
        b = layer.forward(x, layer.resolve({**preset.params, name: mirror}, preset.input_shape))
    except ValidationError:
        return None
    return a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_says_in_plain_words_what_it_is(name):
    """A control's label is plain words first, TensorRT's name second: each parameter declares the words."""
    for p in LAYERS[name].params:
        assert p.label and not p.label[0].islower() and p.name not in p.label, (name, p.name, p.label)


@pytest.mark.parametrize("name", NAMES)
def test_examples_exist_and_tell_each_float_parameter_from_its_mirror(name):
    layer = LAYERS[name]
    assert layer.examples, f"{name} has no example"
    derived = [e for e in layer.examples if e.hand_derived]
    assert all(e.expected is not None for e in derived)
    floats = {p.name for p in layer.params if isinstance(p.of, Float) and p.low is not None and p.high is not None}
    tested = {k for e in layer.examples if not e.is_lesson for k in e.params if k in floats}
    for param in tested:
        verdicts = [_mirrored_changes(layer, e, param) for e in layer.examples if not e.is_lesson and param in e.params]
        assert any(verdicts), (
            f"{name}: every example of {param} gives the same output with the value mirrored "
            f"across its range: they cannot tell the rule from its reverse"
        )


def test_a_non_finite_cell_needs_the_layers_rule():
    """The contract's finiteness check can fail: scale's NaN (a negative base to a fractional power) is allowed
    only by its `undefined` rule."""
    layer = LAYERS["scale"]
    x = np.float32([-2, -1, 0, 1]).reshape(1, 1, 2, 2)
    p = layer.resolve({"mode": "UNIFORM", "scale": 1, "shift": 0, "power": 0.5}, x.shape)
    y = layer.reference(x, p)
    assert np.isnan(y).sum() == 2 and (np.isnan(y) == layer.undefined(x, p)).all()
