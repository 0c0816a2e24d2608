"""The `Layer` declaration: parameters, validation, TensorRT construction and reference, once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import budget
from .errors import ValidationError
from .params import Param
from .precision import PRECISIONS, QUANTIZED

PRECISION_PARAMS = (
    Param(
        "precision",
        "enum",
        "FP32",
        "The type TensorRT computes the layer in: FP32 (TF32 off); TF32 (a "
        "convolution's multiplies on tensor cores, the builder's TF32 flag); FP16 and BF16 by casts around it (its "
        "weights in that type); INT8 and FP8 (E4M3) by a quantize/dequantize pair on the input (and on a "
        "convolution's weights).",
        choices=PRECISIONS,
        label="Precision",
    ),
    Param(
        "quantize_scale",
        "float",
        1.0,
        "Scale of the INT8/FP8 quantize/dequantize pairs; 0: from the input (amax/127 for INT8, amax/448 for FP8).",
        low=0.0,
        high=1000.0,
        step=0.01,
        slide=(0.0, 4.0),
        used_when=lambda p: p["precision"] in QUANTIZED,
        label="Quantize scale",
    ),
)


@dataclass(frozen=True)
class Cell:
    """How one output cell gets its value: the stage's picked cell (click, hover, step, play) and the table
    under it."""

    line: str  # beside the heatmaps: the terms and the result, e.g. "max(1, 5, 2, 7) = **7**"
    rows: tuple[dict, ...] = ()  # one row per term, for the table under the stage
    notes: tuple[str, ...] = ()  # what else decides it (groups, quantization, a padding rule)


@dataclass(frozen=True)
class Input:
    """One input of a layer, by name: the feed dict's key (Polygraphy's style), the network input's order, the URL's
    `LAYER.input.NAME.…` keys and the CLI's `--input NAME=FILE.npy`."""

    name: str
    help: str = ""
    # Its spec example's shape and pattern; None: the layer's `example_shape` and `example_input`.
    example_shape: tuple[int, ...] | None = None
    example: Callable[[tuple], np.ndarray] | None = None
    # Whether a model may give it as a constant (an initializer, weights) rather than a tensor fed at run time.
    constant: bool = False
    # params -> whether the configuration reads it (a concatenation of 2 … 4 inputs); None: always. Only the inputs
    # in use reach the network, the cache key, the stage's figures and the exports.
    used_when: Callable[[dict], bool] | None = None
    # False: indices, not data (a gather's): no precision's cast or Q/DQ pair; the layer casts it to INT32 itself.
    data: bool = True


ONE_INPUT = (Input("x"),)


