"""A node of a layer of several inputs opened (ElementWise's Add, Select's Where, a Sum of three): each input a
tensor the model computes or a constant, ranks aligned as ONNX broadcasts them (its broadcast rule before opset 7
too), and the steps after the layer where TensorRT's parser chains layers (`OnnxMap.then`).
"""

from __future__ import annotations

import numpy as np

from ..base.errors import ValidationError
from ..base.layer import Layer
from ..base.onnx_map import Node
from ..layers import get_layer
from .opened import SEED, Known, Opened, attributes, node_model, output_shape, static_shape

COMMUTATIVE = {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"}  # ONNX's: operands swap freely


def open_several(
    known: Known, node, name: str, model_name: str, layer: Layer, where: str, batch: int, alone: bool
) -> Opened:
    """A node of a layer of several inputs (ElementWise's Add): each input a tensor the model computes, or a constant
    where the layer's input may be one (`Input.constant`); ranks aligned as ONNX broadcasts (1s before the shorter),
    then 1s appended up to rank 4."""
    shapes, consts, given = known.shapes, known.consts, list(node.input[: len(layer.inputs)])
    swapped = (
        node.op_type in COMMUTATIVE
        and len(given) == 2
        and given[0] in consts
        and given[1] not in consts
        and not layer.inputs[0].constant
    )
    if swapped:  # a · b = b · a: the constant (PyTorch's 0.5 · x) becomes the input that may be one
        given.reverse()
    required = sum(i.used_when is None for i in layer.inputs)  # the rest: a concatenation's third and fourth
    if len(given) < required or "" in given:  # more inputs (Gemm's C) are the mapping's to judge
        most = f" … {len(layer.inputs)}" if required < len(layer.inputs) else ""
        raise ValidationError(
            where,
            "inputs",
            f"has {len([i for i in given if i])} inputs; {layer.name} takes {required}{most}",
            len(given),
        )
    onnx_shapes, constants = {}, {}
    notes = (
        [f"{node.op_type} commutes: its constant first operand is the layer's input {layer.inputs[1].name.upper()}."]
        if swapped
        else []
    )
    for i, t in zip(layer.inputs, given):
        if t in consts:
            if not i.constant:
                raise ValidationError(
                    where,
                    "input",
                    f"{i.name} ({t!r}) is a constant: the layer's input {i.name} must be a tensor the model computes",
                )
            constants[i.name] = np.asarray(consts[t], np.float32)
            onnx_shapes[i.name] = tuple(int(d) for d in constants[i.name].shape)
        else:
            onnx_shapes[i.name], more = static_shape(where, t, shapes.get(t), batch)
            notes += more
    if known.opset < 7 and node.op_type in LEGACY_BROADCAST:  # B's axes where `axis` puts them, before any lift
        big, small = [i.name for i in layer.inputs[:2]][:: -1 if swapped else 1]
        was = onnx_shapes[small]
        onnx_shapes[small] = _legacy_broadcast(where, attributes(node), onnx_shapes[big], onnx_shapes[small])
        if onnx_shapes[small] != was:
            notes.append(f"Opset {known.opset}'s broadcast rule puts B {was} along A's axes as {onnx_shapes[small]}.")
    rank = max(len(v) for v in onnx_shapes.values())
    if not 1 <= rank <= 4:
        raise ValidationError(where, "input", f"must have rank 1 … 4, not {rank}", rank)
    align = layer.onnx.align or (lambda op, n, v, r: (1,) * (r - len(v)) + tuple(v))  # as ONNX broadcasts
    after = 4 - rank if layer.onnx.lift == "trailing" else 0  # "leading": every 1 before

    def lift(n: str, v: tuple) -> tuple:
        if layer.onnx.lift_each:
            return layer.onnx.lift_each(node.op_type, n, v)
        return (1,) * (4 - rank - after) + align(node.op_type, n, v, rank) + (1,) * after

    lifted = {n: lift(n, v) for n, v in onnx_shapes.items()}
    constants = {n: a.reshape(lifted[n]) for n, a in constants.items()}
    first = layer.input_names[0]
    view = Node(
        name,
        node.op_type,
        attributes(node),
        [consts.get(t) for t in given] + [consts.get(t) if t else None for t in node.input[len(given) :]],
        lifted[first],
        onnx_shapes[first],
        known.opset,
        given + list(node.input[len(given) :]),
        list(onnx_shapes.values()),
    )
    raw = layer.onnx.read(view)
    try:
        params = layer.resolve(raw, lifted)
    except ValidationError as exc:  # the layer's own rule, said of the node
        raise ValidationError(where, exc.param, exc.rule, exc.value) from None
    step_tensors: dict = {}  # the tensors the steps read: `Opened.more`

    def operand(i: int, step_input: str):
        """The node's input i, read by a step: its constant lifted as the step's input, or the model's tensor."""
        t = node.input[i]
        if t in consts:
            c = np.asarray(consts[t], np.float32)
            if c.ndim > rank:
                raise ValidationError(
                    where, "inputs", f"input {i} ({t!r}) has rank {c.ndim}, over the first two's {rank}"
                )
            return c.reshape(lift(step_input, tuple(c.shape)))
        if t in given or t in step_tensors:
            raise ValidationError(where, "inputs", f"reads {t!r} twice: each tensor it reads opens as one input here")
        v, more_notes = static_shape(where, t, shapes.get(t), batch)
        if len(v) > rank:
            raise ValidationError(where, "inputs", f"input {i} ({t!r}) has rank {len(v)}, over the first two's {rank}")
        notes.extend(m for m in more_notes if m not in notes)
        step_tensors[t] = (v, lift(step_input, v), SEED + i)
        return t

    then = _steps(
        layer, params, lifted, layer.onnx.then(view, raw) if layer.onnx.then else [], where, operand, step_tensors
    )
    if then:
        notes.append(
            f"{node.op_type} opens as TensorRT's ONNX parser builds it: {layer.name}, then "
            + ", then ".join(f"{s.name} {p.get('operation', '')}".strip() for s, p, _ in then)
            + "; the node's output (and ONNX Runtime's comparison) is after the last."
        )
    out_shape = output_shape(node, shapes)
    tensors = {t: onnx_shapes[i.name] for i, t in zip(layer.inputs, given) if t not in consts}
    tensors |= {t: v for t, (v, _, _) in step_tensors.items()}  # the steps' (a Sum's third): inputs of the node's model
    return Opened(
        model_name,
        name,
        node.op_type,
        layer,
        raw,
        lifted[first],
        onnx_shapes[first],
        out_shape,
        layer.onnx.differs(view, raw) if layer.onnx.differs else [],
        notes,
        node_model(known.model, node, onnx_shapes[first], consts, tensors) if alone else None,
        any(isinstance(d, str) for t in tensors for d in (shapes.get(t) or ())[:1]),
        tuple(range(rank, 4)) if after else tuple(range(4 - rank)),
        params,
        lifted,
        onnx_shapes,
        constants,
        tuple(given),
        then,
        step_tensors,
    )


# ops with `broadcast` and `axis` attributes before opset 7
LEGACY_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}


