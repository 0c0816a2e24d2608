"""Precision lessons for whole models, each with a known answer: the node where the model first diverges in that
precision, by construction. Written as ONNX models (`python -m playground.model.precision_lessons DIR`), opened with
`python -m playground model DIR/NAME.onnx --precision P`.

- layernorm_fp16: a block whose LayerNorm, spelt as PyTorch exports it before opset 17 (ReduceMean, Sub, Pow,
  ReduceMean, Add, Sqrt, Div, Mul, Add), reads a residual stream of ±400: (x − mean)² reaches 160,000, over FP16's
  65,504, so the Pow's output is +Inf in FP16 (and the normalized output all β); BF16 holds (its range is float32's).
- softmax_fp16: Softmax over logits of 3000 ± 4 (a bias of 3000 added): FP16 holds them in steps of 2, so the
  differences Softmax exponentiates are lost; the Add itself stays within a relative 2⁻¹¹.
- int8_saturated_conv: two convolutions; the second's input is given the INT8 scale 0.01 (the model's metadata
  `playground.quantize_scales`, as a calibration table gives it), which saturates at ±1.27 where that ReLU's
  output reaches about 5; the first convolution, at the scale from its data, holds.
- fp8_saturated_matmul: two matrix multiplies (x · W1 → ReLU → · W2); the second's input is given the scale 0.01
  (INT8's, as the calibration table gives it; FP8's is 0.01 · 127/448), so its values past 448 · scale = 1.27, E4M3's
  largest code, saturate where that ReLU's output reaches about 20; the first, at the scale from its data, holds
  (E4M3's 3 mantissa bits: a relative 2⁻⁴ a value).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

import numpy as np

from ..onnx import reading
from .precision_model import SCALES_KEY


@dataclass(frozen=True)
class Lesson:
    name: str
    precision: str
    first: str  # the first divergent node, by construction
    holds: str | None  # a precision in which no node diverges (None: none named)
    build: object
    why: str


def _model(nodes, inits: dict, shape, out: str, meta: dict | None = None):
    onnx = reading.library()
    h, TP = onnx.helper, onnx.TensorProto
    graph = h.make_graph(
        nodes,
        "lesson",
        [h.make_tensor_value_info("x", TP.FLOAT, list(shape))],
        [h.make_tensor_value_info(out, TP.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()],
    )
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    for k, v in (meta or {}).items():
        entry = m.metadata_props.add()
        entry.key, entry.value = k, v
    return onnx.shape_inference.infer_shapes(m)


def layernorm_fp16():
    h = reading.library().helper
    width = 64
    nodes = [
        h.make_node("Mul", ["x", "growth"], ["stream"], name="/block/Mul"),
        h.make_node("ReduceMean", ["stream"], ["mean"], name="/ln/ReduceMean", axes=[-1], keepdims=1),
        h.make_node("Sub", ["stream", "mean"], ["centred"], name="/ln/Sub"),
        h.make_node("Pow", ["centred", "two"], ["squared"], name="/ln/Pow"),
        h.make_node("ReduceMean", ["squared"], ["variance"], name="/ln/ReduceMean_1", axes=[-1], keepdims=1),
        h.make_node("Add", ["variance", "eps"], ["variance_eps"], name="/ln/Add"),
        h.make_node("Sqrt", ["variance_eps"], ["std"], name="/ln/Sqrt"),
        h.make_node("Div", ["centred", "std"], ["normed"], name="/ln/Div"),
        h.make_node("Mul", ["normed", "gamma"], ["scaled"], name="/ln/Mul"),
        h.make_node("Add", ["scaled", "beta"], ["y"], name="/ln/Add_1"),
    ]
    rng = np.random.default_rng(1)
    inits = {
        "growth": np.float32(100),
        "two": np.float32(2),
        "eps": np.float32(1e-5),
        "gamma": rng.uniform(0.5, 1.5, width),
        "beta": rng.uniform(-0.1, 0.1, width),
    }
    return _model(nodes, inits, (1, 16, width), "y")


def softmax_fp16():
    h = reading.library().helper
    nodes = [
        h.make_node("Add", ["x", "bias"], ["logits"], name="/attn/Add"),
        h.make_node("Softmax", ["logits"], ["y"], name="/attn/Softmax", axis=-1),
    ]
    return _model(nodes, {"bias": np.float32(3000)}, (1, 4, 32), "y")


def int8_saturated_conv():
    h = reading.library().helper
    rng = np.random.default_rng(2)
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="/conv1/Conv", pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c1"], ["r1"], name="/relu1/Relu"),
        h.make_node("Conv", ["r1", "w2", "b2"], ["y"], name="/conv2/Conv", pads=[1, 1, 1, 1]),
    ]
    inits = {
        "w1": rng.normal(0, 0.2, (8, 3, 3, 3)),
        "b1": rng.normal(0, 0.1, 8),
        "w2": rng.normal(0, 0.2, (8, 8, 3, 3)),
        "b2": rng.normal(0, 0.1, 8),
    }
    return _model(nodes, inits, (1, 3, 16, 16), "y", {SCALES_KEY: json.dumps({"r1": 0.01})})


def fp8_saturated_matmul():
    h = reading.library().helper
    rng = np.random.default_rng(3)
    nodes = [
        h.make_node("MatMul", ["x", "w1"], ["m1"], name="/fc1/MatMul"),
        h.make_node("Relu", ["m1"], ["r1"], name="/relu1/Relu"),
        h.make_node("MatMul", ["r1", "w2"], ["y"], name="/fc2/MatMul"),
    ]
    inits = {"w1": rng.normal(0, 0.5, (32, 64)), "w2": rng.normal(0, 0.2, (64, 16))}
    return _model(nodes, inits, (1, 16, 32), "y", {SCALES_KEY: json.dumps({"r1": 0.01})})


LESSONS = {
    lesson.name: lesson
    for lesson in (
        Lesson("layernorm_fp16", "FP16", "/ln/Pow", "BF16", layernorm_fp16, "(x − mean)² over FP16's 65,504"),
        Lesson("softmax_fp16", "FP16", "/attn/Softmax", None, softmax_fp16, "logits of 3000 held in steps of 2"),
        Lesson("int8_saturated_conv", "INT8", "/conv2/Conv", None, int8_saturated_conv, "scale 0.01 saturates at 1.27"),
        Lesson("fp8_saturated_matmul", "FP8", "/fc2/MatMul", None, fp8_saturated_matmul, "past 448 · scale = 1.27"),
    )
}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m playground.model.precision_lessons DIR", file=sys.stderr)
        return 2
    os.makedirs(argv[0], exist_ok=True)
    for lesson in LESSONS.values():
        path = os.path.join(argv[0], f"{lesson.name}.onnx")
        with open(path, "wb") as f:
            f.write(lesson.build().SerializeToString())
        print(f"{path}: --precision {lesson.precision}; first divergence {lesson.first} ({lesson.why})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
