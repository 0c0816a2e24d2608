"""Chains: 1 to 6 layers of the registry as one network, resolved, computed and built as a whole.

A chain is an ordered list of layers with their raw parameters. A layer that appears again is keyed `convolution2`,
`convolution3` (`keys_of`), and every name outside this module (URL keys, `--set`, JSON, the engine's mapping) uses
those keys. Each layer reads, by default, the previous layer's output (the first: the chain's input); a layer of
several inputs takes the chain's input for the others (an ElementWise after a convolution is a residual). A layer
may read another source: `KEY.from=SOURCE` for its first input, `KEY.from.NAME=SOURCE` for input NAME, SOURCE being
`input` (the chain's input) or an earlier layer's key.

Resolved layer by layer (each input's shape is its source's output shape), a refused layer is named by its key:
`convolution2.stride_nd: …`. Budgets hold for the whole chain: the multiply-adds summed over its layers, and every
tensor it keeps (input, intermediates, output) summed against twice the per-tensor budget, what one layer's input
and output may hold together.

A resolved chain is a network of `core` (its links are the nodes, its input the one input): `core.evaluate_network`
computes every tensor's reference (each layer in its own precision) and builds the whole chain as one network, for
deployment: only the last output is marked (marking an intermediate changes what TensorRT fuses). Every network
layer a chain layer adds carries its key as its name and as its metadata `[KEY]` (`engine.network_from`), which is
how an engine layer's `fuses` are read back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..base import budget
from ..base.box import Box
from ..base.errors import ValidationError
from ..base.layer import Layer
from ..layers import LAYERS
from ..trt import engine as eng
from .core import NetworkBuild, build_network, evaluate_network

MAX_LAYERS = 6
INPUT = "input"  # the chain's input, as a source
FROM = "from"  # KEY.from=SOURCE, KEY.from.NAME=SOURCE
CHAIN = "chain"  # what errors about the chain as a whole are named by


def keys_of(names) -> tuple[str, ...]:
    """Each layer's key: its name the first time, then name2, name3, … ."""
    seen: dict[str, int] = {}
    keys = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        keys.append(n if seen[n] == 1 else f"{n}{seen[n]}")
    return tuple(keys)


def parse_names(text, sep: str = "+") -> tuple[str, ...]:
    """Layer names from `convolution+activation` (or a list); ValidationError naming `layers` and the rule."""
    names = [n.strip() for n in (text.split(sep) if isinstance(text, str) else text)]
    if not names or any(not n for n in names):
        raise ValidationError(CHAIN, "layers", f"names layers separated by {sep!r}, none empty", text)
    if len(names) > MAX_LAYERS:
        raise ValidationError(CHAIN, "layers", f"at most {MAX_LAYERS} layers, not {len(names)}", text)
    unknown = [n for n in names if n not in LAYERS]
    if unknown:
        raise ValidationError(CHAIN, "layers", f"{unknown[0]!r} is not a layer; choose from {', '.join(LAYERS)}", text)
    return tuple(names)


def split_params(keys, flat: dict) -> dict[str, dict]:
    """{"convolution.stride_nd": v, …} as {key: {param: v}}; a key that names no layer of the chain is refused."""
    out: dict[str, dict] = {k: {} for k in keys}
    for name, value in flat.items():
        key, dot, param = str(name).partition(".")
        if not dot or not param:
            raise ValidationError(CHAIN, name, f"must be KEY.PARAMETER, e.g. {keys[0]}.precision")
        if key not in out:
            raise ValidationError(key, param, f"{key} names no layer of this chain; its layers are " + ", ".join(keys))
        out[key][param] = value
    return out


@dataclass(frozen=True)
class Link:
    """One layer of a resolved chain."""

    key: str
    layer: Layer
    raw: dict
    params: dict  # resolved (with the data's quantize scale once `compute` ran)
    sources: dict  # {input name: INPUT or an earlier key}
    shapes: dict  # {input name: shape}
    output_shape: tuple
    macs: int

    @property
    def first_source(self) -> str:
        return self.sources[self.layer.inputs[0].name]


