"""How a layer meets ONNX, declared in the layer's own file: the ONNX nodes it opens (`read`: a node's attributes
and constant inputs → the layer's parameters, or the rule that stops it), the graph it exports (`write`), and the
rules where ONNX's semantics and TensorRT's differ (`differs`).

Nothing here imports `onnx`: a layer's declaration stays light. `onnx/reading.py` loads models,
`onnx/opening.py` hands each node to its layer as a `Node`, and `onnx/writing.py` turns a `Graph` into an ONNX
model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ValidationError

OPSET = 20  # what exports declare: Gelu (20), Pad's wrap mode (19), Resize without roi (13+)


@dataclass
class Node:
    """One ONNX node as a layer reads it: attributes as Python values, each input after the data a constant
    array (an initializer or a Constant node) or None, and the data's shape lifted to the layer's rank."""

    name: str
    op: str
    attrs: dict[str, Any]
    consts: list[np.ndarray | None]  # per input; [0] (the data) is None
    shape: tuple[int, ...]  # the data input's shape as the layer sees it (lifted: see OnnxMap.lift)
    onnx_shape: tuple[int, ...]  # as the model declares it
    opset: int
    inputs: list[str] = field(default_factory=list)  # the node's input names ("" for an omitted optional one)
    shapes: list[tuple] = field(default_factory=list)  # a layer of several inputs: each input's shape, as declared
    read: tuple[bool, ...] = ()  # per output: whether another node or the graph's outputs read it (Dropout's mask)

    @property
    def lifted(self) -> int:
        return len(self.shape) - len(self.onnx_shape)

    def fail(self, attr: str, rule: str, value=None) -> ValidationError:
        return ValidationError(f"ONNX node {self.name!r} ({self.op})", attr, rule, value)

    def attr(self, name: str, default=None):
        return self.attrs.get(name, default)

    def const(self, i: int, what: str, required: bool = True) -> np.ndarray | None:
        """Input i as a constant array; None where it is omitted and not required."""
        given = i < len(self.inputs) and self.inputs[i] != ""
        if not given:
            if required:
                raise self.fail(what, "is required")
            return None
        value = self.consts[i]
        if value is None:
            raise self.fail(
                what,
                "must be a constant (an initializer or a Constant node): the layer's weights "
                "and attributes are fixed when TensorRT builds it",
            )
        return value

    def spatial(self, name: str, default: int, values=None) -> tuple[int, ...]:
        """A per-spatial-axis attribute for the lifted shape: the axes added for a 1-D node take `default`."""
        given = self.attrs.get(name) if values is None else values
        rank = len(self.shape) - 2
        if given is None:
            return (default,) * rank
        given = tuple(int(v) for v in given)
        if len(given) != len(self.onnx_shape) - 2:
            raise self.fail(name, f"needs one value per spatial axis ({len(self.onnx_shape) - 2})", given)
        return (default,) * self.lifted + given

    def pads(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """ONNX's pads [begin…, end…] as (pre, post) per lifted spatial axis."""
        pads = self.attrs.get("pads")
        rank = len(self.onnx_shape) - 2
        if pads is None:
            zeros = (0,) * (len(self.shape) - 2)
            return zeros, zeros
        if len(pads) != 2 * rank:
            raise self.fail("pads", f"needs 2 × {rank} values (begin and end per spatial axis)", pads)
        if min(pads) < 0:
            raise self.fail("pads", "must not be negative (a crop has no padding equivalent in TensorRT's layer)", pads)
        return self.spatial("", 0, pads[:rank]), self.spatial("", 0, pads[rank:])

    def only(self, name: str, allowed, rule: str):
        """Refuse an attribute value the layer has no equivalent for."""
        value = self.attrs.get(name)
        if value is not None and value not in allowed:
            raise self.fail(name, rule, value)


