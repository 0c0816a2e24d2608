"""The /chain page's address: its URL keys read into what the page shows (`from_query`, which names every key it
cannot use and never raises) and written back (`Address.query`). The chain itself is playground.network.chain's; the
view keys (presenter mode) are the stage protocol's, which the page's own controls read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..base.errors import ValidationError
from ..network import chains
from ..network.chain import INPUT, example_input, example_shape, keys_of, parse_names
from . import protocol

# /chain?layers=convolution,activation&convolution.stride_nd=2,2&activation.type=RELU: every key is hostile input.
LAYERS_KEY, STARTER_KEY, SHAPE_KEY, PATTERN_KEY, PICK_KEY = "layers", "starter", "input.shape", "input.pattern", "pick"
# a chain opened from a model (serve.as_chain): its input is ONNX Runtime's tensor of the model's run, the model named
# by its digest as a node's link names it; the nodes its layers are, by position; the model's file name, as shown
ONNX_KEY, TENSOR_KEY, NODES_KEY, MODEL_KEY = "input.onnx", "input.tensor", "input.nodes", "input.model"
MODEL_KEYS = (ONNX_KEY, TENSOR_KEY, NODES_KEY, MODEL_KEY)
PAGE_KEYS = (LAYERS_KEY, STARTER_KEY, SHAPE_KEY, PATTERN_KEY, PICK_KEY, *MODEL_KEYS)
OTHER_KEYS = protocol.VIEW_KEYS  # the page's view settings (presenter mode), which the page's own controls read
DEFAULT_LAYERS = ("convolution", "activation")


def patterns() -> dict:
    """The input patterns a link may name: the first layer's example, or one of the spec patterns."""
    from ..base.inputs import arange_pattern, centered_ramp, tile_pattern

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
            from ..model import kept

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
            return None if self.shape is None else example_input(self.names, self.shape)
        return make(self.shape or example_shape(self.names))


def starter_of(address: Address):
    """The starter chain this address is exactly (its layers, parameters, shape and pattern), or None."""
    for s in chains.STARTERS:
        if tuple(address.names) == s.layers and from_query({STARTER_KEY: s.name}).query() == address.query():
            return s
    return None


def from_query(query: dict) -> Address:
    """The address of `query` ({key: text}); a key it cannot use is named in `problems` with its rule, never
    raised: the page draws what the rest says."""
    from ..base.inputs import parse_shape

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
    from ..base.blobs import DIGEST

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
    return ModelInput(digest, tensor, nodes if len(nodes) == layers else (), protocol.model_name(text.get(MODEL_KEY)))
