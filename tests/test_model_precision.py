"""`model --precision`: each opened node's local and accumulated error, the first divergence under the policy, the
keep-FP32 plan and its written model, the three lessons with their known first divergent node, and the composed
FP32 model against ONNX Runtime (ONNX's light SqueezeNet)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("ml_dtypes")

import onnx  # noqa: E402

from playground.model import precision_model as pm  # noqa: E402
from playground.model import precision_plan as pp  # noqa: E402
from playground.model import whole  # noqa: E402
from playground.model.precision_lessons import LESSONS  # noqa: E402
from playground.onnx import reading

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _open(model, name="lesson.onnx"):
    return reading.load_model(model.SerializeToString(), name)


def test_metrics_by_hand():
    ref = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    y = np.array([1.0, 2.0, 3.0, 5.0], np.float32)
    m = pm.metrics(y, ref, sqnr=True)
    assert m["max_abs"] == 1.0 and m["max_rel"] == 0.25
    assert m["l0"] == 0.25 and m["elementwise"] is False and m["nonfinite"] == 0
    assert m["cosine"] == pytest.approx(34 / math.sqrt(30 * 39))
    assert m["sqnr_db"] == pytest.approx(10 * math.log10(30 / 1))
    # within atol + rtol·|ref|: 1 ≤ 0 + 0.25·4
    assert pm.metrics(y, ref, atol=0, rtol=0.25)["elementwise"] is True
    lost = pm.metrics(np.array([1.0, np.inf], np.float32), np.array([1.0, 2.0], np.float32))
    assert lost["nonfinite"] == 1 and lost["cosine"] is None and lost["l0"] == 0.5


def test_policy_rules():
    good = pm.metrics(np.array([1.0, 2.0001]), np.array([1.0, 2.0]))
    assert pm.Policy().crosses(good) is None  # cosine ≈ 1; Polygraphy's 1e-5 only where asked
    assert pm.Policy(atol=1e-5, rtol=1e-5).crosses(good) == "l0"
    assert pm.Policy(min_cosine=1.0).crosses(pm.metrics(np.array([1.0, 3.0]), np.array([1.0, 2.0]))) == "cosine"
    lost = pm.metrics(np.array([np.inf, 2.0]), np.array([1.0, 2.0]))
    assert pm.Policy(min_cosine=-1).crosses(lost) == "nonfinite"  # always, whatever the threshold
    assert pm.Policy().crosses({"error": "ValueError: …"}) is None  # a reference that failed is listed, not judged


@pytest.mark.parametrize("name", list(LESSONS))
def test_lesson_names_its_first_divergent_node_and_the_plan_reopens(name):
    lesson = LESSONS[name]
    model = _open(lesson.build())
    answer, c = pm.study(model, name, None, lesson.precision)
    p = answer["precision"]
    opened = answer["counts"]["opened"]
    assert p["first_divergence"]["node"] == lesson.first
    assert p["first_divergence"]["local_explains"] is True
    assert p["evaluations"] <= math.ceil(math.log2(opened)) + 2
    assert p["output"]["meets_without_plan"] is False
    assert p["output"]["meets_with_plan"] is True and lesson.first in p["keep_fp32"]
    # every opened node has both errors; the composed FP32 output agrees with ONNX Runtime
    for n in answer["nodes"]:
        assert n["layer"] and n["precision"]["local"]["cosine"] is not None or n["precision"]["local"]["nonfinite"]
        assert "accumulated" in n["precision"]
    assert all(o["agrees"] for o in answer["output"].values())
    written = pp.plan_model(c, lesson.precision, p["keep_fp32"]).SerializeToString()
    again = pm.reopened(written, f"{name}_plan.onnx", c, pm.Policy())
    assert again["meets"] is True
    placed = len(model.graph.node) < again["nodes"]  # the casts or Q/DQ, where a node is left in the precision
    assert placed == (len(p["keep_fp32"]) < opened)
    meta = {e.key: e.value for e in onnx.load_model_from_string(written).metadata_props}
    assert json.loads(meta[pp.PLAN_KEY])["keep_fp32"] == p["keep_fp32"]
    if lesson.holds:
        held, hc = pm.study(model, name, None, lesson.holds)
        assert held["precision"]["first_divergence"] is None and held["precision"]["keep_fp32"] == []
        # every node in BF16: its casts reopen (ONNX Runtime hands no bfloat16 to NumPy: those tensors come back
        # as float32, exactly) and the model still meets the policy
        all_low = pp.plan_model(hc, lesson.holds, []).SerializeToString()
        again = pm.reopened(all_low, f"{name}_{lesson.holds}.onnx", hc, pm.Policy())
        assert again["meets"] is True and again["nodes"] > 3 * len(model.graph.node)  # a pair out, pairs in
        cosine = again["output"][model.graph.output[0].name]["cosine"]
        assert cosine < 1 - 1e-7  # the casts round: not the FP32 model again


def test_layernorm_lesson_figures():
    """FP16: the Pow's squares (up to 400²) are lost cells; the ReduceMean after reads them and is lost too (its
    own local error: a mean of 160,000 overflows FP16 as well); the output keeps only β (cosine far from 1)."""
    model = _open(LESSONS["layernorm_fp16"].build())
    answer = pm.analyze(model, "layernorm_fp16", None, "FP16")
    by = {n["name"]: n["precision"] for n in answer["nodes"]}
    assert by["/ln/Pow"]["local"]["nonfinite"] > 0 and by["/ln/Sub"]["accumulated"]["cosine"] > 0.9999
    assert by["/ln/Add_1"]["accumulated"]["cosine"] < 0.5
    assert answer["precision"]["keep_fp32"] == ["/ln/Pow", "/ln/ReduceMean_1"]


def test_int8_lesson_the_saturated_convolution_alone_crosses():
    model = _open(LESSONS["int8_saturated_conv"].build())
    answer = pm.analyze(model, "int8_saturated_conv", None, "INT8")
    by = {n["name"]: n["precision"] for n in answer["nodes"]}
    assert by["/conv1/Conv"]["local"]["cosine"] > 0.999 and by["/conv1/Conv"]["local"]["sqnr_db"] > 30
    assert by["/conv2/Conv"]["local"]["cosine"] < pm.MIN_COSINE and by["/conv2/Conv"]["local"]["sqnr_db"] < 20
    assert answer["precision"]["keep_fp32"] == ["/conv2/Conv"]
    assert answer["precision"]["scales_given"] == {"r1": 0.01}


def test_a_prefix_in_the_precision_composes_as_the_whole():
    """What the search rests on: with the first k nodes in FP16 and the rest in FP32, the nodes up to k compose
    exactly as with every node in FP16 (a node reads only nodes before it)."""
    model = _open(LESSONS["layernorm_fp16"].build())
    _, c = pm.study(model, "layernorm_fp16", None, "FP16")
    whole = c.evaluate(lambda s: "FP16")
    k = 4
    prefix = c.evaluate(lambda s: "FP16" if s.index <= k else "FP32")
    for s in c.steps[: k + 1]:
        np.testing.assert_array_equal(prefix[s.node.output[0]], whole[s.node.output[0]])
    assert not np.array_equal(prefix[c.steps[-1].node.output[0]], whole[c.steps[-1].node.output[0]])


def test_light_squeezenet_composed_in_fp32_agrees_and_fp16_names_a_divergence():
    with open(os.path.join(LIGHT, "light_squeezenet.onnx"), "rb") as f:
        model = reading.load_model(f.read(), "light_squeezenet.onnx")
    answer = pm.analyze(model, "light_squeezenet.onnx", None, "FP16")
    assert all(o["agrees"] for o in answer["output"].values())
    opened = [n for n in answer["nodes"] if n["layer"]]
    assert len(opened) == answer["counts"]["opened"] == 66
    assert all(n["precision"]["local"] and n["precision"]["accumulated"] for n in opened)
    p = answer["precision"]
    assert p["onnxruntime_nodes"] == [] and p["onnxruntime_instead"] == {}  # every node composed by its layer
    # its activations grow past FP16's range: the first node whose output overflows, on its own input too
    first = p["first_divergence"]
    assert first["metric"] == "nonfinite" and first["local_explains"] is True
    assert p["output"]["meets_without_plan"] is False and p["output"]["meets_with_plan"] is True
    assert first["node"] in p["keep_fp32"]


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "playground", "model", *args], capture_output=True, text=True, timeout=300
    )


def test_cli_json_and_the_plan_files(tmp_path):
    lessons = tmp_path / "lessons"
    subprocess.run([sys.executable, "-m", "playground.model.precision_lessons", str(lessons)], check=True)
    plan, exclude = tmp_path / "plan.onnx", tmp_path / "exclude.json"
    r = _cli(
        str(lessons / "softmax_fp16.onnx"),
        "--precision",
        "FP16",
        "--plan-model",
        str(plan),
        "--plan-exclude",
        str(exclude),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)["precision"]
    assert p["first_divergence"]["node"] == "/attn/Softmax" and p["first_divergence"]["metric"] == "cosine"
    assert p["policy"]["min_cosine"] == 0.997 and p["policy"]["l0"] is None
    assert json.loads(exclude.read_text()) == ["^/attn/Add$", "^/attn/Softmax$"]
    assert p["plan"]["reopened"]["meets"] is True and plan.exists()
    r = _cli(str(plan), "--precision", "FP16", "--json")  # the plan model is a model like any
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    "args, named",
    [
        (["--atol", "1e-3"], "--atol"),
        (["--precision", "FP16", "--min-cosine", "2"], "--min-cosine"),
        (["--precision", "FP16", "--rtol", "-1"], "--rtol"),
        (["--precision", "FP16", "--plan-budget", "-1"], "--plan-budget"),
        (["--precision", "FP16", "--plan-model", "x.txt"], "--plan-model"),
        (["--precision", "FP16", "--plan-exclude", "x.txt"], "--plan-exclude"),
        (["--precision", "FP16", "--output", "y.npy"], "--output"),
    ],
)
def test_cli_refuses_options_out_of_their_rule(tmp_path, args, named):
    path = tmp_path / "m.onnx"
    path.write_bytes(LESSONS["softmax_fp16"].build().SerializeToString())
    r = _cli(str(path), *args)
    assert r.returncode == 2 and named in r.stderr, r.stderr


def test_model_page_in_a_precision_colours_the_graph_and_names_the_first_divergence():
    from apptest import APP, TIMEOUT
    from streamlit.testing.v1 import AppTest
    from streamlit.util import calc_hash

    from playground.ui.model_page import graph_data
    from playground.ui.model_precision import recolour

    data = LESSONS["softmax_fp16"].build().SerializeToString()
    digest, model = reading.remember(data, "softmax_fp16.onnx")
    answer = pm.analyze(model, "softmax_fp16.onnx", None, "FP16")
    plain = {"nodes": [n | {"reads": [], "writes": []} for n in answer["nodes"]]}
    boxes = recolour(graph_data(plain, digest, "softmax_fp16.onnx"), answer)
    status = {b["id"]: b["status"] for b in boxes["nodes"]}
    assert status == {"/attn/Add": "agrees", "/attn/Softmax": "differs"} and boxes["first"] == "/attn/Softmax"
    softmax = next(b for b in boxes["nodes"] if b["id"] == "/attn/Softmax")
    assert "accumulated cosine 0.95" in softmax["detail"] and softmax["href"].endswith("&precision=FP16")
    assert {b["id"] for b in boxes["nodes"] if b["kept"]} == set(answer["precision"]["keep_fp32"])
    assert boxes["first_label"] == "First divergence in FP16" and boxes["key"].endswith("|FP16|accumulated")
    # coloured by the local error: the layernorm lesson's ReduceMean_1 crosses on its own input, the Div inherits
    ln = LESSONS["layernorm_fp16"].build().SerializeToString()
    ln_digest, ln_model = reading.remember(ln, "layernorm_fp16.onnx")
    ln_answer = pm.analyze(ln_model, "layernorm_fp16.onnx", None, "FP16")
    ln_plain = {"nodes": [n | {"reads": [], "writes": []} for n in ln_answer["nodes"]]}
    local = {b["id"]: b["status"] for b in recolour(graph_data(ln_plain, ln_digest, "m"), ln_answer, "local")["nodes"]}
    accumulated = {b["id"]: b["status"] for b in recolour(graph_data(ln_plain, ln_digest, "m"), ln_answer)["nodes"]}
    assert local["/ln/ReduceMean_1"] == accumulated["/ln/ReduceMean_1"] == "differs"
    assert local["/ln/Div"] == "agrees" and accumulated["/ln/Div"] == "differs"

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at._page_hash = calc_hash("model")
    at.query_params.update({"onnx": digest, "model": "softmax_fp16.onnx", "precision": "FP16"})
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model.precision").value == "FP16"
    assert any("First divergence in FP16: /attn/Softmax" in e.value for e in at.error), [e.value for e in at.error]
    assert any("Keep in FP32 (2" in t.value for t in at.text)
    link = next(e.proto for e in at.get("page_link") if "/attn/Softmax on its real input" in e.proto.label)
    assert "precision=FP16" in link.query_string and link.page.endswith("softmax")
    at.toggle(key="model.precision_local").set_value(True).run()
    assert not at.exception, at.exception
    at.selectbox(key="model.precision").set_value("FP32").run()
    assert not any("First divergence" in e.value for e in at.error) and "precision" not in at.query_params


def test_a_plan_below_the_opset_of_its_q_dq_is_written_through_onnx_version_converter():
    """An opset-9 model (ONNX's light models are): its INT8 plan is raised to opset 13 by ONNX's version converter,
    QuantizeLinear placed, and reopens meeting the policy."""
    lesson = LESSONS["int8_saturated_conv"].build()
    lesson.opset_import[0].version = 9  # Conv and Relu read the same at 9
    model = _open(lesson)
    answer, c = pm.study(model, "old.onnx", None, "INT8")
    written = pp.plan_model(c, "INT8", answer["precision"]["keep_fp32"])
    assert pp.opset_of(written) == 13 and any(n.op_type == "QuantizeLinear" for n in written.graph.node)
    assert json.loads({e.key: e.value for e in written.metadata_props}[pp.PLAN_KEY])["opset"] == [9, 13]
    assert pm.reopened(written.SerializeToString(), "old_plan.onnx", c, pm.Policy())["meets"] is True


def test_model_page_in_a_precision_says_why_a_model_onnx_runtime_refuses_is_not_analysed():
    from apptest import APP, TIMEOUT
    from onnx import TensorProto, helper
    from streamlit.testing.v1 import AppTest
    from streamlit.util import calc_hash

    g = helper.make_graph(
        [
            helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[2, 2], pads=[2, 2, 2, 2]),
            helper.make_node("Relu", ["p"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 7, 7])],
    )
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    digest, _ = reading.remember(data, "refused.onnx")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at._page_hash = calc_hash("model")
    at.query_params.update({"onnx": digest, "model": "refused.onnx", "precision": "FP16"})
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any(e.startswith("FP16:") and "ONNX Runtime cannot run it" in e for e in errors), errors


def test_int8_weights_take_one_scale_per_output_channel_by_hand():
    """TensorRT's per-channel quantization of weights: each output channel (row 0 of this K × C kernel) its own
    amax/127. Row 1's 0.01 and 0.04 at their own scale 0.04/127 are codes 31.75 → 32 and 127; at the tensor's scale
    1/127 they would be 1.27 → 1 and 5.08 → 5."""
    from playground.base import precision as P

    w = np.array([[1.0, -0.25], [0.01, 0.04]], np.float32)
    scales = P.channel_scales(w, "INT8", 0)
    assert scales.shape == (2, 1) and scales.ravel() == pytest.approx([1 / 127, 0.04 / 127], rel=1e-6)
    got = P.fake_quantize_weights(w, "INT8", 0)
    assert got.ravel() == pytest.approx([1.0, -32 / 127, 32 * 0.04 / 127, 0.04], rel=1e-6)
    assert P.fake_quantize_weights(w, "INT8", None).ravel()[2:] == pytest.approx([1 / 127, 5 / 127], rel=1e-6)
    # along the other axis (a matrix multiply's B, K × N: its columns)
    assert P.channel_scales(w, "INT8", -1).ravel() == pytest.approx([1 / 127, 0.25 / 127], rel=1e-6)
    assert P.channel_scales(np.zeros((2, 3)), "FP8", 0).ravel().tolist() == [1.0, 1.0]  # an all-zero channel: 1
    # each channel's scale is the tensor rule (`scale_from_data`) on that channel: infinities passed over, 0s give 1
    k = np.random.default_rng(0).normal(0, 1, (16, 4, 3, 3)).astype(np.float32)
    k[3], k[5, 0, 0, 0] = 0, np.inf
    for precision in ("INT8", "FP8"):
        each = [P.scale_from_data(c, precision) for c in k]
        assert P.channel_scales(k, precision, 0).ravel().tolist() == np.float32(each).tolist()


def _matmul_gemm():
    """x · W (MatMul, W: K × N) → Relu → Gemm with transB (B: N' × N): both weights per output channel, along
    W's axis 1 and B's axis 0."""
    h = reading.library().helper
    rng = np.random.default_rng(5)
    graph = h.make_graph(
        [
            h.make_node("MatMul", ["x", "w"], ["m"], name="/fc1/MatMul"),
            h.make_node("Relu", ["m"], ["r"], name="/relu/Relu"),
            h.make_node("Gemm", ["r", "b", "c"], ["y"], name="/fc2/Gemm", transB=1),
        ],
        "fc",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 8])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 5])],
        [
            onnx.numpy_helper.from_array(np.float32(rng.normal(0, 1, (8, 6)) * [[1, 10, 0.1, 1, 5, 0.5]]), "w"),
            onnx.numpy_helper.from_array(np.float32(rng.normal(0, 1, (5, 6)) * [[1], [20], [0.05], [1], [3]]), "b"),
            onnx.numpy_helper.from_array(np.float32(rng.normal(0, 0.1, 5)), "c"),
        ],
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("precision", ["INT8", "FP8"])
@pytest.mark.parametrize(
    "build, weights",
    [(lambda: LESSONS["int8_saturated_conv"].build(), {"w1": 0, "w2": 0}), (_matmul_gemm, {"w": 1, "b": 0})],
)
def test_plan_writes_per_channel_weights_and_onnx_runtime_computes_what_the_layers_compose(
    build, weights, precision, monkeypatch
):
    """The plan model with every node in INT8 or FP8, run whole by ONNX Runtime on the CPU, against the layers
    composed in that precision. Alike: the activations' per-tensor scales (the analysis's, written into the model)
    and the weights' scales per output channel. What differs, named: ONNX Runtime's QuantizeLinear divides by the
    scale where TensorRT (and the emulation) multiplies by its float32 reciprocal (a code apart only at a tie), and it
    sums the products in float32 where the layers' references sum in float64 (a few float32 ulps of the output, which
    can move a later activation across a code boundary: one step of that activation's scale). ONNX Runtime's graph
    optimizations stop at the basic level: its extended ones (1.32) drop a Relu before a QuantizeLinear whose zero
    point is FLOAT8E4M3FN 0, as if negatives clamped to it as they do in UINT8 (E4M3 is signed): 4.4 off on this
    convolution's output of amax 9.3."""
    import onnxruntime as ort

    model = _open(build())
    _, c = pm.study(model, "w.onnx", None, precision)
    plan = pp.plan_model(c, precision, [])
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in plan.graph.initializer}
    for w, axis in weights.items():
        dq = next(n for n in plan.graph.node if n.op_type == "DequantizeLinear" and n.input[0].startswith(f"{w}__"))
        assert {a.name: a.i for a in dq.attribute} == {"axis": axis}
        scales = inits[dq.input[1]]
        assert scales.shape == (c.known.consts[w].shape[axis],) and len(set(scales.tolist())) == scales.size
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(plan.SerializeToString(), options, providers=["CPUExecutionProvider"])
    (ran,) = session.run(["y"], {k: np.asarray(v, np.float32) for k, v in c.inputs.items()})
    composed = c.evaluate(lambda s: precision)["y"]
    fp32 = c.values["y"]
    gap = float(np.abs(ran - composed).max())
    assert gap <= 1e-5 * float(np.abs(fp32).max())
    # the weights per tensor (one scale each, as before) compose another model: ONNX Runtime's run tells them apart
    from playground.base import precision as P

    monkeypatch.setattr(P, "channel_scales", lambda w, precision, axis: np.float32(P.scale_from_data(w, precision)))
    per_tensor = c.evaluate(lambda s: precision)["y"]
    assert float(np.abs(ran - per_tensor).max()) > 100 * max(gap, 1e-7 * float(np.abs(fp32).max()))