@dataclass
class Chain:
    links: tuple[Link, ...]
    input_shape: tuple

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(link.key for link in self.links)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(link.layer.name for link in self.links)

    @property
    def output_shape(self) -> tuple:
        return self.links[-1].output_shape

    @property
    def macs(self) -> int:
        return sum(link.macs for link in self.links)

    @property
    def elements(self) -> int:
        return math.prod(self.input_shape) + sum(math.prod(link.output_shape) for link in self.links)

    def raw(self) -> dict:
        """{key: the raw parameters it was resolved from, with its sources where they are not the default}: what
        resolves to this chain again."""
        out = {}
        for i, link in enumerate(self.links):
            default = default_sources(link.layer, self.keys[:i])
            out[link.key] = dict(link.raw) | {
                from_key(link.layer, n): s for n, s in link.sources.items() if s != default[n]
            }
        return out

    def flat_params(self) -> dict:
        """{KEY.PARAM: value} of every layer (the cache key, the JSON)."""
        return {f"{link.key}.{k}": v for link in self.links for k, v in link.params.items()}


def from_key(layer: Layer, name: str) -> str:
    """The parameter that names input `name`'s source: FROM for the layer's first input, FROM.NAME for the others."""
    return FROM if name == layer.input_names[0] else f"{FROM}.{name}"


def example_shape(names) -> tuple:
    """The chain's input shape where none is given: its first layer's example's (of the input the chain feeds)."""
    first = LAYERS[names[0]]
    return tuple(first.input_shape(first.input_names[0]))


def example_input(names, shape=None) -> np.ndarray:
    """The chain's input where none is given: its first layer's example, at `shape` (its own by default)."""
    first = LAYERS[names[0]]
    return first.example_of(first.input_names[0], shape)


def default_sources(layer: Layer, earlier: tuple[str, ...]) -> dict:
    """{input name: source} where none is given: the first input reads the previous layer (the first layer: the
    chain's input), the others the chain's input."""
    previous = earlier[-1] if earlier else INPUT
    return {i.name: previous if n == 0 else INPUT for n, i in enumerate(layer.inputs)}


def _sources(key: str, layer: Layer, raw: dict, earlier: tuple[str, ...]) -> tuple[dict, dict]:
    """(the layer's parameters without its FROM keys, {input name: source})."""
    sources = default_sources(layer, earlier)
    params = {}
    for name, value in raw.items():
        if name != FROM and not name.startswith(FROM + "."):
            params[name] = value
            continue
        which = layer.inputs[0].name if name == FROM else name[len(FROM) + 1 :]
        if which not in sources:
            raise ValidationError(
                key, name, f"{which!r} is not an input of {layer.name}; it has " + ", ".join(layer.input_names)
            )
        source = str(value).strip()
        if source != INPUT and source not in earlier:
            choices = ", ".join((INPUT,) + earlier)
            raise ValidationError(key, name, f"must be {INPUT} or an earlier layer of the chain ({choices})", value)
        sources[which] = source
    return params, sources


def resolve(names, raw: dict | None = None, input_shape=None) -> Chain:
    """The chain of `names` (or `convolution+activation`) with raw parameters by key ({key: {param: value}}, or
    flat {"key.param": value}); `input_shape`: the first layer's example shape by default. ValidationError names
    the layer's key and its rule."""
    names = parse_names(names)
    keys = keys_of(names)
    raw = raw or {}
    by_key = (
        raw if all(isinstance(v, dict) for v in raw.values()) and set(raw) <= set(keys) else split_params(keys, raw)
    )
    shape = tuple(int(d) for d in (input_shape or example_shape(names)))
    outputs: dict[str, tuple] = {INPUT: shape}
    links: list[Link] = []
    for key, name in zip(keys, names):
        layer = LAYERS[name]
        params_raw, sources = _sources(key, layer, dict(by_key.get(key, {})), tuple(link.key for link in links))
        shapes = {n: outputs[s] for n, s in sources.items()}
        try:
            params = layer.resolve(params_raw, shapes)
            # a layer without a cost keeps its (first) input's shape, one operation per value, as `Layer.resolve` counts
            same = shapes[layer.input_names[0]]
            out, macs = layer.cost(params, layer.shape_arg(shapes))[:2] if layer.cost else (same, math.prod(same))
        except ValidationError as exc:  # named by its key in the chain: convolution2.stride_nd
            raise ValidationError(key, exc.param, exc.rule, exc.value) from None
        links.append(Link(key, layer, params_raw, params, sources, shapes, tuple(int(d) for d in out), int(macs)))
        outputs[key] = links[-1].output_shape
    read = {s for link in links for s in link.sources.values()}
    for link in links[:-1]:
        if link.key not in read:
            raise ValidationError(
                link.key, FROM, "its output feeds no later layer: every layer but the last must be read by one after it"
            )
    chain = Chain(tuple(links), shape)
    over = budget.over_work(
        chain.macs, "summed over the chain's layers", "a layer's size or the input's"
    ) or _over_held(chain)
    if over:
        raise ValidationError(CHAIN, "budget", over)
    return chain


