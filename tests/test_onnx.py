"""ONNX in and out: every mapped op and attribute opens as its layer and agrees with ONNX Runtime (or states the rule
where ONNX differs), refusals name the attribute, hostile models are refused with a reason, every layer's export
reopens to the same configuration and agrees with ONNX Runtime on the layer contract's seeded configurations, and
TensorRT's ONNX parser builds every layer's export."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from layer_fuzz import configurations  # noqa: E402
from onnx_cases import DIFFERING, HOSTILE, MAPPED, REFUSED, UNKNOWN_DOMAIN, node_model  # noqa: E402

from playground.base import precision as P  # noqa: E402
from playground.base.errors import ValidationError  # noqa: E402
from playground.base.params import same_params  # noqa: E402
from playground.layers import LAYERS  # noqa: E402
from playground.onnx import opening, reading, runtime, writing  # noqa: E402


def _opened(model):
    return opening.open_node(reading.load_model(model.SerializeToString()))


def _ort_on_node(opened, seed=3):
    """ONNX Runtime on the node against the layer's reference, as `run --onnx` compares them."""
    x = np.random.default_rng(seed).standard_normal(opened.onnx_shape).astype(np.float32)
    params = opened.layer.resolve(opened.raw, opened.shape)
    reference = opened.to_onnx(P.emulate(opened.layer, opened.to_layer(x), params))
    return runtime.onnxruntime_check(
        opened.node_model,
        x,
        reference,
        lambda: runtime.magnitude(opened.layer, opened.to_layer(x), params),
        opened.differs,
    )


@pytest.mark.parametrize("case,layer,make", MAPPED, ids=[c[0] for c in MAPPED])
def test_mapped_node_agrees_with_onnxruntime(case, layer, make):
    opened = _opened(make())
    assert opened.layer.name == layer
    assert opened.differs == []
    verdict = _ort_on_node(opened)
    assert verdict["status"] == "ran" and verdict["agrees"], verdict


@pytest.mark.parametrize("case,make,rule", DIFFERING, ids=[c[0] for c in DIFFERING])
def test_semantic_difference_is_named(case, make, rule):
    opened = _opened(make())
    assert opened.differs and opened.differs[0].startswith(rule)
    verdict = _ort_on_node(opened)
    assert not verdict["agrees"] and verdict["rule"].startswith(rule), verdict


@pytest.mark.parametrize("case,make,attribute", REFUSED, ids=[c[0] for c in REFUSED])
def test_unmappable_node_names_its_attribute(case, make, attribute):
    model = reading.load_model(make().SerializeToString())
    with pytest.raises(ValidationError) as exc:
        opening.open_node(model)
    assert exc.value.param == attribute and "ONNX node" in exc.value.layer, str(exc.value)
    listed = opening.list_nodes(model)[0]
    assert listed["layer"] is None and attribute in listed["reason"]


