"""Two second opinions on one configuration, from its ONNX model: ONNX Runtime computes it (CPU), and TensorRT's own
ONNX parser builds it, beside the network the layer's `build` made.

The model is the configuration's export (`onnxio.export_model`), or for a node opened from a model, that node alone
with its constants. ONNX models compute in float32: below FP32 both opinions are of the FP32 configuration.
"""
from __future__ import annotations

import hashlib

from . import onnxio
from .core import Evaluation, Memo, default_cache, evaluate
from .layers import get_layer
from .trt import engine as eng
from .trt.cache import cache_key


def second_opinions(ev: Evaluation, opened: onnxio.Opened | None = None) -> dict:
    """{"onnxruntime": …, "onnx_parser": …} for the evaluation `ev` (of `opened`'s node, where given)."""
    fp32, model, ort = _onnxruntime(ev, opened, build=True)  # the parser's engine is set beside the FP32 build's
    return {"onnxruntime": ort, "onnx_parser": parser_check(ev, fp32, model, tuple(ort.get("expected_shape", ())))}


_opinions = Memo(256)  # by configuration: the page's run asks again for what the route answered


def onnxruntime_opinion(ev: Evaluation, opened: onnxio.Opened | None = None) -> dict:
    """ONNX Runtime's opinion alone (the stage's badge: a few milliseconds; no engine built for it)."""
    if ev.output_key is None:  # TensorRT's output, measured afresh: no key to remember it by
        return _onnxruntime(ev, opened, build=False)[2]
    key = (ev.output_key, opened.model, opened.node) if opened is not None else ev.output_key
    return _opinions.get_or_make(key, lambda: _onnxruntime(ev, opened, build=False)[2])


def _onnxruntime(ev: Evaluation, opened: onnxio.Opened | None, build: bool):
    layer = get_layer(ev.layer)
    feed = ev.inputs if layer.several else ev.input  # a layer of several inputs: the model has one input each
    fp32 = ev if ev.params["precision"] == "FP32" else evaluate(ev.layer, {**ev.params, "precision": "FP32"},
                                                                  feed, backend=ev.backend, run=False, build=build)
    if opened is not None:
        model, x, reference = opened.node_model, opened.onnx_feed(ev), opened.to_onnx(fp32.reference)
        differs = opened.differs
    else:
        model = onnxio.export_model(layer, fp32.params, ev.shapes, check=False).SerializeToString()
        x, reference, differs = feed, fp32.reference, []
    undefined = layer.undefined(feed, fp32.params) if layer.undefined else None
    if undefined is not None and opened is not None:
        undefined = opened.to_onnx(undefined)
    compared_to = "the reference" if fp32 is ev else "the FP32 reference (an ONNX model computes in float32)"
    ort = onnxio.onnxruntime_check(model, x, reference, lambda: onnxio.magnitude(layer, feed, fp32.params),
                                   differs, undefined, compared_to)
    return fp32, model, ort | {"expected_shape": list(reference.shape),
                               "model": "the node" if opened is not None else "the configuration's export"}


def parser_check(ev: Evaluation, fp32: Evaluation, model: bytes, expected_shape: tuple) -> dict:
    """TensorRT's OnnxParser on `model`, built (or found in the engine cache): its status, output shape (against
    `expected_shape`, ONNX's layout) and engine layers, and whether they are those of the layer's own FP32 build."""
    backend = ev.backend
    if not backend.can_build:
        return {"status": "not_built", "why": backend.why_not_run}
    cache = default_cache()
    settings = eng.BuildSettings.from_env()
    key = cache_key("onnx_parser", {"model": hashlib.sha256(model).hexdigest()}, ev.input.shape, backend, settings)
    report, status, _ = cache.get_or_build(key, lambda: eng.build_onnx(backend, model, settings))
    out = {"status": status if report.status == "built" else report.status, "parser": f"{backend.name} OnnxParser",
           "output_shape": report.output_shape, "layers": [layer.get("type", "?") for layer in report.layers],
           "error": report.error}
    own = fp32.report
    if report.status != "built" or own is None or own.status != "built":
        return out | {"same_output_shape": None, "same_layers": None}
    own_types = [layer.get("type", "?") for layer in own.layers]
    out |= {"same_output_shape": tuple(report.output_shape or ()) == tuple(expected_shape),
            "same_layers": out["layers"] == own_types, "layer_build": own_types}
    if not out["same_layers"]:
        out["difference"] = (f"the parser's engine has {len(out['layers'])} layer(s) ({', '.join(out['layers'])}); "
                             f"the layer's build has {len(own_types)} ({', '.join(own_types)})")
    return out