def _over_held(chain: Chain) -> str | None:
    cap = 2 * budget.max_elements()
    if chain.elements <= cap:
        return None
    return (
        f"the chain keeps every tensor (input, intermediates, output): {chain.elements:,} values together, "
        f"more than {cap:,} (twice PLAYGROUND_MAX_ELEMENTS); lower the input's size or remove a layer"
    )


# -- the reference ---------------------------------------------------------------------------------------------
def feed_of(link: Link, tensors: dict) -> dict:
    return {n: tensors[s] for n, s in link.sources.items()}


def chain_input(chain: Chain, x=None) -> np.ndarray:
    """The chain's input: `x` as float32 (the first layer's example where None), checked against the chain's shape."""
    x = example_input(chain.names, chain.input_shape) if x is None else np.asarray(x, np.float32)
    if tuple(x.shape) != chain.input_shape:
        raise ValidationError(
            CHAIN, "input", f"has shape {tuple(x.shape)}; the chain was resolved for {chain.input_shape}"
        )
    return np.ascontiguousarray(x, dtype=np.float32)


def compute(chain: Chain, x: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every tensor along the chain, {INPUT: x, key: that layer's output, …} (read-only arrays, `core.references`):
    each layer's reference in its own precision (emulated below FP32) on its sources. A quantize scale of 0 (from
    the data) is set from the tensors the layer reads, in the chain's links (so the engine is built with it)."""
    from .core import references

    tensors, chain.links = references(chain.links, {INPUT: chain_input(chain, x)})
    return tensors


# -- a cell's receptive field -----------------------------------------------------------------------------------
TRACE_LIMIT = 20_000  # cells kept per tensor while tracing: past it the trace says it stopped
TRACE_WORK = 1_000_000  # cells read while tracing, kept or not: a whole group read for each cell of a whole group
# (two Normalizations on 96 × 96: 9,216 × 9,216) is bounded by the work, not by the cells kept


def receptive_field(chain: Chain, key: str, index) -> tuple[dict[str, list[tuple]], bool]:
    """({tensor key (INPUT, or a layer's key): the cells of it that cell `index` of tensor `key` depends on}, whether
    the trace stopped at TRACE_LIMIT cells of a tensor or TRACE_WORK cells read), traced back through every layer by
    its declared `reads` (a layer without them computes each cell from the same cell: activations, scales); cells
    outside a tensor (padding) read nothing and are left out."""
    keys = (INPUT,) + chain.keys
    if key not in keys:
        raise ValidationError(CHAIN, "pick", f"{key!r} is no tensor of this chain; it has " + ", ".join(keys))
    shapes = {INPUT: chain.input_shape} | {link.key: link.output_shape for link in chain.links}
    index = tuple(int(i) for i in index)
    if len(index) != len(shapes[key]) or not all(0 <= i < n for i, n in zip(index, shapes[key])):
        raise ValidationError(CHAIN, "pick", f"must be a cell of {key}, whose shape is {shapes[key]}", index)
    need: dict[str, dict[tuple, None]] = {key: {index: None}}
    work, boxes = 0, set()  # a group read again (every cell of a Normalization's group reads it) is read once
    for link in reversed(chain.links[: keys.index(key)]):
        cells = need.get(link.key)
        if not cells:
            continue
        arg = link.layer.shape_arg(link.shapes)
        for cell in cells:
            read = link.layer.reads(link.params, arg, cell) if link.layer.reads else [cell]
            by_input = read if isinstance(read, dict) else {link.layer.inputs[0].name: read}
            for name, found in by_input.items():
                source, shape = link.sources[name], link.shapes[name]
                into = need.setdefault(source, {})
                if isinstance(found, Box):
                    if (source, found.lo, found.hi) in boxes:
                        continue
                    boxes.add((source, found.lo, found.hi))
                work += len(found)
                if work > TRACE_WORK:
                    return {k: list(v) for k, v in need.items()}, True
                for c in found:
                    c = tuple(int(v) for v in c)
                    if all(0 <= v < n for v, n in zip(c, shape)):
                        if len(into) >= TRACE_LIMIT:
                            return {k: list(v) for k, v in need.items()}, True
                        into[c] = None
    return {k: list(v) for k, v in need.items()}, False


# -- the network -----------------------------------------------------------------------------------------------
def network_of(chain: Chain, marked: bool = False) -> eng.Network:
    """The chain as one network (`engine.network_from` builds it): the chain's input as `inputT0`, each layer a node
    keyed by its key, the last output alone marked (marked=True: every intermediate too, as a debugging build marks
    them, which changes what TensorRT fuses)."""
    return eng.Network({INPUT: chain.input_shape}, {INPUT: eng.INPUT_NAME}, chain.links, marked)


ChainBuild = NetworkBuild  # the chain's engine: its layers with the chain's keys each computes


def build(chain: Chain, backend=None, cache=None, marked: bool = False) -> ChainBuild:
    """The chain's engine (from the engine cache where it was built before), mapped onto the chain; marked=True: the
    labelled second build with every intermediate marked as an output."""
    return build_network(network_of(chain, marked), backend, cache)


# -- one call: resolve, compute, build ---------------------------------------------------------------------------
@dataclass
class ChainEvaluation:
    chain: Chain
    tensors: dict[str, np.ndarray]  # INPUT and every layer's output, by key
    engine: ChainBuild
    messages: list[str] = field(default_factory=list)

    @property
    def output(self) -> np.ndarray:
        return self.tensors[self.chain.keys[-1]]

    def to_json(self) -> dict:
        from ..base.params import jsonable

        return {
            "chain": "+".join(self.chain.names),
            "network": {
                "layers": list(self.chain.keys),
                "sources": {link.key: link.sources for link in self.chain.links},
            },
            "params": {link.key: {k: jsonable(v) for k, v in link.params.items()} for link in self.chain.links},
            "input_shape": list(self.chain.input_shape),
            "shapes": {k: list(v.shape) for k, v in self.tensors.items()},
            "output_shape": list(self.output.shape),
            "output_source": "reference",
            "macs": self.chain.macs,
            "engine": self.engine.summary(),
            "messages": self.messages,
        }


def evaluate(
    names, raw: dict | None = None, x=None, *, backend=None, cache=None, build_engine: bool = True
) -> ChainEvaluation:
    """The chain's every tensor (the references) and its engine, built for deployment (`core.evaluate_network`).
    Nothing runs the engine here: the tensors shown are the references' (a GPU run of a chain is not part of the
    playground yet)."""
    chain = resolve(names, raw, None if x is None else tuple(np.shape(x)))
    ev = evaluate_network(
        network_of(chain), {INPUT: chain_input(chain, x)}, backend=backend, cache=cache, build=build_engine
    )
    chain.links, engine = ev.nodes, ev.engine
    messages = []
    if engine.status in ("built", "cached"):
        messages.append(
            f"The engine was built by {engine.builder}'s builder (TensorRT-RTX's fusions are not full "
            "TensorRT's) and was not run here: the tensors are the NumPy references'."
        )
    elif engine.status == "not_built":
        messages.append("No TensorRT builds here: the tensors are the NumPy references', and there is no engine.")
    for k in engine.absorbed:
        messages.append(f"{k}: no engine layer names it: its work went into data movement or TensorRT removed it.")
    return ChainEvaluation(chain, ev.tensors, engine, messages)
