"""Parameter declarations: one `Param` per TensorRT layer attribute.

A `Param` knows its TensorRT name, kind, bounds, default and help line, and turns
any accepted spelling (a Python value, CLI/URL text, a preset name) into one
canonical value or raises a `ValidationError` naming itself and the rule.
Everything else (widgets, cache key, CLI, code export) reads these declarations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import blobs, budget
from .errors import ValidationError
from .numbers import exact, shortest

SPATIAL = ("d", "h", "w")  # the spatial axes of a rank-5 input; a rank-4 one has h, w


def spatial_names(rank: int) -> tuple[str, ...]:
    """The spatial axes' names of an input of this rank: h, w or d, h, w."""
    return SPATIAL[5 - rank :]


_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


# -- kinds: what a parameter's value is, and every way the playground reads, writes, steps and draws one -----------
class Kind:
    """One kind of value. Every reader asks the parameter's kind (`Param.of`), never its name: canonical values
    (`canonical`), their text (`text`), the values a choice steps through (`options`), a slider's neighbours
    (`steps`), the control a form draws for it (`widget`: the stage's and the chain page's alike) and what the
    stage's control shows (`control`)."""

    name = ""
    number = False  # a number the stage draws as a slider

    def canonical(self, p: Param, value: Any, fail: Callable, params: dict, shape: tuple) -> Any:
        """The canonical value of any accepted spelling, its kind and range checked (`fail(rule)` raises)."""
        raise NotImplementedError

    def text(self, p: Param, value: Any) -> str:
        return str(value)

    def options(self, p: Param) -> tuple:
        """The values it takes, in order, where they are few (a choice); () else."""
        return ()

    def steps(self, p: Param, old: Any, new: Any) -> list:
        """The values one step either side of `new` (moved from `old`), within the slider's range."""
        return []

    def widget(self, p: Param) -> str:
        """The control a form draws for it, one decision for every form (the stage's controls.js, the chain page):
        choice (a list of named values), toggle, slider (a number), named (a number picked by its name: softmax's
        axes), axes (a whole number per axis), permutation (one pick of a whole order), or text (numbers or a
        preset's name, where a few values get a slider each)."""
        return "text"

    def control(self, p: Param, value: Any, params: dict, shape: tuple) -> dict:
        """What the stage's control of this parameter draws, besides its name, label, help and use."""
        return {}

    def unused_by(self, p: Param, value: Any, users: list) -> str:
        """Why a later parameter is unused while this one holds `value` (the values that use it: `users`)."""
        return f"only with {p.name} {' or '.join(map(str, users))}" if len(users) <= 3 else f"unused by {value}"


class Number(Kind):
    number = True
    default_step: float = 0.01
    whole = False  # whole numbers only

    def widget(self, p):
        return "named" if p.name_of is not None else "slider"

    def steps(self, p, old, new):
        if not isinstance(new, (int, float)) or isinstance(new, bool):
            return []
        step = p.step or 1
        return [v for v in (new + step, new - step) if p.slidable(v)]

    def control(self, p, value, params, shape):
        low, high = p.slide or (p.low, p.high)
        c = dict(
            low=_num(low), high=_num(high), min=_num(p.low), max=_num(p.high), step=_num(p.step or self.default_step)
        )
        offered = p.offered(params, shape)
        if isinstance(offered, list):
            c["offered"] = [int(v) for v in offered]
            if p.name_of is not None:
                c["names"] = [p.name_of(int(v), shape) for v in offered]
        return c


class Float(Number):
    name = "float"

    def canonical(self, p, value, fail, params, shape):
        v = _number(value, float, fail, "must be a number")
        if not math.isfinite(v):
            raise fail("must be finite")
        return p._in_range(v, fail)

    def text(self, p, value):
        return shortest(value)


class Int(Number):
    name, default_step, whole = "int", 1, True

    def canonical(self, p, value, fail, params, shape):
        v = p._in_range(_number(value, _strict_int, fail, "must be a whole number"), fail)
        if isinstance(v, float):  # ±inf from a number too large to be held: out of any range
            raise fail("must be a finite whole number")
        return v


