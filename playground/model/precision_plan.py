"""A keep-FP32 plan written out: ModelOpt's `nodes_to_exclude` (AutoCast's for FP16/BF16, its quantizer's for
INT8/FP8: name patterns, anchored) and the ONNX model with the casts or Q/DQ pairs placed, which reopens here.

The model: every node that opens as a layer and is not kept reads each float input through Cast to FP16/BF16 and
back (the values rounded as the engine's, the arithmetic float32: ONNX Runtime's CPU has no kernel for most ops in
BF16) and writes its output rounded the same way; under INT8/FP8 its inputs pass QuantizeLinear → DequantizeLinear
with the scale of the analysis, and weights with their own per output channel (a 1-D scale, `axis`), as TensorRT
quantizes weights. Constants an op reads as attributes (Resize's
scales, Clip's bounds) keep float32, as the layer's emulation keeps them.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..base import precision as P
from ..base.errors import ValidationError
from ..onnx import reading

PLAN_KEY = "playground.precision_plan"
ATTRIBUTE_OPS = {"Resize", "Upsample", "Clip", "Slice", "Pad", "Reshape", "Expand", "Tile"}
WEIGHT_OPS = {"Conv", "ConvTranspose", "MatMul", "Gemm"}  # their constant input 1: weights with their own scales
FLOAT_TYPE = {"FP16": 10, "BF16": 16}  # TensorProto.FLOAT16, BFLOAT16
QUANT_TYPE = {"INT8": 3, "FP8": 17}  # TensorProto.INT8, FLOAT8E4M3FN
LEAST_OPSET = {"FP16": 6, "BF16": 13, "INT8": 13, "FP8": 19}  # INT8: per-axis Q/DQ (the weights') from 13


def nodes_to_exclude(keep: list[str], precision: str) -> dict:
    """ModelOpt's list for the plan: each kept node's name as an anchored pattern, and the command that reads it."""
    patterns = [f"^{re.escape(n)}$" for n in keep]
    tool = (
        "python -m modelopt.onnx.autocast --low_precision_type " + precision.lower()
        if precision in FLOAT_TYPE
        else "python -m modelopt.onnx.quantization --quantize_mode " + precision.lower()
    )
    return {
        "nodes_to_exclude": patterns,
        "command": f"{tool} --onnx_path MODEL.onnx --nodes_to_exclude " + " ".join(f"'{p}'" for p in patterns),
    }


def opset_of(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def written_opset(model, precision: str):
    """The model at an opset that spells the precision's casts or Q/DQ (FLOAT8E4M3FN from opset 19, a Cast to
    BFLOAT16 from 13, a per-axis QuantizeLinear from 13): as it is, or raised by ONNX's version converter; ValidationError
    naming --plan-model where the converter cannot."""
    have, least = opset_of(model), LEAST_OPSET[precision]
    if have >= least:
        return model
    from onnx import version_converter

    try:  # to 13 at least: the converter's adapters into opset 10 write a Round, which opset 10 has not
        return version_converter.convert_version(model, max(least, 13))
    except Exception as exc:  # noqa: BLE001 - the converter's refusal, in its words
        raise ValidationError(
            "model",
            "--plan-model",
            f"{precision} needs opset {least}; ONNX's version converter cannot raise this model's {have} "
            f"({type(exc).__name__}: {str(exc)[:200]})",
        ) from None


def plan_model(c, precision: str, keep: list[str], source=None):
    """The model of `c` (the analysis' precision_model.Composer) with every opened node not in `keep` in `precision` (casts or Q/DQ placed). `source`: the
    model as given, its nodes named as loading names them (`reading.named`), unfolded: written on it, weights an op
    computes (ONNX's light models' ConstantOfShape) stay that op and the file stays the size it was."""
    onnx = reading.library()
    h, TP = onnx.helper, onnx.TensorProto
    out = onnx.ModelProto()
    out.CopyFrom(written_opset(c.model if source is None else source, precision))
    graph = out.graph
    kept, made, extra_inits = set(keep), {}, []
    consts = c.known.consts
    by_name = {s.name: s for s in c.steps}
    new_nodes = []
    # nodes no step of the analysis is (the constants loading folds, the version converter's): left in float32
    untouched = [reading.node_name(n, i) for i, n in enumerate(graph.node) if reading.node_name(n, i) not in by_name]

    def rounded(t: str, scale=None, axis: int | None = None) -> str:
        key = (t, axis, None if isinstance(scale, np.ndarray) else scale)  # a weight's scales: its own, one set
        if key in made:
            return made[key]
        tag = re.sub(r"\W", "_", t)
        low, back = f"{t}__{precision.lower()}_in", f"{t}__{precision.lower()}_in_back"
        if precision in FLOAT_TYPE:
            new_nodes.append(h.make_node("Cast", [t], [low], name=f"{tag}/cast_{precision}", to=FLOAT_TYPE[precision]))
            new_nodes.append(h.make_node("Cast", [low], [back], name=f"{tag}/cast_FP32", to=TP.FLOAT))
        else:
            s, z = f"{t}__scale", f"{t}__zero"
            scales = np.asarray(scale, np.float32).ravel() if axis is not None else np.array(scale, np.float32)
            extra_inits.append(onnx.numpy_helper.from_array(scales, s))
            extra_inits.append(h.make_tensor(z, QUANT_TYPE[precision], list(scales.shape), [0] * scales.size))
            per = {} if axis is None else {"axis": axis}  # per output channel: a 1-D scale along `axis`
            new_nodes.append(h.make_node("QuantizeLinear", [t, s, z], [low], name=f"{tag}/quantize", **per))
            new_nodes.append(h.make_node("DequantizeLinear", [low, s, z], [back], name=f"{tag}/dequantize", **per))
        made[key] = back
        return back

    def is_float(t: str) -> bool:
        v = consts[t] if t in consts else c.values.get(t)
        return v is not None and np.asarray(v).dtype.kind == "f"

    for i, node in enumerate(graph.node):
        name = reading.node_name(node, i)
        step = by_name.get(name)
        if step is None or step.opened is None or name in kept:
            new_nodes.append(node)
            continue
        if node.op_type not in ATTRIBUTE_OPS or precision in QUANT_TYPE:
            for j, t in enumerate(node.input):
                if not t or not is_float(t):
                    continue
                if precision in FLOAT_TYPE:
                    node.input[j] = rounded(t)
                elif t not in consts:
                    node.input[j] = rounded(t, c.scale(t, precision))
                elif j == 1 and node.op_type in WEIGHT_OPS or step.opened.layer.several and t in step.opened.tensors:
                    axis = weight_axis(node, j, np.ndim(consts[t]))
                    node.input[j] = rounded(t, P.weight_scales(consts[t], precision, axis), axis)
        elif node.input and node.input[0] and is_float(node.input[0]):
            node.input[0] = rounded(node.input[0])  # the data; the constants are attributes
        new_nodes.append(node)
        if precision in FLOAT_TYPE and node.output and node.output[0]:
            o = node.output[0]
            raw = f"{o}__fp32"
            node.output[0] = raw
            tag = re.sub(r"\W", "_", o)
            low = f"{o}__{precision.lower()}_out"
            new_nodes.append(h.make_node("Cast", [raw], [low], name=f"{tag}/out_{precision}", to=FLOAT_TYPE[precision]))
            new_nodes.append(h.make_node("Cast", [low], [o], name=f"{tag}/out_FP32", to=TP.FLOAT))
    del graph.node[:]
    graph.node.extend(new_nodes)
    graph.initializer.extend(extra_inits)
    del graph.value_info[:]  # the renamed tensors' types: shape inference finds them again
    entry = out.metadata_props.add()
    plan = {"precision": precision, "keep_fp32": list(keep), "opset": [opset_of(c.model), opset_of(out)]}
    entry.key, entry.value = PLAN_KEY, json.dumps(plan | {"float32_nodes": len(untouched), "of": untouched[:20]})
    return out


def weight_axis(node, index: int, rank: int) -> int | None:
    """The output-channel axis of a node's constant input `index` in ONNX's layout, where TensorRT quantizes it per
    channel (the composer's `precision_model.weight_axis`, in the layer's layout): Conv's K·C·R·S along 0,
    ConvTranspose's C·K·R·S along 1, MatMul's B (K × N) along its last, Gemm's B along N (0 where transB); None:
    per tensor (an operand that is not B, a vector, any other op's constant)."""
    if index != 1 or rank < 2:
        return None
    if node.op_type == "Gemm":
        trans = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 0 if trans else 1
    return {"Conv": 0, "ConvTranspose": 1, "MatMul": rank - 1}.get(node.op_type)
