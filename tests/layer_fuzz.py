"""Seeded random configurations of any layer, drawn from its declaration alone: the layer contract's fuzz.

`draw(layer, rng)` makes one raw configuration and an input shape: every enum member, both booleans, ints and
floats over their ranges with the edges drawn often, per-axis and per-dimension values, optional values unset or
set, the default's values in another order (which is how a permutation parameter finds valid values). Arrays keep
their defaults (their presets fit any shape) except optional ones, which are drawn or left unset.
`configurations(layer, seed, valid=N)` resolves draws until N are valid and returns them with the refusals met on
the way, each with the ValidationError the layer's check raised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from playground.base import params as K
from playground.base.errors import ValidationError
from playground.base.params import Param

SPATIAL_MAX = {4: 9, 5: 4}  # the largest spatial size drawn, per input rank: small engines, quick builds
SMALL_INTS = 6  # ints are drawn from their low up to low + this (a window, a stride, a padding)


@dataclass
class Drawn:
    raw: dict
    shape: tuple | dict  # {input name: shape} for a layer of several inputs
    params: dict | None = None  # resolved; None where the layer refused
    refusal: ValidationError | None = None


def _float(p: Param, rng) -> float:
    low, high = p.slide or (p.low, p.high)
    low = -10.0 if low is None else low
    high = 10.0 if high is None else high
    edge = rng.random()
    if edge < 0.15:
        return float(p.low if p.low is not None else low)
    if edge < 0.3:
        return float(p.high if p.high is not None else high)
    return round(float(rng.uniform(low, high)), 3)


def _int(p: Param, rng, top=None) -> int:
    """From the low end of its range (no lower than -2: a slice's start of -16 would miss every input), up to
    SMALL_INTS above it, or `top` (what the parameter offers)."""
    low = max(-2, int(p.low)) if p.low is not None else -2
    high = min(int(p.high) if p.high is not None else low + SMALL_INTS, low + SMALL_INTS if top is None else int(top))
    return int(rng.integers(low, max(low, high) + 1))


def _value(p: Param, rng, params: dict, shape: tuple):
    if p.optional and rng.random() < 0.5:
        return None
    if isinstance(p.of, K.Enum):
        return str(rng.choice(p.choices))
    if isinstance(p.of, K.Bool):
        return bool(rng.random() < 0.5)
    if isinstance(p.of, K.Float):
        return _float(p, rng)
    if isinstance(p.of, K.Int):
        offered = p.offered(params, shape)
        if isinstance(offered, list) and offered and rng.random() < 0.7:
            return int(rng.choice(offered))
        return _int(p, rng)
    if isinstance(p.of, K.Ints):
        default = p.default_for(params, shape) if not p.optional else None
        if default is not None and rng.random() < 0.35:
            return tuple(int(v) for v in rng.permutation(np.asarray(default)))
        n = len(p.axis_names(len(shape))) if p.along_axes else len(default or shape)
        offered = p.offered(params, shape)
        tops = offered if isinstance(offered, tuple) and len(offered) == n and rng.random() < 0.5 else (None,) * n
        return tuple(_int(p, rng, top) for top in tops)
    # array: an optional one (resize scales) drawn, one per spatial axis or one for all
    if p.optional:
        n = 1 if rng.random() < 0.5 else len(shape) - 2
        low, high = p.slide or (p.low, p.high)
        return ",".join(f"{v:.2f}" for v in rng.uniform(low, high, n))
    return p.default_for(params, shape)


def _other_shape(shape: tuple, rng) -> tuple:
    """Another input's shape beside `shape`: each axis the same, 1 (it broadcasts) or, now and then, another size
    (which a broadcasting layer refuses)."""

    def axis(n):
        roll = rng.random()
        return n if roll < 0.55 else 1 if roll < 0.9 else int(rng.integers(1, SPATIAL_MAX[len(shape)] + 1))

    return tuple(axis(n) for n in shape)


def draw(layer, rng) -> Drawn:
    rank = int(rng.choice(layer.ranks))
    top = SPATIAL_MAX[rank]
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 5))) + tuple(
        int(rng.integers(1, top + 1)) for _ in range(rank - 2)
    )
    if layer.several:  # the first input's shape drawn, every other one beside it; parameters read the first's
        first = shape
        shape = {n: first if i == 0 else _other_shape(first, rng) for i, n in enumerate(layer.input_names)}
        raw, resolved = _drawn_params(layer, rng, first)
        return Drawn(raw, shape)
    raw, resolved = _drawn_params(layer, rng, shape)
    return Drawn(raw, shape)


def _drawn_params(layer, rng, shape: tuple) -> tuple[dict, dict]:
    raw: dict = {}
    resolved: dict = {}  # the values so far, canonical where they coerce, for defaults and offers
    # Twice: the second pass redraws what a parameter offers given the ones declared after it (a slice's shape
    # fits the input only once its mode is known).
    for params in (layer.params, [p for p in layer.params if p.offers and rng.random() < 0.5]):
        for p in params:
            value = _value(p, rng, resolved, shape)
            raw[p.name] = value
            try:
                resolved[p.name] = p.coerce(value, layer.name, resolved, shape)
            except (ValidationError, KeyError):
                resolved[p.name] = p.default_for(resolved, shape)
    return raw, resolved


def configurations(layer, seed: int, valid: int = 50, tries: int = 3000) -> tuple[list[Drawn], list[Drawn]]:
    """(valid configurations, refused ones), drawn with `seed` until `valid` resolve (or `tries` run out)."""
    rng = np.random.default_rng(seed)
    good, refused = [], []
    for _ in range(tries):
        d = draw(layer, rng)
        try:
            d.params = layer.resolve(d.raw, d.shape)
            good.append(d)
        except ValidationError as exc:
            d.refusal = exc
            refused.append(d)
        if len(good) >= valid:
            break
    return good, refused


# -- building what a layer's rules refuse, each in a child process: TensorRT may crash on it ------------------
# TensorRT-RTX 1.7 dies with SIGSEGV building a shuffle whose second transpose names an axis the tensor lacks:
# the playground's own rules exist to keep such values away from it, and the contract's test must survive them.
CHECKED_REFUSALS = 25  # per layer: the first this many refusals by its own (not stricter) rules


def refusals_to_build(layer, refused: list[Drawn]) -> list[int]:
    """Indices into `refused` of the refusals by the layer's own rules that TensorRT could be given."""
    picked = []
    for i, d in enumerate(refused):
        if d.refusal.stricter or d.refusal.param in ("input", "output"):  # stricter by its word; the budgets
            continue
        try:
            layer.unchecked(d.raw, d.shape)
        except ValidationError:
            continue  # a value of the wrong kind or range: nothing TensorRT could be given
        picked.append(i)
        if len(picked) >= CHECKED_REFUSALS:
            break
    return picked


def build_unchecked(layer_name: str, seed: int, valid: int, indices: list[int]) -> dict[int, str]:
    """index -> "built" | "refused" | "crashed": each refused configuration built by TensorRT-RTX, in a child
    process that is started again after a crash."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).parents[1])

    statuses: dict[int, str] = {}
    todo = list(indices)
    while todo:
        child = subprocess.run(
            [sys.executable, str(Path(__file__)), layer_name, str(seed), str(valid), *map(str, todo)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONPATH": root},
        )
        for line in child.stdout.splitlines():
            index, status = line.split()
            statuses[int(index)] = status
        todo = [i for i in todo if i not in statuses]
        if todo and child.returncode >= 0:  # not killed by a signal: an error of the test's own
            raise RuntimeError(f"the child left {todo} unbuilt (exit {child.returncode}): {child.stderr[-2000:]}")
        if todo:  # a signal (SIGSEGV) while building the first one left
            statuses[todo.pop(0)] = "crashed"
    return statuses


if __name__ == "__main__":  # the child: python tests/layer_fuzz.py LAYER SEED VALID INDEX...
    import sys

    from playground.layers import LAYERS
    from playground.trt import engine as eng
    from playground.trt.backend import detect

    name, seed, valid, *indices = sys.argv[1:]
    layer = LAYERS[name]
    _, refused = configurations(layer, int(seed), valid=int(valid))
    backend = detect("tensorrt_rtx")
    for index in map(int, indices):
        d = refused[index]
        report = eng.build_engine(backend, layer, layer.unchecked(d.raw, d.shape), d.shape)
        print(index, report.status, flush=True)
