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

The reference composes the layers' references (`P.emulate`, each in its own precision) and keeps every tensor.
The engine is the whole chain as one network, built for deployment: only the last output is marked (marking an
intermediate changes what TensorRT fuses). Every network layer a chain layer adds carries its key as its name and
as its metadata `[KEY]`; TensorRT-RTX writes the metadata of the network layers each engine layer computes in its
verbose layer dump, which is how an engine layer's `fuses` are read back.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import numpy as np

from . import budget
from . import precision as P
from .box import Box
from .errors import ValidationError
from .layer import Layer
from .layers import LAYERS
from .stage import protocol
from .trt import engine as eng

MAX_LAYERS = 6
INPUT = "input"  # the chain's input, as a source
FROM = "from"  # KEY.from=SOURCE, KEY.from.NAME=SOURCE
CHAIN = "chain"  # what errors about the chain as a whole are named by
FORMAT = "chain-1"  # part of the engine cache key: the network's naming and metadata


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
            default, first = default_sources(link.layer, self.keys[:i]), link.layer.inputs[0].name
            out[link.key] = dict(link.raw) | {
                FROM if n == first else f"{FROM}.{n}": s for n, s in link.sources.items() if s != default[n]
            }
        return out

    def flat_params(self) -> dict:
        """{KEY.PARAM: value} of every layer (the cache key, the JSON)."""
        return {f"{link.key}.{k}": v for link in self.links for k, v in link.params.items()}


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
    first = LAYERS[names[0]]
    shape = tuple(int(d) for d in (input_shape or first.input_shape(first.inputs[0].name)))
    outputs: dict[str, tuple] = {INPUT: shape}
    links: list[Link] = []
    for key, name in zip(keys, names):
        layer = LAYERS[name]
        params_raw, sources = _sources(key, layer, dict(by_key.get(key, {})), tuple(link.key for link in links))
        shapes = {n: outputs[s] for n, s in sources.items()}
        try:
            params = layer.resolve(params_raw, shapes if layer.several else shapes[layer.inputs[0].name])
            arg = layer.shape_arg(shapes)
            out, macs = (
                (tuple(layer.cost(params, arg)[0]), int(layer.cost(params, arg)[1]))
                if layer.cost
                else (shapes[layer.inputs[0].name], math.prod(shapes[layer.inputs[0].name]))
            )
        except ValidationError as exc:  # named by its key in the chain: convolution2.stride_nd
            raise ValidationError(key, exc.param, exc.rule, exc.value) from None
        links.append(Link(key, layer, params_raw, params, sources, shapes, tuple(int(d) for d in out), macs))
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