@pytest.mark.parametrize("case,make,words", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_model_refused(case, make, words):
    with pytest.raises(ValidationError) as exc:
        reading.load_model(make(), "hostile.onnx")
    assert words in str(exc.value)


def test_model_caps(monkeypatch):
    data = node_model("Relu", (1, 1, 2, 2)).SerializeToString()
    monkeypatch.setattr(reading, "MAX_MODEL_BYTES", len(data) - 1)
    with pytest.raises(ValidationError, match="the cap is"):
        reading.load_model(data)
    monkeypatch.setattr(reading, "MAX_MODEL_BYTES", 1 << 20)
    monkeypatch.setattr(reading, "MAX_NODES", 0)
    with pytest.raises(ValidationError, match="caps are"):
        reading.load_model(data)


def test_unknown_domain_is_listed_not_opened():
    listed = opening.list_nodes(reading.load_model(UNKNOWN_DOMAIN()))
    assert listed[0]["layer"] is None and "com.example" in listed[0]["reason"]


def test_one_d_conv_keeps_onnx_layout():
    opened = _opened(MAPPED[[c[0] for c in MAPPED].index("conv1d")][2]())
    assert opened.shape == (2, 3, 1, 11) and opened.onnx_output_shape == (2, 5, 5)


# -- the round trip and the second opinion for every layer -----------------------------------------------------
@pytest.mark.parametrize("name", list(LAYERS))
def test_export_reopens_to_the_same_configuration(name):
    layer = LAYERS[name]
    from playground.network import presets

    for preset in layer.examples:
        x, shape = presets.input_for(preset), preset.input_shape  # several inputs: a feed dict, a dict of shapes
        params = layer.resolve(dict(preset.params), shape)
        model = writing.export_model(layer, params, shape)
        onnx.checker.check_model(model)
        back = opening.open_node(reading.load_model(model.SerializeToString()))
        assert back.layer is layer and same_params(layer.resolve(back.raw, back.shapes or back.shape), params), (
            preset.name
        )
        # without the metadata, a one-node export opens by its node: the same outputs
        del model.metadata_props[:]
        nodes = [n for n in model.graph.node if n.op_type != "Constant"]
        if len(nodes) == 1 and layer.onnx.read is not None:
            node = opening.open_node(reading.load_model(model.SerializeToString()))
            fp32 = {**params, "precision": "FP32"}
            y = P.emulate(node.layer, x, node.layer.resolve(node.raw, node.shapes or node.shape))
            np.testing.assert_allclose(y, P.emulate(layer, x, fp32), rtol=1e-6, atol=1e-6, err_msg=preset.name)


# ONNX Runtime cannot compute these, for reasons of its own (its words are the answer's `error`).
ORT_LIMITS = {
    "resize": "'Cubic' mode only supports",
    # random indices: undefined by the layer's rule; ONNX Runtime refuses them (GatherElements, Gather, GatherND)
    "gather": ("Out of range value in index tensor", "indices element out of data bounds", "invalid index found"),
    "lrn": "alpha_ > 0.0f was false",
}  # TensorRT takes α = 0 too


@pytest.mark.parametrize("name", list(LAYERS))
def test_onnxruntime_agrees_on_the_contract_configurations(name):
    layer = LAYERS[name]
    drawn, _ = configurations(layer, 0, valid=50)
    disagreements = []
    for d in drawn:
        params = layer.resolve({**d.raw, "precision": "FP32"}, d.shape)
        shapes = layer.shapes_of(d.shape)  # every input, drawn on its own
        feed = {
            n: np.random.default_rng(1 + i).standard_normal(shapes[n]).astype(np.float32)
            for i, n in enumerate(layer.input_names)
        }
        x = feed if layer.several else feed[layer.input_names[0]]
        reference = P.emulate(layer, x, params)
        undefined = layer.undefined(x, params) if layer.undefined else None
        verdict = runtime.onnxruntime_check(
            writing.export_model(layer, params, d.shape).SerializeToString(),
            x,
            reference,
            lambda: runtime.magnitude(layer, x, params),
            undefined=undefined,
        )
        known = ORT_LIMITS.get(name, ())
        known = (known,) if isinstance(known, str) else known
        if not verdict["agrees"] and not any(words in verdict.get("error", "") for words in known):
            disagreements.append((d.raw, verdict))
    assert not disagreements, disagreements[:3]


# -- the command line --------------------------------------------------------------------------------------------
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "playground", *args], capture_output=True, text=True, timeout=120)


