"""A chain on the stage, in plain data: what the stage and the server say to each other about a chain (its
describe, a request's parameters read back, its answer, a refusal), beside protocol.py's of a layer and built from
it. A chain's layer is its layer spelled by its key (`keyed`: `convolution2.stride_nd.h`, as `--set` spells it), so
each of its controls is the control a layer page draws, and each of its query keys reads back as a layer's does.

The chain's structure (its layers, and which source each reads: `KEY.from`) is the page's and the seat's
(`Spec`); a request carries the layers' parameters only. Python stays the only validator (chain.resolve).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..base import numbers
from ..base.errors import ValidationError
from ..base.layer import Layer
from ..layers import LAYERS
from ..network import chain as C
from . import chain_address as A
from . import chaintrace, protocol

LAYER = C.CHAIN  # the name a chain's stage goes by (its seat's, its URL table's)


@functools.cache
def keyed(name: str, key: str) -> Layer:
    """Layer `name` spelled by its key in a chain: its query keys, controls and errors say `KEY.PARAM`."""
    layer = LAYERS[name]
    return layer if key == name else dataclasses.replace(layer, name=key)


@dataclass(frozen=True)
class Spec:
    """A chain's structure: its layers' names and each layer's fixed sources ({KEY: {from key: source}}, as
    tuples), which a stage's requests do not change (adding, removing or rewiring a layer opens another page)."""

    names: tuple[str, ...]
    sources: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return C.keys_of(self.names)

    def fixed(self, key: str) -> dict:
        return dict(dict(self.sources).get(key, ()))


def spec_of(address: A.Address) -> tuple[Spec, dict]:
    """(the address's structure, its layers' parameters as texts {KEY: {param: text}})."""
    sources, params = [], {}
    for key, given in zip(address.keys, address.params):
        wired = {k: v for k, v in given.items() if k == C.FROM or k.startswith(C.FROM + ".")}
        sources.append((key, tuple(sorted(wired.items()))))
        params[key] = {k: v for k, v in given.items() if k not in wired}
    return Spec(tuple(address.names), tuple(sources)), params


def first_shapes(chain: C.Chain) -> dict[str, tuple]:
    """Each layer's first input's shape: what its query keys are spelled for (an axis per dimension)."""
    return {link.key: link.shapes[link.layer.inputs[0].name] for link in chain.links}


def query_keys(spec: Spec, shapes: dict) -> list[str]:
    return [k for key, name in zip(spec.keys, spec.names) for k in protocol.query_keys(keyed(name, key), shapes[key])]


def raw_of(spec: Spec, query: dict, shapes: dict) -> dict:
    """The chain's raw parameters ({KEY: {param: value}}, with its fixed sources) that `query`'s texts set, read per
    layer as protocol.raw_params reads a layer's; `shapes`: each layer's first input's shape. A key of no layer of
    the chain is a RequestError naming it."""
    if not isinstance(query, dict) or len(query) > protocol.MAX_QUERY_KEYS * C.MAX_LAYERS:
        raise protocol.RequestError("params must be an object of query keys")
    keys = spec.keys
    for k in query:
        if not isinstance(k, str) or k.partition(".")[0] not in keys:
            raise protocol.RequestError("names no layer of this chain: " + ", ".join(keys), str(k)[:80])
    out = {}
    for key, name in zip(keys, spec.names):
        mine = {k: v for k, v in query.items() if k.partition(".")[0] == key}
        out[key] = {**protocol.raw_params(keyed(name, key), shapes[key], mine), **spec.fixed(key)}
    return out


def resolve(spec: Spec, query: dict, input_shape: tuple, shapes: dict) -> tuple[dict, C.Chain]:
    """(raw parameters, the resolved chain) of a request's texts. A layer's texts are read for its input's shape,
    which the layers before it decide: read with the last known shapes (`shapes`), then again where the chain
    resolved to others (a key's default fill and what a layer leaves unused follow its input's shape), so that
    what is read is what the chain's own shapes say."""
    for _ in range(3):
        raw = raw_of(spec, query, shapes)
        chain = C.resolve(spec.names, raw, input_shape)
        now = first_shapes(chain)
        if now == shapes:
            break
        shapes = now
    return raw, chain


def same(a: C.Chain, b: C.Chain) -> bool:
    """Whether two resolved chains are one configuration (a follow-up's and the answer's it follows)."""
    from ..base.params import same_params

    return (
        a.keys == b.keys
        and a.input_shape == b.input_shape
        and all(x.sources == y.sources and same_params(x.params, y.params) for x, y in zip(a.links, b.links))
    )