@dataclass(frozen=True)
class Layer:
    name: str  # CLI and URL name
    title: str
    summary: str  # one line: what the layer computes
    params: tuple[Param, ...]
    example_shape: tuple[int, ...]  # the spec example's input shape
    example_input: Callable[[tuple], np.ndarray]  # the spec's input pattern, for any shape
    # Pure NumPy, params resolved: reference(x, p) for one input; for several, reference(xs, p) with xs the
    # feed dict {input name: array} (`forward` is the one way every caller goes through).
    reference: Callable[[Any, dict], np.ndarray]
    # build(trt, network, x, p) -> output ITensor; for several inputs build(trt, network, xs, p), xs by name
    # (`construct`). Self-contained (only trt, np, p): the code export copies its source into a standalone script.
    build: Callable[..., Any]
    check: Callable[[Callable, dict, tuple], dict] | None = None  # cross-parameter rules
    notes: Callable[[dict], list[str]] | None = None  # remarks on a valid configuration
    formula: Callable[[dict], str] | None = None
    ranks: tuple[int, ...] = (4,)
    icon: str = ":material/layers:"  # the page's icon in the navigation and on the home page
    order: int = 100  # its place in the navigation and on the home page (then by name)
    # Tensors drawn on the stage between input and output (the convolution's kernel): params -> [(title, tensor)].
    stage_tensors: Callable[[dict], list[tuple[str, np.ndarray]]] | None = None
    # The output's colour scale beside its data inputs' (protocol.figure_ranges): params -> "" where its values are
    # of their kind (a sum, a concatenation: one scale for all, cells matched by eye), else why they are of another
    # (a product's magnitude, a comparison's 0 and 1), said under the output. None: its values decide.
    output_scale: Callable[[dict], str] | None = None
    # (params, input shape) -> (output shape, multiply-adds, how they were counted, what to lower), for the
    # work budget (playground.base.budget); None: the output has the input's shape and costs one per value.
    cost: Callable[[dict, tuple], tuple[tuple, int, str, str]] | None = None
    # Old parameter spellings still accepted (CLI, links): name -> value -> the parameters it stands for.
    legacy: dict[str, Callable[[Any], dict]] = field(default_factory=dict)
    # The weights TF32 rounds (its tensor-core multiplies read them and the input); none: TF32 is no choice here.
    tf32: tuple[str, ...] = ()
    # The spec's examples and the precision lessons (playground.base.examples.Preset), in the order a page lists them.
    examples: tuple = ()
    # The input cells one output cell reads, geometry only: (params, input shape, output index) -> full input
    # indices (outside the input: padding, drawn dashed). With it the page has a picked output cell: clicked,
    # hovered (its cells outlined on the input), stepped and played, and kept in the share link.
    reads: Callable[[dict, tuple, tuple], list[tuple]] | None = None
    # The input cells the whole output reads, geometry only: (params, input shape) -> full input indices. The stage
    # outlines them on the input beside the picked cell's window (a slice's region); None: no region drawn.
    region: Callable[[dict, tuple], list[tuple]] | None = None
    # That cell's arithmetic: (input, params, output index, reference output) -> Cell.
    cell: Callable[..., Cell] | None = None
    # The picked cell's index names per output rank (URL keys LAYER.cell.NAME); the default n, c, [d,] h, w.
    cell_axes: Callable[[int], tuple[str, ...]] | None = None
    # Explanations of a configuration, under the stage: (params, input shape) -> markdown paragraphs.
    explain: Callable[[dict, tuple], list[str]] | None = None
    # The layer's own section under the stage, after the explanations: (evaluation, playground.base.section.Context)
    # -> playground.base.section blocks (tables, charts, notes, …), which the page draws.
    section: Callable[..., list] | None = None
    # The output cells this input leaves without a finite value by the layer's own rule: (input, params) -> bool
    # mask over the output (pooling: a max over padding only, which TensorRT does not document; scale: a negative
    # base to a fractional power). None: none; the layer's contract holds every other cell finite.
    undefined: Callable[[np.ndarray, dict], np.ndarray] | None = None
    # params -> whether each output cell is a sum of terms (a convolution's, a mean's): float32 rounds such a sum at
    # its terms' magnitude, which a cell that cancels to near 0 does not show; ONNX Runtime's agreement then allows
    # rtol of the terms' sum of |values| too (`onnx.runtime.compare`). None: never (a max, a product, a lookup).
    sums: Callable[[dict], bool] | None = None
    # What a backend is known to refuse that the layer's own check allows (another backend builds it):
    # (params, backend name) -> the reason, said before the build; None: nothing known.
    limits: Callable[[dict, str], str | None] | None = None
    # Its ONNX mapping (playground.base.onnx_map.OnnxMap): the nodes it opens, the graph it exports; None: no export.
    onnx: Any = None
    # Its inputs, in the network's order; one named "x" unless declared. With several, `check`, `cost`, `reads` and
    # `explain` receive the shapes as a dict {input name: shape}.
    inputs: tuple[Input, ...] = ONE_INPUT
    # A page's inputs brought along by a choice that reads them otherwise (a matrix product's TRANSPOSE: the operand
    # stored transposed, so the choice is valid on the page's input and reads the same matrix): (params unchecked,
    # {input name: shape}) -> ({input name: the order of its axes}, what was done), or None. A page applies it only
    # where the given inputs are refused (`fitted`); the CLI and a model's node take their inputs as given.
    fit: Callable[[dict, dict], tuple[dict, str] | None] | None = None

    def __post_init__(self):  # every layer has the precision parameters, after its own
        own = {p.name for p in self.params}
        choices = tuple(c for c in PRECISIONS if c != "TF32" or self.tf32)
        common = tuple(
            replace(p, choices=choices) if p.name == "precision" else p for p in PRECISION_PARAMS if p.name not in own
        )
        object.__setattr__(self, "params", tuple(self.params) + common)

    # -- inputs --------------------------------------------------------------------------------------------------
    @property
    def several(self) -> bool:
        return len(self.inputs) > 1

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(i.name for i in self.inputs)

    def input_shape(self, name: str) -> tuple[int, ...]:
        """The spec example's shape of input `name`."""
        return tuple(self._input(name).example_shape or self.example_shape)

    def example_of(self, name: str, shape: tuple | None = None) -> np.ndarray:
        """Input `name`'s spec pattern at `shape` (its example's shape by default)."""
        i = self._input(name)
        return (i.example or self.example_input)(tuple(shape) if shape is not None else self.input_shape(name))

    def _input(self, name: str) -> Input:
        for i in self.inputs:
            if i.name == name:
                return i
        raise self.fail("input", f"{name!r} is not an input of this layer; it has " + ", ".join(self.input_names))

    def feed(self, x=None) -> dict[str, np.ndarray]:
        """The feed dict {input name: C-contiguous float32 array}, in declared order, from an array (the first
        input; the others take their examples) or a dict by name (those missing: their examples)."""
        given = dict(x) if isinstance(x, dict) else {} if x is None else {self.inputs[0].name: x}
        for name in given:
            self._input(name)  # an unknown name says which ones there are
        return {
            i.name: np.asarray(given[i.name], dtype=np.float32, order="C")
            if i.name in given
            else self.example_of(i.name)
            for i in self.inputs
        }

    @property
    def index_inputs(self) -> tuple[str, ...]:
        """The inputs that hold indices (`Input.data` False): no precision touches them."""
        return tuple(i.name for i in self.inputs if not i.data)

    def used_inputs(self, params: dict) -> tuple[str, ...]:
        """The inputs this configuration reads, in declared order."""
        return tuple(i.name for i in self.inputs if i.used_when is None or i.used_when(params))

    def shapes_of(self, shape) -> dict[str, tuple[int, ...]]:
        """{input name: shape} from a dict of shapes (an input it leaves out: its example's), or from the first
        input's shape (the others: their examples')."""
        if isinstance(shape, dict):
            if set(shape) - set(self.input_names) or self.input_names[0] not in shape:
                raise self.fail("input", "needs shapes of " + ", ".join(self.input_names), shape)
            return {n: tuple(int(d) for d in shape[n]) if n in shape else self.input_shape(n) for n in self.input_names}
        first = tuple(int(d) for d in shape)
        return {n: first if i == 0 else self.input_shape(n) for i, n in enumerate(self.input_names)}

    def shape_arg(self, shapes: dict):
        """What the layer's own callables get: the one shape, or the dict of shapes where it has several inputs."""
        return shapes if self.several else shapes[self.inputs[0].name]

    def forward(self, xs: dict, p: dict) -> np.ndarray:
        """The reference on a feed dict."""
        return self.reference(xs if self.several else xs[self.inputs[0].name], p)

    def construct(self, trt, network, xs: dict, p: dict):
        """The construction on the network's input tensors by name."""
        return self.build(trt, network, xs if self.several else xs[self.inputs[0].name], p)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}; it has {', '.join(self.param_names)}")

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def fail(self, param: str, rule: str, value: Any = None) -> ValidationError:
        return ValidationError(self.name, param, rule, value)

    def defaults(self, shape=None) -> dict:
        """Every parameter's default for this input shape (a dict of shapes for several inputs)."""
        shape = shape or {n: self.input_shape(n) for n in self.input_names}
        try:
            return self.resolve({}, shape)
        except ValidationError:
            if not self.several:
                raise
            # The inputs' shapes may fit other values only (a matrix product's TRANSPOSE): the defaults, unchecked.
            return self.unchecked({}, shape)

    def resolve(self, raw: dict, shape) -> dict:
        """Canonical parameters for `raw` (unset ones take their defaults) and the input shape (a dict of shapes
        where the layer has several inputs; one shape: the first input's)."""
        raw = self.modern(raw)
        unknown = sorted(set(raw) - set(self.param_names))
        if unknown:
            raise self.fail(unknown[0], "is not a parameter of this layer; it has " + ", ".join(self.param_names))
        shapes = self.shapes_of(shape)
        for name, s in shapes.items():
            where = f"input {name}" if self.several else "input"
            of = f"{where} " if self.several else ""
            if len(s) not in self.ranks:
                raise self.fail("input", f"{of}must have rank {' or '.join(map(str, self.ranks))}, not {len(s)}", s)
            if min(s) < 1:
                raise self.fail(
                    "input", f"every dimension{' of ' + where if self.several else ''} must be at least 1", s
                )
            sizes = "N, C, " + ("D, " if len(s) == 5 else "") + "H or W"
            over = budget.over_elements(s, where, sizes)
            if over:  # before any parameter allocates (a kernel, a slope per element)
                raise self.fail("input", over)
        shape, arg = shapes[self.inputs[0].name], self.shape_arg(shapes)
        params = self._coerced(raw, shape, Param.coerce)
        params = self.check(self.fail, params, arg) if self.check else params
        output, macs, counted, lower = (
            self.cost(params, arg)
            if self.cost
            else (shape, int(np.prod(shape)), "one per value", "the input size: " + sizes)
        )
        over = budget.over_elements(output, "output", lower) or budget.over_work(macs, counted, lower)
        if over:  # before the reference computes or TensorRT builds
            raise self.fail("output", over)
        return params

    def fitted(self, raw: dict, shape) -> tuple[dict, dict, str] | None:
        """({input name: the order of its axes} that `fit` brings the inputs along in, the parameters resolved on
        the inputs so brought, what was done), where `raw` is valid on them; None where the layer brings nothing
        along or they are refused too. `shape`: as `resolve` takes it."""
        if self.fit is None:
            return None
        try:
            shapes = self.shapes_of(shape)
            brought = self.fit(self.unchecked(raw, shapes), shapes)
            if brought is None:
                return None
            moved = {n: tuple(s[a] for a in brought[0].get(n, range(len(s)))) for n, s in shapes.items()}
            return brought[0], self.resolve(raw, moved), brought[1]
        except ValidationError:
            return None

    def _coerced(self, raw: dict, shape: tuple, coerce) -> dict:
        params: dict = {}
        for p in self.params:
            value = raw[p.name] if p.name in raw else p.default_for(params, shape)
            params[p.name] = coerce(p, value, self.name, params, shape)
        return params

    def unchecked(self, raw: dict, shape: tuple) -> dict:
        """`raw` in canonical values with none of the layer's rules applied (each value's own kind only): what a
        rule refused, to show TensorRT refuses it too (the layer contract's test)."""
        return self._coerced(self.modern(raw), self.shapes_of(shape)[self.inputs[0].name], Param.canonical)

    def modern(self, raw: dict) -> dict:
        """`raw` with old parameter spellings replaced by what they stand for (an explicit new one wins)."""
        out = {k: v for k, v in raw.items() if k not in self.legacy}
        for name, translate in self.legacy.items():
            if name in raw:
                try:
                    new = translate(raw[name])
                except ValueError as exc:
                    raise self.fail(name, str(exc), raw[name]) from None
                out.update({k: v for k, v in new.items() if k not in raw})
        return out

    def notes_for(self, raw: dict, params: dict) -> list[str]:
        """Alias spellings used, and the layer's own remarks on this configuration."""
        out = [
            f"{self.name}.{name}: the old spelling of "
            + ", ".join(f"{k}={v}" for k, v in self.legacy[name](raw[name]).items())
            + "."
            for name in self.legacy
            if name in raw
        ]
        for p in self.params:
            given = str(raw.get(p.name, "")).strip().upper()
            for alias, member in p.aliases.items():
                if given == alias.upper():
                    out.append(f"{self.name}.{p.name}: {alias} is the legacy name of {member}, which it equals here.")
        return out + (self.notes(params) if self.notes else [])

    def axes_of_cell(self, rank: int) -> tuple[str, ...]:
        if self.cell_axes:
            return self.cell_axes(rank)
        return {5: ("n", "c", "d", "h", "w"), 4: ("n", "c", "h", "w"), 3: ("c", "h", "w"), 2: ("h", "w")}[rank]

    def why_unused(self, name: str, params: dict) -> str:
        """Which earlier enum or bool setting leaves parameter `name` unused: "only with precision INT8 or FP8" where
        a few of its values use it (the note stays as another value is picked), "unused by RELU", "unused while
        int8 is off"; "unused by this configuration" else."""
        p = self.param(name)
        for q in self.params[: self.params.index(p)]:
            try:
                users = [o for o in q.of.options(q) if p.is_used({**params, q.name: o})]
            except Exception:  # noqa: BLE001 - used_when may read parameters that are not valid right now
                users = []
            if users:
                return q.of.unused_by(q, params.get(q.name), users)
        return "unused by this configuration"

    def unused(self, params: dict) -> list[str]:
        return [p.name for p in self.params if not p.is_used(params)]
