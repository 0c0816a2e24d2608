"""The examples of every layer (each declared in its layer's file as `Layer.examples`, in the vocabulary of
playground.base.examples): the spec's examples (`PRESETS`) and the precision lessons (`LESSONS`) by layer, the
input of one, and whether an output shows what it documents (`compare`).

No TensorRT and no Streamlit here.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..base import reference as ref
from ..base.examples import ERRORS_RTOL, Comparison, Preset
from ..base.inputs import make_input
from ..base.params import same_params
from ..layers import LAYERS, get_layer

PRESETS: dict[str, list[Preset]] = {
    name: [p for p in layer.examples if not p.is_lesson] for name, layer in LAYERS.items()
}
LESSONS: dict[str, list[Preset]] = {name: [p for p in layer.examples if p.is_lesson] for name, layer in LAYERS.items()}


@functools.cache
def _config(layer_name: str, name: str) -> tuple[dict, np.ndarray]:
    preset = find(layer_name, name)
    return get_layer(layer_name).resolve(preset.params, preset.input_shape), input_for(preset)


def matching(layer_name: str, params: dict, x) -> list[Preset]:
    """The examples and lessons whose configuration (canonical parameters and input values: an array, or the feed
    dict of a layer of several inputs) this is."""
    found = []
    for preset in examples(layer_name):
        try:
            canon, given = _config(layer_name, preset.name)
        except Exception:  # noqa: BLE001 - an example the layer no longer accepts is simply never on screen
            continue
        if _same_inputs(given, x) and same_params(canon, params):
            found.append(preset)
    return found


def all_presets() -> list[Preset]:
    return [p for presets in PRESETS.values() for p in presets]


def examples(layer: str) -> list[Preset]:
    """What a layer page offers: the spec's examples, then the precision lessons."""
    return list(LAYERS[layer].examples) if layer in LAYERS else []


def all_lessons() -> list[Preset]:
    return [p for lessons in LESSONS.values() for p in lessons]


def find(layer: str, name: str) -> Preset:
    for p in examples(layer):
        if p.name == name:
            return p
    if layer not in PRESETS:
        raise KeyError(f"no presets for layer {layer!r}; layers with presets: {', '.join(PRESETS)}")
    raise KeyError(f"{layer} has no preset {name!r}; it has {', '.join(p.name for p in examples(layer))}")


def _same_inputs(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_same_inputs(a[k], b[k]) for k in a)
        )
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def input_for(preset: Preset):
    """The preset's input tensor (a fresh writable float32 array); the feed dict {input name: array} for a layer of
    several inputs."""
    layer = get_layer(preset.layer)
    if "shape" not in preset.input:
        return {n: make_one(o, lambda s, n=n: layer.example_of(n, s)) for n, o in preset.input.items()}
    return make_one(preset.input, layer.example_input)


def make_one(input: dict, spec_fn) -> np.ndarray:
    options = dict(input)
    kind, shape = options.pop("kind"), tuple(options.pop("shape"))
    return make_input(kind, shape, spec_fn=spec_fn, **options)


def compare(preset: Preset, output, errors: dict | None = None) -> Comparison:
    """Does `output` (TensorRT's or the reference's) show what the spec prints for this preset? For a lesson:
    are `errors` (precision.errors of that output) the figures it states?"""
    out = np.asarray(output)
    tol = preset.tolerance
    shape_ok = tuple(out.shape) == tuple(preset.expected_shape)
    if not shape_ok:
        return Comparison(
            False,
            None,
            False,
            tol.text,
            f"output shape {tuple(out.shape)} differs from {preset.documented}'s {preset.expected_shape}",
        )
    if preset.is_lesson:
        return _compare_errors(preset, errors or {})
    if preset.expected is None:
        return Comparison(
            True,
            None,
            True,
            tol.text,
            f"shape {preset.expected_shape} as the spec prints; the spec prints no table for this "
            f"example, so only the shape was compared",
        )
    want = preset.expected.astype(np.float64)
    diff = ref.abs_diff(out, want)  # a NaN on one side only is a mismatch
    max_diff = float(diff.max()) if diff.size else 0.0
    bad = diff > tol.atol + tol.rtol * np.abs(want)
    what = preset.table_name
    if not bad.any():
        within = "exactly" if tol.text == "exact" else f"within {tol.text}"
        return Comparison(True, max_diff, True, tol.text, f"matches {what} {within} (max |diff| {max_diff:.3g})")
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), bad.shape))
    return Comparison(
        False,
        max_diff,
        True,
        tol.text,
        f"differs from {what} at {int(bad.sum())} of {bad.size} cells beyond {tol.text}; "
        f"worst at {where}: got {out[where]!r}, expected {preset.expected[where]!r} "
        f"(max |diff| {max_diff:.3g})",
    )


def _compare_errors(preset: Preset, errors: dict) -> Comparison:
    off = []
    for name, want in preset.errors.items():
        got = errors.get(name)
        close = got == want or (math.isfinite(want) and abs(got - want) <= ERRORS_RTOL * abs(want))
        if got is None or not close:
            off.append(f"{name} {got!r} (the lesson states {want:g})")
    if off:
        return Comparison(
            False, None, True, preset.tolerance.text, "error figures differ from the lesson's: " + "; ".join(off)
        )
    stated = ", ".join(f"{k} {v:g}" for k, v in preset.errors.items())
    return Comparison(True, None, True, preset.tolerance.text, f"error figures as the lesson states ({stated})")