def query_of(chain: C.Chain) -> dict[str, str]:
    """Every layer's resolved parameters as the stage's keys spell them."""
    out = {}
    for link in chain.links:
        out |= protocol.query_of(keyed(link.layer.name, link.key), link.params, link.shapes[link.layer.inputs[0].name])
    return out


def controls(chain: C.Chain) -> list[dict]:
    """Every layer's controls (protocol.controls, its keys spelled by the layer's key), in chain order, each named
    `KEY.PARAM` and grouped by its layer (`group`; `group_title`: its layer's title and the tensors it reads)."""
    out = []
    for link in chain.links:
        layer = keyed(link.layer.name, link.key)
        title = f"{link.layer.title} · reads {', '.join(link.sources[i.name] for i in link.layer.inputs)}"
        for c in protocol.controls(layer, link.params, link.shapes[link.layer.inputs[0].name]):
            out.append(c | {"name": f"{link.key}.{c['name']}", "group": link.key, "group_title": title})
    return out


def resets(chain: C.Chain) -> dict:
    return {
        k: v
        for link in chain.links
        for k, v in protocol.resets(
            keyed(link.layer.name, link.key), link.params, link.shapes[link.layer.inputs[0].name]
        ).items()
    }


def switched(spec: Spec, shapes: dict) -> dict:
    return {
        k: v
        for key, name in zip(spec.keys, spec.names)
        for k, v in protocol.switched(keyed(name, key), shapes[key]).items()
    }


def title(spec: Spec) -> str:
    return "Chain: " + " → ".join(LAYERS[n].title for n in spec.names)


def describe(spec: Spec, base: C.Chain) -> dict:
    """What the chain's page tells its stage before any evaluation: as protocol.describe says of a layer, the
    defaults being the chain the page starts from (a starter's values, where a link names one: a key left out of
    the address means the starter's value)."""
    shapes = first_shapes(base)
    return {
        "layer": LAYER,
        "title": title(spec),
        "summary": "",
        "keys": query_keys(spec, shapes),
        "controls": controls(base),
        "defaults": query_of(base),
        "examples": [],
        "precisions": [],
        "compare_choices": [],
        "resets": resets(base),
        "url": {
            "compare": protocol.compare_key(LAYER),  # no compare mode on a chain: a key no link sets
            "cell": protocol.cell_key(LAYER, ""),
            "old_cell": protocol.cell_key(LAYER, "", old=True),
            "view": list(protocol.VIEW_KEYS),
            # a parameter with axes as older chain links spell it whole (`convolution.stride_nd=2,2`): read as the
            # page opens, then written per axis
            "dropped": sorted({k.rpartition(".")[0] for k in switched(spec, shapes)} | whole_keys(spec, shapes)),
            "switched": switched(spec, shapes),
        },
    }


def whole_keys(spec: Spec, shapes: dict) -> set[str]:
    """The keys of the parameters the stage spells per axis, as older chain links spell them whole."""
    return {
        protocol.key(keyed(name, key), p)
        for key, name in zip(spec.keys, spec.names)
        for p in LAYERS[name].params
        if p.along_axes
    }


def structure(chain: C.Chain, build: C.ChainBuild | None) -> dict:
    """The chain as drawn around its figures: each layer with the tensors it reads (its inputs' sources, in order),
    and the engine's layers with the chain layers each computes (empty while the build is pending)."""
    engine = []
    if build is not None and build.status in ("built", "cached"):
        engine = [
            {"name": e["name"], "kernel": chaintrace.kernel_of(e), "fuses": list(e["fuses"])}
            for e in build.layers
            if e["fuses"]
        ]
    return {
        "layers": [
            {"key": link.key, "layer": link.layer.name, "sources": [link.sources[i.name] for i in link.layer.inputs]}
            for link in chain.links
        ],
        "engine": engine,
        "builder": build.builder if build is not None else "",
    }


