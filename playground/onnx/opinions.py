"""Two second opinions on one configuration, from its ONNX model: ONNX Runtime computes it (CPU), and TensorRT's own
ONNX parser builds it, beside the network the layer's `build` made.

The model is the configuration's export (`writing.export_model`), or for a node opened from a model, that node alone
with its constants. These two are of the FP32 configuration (against its reference); below FP32 a third,
`precision_export`, takes the export in the configuration's precision (Q/DQ pairs for INT8/FP8, Casts for
FP16/BF16): the parser builds it and ONNX Runtime runs it where it has kernels for that type, against the
playground's emulation of the precision (`precision.emulate`).
"""

from __future__ import annotations

import hashlib

from ..base import precision as P
from ..base.memo import Memo
from ..layers import get_layer
from ..network.core import Evaluation, default_cache, evaluate
from ..trt import engine as eng
from ..trt.cache import cache_key
from . import runtime, writing
from .opened import Opened


def second_opinions(ev: Evaluation, opened: Opened | None = None) -> dict:
    """{"onnxruntime": …, "onnx_parser": …} for the evaluation `ev` (of `opened`'s node, where given), and below
    FP32 `precision_export` (`precision_opinions`) for a configuration (not a model's node, which is float32)."""
    opened = _as_node(opened)
    fp32, model, ort = _onnxruntime(ev, opened, build=True)  # the parser's engine is set beside the FP32 build's
    out = {"onnxruntime": ort, "onnx_parser": parser_check(ev, fp32, model, tuple(ort.get("expected_shape", ())))}
    if opened is None and ev.params["precision"] != "FP32":
        out["precision_export"] = precision_opinions(ev)
    return out


# ONNX Runtime against the emulation, FP16/BF16: each cell within this many ε of the type of its value (or of its
# terms' sum, `runtime.compare`): its kernels may sum in the type where the emulation sums in float64.
TYPE_EPS = 4
# Why ONNX Runtime's INT8/FP8 output may differ from the emulation's at a tie.
QDQ_RULE = (
    "ONNX's QuantizeLinear divides by the scale; TensorRT multiplies by its reciprocal (as the emulation "
    "does): a value at a tie between two steps may round to the other one"
)


# Why ONNX Runtime's FP16/BF16 output may miss the type's rounding: where its CPU has no kernel of the type for an
# op (Conv in float16, most ops in bfloat16 refuse outright), it inserts Casts to run the op in float32 and merges
# them with the model's own, so the op's output is never rounded to the type.
CAST_RULE = (
    "ONNX Runtime (CPU) runs an op it has no {type} kernel for in float32 and merges the Casts around it "
    "with the model's: its output may miss the type's rounding and overflow"
)


def precision_opinions(ev: Evaluation) -> dict:
    """The configuration's export in its precision (`writing.export_model`): its Q/DQ and Cast nodes, TensorRT's
    ONNX parser's build of it (beside the layer's own build in that precision), and ONNX Runtime's output against
    the playground's emulation (ONNX Runtime's own words where it has no kernel for the type, e.g. BF16 on CPU).
    TF32 is a builder flag, not an ONNX type: its export is the FP32 model."""
    precision = ev.params["precision"]
    if precision not in P.QUANTIZED + P.FLOAT_TYPES:
        return {
            "precision": precision,
            "status": "not_exported",
            "why": f"ONNX has no {precision} type ({precision} is a builder flag): the export is the FP32 model",
        }
    layer = get_layer(ev.layer)
    feed = _feed(ev)
    proto = writing.export_model(layer, ev.params, ev.shapes, check=False)  # the configuration's shapes
    model = proto.SerializeToString()
    counts: dict[str, int] = {}
    for node in proto.graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear", "Cast"):
            counts[node.op_type] = counts.get(node.op_type, 0) + 1
    quantized = precision in P.QUANTIZED
    rule = QDQ_RULE if quantized else CAST_RULE.format(type="float16" if precision == "FP16" else "bfloat16")
    undefined = layer.undefined(feed, ev.params) if layer.undefined else None
    emulation = ev.reference  # the emulation of the precision, whichever output is shown
    ort = runtime.onnxruntime_check(
        model,
        feed,
        emulation,
        lambda: runtime.terms(layer, feed, ev.params),
        [rule],
        undefined,
        f"the playground's emulation of {precision}",
        runtime.undefined_rule(layer),
        rtol=1e-5 if quantized else TYPE_EPS * P.EPSILON[precision],
    )
    parser = parser_check(ev, ev, model, tuple(emulation.shape))
    return {
        "precision": precision,
        "status": "exported",
        "nodes": counts,
        "tolerance": "each cell: atol + rtol·|emulation|, rtol 10⁻⁵"
        if quantized
        else f"each cell: atol + rtol·|emulation|, rtol {TYPE_EPS} ε ({precision})",
        "onnxruntime": ort,
        "onnx_parser": parser,
    }