def test_cli_lists_runs_and_exports(tmp_path):
    model = tmp_path / "two.onnx"
    m = node_model("MaxPool", ("batch", 2, 7, 7), kernel_shape=[3, 3], strides=[2, 2], dilations=[2, 2])
    onnx.save(m, model)
    listed = _cli("onnx", str(model), "--json")
    assert listed.returncode == 0, listed.stderr
    [node] = json.loads(listed.stdout)["nodes"]
    assert node["op_type"] == "MaxPool" and node["layer"] is None and "dilations" in node["reason"]
    refused = _cli("run", "--onnx", str(model))
    assert refused.returncode == 2 and "maxpool_node" in refused.stderr and "dilations" in refused.stderr

    conv = tmp_path / "conv1d.onnx"
    onnx.save(MAPPED[[c[0] for c in MAPPED].index("conv1d")][2](), conv)
    out = tmp_path / "y.npy"
    ran = _cli("run", "--onnx", str(conv), "--node", "conv_node", "--output", str(out), "--json")
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["layer"] == "convolution" and answer["onnx"]["node"] == "conv_node"
    assert answer["onnx"]["output_shape"] == [2, 5, 5] and np.load(out).shape == (2, 5, 5)
    assert answer["onnxruntime"]["agrees"] is True and answer["onnxruntime"]["version"]
    assert answer["onnx_parser"]["status"] in ("built", "cached") and answer["onnx_parser"]["same_output_shape"]
    missing = _cli("run", "--onnx", str(conv), "--node", "nope")
    assert missing.returncode == 2 and "no node 'nope'" in missing.stderr

    exported = tmp_path / "pool.onnx"
    wrote = _cli(
        "export",
        "pooling",
        "--set",
        "type=MAX_AVERAGE_BLEND",
        "--set",
        "blend_factor=0.25",
        "--format",
        "onnx",
        "--out",
        str(exported),
    )
    assert wrote.returncode == 0, wrote.stderr
    direct = json.loads(
        _cli("run", "pooling", "--set", "type=MAX_AVERAGE_BLEND", "--set", "blend_factor=0.25", "--json").stdout
    )
    reopened = _cli("run", "--onnx", str(exported), "--json")
    assert reopened.returncode == 0, reopened.stderr
    back = json.loads(reopened.stdout)
    assert back["params"] == direct["params"] and back["onnxruntime"]["agrees"] is True
    assert _cli("export", "pooling", "--format", "onnx").returncode == 2  # a model needs --out

    dropout = tmp_path / "dropout.onnx"
    onnx.save(node_model("Dropout", (2, 5), opset=13), dropout)
    said = _cli("onnx", str(dropout))
    assert said.returncode == 0 and "Dropout            → identity (shuffle)" in said.stdout, said.stdout


@pytest.mark.parametrize("name", list(LAYERS))
def test_onnx_parser_builds_every_layers_export(name):
    """TensorRT's own ONNX parser builds the export of the layer's default configuration (TensorRT-RTX builds
    without a GPU): the same output shape as the layer's build."""
    from playground.network.core import evaluate
    from playground.onnx.opinions import second_opinions

    opinions = second_opinions(evaluate(name, {}, run=False))
    parser = opinions["onnx_parser"]
    if parser["status"] == "not_built":
        pytest.skip(parser["why"])  # no TensorRT builder on this machine
    assert parser["status"] in ("built", "cached"), parser
    assert parser["same_output_shape"] is True and parser["layers"], parser
    assert opinions["onnxruntime"]["agrees"] is True


# -- n-ary and legacy element-wise nodes, as TensorRT's parser builds them ----------------------------------------
def _nary(op: str, specs, opset: int = 17, **attrs) -> onnx.ModelProto:
    """One `op` node over inputs in0, in1, …: each (shape, constant?), a constant's values seeded by its index."""
    from onnx import helper, numpy_helper

    xs, inits = [], []
    for i, (shape, constant) in enumerate(specs):
        if constant:
            values = np.random.default_rng(10 + i).uniform(-2, 2, shape).astype(np.float32)
            inits.append(numpy_helper.from_array(values, f"in{i}"))
        else:
            xs.append(helper.make_tensor_value_info(f"in{i}", onnx.TensorProto.FLOAT, list(shape)))
    node = helper.make_node(op, [f"in{i}" for i in range(len(specs))], ["y"], name="nary", **attrs)
    graph = helper.make_graph(
        [node], "g", xs, [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], inits
    )
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))


NARY = [
    ("sum3_one_constant", "Sum", [((2, 3, 4), False), ((2, 3, 4), False), ((3, 4), True)], ["SUM"]),
    ("sum4_mixed", "Sum", [((2, 3, 4), True), ((2, 3, 4), False), ((4,), False), ((2, 1, 4), True)], ["SUM", "SUM"]),
    ("max3", "Max", [((2, 3), False), ((2, 3), False), ((2, 3), False)], ["MAX"]),
    ("min3_widening", "Min", [((1, 3, 4), False), ((4,), True), ((2, 3, 4), False)], ["MIN"]),
    ("mean3", "Mean", [((2, 3, 4), False), ((2, 3, 4), False), ((2, 3, 4), False)], ["SUM", "PROD"]),
]