class Bool(Kind):
    name = "bool"

    def widget(self, p):
        return "toggle"

    def canonical(self, p, value, fail, params, shape):
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise fail("must be true or false")

    def text(self, p, value):
        return "true" if value else "false"

    def options(self, p):
        return (False, True)

    def unused_by(self, p, value, users):
        return f"unused while {p.name} is {'on' if value else 'off'}"


class Enum(Kind):
    name = "enum"

    def widget(self, p):
        return "choice"

    def canonical(self, p, value, fail, params, shape):
        name = str(getattr(value, "name", value)).strip().upper()
        name = {k.upper(): v for k, v in p.aliases.items()}.get(name, name)
        members = {c.upper(): c for c in p.choices}
        if name not in members:
            raise fail("must be one of " + ", ".join(p.choices + tuple(p.aliases)))
        return members[name]

    def options(self, p):
        return p.choices

    def steps(self, p, old, new):
        if new not in p.choices:
            return []
        i = p.choices.index(new)
        return [p.choices[j] for j in (i + 1, i - 1) if 0 <= j < len(p.choices)]

    def control(self, p, value, params, shape):
        return {"choices": list(p.choices)}


class Ints(Kind):
    name = "ints"

    def canonical(self, p, value, fail, params, shape):
        items = _split(value)
        try:
            ints = tuple(_strict_int(v) for v in items)
        except (TypeError, ValueError):
            raise fail("must be whole numbers separated by commas") from None
        if p.along_axes:
            rank = len(p.axis_names(len(shape)))
            if len(ints) == 1:
                ints = ints * rank
            if len(ints) != rank:
                what = "spatial axis" if p.per_axis else "dimension of the input"
                raise fail(f"needs one value per {what} ({rank} for an input of rank {len(shape)}) or a single value")
        for v in ints:
            p._in_range(v, fail)
        if any(isinstance(v, float) for v in ints):  # ±inf: see _strict_int
            raise fail("must be finite whole numbers")
        return ints

    def text(self, p, value):
        return ",".join(str(v) for v in value)

    def steps(self, p, old, new):
        if not (p.along_axes and isinstance(new, tuple) and isinstance(old, tuple) and len(old) == len(new)):
            return []
        moved = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
        if len(moved) != 1:
            return []
        i = moved[0]
        return [new[:i] + (v,) + new[i + 1 :] for v in (new[i] + 1, new[i] - 1) if p.slidable(v)]

    def widget(self, p):
        return "permutation" if p.permutation else "axes" if p.along_axes else "text"

    def control(self, p, value, params, shape):
        if p.permutation:
            return {"permutation": True} | ({"axes": list(p.axis_names(len(shape)))} if p.along_axes else {})
        if not p.along_axes:
            return {}
        names = p.axis_names(len(shape))
        c = dict(axes=list(names), low=_num(p.low), high=_num(p.high), optional=p.optional)
        offered = p.offered(params, shape)
        if isinstance(offered, tuple) and len(offered) == len(names):
            c["tops"] = [int(min(v, p.high if p.high is not None else v)) for v in offered]
        return c