def verdict(ev: C.ChainEvaluation, backend, trace: bool = True) -> dict:
    """The engine's part of a chain's answer (what its build, which follows the answer, changes): the badge, the
    engine's status, the notes, and the engine's layers on the chain; `trace`: the read maps of the hover trace too
    (they follow the answer with the verdict, off a key press's way)."""
    e = ev.engine
    status = e.status
    if not backend.can_build:
        detail = f"no TensorRT builder: engine {protocol.ENGINE_STATUS['not_built']}"
    else:
        detail = f"{backend.title} engine " + protocol.ENGINE_STATUS.get(status, protocol.ENGINE_STATUS["pending"])
    computing = [layer for layer in e.layers if layer["role"] == "compute"]
    fused = [" + ".join(layer["fuses"]) for layer in e.layers if len(layer["fuses"]) > 1]
    messages = list(ev.messages)
    if status in ("built", "cached"):
        messages.insert(
            0,
            f"The engine: {len(ev.chain.keys)} chain layer(s) → {len(e.layers)} engine layer(s), "
            f"{len(computing)} computing"
            + (f"; fused: {'; '.join(fused)}" if fused else "; nothing fused" if len(ev.chain.keys) > 1 else ""),
        )
    refused = e.report.error if e.report is not None and status in ("refused", "failed") else None
    return {
        "source": {
            "label": "The tensors are the NumPy references'; the engine is built, not run here",
            "detail": detail,
            "tensorrt": False,
        },
        "engine": {
            "status": status,
            "refusal": refused if status == "refused" else None,
            "error": refused if status == "failed" else None,
            "build_ms": e.report.build_ms if e.report is not None else None,
        },
        "messages": messages,
        "chain": structure(ev.chain, e),
        **({"trace": chaintrace.trace_maps(ev.chain)} if trace else {}),
    }


def opinion_badge(ev: C.ChainEvaluation, backend, cache) -> dict | None:
    """ONNX Runtime's opinion of the chain's ONNX export (and TensorRT's ONNX parser's of its fusion) as the stage's
    badge says it; None where there is no ONNX export to judge."""
    try:
        from ..onnx.chain import opinions
    except ImportError:  # onnx or onnxruntime not installed: no badge
        return None
    o = opinions(ev, backend, cache)
    ort, parser = o["onnxruntime"], o["onnx_parser"] or {}
    if ort.get("status") != "ran":
        return None
    said = [
        f"ONNX Runtime {ort['version']} on the chain's ONNX export against {ort['compared_to']}: max |difference| "
        f"{numbers.shortest(ort['max_abs_diff'])}"
    ]
    if parser.get("status") in ("built", "cached"):
        same = {True: "fuses as", False: "fuses otherwise than", None: "was built beside"}[parser["same_fusion"]]
        said.append(f"TensorRT's ONNX parser ({parser['parser']}): its engine {same} {parser['compared_to']}.")
    return {
        "agrees": bool(ort["agrees"]),
        "text": "ONNX Runtime ✓" if ort["agrees"] else "ONNX Runtime ✗ differs",
        "title": ". ".join(said),
    }


def figure_title(key: str, last: bool) -> str:
    """A tensor's title: its layer's key (`input` for the chain's), the output named (the stats line gives its
    shape)."""
    return f"{key} (output)" if last else key


def answer(
    spec: Spec,
    resolved: C.Chain,
    ev: C.ChainEvaluation,
    backend,
    held: frozenset | None = frozenset(),
    pages: dict | None = None,
    digests: dict | None = None,
) -> dict:
    """The chain's evaluation as the stage draws it: a figure per tensor (`which`: `input`, then each layer's key,
    the output last), each layer's controls and the query as the stage's keys spell it (`resolved`: the chain before
    its data's quantize scales were set), the engine's verdict."""
    last = ev.chain.keys[-1]
    figures = []
    for key, a in ev.tensors.items():
        t = protocol.tensor(a, held, (pages or {}).get(key), values=(digests or {}).get(key))
        figures.append(
            {"which": key, "title": figure_title(key, key == last), "tensor": t, "range": protocol.ranged(t)}
        )
    shape = ev.chain.input_shape
    return {
        "layer": LAYER,
        "title": title(spec),
        "query": query_of(resolved),
        "controls": controls(resolved),
        "compare_choices": [],
        "figures": figures,
        "shapes": f"Input {tuple(shape)} → Output {tuple(ev.output.shape)}",
        "formula": None,
        **verdict(ev, backend, trace=False),
        "precision": None,
        "explain": [],
        "example": None,
    }


def problem(exc: ValidationError, spec: Spec, shapes: dict) -> dict:
    """A refused chain: the message, and the query keys of the parameter it names (`KEY.PARAM`: the stage marks
    them, its last good chain stays drawn); a rule of the chain as a whole (its budget) marks none."""
    keys = [
        k
        for k in query_keys(spec, shapes)
        if k == f"{exc.layer}.{exc.param}" or k.startswith(f"{exc.layer}.{exc.param}.")
    ]
    return {"message": str(exc), "param": f"{exc.layer}.{exc.param}", "rule": exc.rule, "keys": keys}


def input_of(address: A.Address) -> np.ndarray:
    """The chain's input (the address's pattern and shape; the first layer's example where it names none)."""
    x = address.input()
    if x is None:
        first = LAYERS[address.names[0]]
        x = first.example_of(first.inputs[0].name)
    return np.ascontiguousarray(x, dtype=np.float32)