@pytest.mark.parametrize("case,op,specs,steps", NARY, ids=[c[0] for c in NARY])
def test_an_nary_node_opens_as_the_parsers_chain_and_agrees_with_onnxruntime(case, op, specs, steps):
    """Sum, Max, Min of 3+ inputs: two-input layers chained left to right, each step reading the node's next input
    (the model's tensor or constant); Mean: that Sum, then a PROD by 1/n (onnx-tensorrt's importMean). The model's
    verdict (every tensor ONNX Runtime's) and the node alone (seeded inputs, ONNX Runtime's badge) agree."""
    from playground.model import whole
    from playground.network.core import evaluate
    from playground.onnx.opinions import onnxruntime_opinion

    model = reading.load_model(_nary(op, specs).SerializeToString())
    (node,) = whole.analyze(model, "m.onnx", engine=False)["nodes"]
    assert node["layer"] == "elementwise" and node["agrees"] is True, node
    opened = opening.open_node(model)
    assert [p["operation"] for _, p, _ in opened.then] == steps
    computed = [f"in{i}" for i, (_, constant) in enumerate(specs) if not constant and i >= 2]
    assert list(opened.more) == computed  # the steps' tensors: inputs of the node's model
    assert [r for s in opened.describe()["then"] for r in s.get("reads", {}).values()] == computed
    if op == "Mean":
        assert opened.then[-1][2]["b"].item() == np.float32(1 / 3)
    ev = evaluate("elementwise", opened.raw, opened.to_layer(opening.seeded_input(opened)), run=False)
    assert onnxruntime_opinion(ev, opened)["agrees"] is True
    out = opened.to_onnx(opened.finish(ev.output))
    assert out.shape == tuple(model.graph.output[0].type.tensor_type.shape.dim[i].dim_value for i in range(out.ndim))
    assert not np.allclose(opened.to_onnx(ev.output), out, atol=1e-3)  # the steps matter: the layer alone differs


def test_cli_runs_an_nary_node_with_its_steps_against_onnxruntime(tmp_path):
    path = tmp_path / "sum4.onnx"
    onnx.save(_nary("Sum", NARY[1][2]), path)
    ran = _cli("run", "--onnx", str(path), "--node", "nary", "--json")
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["onnx"]["output_shape"] == [2, 3, 4] and answer["onnxruntime"]["agrees"] is True
    assert [s.get("reads") for s in answer["onnx"]["then"]] == [{"b": "in2"}, None]


@pytest.mark.parametrize("op", ["Sum", "Max", "Min", "Mean"])
def test_an_nary_node_of_one_input_opens_as_the_identity_the_parser_builds(op):
    """onnx-tensorrt's elementwiseHelper wraps a lone input in an identity layer (Mean's PROD by 1/1 after it): the
    shuffle layer doing nothing here, its output the input, as ONNX Runtime's is; in a whole model too."""
    from playground.model import whole

    model = _nary(op, [((2, 3, 4), False)])
    opened = _opened(model)
    assert opened.layer.name == "shuffle" and opened.then == () and f"{op} of one input" in opened.notes[-1]
    x = opening.seeded_input(opened)
    assert np.array_equal(opened.to_onnx(opened.layer.reference(opened.to_layer(x), opened.params)), x)
    assert _ort_on_node(opened)["agrees"] is True
    (node,) = whole.analyze(reading.load_model(model.SerializeToString()), "m.onnx", engine=False)["nodes"]
    assert node["layer"] == "shuffle" and node["agrees"] is True, node
    with pytest.raises(ValidationError) as constant:  # one constant input: nothing the model computes to copy
        _opened(_nary(op, [((2, 3), True)]))
    assert constant.value.param == "input" and "constant" in constant.value.rule


def test_an_nary_node_reading_a_tensor_twice_is_refused_by_its_inputs():
    from onnx import helper

    x = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2, 3]) for n in "ab"]
    node = helper.make_node("Sum", ["a", "b", "a"], ["y"], name="twice")
    y = [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])]
    model = helper.make_model(helper.make_graph([node], "g", x, y), opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ValidationError) as twice:
        _opened(model)
    assert twice.value.param == "inputs" and "twice" in twice.value.rule