class Array(Kind):
    name = "array"
    PER_VALUE_MAX = 8  # a few values (a 3 × 1 kernel, three slopes): the stage draws a slider each

    def canonical(self, p, value, fail, params, shape):
        # a preset name, the server's weights by reference (@w:DIGEST: a link's large array), numbers, or an ndarray
        if isinstance(value, str) and value.strip().startswith(blobs.WEIGHTS):
            try:
                value = blobs.weights(value.strip(), budget.max_elements())
            except blobs.Missing as exc:
                raise fail(f"the weights {value.strip()[:19]}… {exc}") from None
        elif isinstance(value, str) and value.strip() in p.presets:
            value = p.presets[value.strip()](params, shape)
        elif isinstance(value, str):
            items = _split(value)
            try:
                value = [float(v) for v in items]
            except ValueError:
                presets = f", or a preset ({', '.join(p.presets)})" if p.presets else ""
                raise fail(f"must be numbers separated by commas or a .npy array{presets}") from None
        try:  # a read-only float32 array (a link's weights, kept by the server) is taken as it is: nothing writes it
            arr = (
                value
                if isinstance(value, np.ndarray) and value.dtype == np.float32 and not value.flags.writeable
                else np.array(value, dtype=np.float32)
            )
        except (TypeError, ValueError):
            raise fail("must be an array of numbers") from None
        if arr.size == 0:
            raise fail("must not be empty")
        over = budget.over_elements(arr.shape, "array", "its size")  # a model's weights may be large; the budget holds
        if over:
            raise fail(over)
        if not np.isfinite(arr).all():
            raise fail("must hold finite numbers only (no NaN or Inf)")
        if (p.low is not None and arr.min() < p.low) or (p.high is not None and arr.max() > p.high):
            raise fail(f"values must be between {exact(p.low)} and {exact(p.high)}")
        return np.ascontiguousarray(arr)

    def text(self, p, value):
        return ",".join(shortest(v) for v in np.asarray(value).ravel())

    def control(self, p, value, params, shape):
        value = np.asarray(value, np.float32) if value is not None else np.zeros(0)
        c = {"presets": list(p.presets), "size": int(value.size)}
        if 0 < value.size <= self.PER_VALUE_MAX:
            c.update(
                values=[_num(float(v)) for v in value.ravel()],
                slide=[_num(v) for v in p.slide] if p.slide else None,
                min=_num(p.low),
                max=_num(p.high),
                step=_num(p.step or 0.01),
            )
        return c


@dataclass(frozen=True)
class Param:
    name: str  # as TensorRT spells the attribute
    kind: str
    default: Any  # a value, or a function (params so far, input shape) -> value
    help: str
    low: float | None = None
    high: float | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)  # accepted enum spellings -> member
    presets: dict[str, Callable[[dict, tuple], np.ndarray]] = field(default_factory=dict)
    optional: bool = False  # None means "not set" (e.g. pre_padding falls back to padding_nd)
    used_when: Callable[[dict], bool] | None = None  # False: the current configuration ignores it
    per_axis: bool = False  # ints: one value per spatial axis; a single value is broadcast
    per_dim: bool = False  # ints: one value per dimension of the input (n, c, [d,] h, w); a single value is broadcast
    # A rule on this value given the parameters before it: returns what is wrong, or None.
    rule: Callable[[Any, dict, tuple], str | None] | None = None
    # The slider's useful range (float, and an array's single value) where the declared range is too wide to
    # drag across; an exact-entry box beside the slider takes values off it. None: the declared range.
    slide: tuple[float, float] | None = None
    # The values a widget offers given every parameter's current value: int -> the valid values; per-axis ints
    # -> the largest valid value per axis (capped at high). None, or an error: every value within low..high.
    offers: Callable[[dict, tuple], Any] | None = None
    # It reaches TensorRT as weights or a constant tensor (typed: FP16/BF16 round it), not as a layer attribute,
    # which a strongly typed network keeps in float32 (resize scales, activation alpha). A function: it depends
    # on the configuration (leaky ReLU's alpha is an attribute of the activation, a constant of the PReLU).
    weight: bool | Callable[[dict], bool] = False
    # How a control names one of the values `offers` lists, where the number alone says little (softmax's bitmask
    # 4 is "H (axes = 4)"): (value, input shape) -> text. The stage then offers a list of names, not a slider.
    name_of: Callable[[Any, tuple], str] | None = None
    label: str = ""  # plain words for its control ("Stride"); the control says the TensorRT name after them
    # ints that are an order of axes (a shuffle's transposes): the stage offers whole permutations, one pick, never
    # a half-made one ("0,2,2,3") on the way from one order to another
    permutation: bool = False
    # An optional one's stand-in while unset (pre_padding: padding_nd): the parameter whose values its controls show
    # then, so that setting it starts from what is in force and moves one side from there.
    fallback: str | None = None

    def __post_init__(self):
        assert self.kind in KINDS, self.kind

    @property
    def of(self) -> Kind:
        """Its kind's object: every reader asks it, never the kind's name."""
        return KINDS[self.kind]

    def slidable(self, v) -> bool:
        """Within the slider's range (`slide`, else the declared one): a step the slider can take."""
        low, high = self.slide or (self.low, self.high)
        return (low is None or v >= low) and (high is None or v <= high)

    @property
    def along_axes(self) -> bool:
        """ints with one value per axis: a slider each, a URL key each (LAYER.PARAM.AXIS)."""
        return self.per_axis or self.per_dim

    def axis_names(self, rank: int) -> tuple[str, ...]:
        """The names of its values for an input of this rank: h, w or d, h, w (per_axis); n, c, [d,] h, w
        (per_dim)."""
        spatial = spatial_names(rank)
        return ("n", "c") + spatial if self.per_dim else spatial

    def default_for(self, params: dict, shape: tuple) -> Any:
        return self.default(params, shape) if callable(self.default) else self.default

    def is_weight(self, params: dict) -> bool:
        return bool(self.weight(params)) if callable(self.weight) else self.weight

    def offered(self, params: dict, shape: tuple):
        """What `offers` says for this configuration, or None (every declared value; also where a parameter it
        reads is broken right now)."""
        if self.offers is None:
            return None
        try:
            return self.offers(params, shape)
        except Exception:  # noqa: BLE001 - a parameter it reads is not valid right now: the declared range
            return None

    def is_used(self, params: dict) -> bool:
        return self.used_when is None or bool(self.used_when(params))

    # -- canonical values ---------------------------------------------------------------
    def coerce(self, value: Any, layer: str, params: dict, shape: tuple) -> Any:
        """Return the canonical value, or raise ValidationError(layer, self.name, rule)."""
        canonical = self.canonical(value, layer, params, shape)
        problem = self.rule(canonical, params, shape) if self.rule and canonical is not None else None
        if problem:
            raise ValidationError(layer, self.name, problem, value)
        return canonical

    def canonical(self, value: Any, layer: str, params: dict, shape: tuple) -> Any:
        """The canonical value of any accepted spelling, its kind and range checked but not its `rule`."""
        fail = lambda rule: ValidationError(layer, self.name, rule, value)  # noqa: E731
        if self.optional and (value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))):
            return None
        return self.of.canonical(self, value, fail, params, shape)

    def _in_range(self, v, fail):
        if (self.low is not None and v < self.low) or (self.high is not None and v > self.high):
            raise fail(f"must be between {exact(self.low)} and {exact(self.high)}")
        return v

    # -- text form (CLI --set, URL, code export) -----------------------------------------
    def to_text(self, value: Any) -> str:
        if value is None:
            return "none"
        return self.of.text(self, value)