def compute(chain: Chain, x: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every tensor along the chain, {INPUT: x, key: that layer's output, …} (read-only arrays): each layer's
    reference in its own precision (emulated below FP32) on its sources. A quantize scale of 0 (from the data) is set from the tensor the
    layer reads, in the chain's links (so the engine is built with the same scale)."""
    from .core import _references

    first = chain.links[0].layer
    x = first.example_of(first.inputs[0].name, chain.input_shape) if x is None else np.asarray(x, np.float32)
    if tuple(x.shape) != chain.input_shape:
        raise ValidationError(
            CHAIN, "input", f"has shape {tuple(x.shape)}; the chain was resolved for {chain.input_shape}"
        )
    tensors = {INPUT: np.ascontiguousarray(x, dtype=np.float32)}
    links = []
    for link in chain.links:
        xs = feed_of(link, tensors)
        link = Link(**{**link.__dict__, "params": P.with_data_scale(link.params, xs)})
        # The references' memo the layer pages share: a page's rerun recomputes no layer whose inputs are unchanged.
        y = _references.get(link.layer, link.params, xs if link.layer.several else xs[link.layer.inputs[0].name])
        tensors[link.key] = np.ascontiguousarray(y, dtype=np.float32)
        links.append(link)
    chain.links = tuple(links)
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
def metadata_of(key: str) -> str:
    return f"[{key}]"


def network_from_chain(trt, builder, chain: Chain, marked: bool = False):
    """(network, arrays it reads at build time): the chain's input as `inputT0`, each layer's construction in its
    own precision (casts or a Q/DQ pair around it, as a one-layer network has them), its network layers named
    `KEY` (the last) and `KEY/1`, `KEY/2`, … (the rest), each with metadata `[KEY]`; the last output alone is marked,
    `outputT0`, float32. marked=True: every intermediate too (`KEY.output`), as a debugging build marks them, which
    changes what TensorRT fuses."""
    network = builder.create_network(eng.network_flags(trt))
    tensors = {INPUT: network.add_input(eng.INPUT_NAME, trt.DataType.FLOAT, chain.input_shape)}
    kept = []
    for link in chain.links:
        before = network.num_layers
        p = link.params
        xs = {
            n: P.precision_input(trt, network, tensors[s], p["precision"], p["quantize_scale"])
            for n, s in link.sources.items()
        }
        typed = P.TypedNetwork(trt, network, p["precision"]) if p["precision"] in P.FLOAT_TYPES else None
        y = link.layer.construct(trt, typed or network, xs, p)
        y = P.precision_output(trt, network, y, p["precision"])
        kept += typed.kept if typed else []
        added = range(before, network.num_layers)
        for n, i in enumerate(added):
            layer = network.get_layer(i)
            layer.name = link.key if i == added[-1] else f"{link.key}/{n + 1}"
            if hasattr(layer, "metadata"):
                layer.metadata = metadata_of(link.key)
        y.name = f"{link.key}.output"
        tensors[link.key] = y
    y = tensors[chain.links[-1].key]
    y.name = eng.OUTPUT_NAME
    network.mark_output(y)
    if marked:
        for link in chain.links[:-1]:
            network.mark_output(tensors[link.key])
    return network, kept


# -- the engine's layers, mapped onto the chain's -----------------------------------------------------------------
_METADATA = re.compile(r"\[([^\[\]]+)\]")
_RTX_LINE = re.compile(r"^Name: (?P<name>[^,]*),.*?Metadata: (?P<metadata>.*)$")
_FOREIGN = re.compile(r"ForeignNode\[(?P<first>[^\]]*?)\.\.\.(?P<last>[^\]]*)\]")
MOVES = ("Move", "Tran", "Copy", "Reformat", "Shuffle", "NoOp", "Reshape")
FUSION_WORDS = re.compile(r"fusion|fusing|fused|ForeignNode|Removing|eliminat", re.IGNORECASE)


def metadata_by_layer(records) -> dict[str, str]:
    """{engine layer name: its Metadata} from TensorRT-RTX's verbose layer dump (empty where there is none)."""
    for _, message in records:
        if message.startswith("Layers:"):
            return {m["name"]: m["metadata"].strip() for m in map(_RTX_LINE.match, message.splitlines()) if m}
    return {}


def fuses_of(engine_layer: dict, keys: tuple[str, ...]) -> list[str]:
    """The chain's layers this engine layer computes, in chain order: from its metadata where TensorRT wrote it,
    else from its name (full TensorRT joins fused layers' names with "+"; a Myelin node is
    `{ForeignNode[FIRST...LAST]}`, every layer from FIRST to LAST)."""
    named = set()
    meta = engine_layer.get("metadata") or ""
    for token in _METADATA.findall(meta):
        named.add(token)
    if not meta:
        name = engine_layer.get("name", "")
        for m in _FOREIGN.finditer(name):
            first, last = (t.split("/")[0] for t in (m["first"], m["last"]))
            if first in keys and last in keys:
                named.update(keys[keys.index(first) : keys.index(last) + 1])
        for part in re.split(r"\s*\+\s*", name):
            named.add(part.split("/")[0].strip())
    return [k for k in keys if k in named]


def role_of(engine_layer: dict) -> str:
    """compute | data movement (a Move, Transpose, Copy or reformat kernel: it changes where values lie, not them)."""
    if engine_layer.get("fuses"):
        return "compute"
    name, kind = engine_layer.get("name", ""), engine_layer.get("type", "")
    ops = re.match(r"__myl_([A-Za-z]+?)_", name)
    if kind.lower() in ("reformat", "shuffle", "noop") or (
        ops and all(any(op.startswith(m) for m in MOVES) for op in re.findall(r"[A-Z][a-z]*", ops[1]))
    ):
        return "data movement"
    return "compute"


@dataclass
class ChainBuild:
    """The chain's engine: TensorRT's report, its layers with `fuses` and `role`, and the chain's layers that no
    engine layer names (their work went into data movement, or TensorRT removed it)."""

    report: eng.BuildReport
    status: str  # built | cached | refused | failed | not_built
    builder: str  # which TensorRT made it
    layers: list[dict] = field(default_factory=list)
    absorbed: list[str] = field(default_factory=list)
    fusion_log: list[str] = field(default_factory=list)
    cache_key: str | None = None
    marked: bool = False  # a second, labelled build: every intermediate marked as an output (not for deployment)

    def kernels_of(self, key: str) -> list[int]:
        """The indices of the engine layers that compute chain layer `key`."""
        return [i for i, layer in enumerate(self.layers) if key in layer["fuses"]]

    def summary(self) -> dict:
        r = self.report
        return {
            "status": self.status,
            "builder": self.builder,
            "ran": False,
            "marked_intermediates": self.marked,
            "refusal": r.error if r and r.status != "built" else None,
            "build_ms": r.build_ms if r else None,
            "bytes": r.bytes if r else 0,
            "output_shape": r.output_shape if r else None,
            "cache_key": self.cache_key,
            "layers": self.layers,
            "absorbed": self.absorbed,
            "fusion_log": self.fusion_log,
            "log": [m for m in (r.log if r else []) if m[0] != "VERBOSE"],
        }


def build_report(backend, make_network, settings) -> eng.BuildReport:
    """The network of `make_network(trt, builder) -> (network, what it reads)` built by `backend`'s builder
    (engine._build's steps), each engine layer with its metadata from the verbose dump, and TensorRT's words about
    fusion kept in the log (as VERBOSE records)."""
    trt = backend.trt
    start = time.perf_counter()
    records, engine, error, shape = [], None, None, None
    try:
        with eng._builders_for(trt).builder() as builder, eng.capture(trt, records):
            try:
                network, _kept = make_network(trt, builder)
                shape = [int(d) for d in network.get_output(0).shape]
                engine = eng.engine_bytes_from_network(trt, builder, network, settings)
            except Exception as exc:  # noqa: BLE001 - TensorRT's Python API raises for networks it rejects
                error = str(exc) or type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - no builder here
        return eng.BuildReport(
            "failed", 0.0, None, error=f"{backend.name} {backend.version} could not make a builder here: {exc}"
        )
    build_ms = round((time.perf_counter() - start) * 1e3, 3)
    if engine is None:
        errors = [m for s, m in records if s in ("ERROR", "INTERNAL_ERROR")]
        return eng.BuildReport(
            "refused",
            build_ms,
            shape,
            log=[[s, m] for s, m in records if s in eng.SHOWN_SEVERITIES],
            error=f"{backend.name} {backend.version} refused the network: "
            + ("; ".join(errors) or error or "the build returned no engine"),
        )
    metadata = metadata_by_layer(records)
    layers = [{**layer, "metadata": metadata.get(layer["name"], "")} for layer in eng.layers_from_log(records)]
    words = [["VERBOSE", m] for s, m in records if s == "VERBOSE" and len(m) < 300 and FUSION_WORDS.search(m)]
    return eng.BuildReport(
        "built",
        build_ms,
        shape,
        layers=layers,
        log=[[s, m] for s, m in records if s in eng.SHOWN_SEVERITIES] + words,
        engine=engine,
    )


def build(chain: Chain, backend=None, cache=None, marked: bool = False) -> ChainBuild:
    """The chain's engine (from the engine cache where it was built before), mapped onto the chain; marked=True: the
    labelled second build with every intermediate marked as an output."""
    from .core import default_cache
    from .trt.backend import detect
    from .trt.cache import cache_key

    backend = backend or detect()
    who = f"{backend.name} {backend.version}" if backend.can_build else "none"
    if not backend.can_build:
        return ChainBuild(None, "not_built", who, marked=marked)
    cache = cache or default_cache()
    settings = eng.BuildSettings.from_env()
    key = cache_key(
        f"{FORMAT}:{'marked:' if marked else ''}{'+'.join(chain.names)}",
        {**chain.flat_params(), **{f"{link.key}.{FROM}": link.sources for link in chain.links}},
        chain.input_shape,
        backend,
        settings,
    )
    report, status, _notes = cache.get_or_build(
        key,
        lambda: build_report(backend, lambda trt, builder: network_from_chain(trt, builder, chain, marked), settings),
    )
    out = ChainBuild(report, status if report.status == "built" else report.status, who, cache_key=key, marked=marked)
    if report.status != "built":
        return out
    for layer in report.layers:
        entry = {k: layer.get(k) for k in ("name", "type", "tactic", "inputs", "outputs")}
        entry["fuses"] = fuses_of(layer, chain.keys)
        entry["role"] = role_of(entry)
        out.layers.append(entry)
    out.absorbed = [k for k in chain.keys if not out.kernels_of(k)]
    out.fusion_log = [m for s, m in report.log if s == "VERBOSE"]
    return out


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
        from .params import jsonable

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
    """The chain's every tensor (the references) and its engine, built for deployment. Nothing runs the engine
    here: the tensors shown are the references' (a GPU run of a chain is not part of the playground yet)."""
    shape = None if x is None else tuple(np.shape(x))
    chain = resolve(names, raw, shape)
    tensors = compute(chain, x)
    engine = build(chain, backend, cache) if build_engine else ChainBuild(None, "pending", "")
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
    return ChainEvaluation(chain, tensors, engine, messages)


# -- the chain page's address ---------------------------------------------------------------------------------------
# /chain?layers=convolution,activation&convolution.stride_nd=2,2&activation.type=RELU: every key is hostile input.
LAYERS_KEY, STARTER_KEY, SHAPE_KEY, PATTERN_KEY, PICK_KEY = "layers", "starter", "input.shape", "input.pattern", "pick"
# a chain opened from a model (onnx.as_chain): its input is ONNX Runtime's tensor of the model's run, the model named
# by its digest as a node's link names it; the nodes its layers are, by position; the model's file name, as shown
ONNX_KEY, TENSOR_KEY, NODES_KEY, MODEL_KEY = "input.onnx", "input.tensor", "input.nodes", "input.model"
MODEL_KEYS = (ONNX_KEY, TENSOR_KEY, NODES_KEY, MODEL_KEY)
PAGE_KEYS = (LAYERS_KEY, STARTER_KEY, SHAPE_KEY, PATTERN_KEY, PICK_KEY, *MODEL_KEYS)
OTHER_KEYS = protocol.VIEW_KEYS  # the page's view settings (presenter mode), which the page's own controls read
DEFAULT_LAYERS = ("convolution", "activation")


def patterns() -> dict:
    """The input patterns a link may name: the first layer's example, or one of the spec patterns."""
    from .inputs import arange_pattern, centered_ramp, tile_pattern

    return {
        "example": None,
        "centered_ramp": centered_ramp,
        "tile_pattern": tile_pattern,
        "arange_pattern": arange_pattern,
    }


@dataclass(frozen=True)
class ModelInput:
    """A chain's input taken from a model: the tensor `tensor` of ONNX Runtime's run of the model of `digest` on its
    seeded inputs (what a node's page opens with `real=1`), and the model's nodes the chain's layers are."""

    digest: str
    tensor: str
    nodes: tuple[str, ...] = ()
    name: str = "model.onnx"

    def unnamed(self) -> ModelInput:
        """The same tensor, the chain's layers no longer the model's nodes (a layer added, moved or removed)."""
        return ModelInput(self.digest, self.tensor, (), self.name)

    def query(self) -> dict[str, str]:
        nodes = {NODES_KEY: ",".join(self.nodes)} if self.nodes else {}
        return {ONNX_KEY: self.digest, TENSOR_KEY: self.tensor} | nodes | {MODEL_KEY: self.name}


@dataclass
class Address:
    """What a chain page's address says: the layers, each layer's raw parameters (texts, by position), the input's
    shape and pattern, and every key it refused (with the rule), which the page shows while it draws the rest."""

    names: list[str]
    params: list[dict]  # by position: {param (or from, from.NAME): text}
    shape: tuple | None = None
    pattern: str = "example"
    problems: list[str] = field(default_factory=list)
    pick: tuple[str, tuple] | None = None  # a tensor's key and one of its cells, traced back to the input
    model: ModelInput | None = None  # the input is a model's tensor (the pattern is then not used)

    @property
    def keys(self) -> tuple[str, ...]:
        return keys_of(self.names)

    def raw(self) -> dict:
        """{key: {param: text}} for `resolve`."""
        return {k: dict(p) for k, p in zip(self.keys, self.params)}

    def query(self) -> dict[str, str]:
        """The address as URL keys (a layer's parameters under its key as it is now)."""
        q = {LAYERS_KEY: ",".join(self.names)}
        for key, params in zip(self.keys, self.params):
            q |= {f"{key}.{name}": str(v) for name, v in params.items()}
        if self.shape:
            q[SHAPE_KEY] = ",".join(map(str, self.shape))
        if self.pattern != "example":
            q[PATTERN_KEY] = self.pattern
        if self.pick:
            q[PICK_KEY] = f"{self.pick[0]}:{','.join(map(str, self.pick[1]))}"
        if self.model:
            q |= self.model.query()
        return q

    def input(self) -> np.ndarray | None:
        """The chain's input: the model's tensor, or from the pattern and shape (None: the first layer's example,
        made by `compute`). ValidationError naming input.onnx or input.tensor where the model's tensor is not to be
        had, or is not of the chain's input shape."""
        if self.model:
            from .onnx import kept

            x = kept.model_tensor(self.model.digest, self.model.tensor)
            if self.shape and math.prod(self.shape) != x.size:
                raise ValidationError(
                    "input",
                    "tensor",
                    f"the model's tensor {self.model.tensor!r} is {x.shape}; the chain's {SHAPE_KEY} is {self.shape}",
                )
            return x.reshape(self.shape) if self.shape else x  # the node's shape lifted to its layer's rank
        make = patterns()[self.pattern]
        if make is None:
            if self.shape is None:
                return None
            first = LAYERS[self.names[0]]
            return first.example_of(first.inputs[0].name, self.shape)
        first = LAYERS[self.names[0]]
        return make(self.shape or first.input_shape(first.inputs[0].name))


def starter_of(address: Address):
    """The starter chain this address is exactly (its layers, parameters, shape and pattern), or None."""
    from . import chains

    for s in chains.STARTERS:
        if tuple(address.names) == s.layers and from_query({STARTER_KEY: s.name}).query() == address.query():
            return s
    return None


def from_query(query: dict) -> Address:
    """The address of `query` ({key: text}); a key it cannot use is named in `problems` with its rule, never
    raised: the page draws what the rest says."""
    from . import chains
    from .inputs import parse_shape

    problems: list[str] = []
    text = {str(k): str(v) for k, v in query.items()}
    starter = None
    if STARTER_KEY in text:
        try:
            starter = chains.find(text[STARTER_KEY].strip())
        except KeyError as exc:
            problems.append(f"{STARTER_KEY}: {exc.args[0]}")
    names = list(starter.layers if starter else DEFAULT_LAYERS)
    if LAYERS_KEY in text:
        try:
            names = list(parse_names(text[LAYERS_KEY], ","))
            starter = starter if starter and tuple(names) == starter.layers else None
        except ValidationError as exc:
            problems.append(f"{LAYERS_KEY}: {exc.rule}; showing {', '.join(names)}")
    keys = keys_of(names)
    params: list[dict] = [{} for _ in names]
    if starter:
        for k, v in starter.params.items():
            key, _, name = k.partition(".")
            params[keys.index(key)][name] = str(v)
    address = Address(
        names,
        params,
        starter.input_shape if starter else None,
        starter.pattern.__name__ if starter else "example",
        problems,
    )
    for k, v in text.items():
        if k in (LAYERS_KEY, STARTER_KEY) or k in OTHER_KEYS:
            continue
        if k in MODEL_KEYS:
            continue  # read together, below
        if k == SHAPE_KEY:
            try:
                address.shape = parse_shape(v)
            except ValueError as exc:  # InputError: "input.shape: rule"
                problems.append(str(exc))
            continue
        if k == PICK_KEY:
            where, sep, cell = v.partition(":")
            try:
                address.pick = (where.strip(), tuple(int(c) for c in cell.split(",")))
                if not sep or where.strip() not in (INPUT,) + keys or len(address.pick[1]) > 5:
                    raise ValueError
            except ValueError:
                address.pick = None
                problems.append(
                    f"{PICK_KEY}: must be KEY:INDEX, a tensor of this chain ({', '.join((INPUT,) + keys)}) and "
                    f"one of its cells, e.g. {keys[-1]}:0,0,1,1 (got {v[:40]!r})"
                )
            continue
        if k == PATTERN_KEY:
            if v in patterns():
                address.pattern = v
            else:
                problems.append(f"{PATTERN_KEY}: must be one of {', '.join(patterns())} (got {v[:40]!r})")
            continue
        key, _, name = k.partition(".")
        if key not in keys or not name:
            problems.append(
                f"{k[:60]}: names no layer of this chain ({', '.join(keys)}) and no key of the page "
                f"({', '.join(PAGE_KEYS)})"
            )
            continue
        params[keys.index(key)][name] = v
    address.model = _model_input(text, len(names), problems)
    return address


def _model_input(text: dict, layers: int, problems: list) -> ModelInput | None:
    """The model's tensor the address names (input.onnx and input.tensor, both or neither), or None with each key
    that is wrong named in `problems`."""
    from .blobs import DIGEST

    if not any(k in text for k in MODEL_KEYS):
        return None
    digest, tensor = text.get(ONNX_KEY, "").strip(), text.get(TENSOR_KEY, "")
    nodes = tuple(n for n in text.get(NODES_KEY, "").split(",") if n)
    wrong = [
        f"{ONNX_KEY}: must be a model's content digest (64 hexadecimal digits, as a node's link gives it)"
        f" (got {digest[:40]!r}); the input is the pattern"
        if not DIGEST.match(digest)
        else None,
        f"{TENSOR_KEY}: must name the model's tensor the chain reads, 1 to 200 characters (got {tensor[:40]!r})"
        if not 0 < len(tensor) <= 200
        else None,
        f"{NODES_KEY}: must name one node of the model per layer, {layers}, separated by ',' (got {len(nodes)})"
        if nodes and len(nodes) != layers
        else None,
    ]
    problems += [w for w in wrong if w]
    if any(wrong[:2]):
        return None
    return ModelInput(digest, tensor, nodes if len(nodes) == layers else (), text.get(MODEL_KEY, "model.onnx")[:80])