def test_an_opset_6_broadcast_aligns_b_at_its_axis_as_onnxs_legacy_rule_says():
    """Before opset 7, `broadcast` 1 with `axis` puts B's axes at A's `axis` (not at the end). ONNX Runtime runs no
    opset-6 Add (it guarantees opset 7 on), so the expectation is NumPy from the spec: B reshaped with 1s around."""
    from playground.network.core import evaluate

    # B of 4 values against A (2, 4, 3, 4): at the end it would meet W (4) too; `axis` 1 puts it along C
    model = _nary("Sub", [((2, 4, 3, 4), False), ((4,), True)], opset=6, broadcast=1, axis=1)
    opened = _opened(model)
    assert opened.shapes["b"] == (1, 4, 1, 1) and "(1, 4, 1, 1)" in opened.notes[-1]
    x = np.random.default_rng(2).uniform(-4, 4, (2, 4, 3, 4)).astype(np.float32)
    b = onnx.numpy_helper.to_array(model.graph.initializer[0])
    ev = evaluate("elementwise", opened.raw, opened.to_layer(x), run=False)
    np.testing.assert_allclose(opened.to_onnx(opened.finish(ev.output)), x - b.reshape(1, 4, 1, 1), rtol=1e-6)
    assert not np.allclose(ev.output, x - b.reshape(1, 1, 1, 4))
    trailing = _opened(_nary("Add", [((2, 3, 4), False), ((4,), True)], opset=6, broadcast=1))
    assert trailing.shapes["b"] == (1, 1, 4, 1)  # no axis: at the end, as opset 7 on aligns
    for attrs, param in [
        ({"broadcast": 0}, "broadcast"),
        ({"broadcast": 1, "axis": 2}, "axis"),
        ({"broadcast": 1, "axis": 4}, "axis"),
    ]:
        with pytest.raises(ValidationError) as refused:
            _opened(_nary("Mul", [((2, 4, 3, 4), False), ((4,), True)], opset=6, **attrs))
        assert refused.value.param == param and "opset < 7" in refused.value.rule


def test_a_dropout_before_opset_7_opens_only_at_inference_as_is_test_says():
    """Dropout-1 and Dropout-6 say inference by `is_test` (default 0: training). In a model at opset 6, Relu →
    Dropout: is_test 1 opens as the identity TensorRT's parser builds; is_test 0, or none, is refused naming
    is_test. ONNX Runtime runs no Dropout before opset 7 (no kernel), so the node is checked as onnx's version
    converter takes it to opset 7 (which refuses is_test 0 as well)."""
    from onnx import TensorProto, helper, version_converter

    from playground.model import whole

    def model(**is_test):
        g = helper.make_graph(
            [
                helper.make_node("Relu", ["x"], ["r"], name="relu"),
                helper.make_node("Dropout", ["r"], ["y"], name="drop", ratio=0.5, **is_test),
            ],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        )
        return reading.load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)]).SerializeToString())

    inference = model(is_test=1)
    nodes = {n["name"]: n for n in whole.analyze(inference, "m.onnx", engine=False)["nodes"]}
    assert nodes["drop"]["layer"] == "shuffle" and nodes["relu"]["layer"] == "activation", nodes
    opened = opening.open_node(inference, "drop")
    assert any(n.startswith("Dropout at inference (opset 6, is_test 1") for n in opened.notes), opened.notes
    assert "Dropout(6)" in runtime.onnxruntime_check(opened.node_model, np.zeros((1, 2, 3, 3)), None, None)["error"]
    at_6 = onnx.load_from_string(opened.node_model)
    opened.node_model = version_converter.convert_version(at_6, 7).SerializeToString()
    verdict = _ort_on_node(opened)
    assert verdict["status"] == "ran" and verdict["agrees"], verdict
    for training in (model(is_test=0), model()):
        listed = {n["name"]: n for n in whole.analyze(training, "m.onnx", engine=False)["nodes"]}["drop"]
        assert listed["layer"] is None, listed
        assert listed["reason"].startswith("ONNX node 'drop' (Dropout).is_test: must be 1 before opset 7"), listed
        with pytest.raises(ValidationError) as refused:
            opening.open_node(training, "drop")
        assert refused.value.param == "is_test" and "trains" in refused.value.rule
    with pytest.raises(RuntimeError, match="is_test"):
        version_converter.convert_version(node_model("Dropout", (1, 2, 3), opset=6, is_test=0), 7)