KINDS: dict[str, Kind] = {k.name: k for k in (Float(), Int(), Bool(), Enum(), Ints(), Array())}


def _num(v):
    """A number as JSON writes it: whole numbers as ints."""
    return None if v is None else (int(v) if float(v).is_integer() and abs(v) < 1e15 else float(v))


def jsonable(value: Any) -> Any:
    """A JSON-friendly form of a canonical value (arrays as nested lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def _split(value: Any) -> list:
    if isinstance(value, str):
        return [v for v in value.replace(" ", "").strip("()[]").split(",") if v != ""]
    if isinstance(value, (list, tuple, np.ndarray)):
        return list(np.asarray(value).ravel())
    return [value]


def _strict_int(v: Any) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("bool is not an int")
    f = float(v)
    if math.isinf(f) and not (isinstance(v, str) and v.strip().lower().lstrip("+-") in ("inf", "infinity")):
        return f  # a whole number too large for a float (1e400): the caller's range check names the rule
    if not f.is_integer():
        raise ValueError(f"{v!r} is not whole")
    return int(f)


def _number(value, cast, fail, rule):
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return cast(value.item() if isinstance(value, np.generic) else value)
    except (TypeError, ValueError, OverflowError):
        raise fail(rule) from None


def same_value(a, b) -> bool:
    """Two resolved parameter values are the same: arrays by shape and values (NaN equals NaN), anything
    else by type and value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and bool(np.array_equal(a, b, equal_nan=True))
    return type(a) is type(b) and a == b


def same_params(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
