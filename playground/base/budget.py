"""What one configuration may cost, checked before anything is allocated or built.

Every parameter has its own bounds, but their product does not: N4 C8 512×512 with 64 output maps and
a 15×15 kernel is inside every bound and is 10^11 multiply-adds. A whole room shares one server, so
the work of a configuration is bounded too:

- `PLAYGROUND_MAX_ELEMENTS` (default 8,388,608 = N4·C8·512·512, 32 MiB of float32): values in the
  input and in the output.
- `PLAYGROUND_MAX_MACS` (default 100,000,000): multiply-adds of the layer (a convolution's
  N·K·out·C/groups·kernel; one per element elsewhere): about 0.4 s of float64 NumPy reference on one
  core of a 2-CPU server, so one participant's largest convolution leaves the other core to the room.
- `REFERENCE_CHUNK_BYTES`: the most temporary memory the convolution reference takes at once (it
  computes in slices of output rows rather than materialising every window).

A whole model (`python -m playground model`, the model page) is judged under a budget of its own
(`whole_model()`), sized for a person's own model on their own machine rather than for a room's interactive stage:
`PLAYGROUND_MODEL_MAX_ELEMENTS` values per tensor (default 2^27, VGG-19's 102.8 M-value fc6 weight fits),
`PLAYGROUND_MODEL_MAX_MACS` multiply-adds per node (default 2·10^9, VGG-19's 1.85 G convolutions fit) and
`PLAYGROUND_MODEL_MAX_MB` for what its work holds at once (default 1024): its weights, the tensors alive at a node
(fed or made before it and read at it or later) and that node's outputs, bytes by element type, at the node where
they are the most (ONNX Runtime runs the model a segment at a time and drops each tensor after its last reader:
`model.stream`), and the cap of ONNX Runtime's arena.

A bigger machine raises them through the environment; the README says how.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os

from .errors import ValidationError

REFERENCE_CHUNK_BYTES = 16 << 20  # smaller slices ran no slower here (they stay in cache)


def env_number(name: str, default, low, high, cast=int):
    """A setting from the environment, or ValidationError naming the variable and its rule."""
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    rule = f"must be a {'whole ' if cast is int else ''}number between {low:,} and {high:,}"
    try:
        value = float(text)
        if cast is int and not value.is_integer():
            raise ValueError
        value = cast(value)
    except (ValueError, OverflowError):
        raise ValidationError("settings", name, rule, text) from None
    if not (math.isfinite(value) and low <= value <= high):
        raise ValidationError("settings", name, rule, text)
    return value


# Whether the work under way is a whole model's (per thread and task: a room's stage beside it keeps its own budget)
_WHOLE_MODEL = contextvars.ContextVar("whole_model", default=False)
FOLD_TOTAL = 16  # a model's tensors together outside `whole_model`: at most this many times the per-tensor budget


@contextlib.contextmanager
def whole_model():
    """Within it, `max_elements` and `max_macs` are the whole-model budget's (PLAYGROUND_MODEL_MAX_*)."""
    token = _WHOLE_MODEL.set(True)
    try:
        yield
    finally:
        _WHOLE_MODEL.reset(token)


def in_whole_model() -> bool:
    return _WHOLE_MODEL.get()


def _elements_setting() -> str:
    return "PLAYGROUND_MODEL_MAX_ELEMENTS" if in_whole_model() else "PLAYGROUND_MAX_ELEMENTS"


def _macs_setting() -> str:
    return "PLAYGROUND_MODEL_MAX_MACS" if in_whole_model() else "PLAYGROUND_MAX_MACS"


def max_elements() -> int:
    if in_whole_model():
        return env_number("PLAYGROUND_MODEL_MAX_ELEMENTS", 2**27, 1, 2**31)
    return env_number("PLAYGROUND_MAX_ELEMENTS", 8 * 2**20, 1, 2**31)


def max_macs() -> int:
    if in_whole_model():
        return env_number("PLAYGROUND_MODEL_MAX_MACS", 2 * 10**9, 1, 10**14)
    return env_number("PLAYGROUND_MAX_MACS", 100_000_000, 1, 10**13)


def model_max_bytes() -> int:
    """PLAYGROUND_MODEL_MAX_MB in bytes: what a whole model's work holds at once (its weights, the tensors alive at
    a node and that node's own), and the cap of ONNX Runtime's arena."""
    return env_number("PLAYGROUND_MODEL_MAX_MB", 1024, 1, 2**20) << 20


def over_model_held(weights: int, alive: int, own: int, what: str) -> str | None:
    """The rule a whole model breaks where, at its peak, its `weights`, the tensors `alive` then and one node's
    `own` outputs (bytes) are past PLAYGROUND_MODEL_MAX_MB together, or None. `what` names that node."""
    held, cap = weights + alive + own, model_max_bytes()
    if held <= cap:
        return None
    mib = lambda n: f"{n / 2**20:,.1f} MiB"  # noqa: E731
    return (
        f"{what} is where the model holds the most at once: {mib(held)} (its weights {mib(weights)}, the tensors "
        f"alive then {mib(alive)}, the node's outputs {mib(own)}); the whole-model budget is {cap >> 20:,} MiB "
        "(PLAYGROUND_MODEL_MAX_MB)"
    )


def over_model_total(values: int, what: str) -> str | None:
    """The rule a model whose tensors hold `values` together breaks outside `whole_model` (a node's model opened
    alone), or None: FOLD_TOTAL times the per-tensor budget. A whole model is held to what it holds at once
    (`over_model_held`)."""
    if values <= FOLD_TOTAL * max_elements():
        return None
    return (
        f"{what}'s tensors hold {values:,} values together; the budget is "
        f"{FOLD_TOTAL} × {max_elements():,} (PLAYGROUND_MAX_ELEMENTS)"
    )


def over_elements(shape: tuple, what: str, lower: str) -> str | None:
    """The rule a tensor of `shape` breaks by holding more values than the budget, or None."""
    n, cap = math.prod(shape), max_elements()
    if n <= cap:
        return None
    return (
        f"the budget is {cap:,} values per tensor ({_elements_setting()}) and this {what} would hold "
        f"{n:,} ({'×'.join(map(str, shape))}); lower {lower}"
    )


def over_work(macs: int, formula: str, lower: str) -> str | None:
    """The rule a configuration of `macs` multiply-adds breaks, or None."""
    cap = max_macs()
    if macs <= cap:
        return None
    return (
        f"the budget is {cap:,} multiply-adds per {'node' if in_whole_model() else 'configuration'} "
        f"({_macs_setting()}) and this one needs "
        f"{macs:,} ({formula}); lower {lower}"
    )
