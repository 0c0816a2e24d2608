"""`run --onnx MODEL --node N` feeds every input the node reads its real tensor (the file given for a graph input,
ONNX Runtime's run of the model for a tensor it computes), ONNX Runtime's opinion runs on those same tensors, and
the JSON names each input's source; one --input per graph input the node depends on, positional or NAME=FILE."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.cli import main  # noqa: E402

SHAPE = (1, 2, 3, 4)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    from playground.network import core
    from playground.trt.cache import EngineCache

    monkeypatch.setattr(core, "_default_cache", EngineCache(tmp_path / "cache"))


def _model(nodes, inputs=("x",), consts=None):
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(SHAPE)) for n in inputs],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (consts or {}).items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(m)


def residual():
    """torch: y = x + relu(3·x) (a residual Add of the model's input and a tensor it computes), then
    z = sigmoid(y) · y (a Mul of two computed tensors)."""
    n = helper.make_node
    return _model(
        [
            n("Mul", ["x", "three"], ["m"], name="/Mul"),
            n("Relu", ["m"], ["r"], name="/Relu"),
            n("Add", ["x", "r"], ["y"], name="/Add"),
            n("Sigmoid", ["y"], ["s"], name="/Sigmoid"),
            n("Mul", ["s", "y"], ["z"], name="/Mul_1"),
        ],
        consts={"three": np.float32(3)},
    )


def two_inputs():
    """torch: z = relu(x) − w: the node depends on both graph inputs."""
    n = helper.make_node
    return _model([n("Relu", ["x"], ["r"], name="/Relu"), n("Sub", ["r", "w"], ["z"], name="/Sub")], ("x", "w"))


def _run(capsys, *argv):
    code = main(["run", *argv, "--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else captured.err)


def _x(seed, shape=SHAPE):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape).astype(np.float32)


def test_every_input_of_a_node_is_its_real_tensor(tmp_path, capsys):
    path, xin, out = tmp_path / "m.onnx", tmp_path / "x.npy", tmp_path / "y.npy"
    onnx.save(residual(), path)
    x = _x(1)
    np.save(xin, x)
    y = x + np.maximum(3 * x, 0)
    for node, want in (("/Add", y), ("/Mul_1", y / (1 + np.exp(-y)))):
        code, answer = _run(capsys, "--onnx", str(path), "--node", node, "--input", str(xin), "--output", str(out))
        assert code == 0, answer
        np.testing.assert_allclose(np.load(out), want, rtol=1e-5, atol=1e-6)
        ort = answer["onnxruntime"]
        assert ort["status"] == "ran" and ort["agrees"] is True, ort
        sources = {i["tensor"]: i["source"] for i in answer["onnx"]["inputs"]}
        assert len(sources) == 2 and all("seeded" not in s for s in sources.values()), sources
    assert sources == {t: sources[t] for t in ("s", "y")} and "ONNX Runtime's run" in sources["y"]
    code, answer = _run(capsys, "--onnx", str(path), "--node", "/Add", "--input", f"x={xin}", "--output", str(out))
    assert code == 0, answer
    np.testing.assert_allclose(np.load(out), y, rtol=1e-5, atol=1e-6)  # NAME=FILE, the same
    assert {i["tensor"]: i["source"] for i in answer["onnx"]["inputs"]}["x"].startswith("--input x")


def test_one_input_per_graph_input_the_node_depends_on(tmp_path, capsys):
    path, out = tmp_path / "m.onnx", tmp_path / "z.npy"
    onnx.save(two_inputs(), path)
    x, w = _x(2), _x(3)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    want = np.maximum(x, 0) - w
    for given in (
        [str(tmp_path / "x.npy"), str(tmp_path / "w.npy")],
        [f"w={tmp_path / 'w.npy'}", f"x={tmp_path / 'x.npy'}"],
    ):
        argv = ["--onnx", str(path), "--node", "/Sub", "--output", str(out)]
        for g in given:
            argv += ["--input", g]
        code, answer = _run(capsys, *argv)
        assert code == 0, answer
        np.testing.assert_allclose(np.load(out), want, rtol=1e-6)
        assert answer["onnxruntime"]["agrees"] is True
    code, err = _run(
        capsys,
        "--onnx",
        str(path),
        "--node",
        "/Relu",
        "--input",
        str(tmp_path / "x.npy"),
        "--input",
        str(tmp_path / "w.npy"),
    )
    assert code == 2 and "--input" in err and "depends on 1 graph input(s) (x)" in err


def test_an_export_of_a_layer_of_several_inputs_takes_one_input_each(tmp_path, capsys):
    """`export elementwise --format onnx` reopened: one --input per layer input, positional or NAME=FILE.npy."""
    path = tmp_path / "ew.onnx"
    assert main(["export", "elementwise", "--format", "onnx", "--out", str(path)]) == 0
    capsys.readouterr()
    a, b = _x(4, (1, 1, 3, 3)), _x(5, (1, 1, 3, 3))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out = tmp_path / "y.npy"
    for given in (
        [str(tmp_path / "a.npy"), str(tmp_path / "b.npy")],
        [f"b={tmp_path / 'b.npy'}", f"a={tmp_path / 'a.npy'}"],
    ):
        argv = ["--onnx", str(path), "--output", str(out)]
        for g in given:
            argv += ["--input", g]
        code, answer = _run(capsys, *argv)
        assert code == 0, answer
        np.testing.assert_allclose(np.load(out), a + b, rtol=1e-6)
        assert answer["onnxruntime"]["agrees"] is True
        assert [i["source"] for i in answer["onnx"]["inputs"]] == ["--input: the file given"] * 2