class Graph:
    """An ONNX graph written in plain Python (no `onnx` import): float32 constants and nodes, its inputs (one, or
    one per input of a layer of several), one output."""

    def __init__(self, input_name: str = "input", inputs: tuple[str, ...] | None = None):
        self.inputs = tuple(inputs or (input_name,))
        self.input = self.inputs[0]
        self.nodes: list[tuple[str, list[str], str, dict]] = []  # (op_type, inputs, output, attributes)
        self.consts: dict[str, np.ndarray] = {}

    def const(self, value, dtype=np.float32) -> str:
        name = f"c{len(self.consts)}"
        self.consts[name] = np.ascontiguousarray(np.asarray(value, dtype=dtype))
        return name

    def ints(self, values) -> str:
        return self.const(np.asarray(values, np.int64), np.int64)

    def op(self, op_type: str, inputs: list[str], **attrs) -> str:
        out = f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append((op_type, list(inputs), out, {k: v for k, v in attrs.items() if v is not None}))
        return out


@dataclass(frozen=True)
class OnnxMap:
    """A layer's ONNX mapping (see the module's docstring)."""

    ops: tuple[str, ...]  # op_types it opens
    read: Callable[[Node], dict] | None  # node -> raw parameters; raises node.fail(attribute, rule)
    # (graph, input name, params, input shape) -> output name; for a layer of several inputs (graph, {input name:
    # graph input}, params, {input name: shape}).
    write: Callable[[Graph, Any, dict, Any], str]
    # (node, raw parameters) -> the rules in play where ONNX computes this node otherwise than TensorRT's layer.
    differs: Callable[[Node, dict], list[str]] | None = None
    # A lower-rank node: "spatial" inserts H (Conv1d → 2-D), "trailing" appends 1s, "leading" puts 1s before (batch
    # axes of a matrix product).
    lift: str = "spatial"
    # A layer of several inputs: (op_type, input name, its shape, the node's rank) -> that input's shape at the
    # node's rank; None: as ONNX broadcasts, 1s before (InstanceNormalization's 1-D scale is along C instead).
    align: Callable[[str, str, tuple, int], tuple] | None = None
    # A layer of several inputs whose inputs keep ranks of their own (a gather's indices): (op_type, input name, its
    # shape) -> that input's shape at rank 4; None: `align`, then `lift`.
    lift_each: Callable[[str, str, tuple], tuple] | None = None
    # The layers TensorRT's ONNX parser adds after this one for the node (Gemm's α and C: ElementWise PROD and SUM; an
    # n-ary Sum's chain):
    # (node, raw parameters) -> [(layer name, raw parameters, {input name: operand})], each step's first input the
    # output before it, an operand a constant array or the index of the node's input it reads (a Sum's third: the
    # model's tensor, or its constant); [] where the node is the layer alone.
    then: Callable[[Node, dict], list] | None = None
    # A node that passes its input through, for which TensorRT's ONNX parser builds an IIdentityLayer (a Sum of one
    # input, a Reduce with noop_with_empty_axes and no axes): (node; its shapes not yet known) -> why, or None. It
    # opens as the shuffle layer doing nothing (`IDENTITY`): no layer here is TensorRT's identity.
    identity: Callable[[Node], str | None] | None = None


IDENTITY = ("shuffle", {})  # the layer and raw parameters an identity opens as: no transpose, no reshape


def opens_as(layer: str, identity: bool = False) -> str:
    """What a node opens as, in the graph, the pages' rows and the CLI: `layer` (its name or title), said to be an
    identity first where the node computes nothing ("identity (shuffle)"): a Dropout is no reshaping."""
    return f"identity ({layer})" if identity else layer


def explicit_pads(pre, post) -> list[int]:
    """ONNX's pads from (pre, post) per spatial axis."""
    return [int(v) for v in pre] + [int(v) for v in post]


def auto_pad(node: Node) -> dict:
    """Conv's and pooling's auto_pad/pads/ceil_mode as the layer's padding parameters."""
    mode = node.attr("auto_pad", "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        return {"padding_mode": mode, "padding_nd": 0}
    if mode == "VALID":
        pre = post = (0,) * (len(node.shape) - 2)
    elif mode == "NOTSET":
        pre, post = node.pads()
    else:
        raise node.fail("auto_pad", "must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", mode)
    rounding = "EXPLICIT_ROUND_UP" if node.attr("ceil_mode", 0) else "EXPLICIT_ROUND_DOWN"
    return {
        "padding_mode": rounding,
        "padding_nd": 0,
        "pre_padding": ",".join(map(str, pre)),
        "post_padding": ",".join(map(str, post)),
    }
