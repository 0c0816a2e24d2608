"""ONNX export in the configuration's precision: Q/DQ pairs for INT8/FP8 where the playground's engine has them (the
input; a convolution's and deconvolution's weights), Casts for FP16/BF16; TensorRT's ONNX parser builds it and ONNX
Runtime's output is held against the playground's emulation of the precision."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from playground.base import precision as P
from playground.base.onnx_map import Graph
from playground.layers import LAYERS, get_layer
from playground.network.core import evaluate
from playground.onnx import writing
from playground.onnx.opinions import precision_opinions
from playground.trt.backend import detect

ROOT = Path(__file__).resolve().parents[1]
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")
T = onnx.TensorProto


def _export(layer: str, raw: dict, x=None):
    ev = evaluate(layer, raw, x, run=False, build=False)
    return ev, writing.export_model(get_layer(layer), ev.params, ev.input.shape)  # check=True: onnx.checker


def _walk(model):
    """(producer of each tensor, constants by name)."""
    made = {o: n for n in model.graph.node for o in n.output}
    consts = {t.name: t for t in model.graph.initializer}
    return made, consts


def _qdq_from(model, tensor: str, precision: str, scale: float) -> str:
    """`tensor` is DequantizeLinear(QuantizeLinear(source)) with the scale and a zero point of the precision's type;
    the source's name."""
    made, consts = _walk(model)
    dq = made[tensor]
    assert dq.op_type == "DequantizeLinear"
    q = made[dq.input[0]]
    assert q.op_type == "QuantizeLinear"
    for node in (q, dq):
        assert onnx.numpy_helper.to_array(consts[node.input[1]]) == np.float32(scale)
        zero = consts[node.input[2]]
        assert zero.data_type == (T.INT8 if precision == "INT8" else T.FLOAT8E4M3FN)
        assert float(onnx.numpy_helper.to_array(zero).astype(np.float32)) == 0.0
    return q.input[0]


@pytest.mark.parametrize("precision", ["INT8", "FP8"])
@pytest.mark.parametrize("layer, op", [("convolution", "Conv"), ("deconvolution", "ConvTranspose")])
def test_quantized_export_has_qdq_on_the_input_and_the_weights(layer, op, precision):
    # a bias of its own: an all-zero one is left out of the model, as the parser sees a Conv without B
    ev, model = _export(layer, {"precision": precision, "quantize_scale": 0.25, "bias": "0.5"})
    assert model.opset_import[0].version >= 19  # FLOAT8E4M3FN's QuantizeLinear
    (node,) = [n for n in model.graph.node if n.op_type == op]
    assert _qdq_from(model, node.input[0], precision, 0.25) == model.graph.input[0].name
    weights = _qdq_from(model, node.input[1], precision, 0.25)
    _, consts = _walk(model)
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(consts[weights]), ev.params["kernel"])
    assert node.input[2] in consts  # the bias stays float32, as the engine's
    assert sum(n.op_type == "QuantizeLinear" for n in model.graph.node) == 2


def test_a_layer_without_weights_quantizes_its_input_only():
    _, model = _export("activation", {"type": "RELU", "precision": "INT8", "quantize_scale": 0.5})
    (relu,) = [n for n in model.graph.node if n.op_type == "Relu"]
    assert _qdq_from(model, relu.input[0], "INT8", 0.5) == "input"
    assert [n.op_type for n in model.graph.node] == ["QuantizeLinear", "DequantizeLinear", "Relu"]


@pytest.mark.parametrize("precision, kind", [("FP16", T.FLOAT16), ("BF16", T.BFLOAT16)])
def test_float_type_export_casts_around_the_layer_and_its_weights(precision, kind):
    _, model = _export("convolution", {"precision": precision, "bias": "0.5"})  # a bias of its own, to be cast
    made, consts = _walk(model)
    first, last = model.graph.node[0], model.graph.node[-1]
    assert (first.op_type, first.input[0], onnx.helper.get_attribute_value(first.attribute[0])) == (
        "Cast",
        "input",
        kind,
    )
    assert last.op_type == "Cast" and onnx.helper.get_attribute_value(last.attribute[0]) == T.FLOAT
    assert last.output[0] == model.graph.output[0].name
    (conv,) = [n for n in model.graph.node if n.op_type == "Conv"]

    def typed_from(name):  # the Casts a Conv input passes through, back to its source: (source, types cast to)
        kinds = []
        while name in made and made[name].op_type == "Cast":
            kinds.append(onnx.helper.get_attribute_value(made[name].attribute[0]))
            name = made[name].input[0]
        return name, kinds

    for i in range(3):  # the input, the weights and the bias: each rounded to the type on its way
        source, kinds = typed_from(conv.input[i])
        assert source == "input" or source in consts
        assert kind in kinds
    # FP16: Conv computes in the type; BF16: ONNX's Conv takes no bfloat16, so it reads them cast back to float32
    assert (kinds[0] == T.FLOAT) == (precision == "BF16")
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)  # every node typed as ONNX defines


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("precision", ["INT8", "FP8", "FP16", "BF16"])
def test_every_layer_exports_a_typed_model(name, precision):
    layer = get_layer(name)
    if layer.onnx is None:
        pytest.skip(f"{name} has no ONNX export")
    _, model = _export(name, {"precision": precision})
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    ops = [n.op_type for n in model.graph.node]
    own = [n.op_type for n in _export(name, {})[1].graph.node]  # the FP32 export: a layer's own casts (indices)
    added = ops.count("Cast") - own.count("Cast")
    assert ("QuantizeLinear" in ops) == (precision in P.QUANTIZED) and (added > 0) == (precision in P.FLOAT_TYPES)