def test_cli_fp8_plan_model_spells_fp8_as_tensorrt_reads_it(tmp_path):
    """`--precision FP8 --plan-model`: the lesson's plan keeps the saturated matrix multiply in FP32 and leaves the
    first in FP8, written as TensorRT's ONNX parser reads FP8: QuantizeLinear → DequantizeLinear with a
    FLOAT8E4M3FN zero point 0 (opset 19, raised by ONNX's version converter from the lesson's 17), the activation's
    scale one per tensor, the weights' one per output channel (axis 1 of MatMul's K × N). Reopened, it meets the
    policy; the same plan with no node kept does not (the lesson's answer, now run by ONNX Runtime's Q/DQ)."""
    lessons = tmp_path / "lessons"
    subprocess.run([sys.executable, "-m", "playground.model.precision_lessons", str(lessons)], check=True)
    plan = tmp_path / "plan.onnx"
    r = _cli(str(lessons / "fp8_saturated_matmul.onnx"), "--precision", "FP8", "--plan-model", str(plan), "--json")
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)["precision"]
    assert p["first_divergence"]["node"] == "/fc2/MatMul" and p["keep_fp32"] == ["/fc2/MatMul"]
    assert p["plan"]["reopened"]["meets"] is True
    written = onnx.load(str(plan))
    assert pp.opset_of(written) == 19
    inits = {t.name: t for t in written.graph.initializer}
    pairs = [n for n in written.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")]
    assert {n.input[0].split("__")[0] for n in pairs if n.op_type == "QuantizeLinear"} == {
        "x",
        "w1",
        "m1",
    }  # fc1's, ReLU's
    for n in pairs:
        zero, scale = inits[n.input[2]], onnx.numpy_helper.to_array(inits[n.input[1]])
        assert zero.data_type == onnx.TensorProto.FLOAT8E4M3FN
        assert not onnx.numpy_helper.to_array(zero).astype(np.float32).any()
        axis = {a.name: a.i for a in n.attribute}.get("axis")
        if n.input[0].startswith("w1"):
            assert axis == 1 and scale.shape == (64,)
        else:
            assert axis is None and scale.shape == ()
    by = {n.name: n for n in written.graph.node}
    assert all(i in ("r1", "w2") for i in by["/fc2/MatMul"].input)  # kept: it reads its FP32 tensors
    model = _open(LESSONS["fp8_saturated_matmul"].build())
    _, c = pm.study(model, "fp8.onnx", None, "FP8")
    all_fp8 = pp.plan_model(c, "FP8", []).SerializeToString()
    assert pm.reopened(all_fp8, "all_fp8.onnx", c, pm.Policy())["meets"] is False


def test_a_run_of_nodes_opens_as_a_chain_in_the_model_pages_precision():
    """The chain link of the INT8 lesson's three nodes, in FP16: every layer's precision is FP16, and the chain
    computes what the model composed with every node in FP16 computes at the last node (the same layers' emulation
    on the same real input: the seeded run's x); in INT8 each layer's scale is from its data (quantize_scale 0)."""
    from urllib.parse import parse_qsl, urlencode

    from playground.network import chain as C
    from playground.serve import as_chain
    from playground.serve import chain_address as A

    data = LESSONS["int8_saturated_conv"].build().SerializeToString()
    digest, model = reading.remember(data, "int8.onnx")
    nodes = ["/conv1/Conv", "/relu1/Relu", "/conv2/Conv"]
    fp32 = as_chain.query_of(model, nodes, digest, "int8.onnx")
    assert as_chain.in_precision(fp32, "FP32") == fp32
    query = as_chain.in_precision(fp32, "FP16")
    assert [query[f"{k}.precision"] for k in ("convolution", "activation", "convolution2")] == ["FP16"] * 3
    address = A.from_query(query)
    assert not address.problems, address.problems
    chain = C.resolve(address.names, address.raw(), address.shape)
    assert [link.params["precision"] for link in chain.links] == ["FP16"] * 3
    y = C.compute(chain, address.input())[chain.keys[-1]]
    answer, c = pm.study(_open(LESSONS["int8_saturated_conv"].build()), "int8.onnx", None, "FP16")
    composed = c.evaluate(lambda s: "FP16")["y"]
    np.testing.assert_allclose(y.reshape(composed.shape), composed, rtol=0, atol=0)
    assert np.abs(composed - c.values["y"]).max() > 0  # FP16 is not FP32 here
    int8 = as_chain.in_precision(fp32, "INT8")
    assert int8["convolution2.precision"] == "INT8" and int8["convolution2.quantize_scale"] == "0"
    a8 = A.from_query(int8)
    params = C.resolve(a8.names, a8.raw(), a8.shape).links[2].params
    assert (params["precision"], params["quantize_scale"]) == ("INT8", 0.0)
    path, _, text = as_chain.link_in_precision("./chain?" + urlencode(fp32), "BF16").partition("?")
    assert path == "./chain" and dict(parse_qsl(text)) == as_chain.in_precision(fp32, "BF16")
    # the model page in FP16: an engine outline's chain link opens in FP16 (one that is no chain stays none)
    from playground.ui.model_precision import recolour

    groups = [{"chain": "./chain?" + urlencode(fp32)}, {"chain": None, "why": "reads several tensors"}]
    shown = recolour({"key": "g", "nodes": [], "groups": groups}, answer)["groups"]
    assert dict(parse_qsl(shown[0]["chain"].partition("?")[2])) == query and shown[1]["chain"] is None
    assert groups[0]["chain"] == "./chain?" + urlencode(fp32)  # the FP32 graph's data is left as it was


@pytest.mark.skipif(
    not __import__("playground.trt.backend", fromlist=["detect"]).detect().can_build,
    reason="no TensorRT module installed",
)
@pytest.mark.parametrize("name", ["int8_saturated_conv", "fp8_saturated_matmul"])
def test_tensorrts_parser_builds_the_plan_with_per_channel_weights(name):
    """The plan model with every node in the precision (weights' DequantizeLinear per channel, FP8's zero point
    FLOAT8E4M3FN) is read by TensorRT's ONNX parser and built: each convolution or MatMul's engine layer computes it
    with its input's and its weights' dequantize fused in (the quantized kernel, not a float one beside Q/DQ)."""
    lesson = LESSONS[name]
    _, c = pm.study(_open(lesson.build()), name, None, lesson.precision)
    plan = _open(pp.plan_model(c, lesson.precision, []), f"{name}_plan.onnx")
    engine = whole.engine_layers(plan, [reading.node_name(n, i) for i, n in enumerate(reading.graph_nodes(plan))])
    assert engine["status"] in ("built", "cached"), engine
    ops = ("/conv1/Conv", "/conv2/Conv") if lesson.precision == "INT8" else ("/fc1/MatMul", "/fc2/MatMul")
    own = [set(layer["fuses"]) for layer in engine["layers"] if layer["type"] in ("correlation", "gemm")]
    for node, weights in zip(ops, ("w1", "w2")):
        assert any(node in f and f"{weights}/dequantize" in f for f in own), (node, engine["layers"])


def test_a_node_opens_in_int8_with_its_scale_from_its_data():
    """The model page in INT8: a node's link sets quantize_scale 0 (its input's amax/127, the analysis' max
    calibration), not the layer's default 1 (a step of 1 on any real tensor)."""
    from urllib.parse import parse_qsl

    from playground.ui.model_page import graph_data
    from playground.ui.model_precision import recolour

    data = LESSONS["int8_saturated_conv"].build().SerializeToString()
    digest, model = reading.remember(data, "int8.onnx")
    answer = pm.analyze(model, "int8.onnx", None, "INT8")
    plain = {"nodes": [n | {"reads": [], "writes": []} for n in answer["nodes"]]}
    box = next(b for b in recolour(graph_data(plain, digest, "int8.onnx"), answer)["nodes"] if b["id"] == "/conv2/Conv")
    query = dict(parse_qsl(box["href"].partition("?")[2]))
    assert query["precision"] == "INT8" and query["quantize_scale"] == "0" and query["real"] == "1"
    assert pm.page_params("FP16") == {"precision": "FP16"}
