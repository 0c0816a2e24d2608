"""Export a chain as a standalone Python script (no playground import), as `export.export_script` does one layer.

The script holds the chain's input, every layer's resolved parameters by key, each layer's own construction
(copied, `export.build_source`, renamed `build_LAYER`), the precision code, and one `build_chain` that wires them
as `playground.trt.engine.network_from` does (sources, precision around each layer, names and metadata); the rest,
how to run it, the precision code and the runner, is what every export carries (`export._script`).
"""

from __future__ import annotations

import inspect
import re

import numpy as np

from ..trt.engine import INPUT_NAME
from . import chain as C
from .export import (
    INLINE_LIMIT,
    _script,
    array_literal,
    build_source,
    set_options,
    value_literal,
)


def playground_command(chain: C.Chain, x: np.ndarray) -> str:
    """The `python -m playground run A+B` line for this chain: the parameters that differ from the defaults and the
    sources that differ from the chain's own, as --set KEY.NAME=VALUE."""
    parts = ["python -m playground run", "+".join(chain.names)]
    one = len(chain.links) == 1  # a chain of one layer is that layer's own run: its parameters without a key
    for link in chain.links:
        parts += set_options(link.layer, link.params, link.shapes, "" if one else f"{link.key}.", f"{link.key}.")
        default = C.default_sources(link.layer, chain.keys[: chain.keys.index(link.key)])
        for name, source in link.sources.items():
            if source != default[name]:
                parts.append(f"--set {link.key}.{C.from_key(link.layer, name)}={source}")
    example = C.example_input(chain.names, chain.input_shape)
    if x.shape != C.example_shape(chain.names) or not np.array_equal(x, example, equal_nan=True):
        parts.append("--input input.npy")
    return " ".join(parts)


def _renamed(source: str, old: str, new: str) -> str:
    return re.sub(rf"^def {re.escape(old)}\(", f"def {new}(", source, count=1, flags=re.MULTILINE)


# The wiring, written out in the script: the same steps as playground.trt.engine.network_from.
_WIRING = '''

def build_chain(trt, network, x, p):
    """Every layer of the chain on its sources, in its own precision; network layers named by key, each with
    metadata [KEY] (TensorRT-RTX's verbose layer dump lists, per engine layer, the keys it computes)."""
    tensors = {"input": x}
    for key, layer, sources, index_inputs in CHAIN:
        q = PARAMS[key]
        xs = {n: tensors[s] if n in index_inputs else
              precision_input(trt, network, tensors[s], q["precision"], q["quantize_scale"])
              for n, s in sources.items()}
        typed = TypedNetwork(trt, network, q["precision"]) if q["precision"] in ("FP16", "BF16") else None
        before = network.num_layers
        y = BUILDS[layer](trt, typed or network, xs if len(xs) > 1 else next(iter(xs.values())), q)
        y = precision_output(trt, network, y, q["precision"])
        added = range(before, network.num_layers)
        for n, i in enumerate(added):
            network.get_layer(i).name = key if i == added[-1] else f"{key}/{n + 1}"
            if hasattr(network.get_layer(i), "metadata"):
                network.get_layer(i).metadata = f"[{key}]"
        tensors[key] = y
    return y
'''


def export_chain_script(names, raw: dict | None = None, x: np.ndarray | None = None) -> str:
    """A self-contained script that builds (and where it can, runs) exactly this chain; ValidationError for a chain
    the playground refuses."""
    chain = C.resolve(names, raw, None if x is None else tuple(np.shape(x)))
    tensors = C.compute(chain, x)  # the data's quantize scales, as the playground builds them
    layers = {link.layer.name: link.layer for link in chain.links}
    sources = {
        name: _renamed(build_source(layer), layer.build.__name__, f"build_{name}") for name, layer in layers.items()
    }
    command = playground_command(chain, tensors[C.INPUT])
    embedded = tensors[C.INPUT].size > INLINE_LIMIT or any(
        isinstance(v, np.ndarray) and v.size > INLINE_LIMIT for link in chain.links for v in link.params.values()
    )
    header = [
        "#!/usr/bin/env python3",
        f"# TensorRT Layer Playground export: the chain {' → '.join(chain.keys)}",
        "#",
        "# Builds the whole chain as one TensorRT network (only its last output marked, as for deployment), prints",
        "# TensorRT's output shape ('output shape: (...)'), and where a GPU that this TensorRT supports is present,",
        "# runs the engine and prints input and output (inputH0 / outputH0).",
        "#",
        f"# Input '{INPUT_NAME}': float32 {chain.input_shape}",
        *[
            f"# {link.key}: {link.layer.title}, reads " + ", ".join(f"{n} from {s}" for n, s in link.sources.items())
            for link in chain.links
        ],
    ]
    # the chain's own wrapper: TF32 is a flag of the whole build (any layer's), each layer's precision is in PARAMS
    p = {"precision": "TF32" if C.network_of(chain).tf32 else "FP32", "quantize_scale": 1.0}
    body = [
        "",
        "",
        f"data = {array_literal(tensors[C.INPUT])}",
        f"p = {p!r}  # the chain's own wrapper: each layer's precision is in PARAMS",
        "",
        "# (key, layer, {input name: source}, its index inputs): a source is 'input' (the chain's input) or an",
        "# earlier key.",
        "CHAIN = [",
        *[
            f"    ({link.key!r}, {link.layer.name!r}, {link.sources!r}, {link.layer.index_inputs!r}),"
            for link in chain.links
        ],
        "]",
        "PARAMS = {",
    ]
    for link in chain.links:
        body.append(f"    {link.key!r}: {{")
        body += [f"        {k!r}: {value_literal(v, '        ')}," for k, v in link.params.items()]
        body.append("    },")
    body += ["}", ""]
    for name, layer in layers.items():
        body += [
            "",
            (
                f"# {name}'s construction, copied from the playground's declaration "
                f"({inspect.getsourcefile(layer.build).rsplit('/', 1)[-1]})."
            ),
            sources[name].rstrip("\n"),
            "",
        ]
    body += [
        "",
        "BUILDS = {" + ", ".join(f"{n!r}: build_{n}" for n in layers) + "}",
        _WIRING.rstrip("\n"),
        "",
        "",
        "BUILD = build_chain",
    ]
    doc = (
        f"Build, and where a GPU allows run, the chain {'+'.join(chain.names)} exactly as configured in the\n"
        "TensorRT Layer Playground."
    )
    return _script(header, "chain", doc, {"x": INPUT_NAME}, (), command, embedded, body)