@pytest.mark.parametrize("name", ["convolution", "pooling", "resize"])
def test_fp32_export_is_the_layers_graph_as_written(name):
    layer = get_layer(name)
    ev, model = _export(name, {})
    g = Graph()
    layer.onnx.write(g, g.input, ev.params, ev.input.shape)
    assert [(n.op_type, list(n.input), list(n.output)) for n in model.graph.node] == [
        (op, inputs, [out]) for op, inputs, out, _ in g.nodes
    ]


@pytest.mark.parametrize(
    "layer, raw",
    [
        ("convolution", {"precision": "INT8", "quantize_scale": 0.25}),
        ("convolution", {"precision": "FP8", "quantize_scale": 0}),
        ("deconvolution", {"precision": "INT8", "quantize_scale": 0.25, "kernel": "random"}),
        ("activation", {"type": "SIGMOID", "precision": "INT8", "quantize_scale": 0}),
        ("activation", {"type": "RELU", "precision": "FP16"}),
        ("pooling", {"precision": "FP16"}),
        ("convolution", {"precision": "BF16"}),  # Conv in float32 between Casts: ONNX Runtime runs it
    ],
)
def test_onnxruntime_matches_the_emulation(layer, raw):
    ev = evaluate(layer, raw, run=False, build=False)
    o = precision_opinions(ev)["onnxruntime"]
    assert o["status"] == "ran" and o["agrees"], o
    assert o["compared_to"] == f"the playground's emulation of {ev.params['precision']}"


def test_onnxruntime_says_what_it_cannot_run():
    ev = evaluate("activation", {"type": "RELU", "precision": "BF16"}, run=False, build=False)
    o = precision_opinions(ev)["onnxruntime"]
    assert o["status"] == "refused" and "Could not find an implementation for Relu" in o["error"], o
    fp16 = precision_opinions(evaluate("convolution", {"precision": "FP16"}, run=False, build=False))["onnxruntime"]
    assert not fp16["agrees"] and "float16 kernel" in fp16["rule"]  # the spec's +Inf row stays finite there
    assert (
        precision_opinions(evaluate("convolution", {"precision": "TF32"}, run=False, build=False))["status"]
        == "not_exported"
    )


@needs_trt
@pytest.mark.parametrize(
    "layer, raw",
    [
        ("convolution", {"precision": "INT8", "quantize_scale": 0.25}),
        ("deconvolution", {"precision": "FP8", "quantize_scale": 0.5}),
        ("convolution", {"precision": "FP16"}),
        ("pooling", {"precision": "BF16"}),
    ],
)
def test_the_onnx_parser_builds_the_precision_export(layer, raw, tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_ENGINE_CACHE", str(tmp_path))
    from playground.trt.cache import EngineCache

    ev = evaluate(layer, raw, cache=EngineCache(tmp_path), run=False)
    parser = precision_opinions(ev)["onnx_parser"]
    assert parser["status"] in ("built", "cached") and parser["error"] is None, parser
    assert parser["layers"] and parser["same_output_shape"], parser


def test_cli_export_and_run_json_speak_of_the_precision(tmp_path):
    out = tmp_path / "int8.onnx"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "playground",
            "export",
            "convolution",
            "--format",
            "onnx",
            "--out",
            str(out),
            "--set",
            "precision=INT8",
            "--set",
            "quantize_scale=0",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    model = onnx.load(str(out))
    (conv,) = [n for n in model.graph.node if n.op_type == "Conv"]
    _qdq_from(
        model,
        conv.input[0],
        "INT8",
        P.scale_from_data(get_layer("convolution").example_input(get_layer("convolution").example_shape), "INT8"),
    )  # scale 0: the input's amax/127, written as a number
    reopened = json.loads(
        subprocess.run(
            [sys.executable, "-m", "playground", "run", "--onnx", str(out), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert reopened["params"]["precision"] == "INT8"  # the configuration, from the export's metadata
    assert reopened["onnxruntime"]["agrees"], reopened["onnxruntime"]  # its FP32 opinion, of the FP32 export
    assert reopened["precision_export"]["onnxruntime"]["agrees"], reopened["precision_export"]
    run = subprocess.run(
        [sys.executable, "-m", "playground", "run", "activation", "--set", "precision=FP8", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    export = json.loads(run.stdout)["precision_export"]
    assert export["nodes"] == {"QuantizeLinear": 1, "DequantizeLinear": 1}
    assert export["onnxruntime"]["status"] in ("ran", "refused")