def _feed(ev: Evaluation):
    """What a layer's own callables read (`undefined`, `runtime.terms`): the one input's array, or the feed dict by
    input name for a layer of several (its model has one input each)."""
    return ev.inputs if get_layer(ev.layer).several else ev.input


def _as_node(opened: Opened | None) -> Opened | None:
    """`opened`, or None where it is a playground export reopened (its metadata's configuration, no node: op ""):
    its opinions are the configuration's, whose export in its precision that model is."""
    return opened if opened is not None and opened.op else None


_opinions = Memo(256)  # by configuration: the page's run asks again for what the route answered


def onnxruntime_opinion(ev: Evaluation, opened: Opened | None = None) -> dict:
    """ONNX Runtime's opinion alone (the stage's badge: a few milliseconds; no engine built for it)."""
    opened = _as_node(opened)
    if ev.output_key is None:  # TensorRT's output, measured afresh: no key to remember it by
        return _onnxruntime(ev, opened, build=False)[2]
    key = (ev.output_key, opened.model, opened.node) if opened is not None else ev.output_key
    return _opinions.get_or_make(key, lambda: _onnxruntime(ev, opened, build=False)[2])


def _onnxruntime(ev: Evaluation, opened: Opened | None, build: bool):
    layer = get_layer(ev.layer)
    feed = _feed(ev)
    fp32 = (
        ev
        if ev.params["precision"] == "FP32"
        else evaluate(ev.layer, {**ev.params, "precision": "FP32"}, feed, backend=ev.backend, run=False, build=build)
    )
    if opened is not None:
        model, x, reference = opened.node_model, opened.onnx_feed(ev), opened.to_onnx(opened.finish(fp32.reference))
        differs = opened.differs
    else:
        model = writing.export_model(layer, fp32.params, ev.shapes, check=False).SerializeToString()
        x, reference, differs = feed, fp32.reference, []
    undefined = layer.undefined(feed, fp32.params) if layer.undefined else None
    if undefined is not None and opened is not None:
        undefined = opened.to_onnx(undefined) if not opened.then else None
    compared_to = "the reference" if fp32 is ev else "the FP32 reference (an ONNX model computes in float32)"
    ort = runtime.onnxruntime_check(
        model,
        x,
        reference,
        lambda: runtime.terms(layer, feed, fp32.params),
        differs,
        undefined,
        compared_to,
        runtime.undefined_rule(layer),
    )
    return (
        fp32,
        model,
        ort
        | {
            "expected_shape": list(reference.shape),
            "model": "the node" if opened is not None else "the configuration's export",
        },
    )


def parser_check(ev: Evaluation, fp32: Evaluation, model: bytes, expected_shape: tuple) -> dict:
    """TensorRT's OnnxParser on `model`, built (or found in the engine cache): its status, output shape (against
    `expected_shape`, ONNX's layout) and engine layers, and whether they are those of the layer's own FP32 build."""
    backend = ev.backend
    if not backend.can_build:
        return {"status": "not_built", "why": backend.why_not_run}
    report, status = parser_build(backend, model)
    out = {
        "status": status,
        "parser": f"{backend.name} OnnxParser",
        "output_shape": report.output_shape,
        "layers": [layer.get("type", "?") for layer in report.layers],
        "error": report.error,
    }
    own = fp32.report
    if report.status != "built" or own is None or own.status != "built":
        return out | {"same_output_shape": None, "same_layers": None}
    own_types = [layer.get("type", "?") for layer in own.layers]
    out |= {
        "same_output_shape": tuple(report.output_shape or ()) == tuple(expected_shape),
        "same_layers": out["layers"] == own_types,
        "layer_build": own_types,
    }
    if not out["same_layers"]:
        out["difference"] = (
            f"the parser's engine has {len(out['layers'])} layer(s) ({', '.join(out['layers'])}); "
            f"the layer's build has {len(own_types)} ({', '.join(own_types)})"
        )
    return out


def parser_build(backend, model: bytes, cache=None, notes: list | None = None) -> tuple[eng.BuildReport, str]:
    """(report, status): TensorRT's OnnxParser's engine of `model` (its bytes), built or found in the engine cache,
    keyed by the model's hash (a configuration's export, a chain's, a whole model: one scheme); the cache's notes
    (an engine it could not keep) added to `notes`."""
    cache = cache or default_cache()
    settings = eng.BuildSettings.from_env()
    key = cache_key({"onnx": hashlib.sha256(model).hexdigest()}, backend, settings)
    report, status, said = cache.get_or_build(key, lambda: eng.build_onnx(backend, model, settings))
    if notes is not None:
        notes.extend(said)
    return report, status if report.status == "built" else report.status