def _legacy_broadcast(where: str, attrs: dict, a: tuple, b: tuple) -> tuple:
    """B's shape at A's rank by ONNX's rule before opset 7: `broadcast` 0, B is A's shape; 1, B's shape is a
    contiguous run of A's, from `axis` (none: at the end, as later opsets align), 1s elsewhere."""
    if not attrs.get("broadcast", 0):
        if tuple(b) != tuple(a):
            raise ValidationError(
                where, "broadcast", f"is 0 (opset < 7): B must have A's shape {a}, not {b}", attrs.get("broadcast", 0)
            )
        return tuple(b)
    axis = attrs.get("axis", len(a) - len(b))
    if not 0 <= axis <= len(a) - len(b):
        raise ValidationError(
            where,
            "axis",
            f"must be 0 … {len(a) - len(b)}: B {b} is aligned with A {a} from that axis (opset < 7)",
            axis,
        )
    for k, (m, n) in enumerate(zip(a[axis:], b), axis):
        if n not in (m, 1):
            raise ValidationError(
                where, "axis", f"puts B {b} at A {a}'s axis {axis}: its axis {k} is {n} against {m} (opset < 7)", axis
            )
    return (1,) * axis + tuple(b) + (1,) * (len(a) - axis - len(b))


def _steps(layer: Layer, params: dict, shapes: dict, steps: list, where: str, operand=None, more=None) -> tuple:
    """The steps after the layer (`OnnxMap.then`), each resolved on the shape before it: (layer, params,
    operands: a constant, or the name of the model's tensor it reads, `more`'s, which `operand(index, input name)`
    gives for the node's input of that index); ValidationError naming the node and the step's rule."""
    out, shape = [], layer.cost(params, shapes)[0] if layer.cost else shapes[layer.input_names[0]]
    for name, raw, operands in steps:
        step = get_layer(name)
        constants = {k: operand(v, k) if isinstance(v, int) else np.asarray(v, np.float32) for k, v in operands.items()}
        feed = {step.input_names[0]: tuple(shape)} | {
            k: v.shape if isinstance(v, np.ndarray) else more[v][1] for k, v in constants.items()
        }
        try:
            p = step.resolve(raw, feed if step.several else feed[step.input_names[0]])
        except ValidationError as exc:
            raise ValidationError(where, exc.param, f"{name} after {layer.name}: {exc.rule}", exc.value) from None
        out.append((step, p, constants))
        shape = step.cost(p, feed if step.several else feed[step.input_names[0]])[0] if step.cost else shape
    return tuple(out)
