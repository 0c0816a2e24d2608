"""What a model's run holds at once: each tensor's bytes as ONNX's shape inference finds them (by element type), and
node by node the tensors alive then (fed or made before it, read at it or after, or a graph output). Loading holds a
model to its peak (`peak`); the segmented run (`model.stream`) cuts its segments by the same sizes.
"""

from __future__ import annotations

import math

FALLBACK_ITEM = 4  # an element type NumPy has no size for (a string): counted as float32


def item_bytes(elem_type: int) -> int:
    """The bytes of one element of an ONNX element type."""
    import onnx  # noqa: PLC0415

    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize) or FALLBACK_ITEM
    except Exception:  # noqa: BLE001 - an undefined or unknown type
        return FALLBACK_ITEM


def tensor_bytes(value_info) -> int | None:
    """The bytes of a tensor its value info gives a whole shape for; None where a dimension (or the type) is unknown."""
    t = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not t.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    if None in dims:
        return None
    return math.prod(dims) * item_bytes(t.elem_type)


def sizes(inferred) -> dict[str, int]:
    """The bytes of every tensor of the (shape-inferred) graph whose shape is known: its inputs, those inference
    found and its outputs (weights not among them)."""
    g = inferred.graph
    weights = {t.name for t in g.initializer}
    out = {}
    for v in [v for v in g.input if v.name not in weights] + list(g.value_info) + list(g.output):
        n = tensor_bytes(v)
        if n is not None:
            out[v.name] = n
    return out


def weight_bytes(graph) -> dict[str, int]:
    return {t.name: math.prod(t.dims) * item_bytes(t.data_type) for t in graph.initializer}


def last_reads(nodes) -> dict[str, int]:
    """Each tensor's last reader: the index of the last node that reads it."""
    last = {}
    for i, node in enumerate(nodes):
        for t in node.input:
            if t:
                last[t] = i
    return last


def alive(graph, size: dict[str, int]) -> list[int]:
    """Node by node, the bytes of the tensors alive as it runs besides its outputs: the graph inputs and tensors made
    before it that it or a later node reads (a graph output to the end); a weight is not among them (the model holds
    them all). One more entry, after the last node: the graph's outputs."""
    nodes, keep = graph.node, {o.name for o in graph.output}
    last = last_reads(nodes)
    weights = {t.name for t in graph.initializer}
    fed = [v.name for v in graph.input if v.name not in weights and (v.name in last or v.name in keep)]
    live, ends, out = sum(size.get(t, 0) for t in fed), {}, []  # ends: the bytes that die after each node
    for t in fed:
        if t not in keep:
            ends[last[t]] = ends.get(last[t], 0) + size.get(t, 0)
    for i, node in enumerate(nodes):
        out.append(live)
        for o in node.output:
            if o and (o in keep or last.get(o, -1) > i):
                live += size.get(o, 0)
                if o not in keep:
                    ends[last[o]] = ends.get(last[o], 0) + size.get(o, 0)
        live -= ends.pop(i, 0)
    return out + [live]


def peak(graph, size: dict[str, int]) -> tuple[int, int, int]:
    """The most bytes the graph's tensors hold at once (`alive`, and a node's own outputs): (bytes, the node's index,
    the tensors alive then besides its outputs)."""
    best = (0, 0, 0)
    for i, (live, node) in enumerate(zip(alive(graph, size), graph.node)):
        here = live + sum(size.get(o, 0) for o in node.output if o)
        if here > best[0]:
            best = (here, i, live)
    return best
