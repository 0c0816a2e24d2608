"""A run of a model's nodes opened as a chain (serve.as_chain): on the model's own tensor (ONNX Runtime's, named by
the model's digest, never a path), computing what ONNX Runtime computes for those nodes, and built so that TensorRT
fuses it as it fuses the model; a tampered or stale link says which key is wrong."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.base import blobs  # noqa: E402
from playground.base.errors import ValidationError  # noqa: E402
from playground.model import kept, whole  # noqa: E402
from playground.network import chain as C  # noqa: E402
from playground.onnx import reading, runtime  # noqa: E402
from playground.serve import as_chain  # noqa: E402
from playground.serve import chain_address as A  # noqa: E402
from playground.trt.backend import detect  # noqa: E402

needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")
NODES = ("conv", "bn", "relu")


@pytest.fixture(autouse=True)
def _own_stores(tmp_path, monkeypatch):
    """The model, its run and its engine kept in this test's own directories."""
    monkeypatch.setenv("PLAYGROUND_BLOBS", str(tmp_path / "blobs"))
    monkeypatch.setenv("PLAYGROUND_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("PLAYGROUND_ENGINE_CACHE", str(tmp_path / "engines"))
    monkeypatch.setattr(blobs, "_store", None)


def conv_bn_relu(bias: bool = True) -> bytes:
    """x → Relu ("pre") → Conv → BatchNormalization → Relu: the chain's input is a tensor the model computes."""
    rng = np.random.default_rng(7)
    k, c = 5, 3
    consts = {
        "w": rng.uniform(-1, 1, (k, c, 3, 3)),
        "b": rng.uniform(-1, 1, k),
        "gamma": rng.uniform(0.5, 1.5, k),
        "beta": rng.uniform(-1, 1, k),
        "mean": rng.uniform(-1, 1, k),
        "var": rng.uniform(0.1, 2, k),
    }
    if not bias:
        del consts["b"]
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="pre"),
            helper.make_node("Conv", ["r", "w"] + (["b"] if bias else []), ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["n"], name="bn"),
            helper.make_node("Relu", ["n"], ["y"], name="relu"),
        ],
        "cbr",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 7, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, k, 7, 6])],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in consts.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def two_blocks() -> bytes:
    """x → Relu ("pre") → Conv → BatchNormalization → Relu → Conv → BatchNormalization → Relu: the first block's
    output is no output of the model's, and TensorRT-RTX computes that block in one engine layer."""
    rng = np.random.default_rng(11)
    nodes, consts, x = [helper.make_node("Relu", ["x"], ["p"], name="pre")], {}, "p"
    for i, (c, k) in enumerate([(3, 8), (8, 8)], 1):
        consts |= {
            f"w{i}": rng.uniform(-1, 1, (k, c, 3, 3)),
            f"b{i}": rng.uniform(-1, 1, k),
            f"gamma{i}": rng.uniform(0.5, 1.5, k),
            f"beta{i}": rng.uniform(-1, 1, k),
            f"mean{i}": rng.uniform(-1, 1, k),
            f"var{i}": rng.uniform(0.1, 2, k),
        }
        nodes += [
            helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}", pads=[1, 1, 1, 1]),
            helper.make_node(
                "BatchNormalization",
                [f"c{i}", f"gamma{i}", f"beta{i}", f"mean{i}", f"var{i}"],
                [f"n{i}"],
                name=f"bn{i}",
            ),
            helper.make_node("Relu", [f"n{i}"], [f"r{i}"], name=f"relu{i}"),
        ]
        x = f"r{i}"
    g = helper.make_graph(
        nodes,
        "blocks",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, 16, 16])],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in consts.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def opened(data: bytes) -> tuple[str, object, dict]:
    """The model kept as an upload is, its query for the chain of conv, bn, relu, and the address it reads as."""
    digest, model = reading.remember(data, "cbr.onnx")
    query = as_chain.query_of(model, list(NODES), digest, "cbr.onnx")
    return digest, model, query


def test_the_chain_reads_the_models_tensor_by_the_models_digest():
    digest, model, query = opened(conv_bn_relu())
    assert query[A.LAYERS_KEY] == "convolution,scale,activation"
    assert (query[A.ONNX_KEY], query[A.TENSOR_KEY], query[A.NODES_KEY]) == (digest, "r", "conv,bn,relu")
    assert not any("/" in v for k, v in query.items() if k.startswith("input.")), "no path in the link"
    address = A.from_query(query)
    assert not address.problems, address.problems
    assert address.query() == query  # the link is the address: shared, it opens the same chain
    inputs, _ = whole.feeds(model)
    real = whole.run_all(model, inputs)
    np.testing.assert_array_equal(address.input(), real["r"])  # the first node's real input, not a pattern
    assert (address.input() >= 0).all() and address.input().std() > 0
    first = A.from_query(as_chain.query_of(model, ["pre", "conv"], digest, "cbr.onnx"))  # from the graph's input
    assert first.model.tensor == "x"
    np.testing.assert_array_equal(first.input(), inputs["x"])


def test_the_chains_output_is_onnx_runtimes_tensor_for_those_nodes():
    """Cell by cell within the comparison's tolerance (`runtime.compare`: atol + rtol·|reference|), every cell
    compared: none is masked (a convolution, a scale and a ReLU leave no cell undefined)."""
    digest, model, query = opened(conv_bn_relu())
    address = A.from_query(query)
    chain = C.resolve(address.names, address.raw(), address.shape)
    y = C.compute(chain, address.input())[chain.keys[-1]]
    inputs, _ = whole.feeds(model)
    onnxruntime = whole.run_all(model, inputs)["y"]
    verdict = runtime.compare(onnxruntime, y)
    assert verdict["agrees"] is True, verdict
    assert not verdict.get("masked"), verdict
    assert np.abs(onnxruntime - y).max() < 1e-4


def test_a_batchnormalization_is_the_parsers_scale_folded_in_float32():
    """The scale and shift the chain's Scale layer gets are the parser's combinedScale = scale / sqrtf(var + eps)
    and combinedBias = bias − mean · combinedScale, each operation in float32."""
    _, model, query = opened(conv_bn_relu())
    address = A.from_query(query)
    params = C.resolve(address.names, address.raw(), address.shape).links[1].params
    consts = reading.constants(model)
    gamma, beta, mean, var = (np.asarray(consts[n], np.float32) for n in ("gamma", "beta", "mean", "var"))
    s = gamma / np.sqrt(var + np.float32(1e-5))
    np.testing.assert_array_equal(params["scale"], s)
    np.testing.assert_array_equal(params["shift"], beta - mean * s)
    assert params["mode"] == "CHANNEL" and (params["power"] == 1).all()


@needs_trt
def test_a_batchnormalization_the_models_engine_computes_in_the_convolution_is_folded_into_it():
    """In the model's first block TensorRT computes conv1, bn1 and relu1 in one engine layer: the chain folds bn1
    into conv1's kernel and bias (kernel · s, bias · s + t), computes what ONNX Runtime computes, and its engine too
    computes the three in one layer."""
    digest, model = reading.remember(two_blocks(), "blocks.onnx")
    answer = kept.analysis(digest, "blocks.onnx", lambda: model)
    block = [sorted(layer["fuses"]) for layer in answer["engine"]["layers"] if "conv1" in layer["fuses"]]
    assert block == [["bn1", "conv1", "relu1"]], answer["engine"]["layers"]
    assert as_chain.folds("conv1", "bn1", answer["engine"])
    query = as_chain.query_of(model, ["conv1", "bn1", "relu1"], digest, "blocks.onnx", answer["engine"])
    assert query[A.LAYERS_KEY] == "convolution,activation" and query[A.NODES_KEY] == "conv1+bn1,relu1"
    address = A.from_query(query)
    unfolded = A.from_query(as_chain.query_of(model, ["conv1", "bn1"], digest, "blocks.onnx"))
    conv, scale = C.resolve(unfolded.names, unfolded.raw(), unfolded.shape).links
    chain = C.resolve(address.names, address.raw(), address.shape)
    s, t = scale.params["scale"], scale.params["shift"]
    np.testing.assert_array_equal(chain.links[0].params["kernel"], conv.params["kernel"] * s[:, None, None, None])
    np.testing.assert_array_equal(chain.links[0].params["bias"], conv.params["bias"] * s + t)
    inputs, _ = whole.feeds(model)
    onnxruntime = whole.run_all(model, inputs)["r1"]
    y = C.compute(chain, address.input())[chain.keys[-1]]
    verdict = runtime.compare(onnxruntime, y)
    assert verdict["agrees"] is True and not verdict.get("masked"), verdict
    result = C.evaluate(address.names, address.raw(), address.input())
    f = as_chain.fusion(as_chain.model_engine(digest), address.model.nodes, result.engine, result.chain.keys)
    assert f["same"] and f["chain"] == [["bn1", "conv1", "relu1"]], f
    assert "bn1 into conv1's kernel and bias" in as_chain.folded_text(address.model.nodes)


@needs_trt
@pytest.mark.parametrize("bias", [True, False])
def test_the_chains_engine_fuses_the_nodes_as_the_models_engine(bias):
    """Where the block's output is the model's, TensorRT computes the convolution in an engine layer of its own: the
    BatchNormalization stays the parser's Scale layer, and the chain's engine computes conv, bn and relu in the same
    engine layers as the model's; the chain page says so."""
    digest, model, _ = opened(conv_bn_relu(bias))
    answer = kept.analysis(digest, "cbr.onnx", lambda: model)
    assert not as_chain.folds("conv", "bn", answer["engine"])
    query = as_chain.query_of(model, list(NODES), digest, "cbr.onnx", answer["engine"])
    assert query[A.LAYERS_KEY] == "convolution,scale,activation"
    address = A.from_query(query)
    result = C.evaluate(address.names, address.raw(), address.input())
    f = as_chain.fusion(as_chain.model_engine(digest), address.model.nodes, result.engine, result.chain.keys)
    model_layers = [sorted(layer["fuses"]) for layer in answer["engine"]["layers"] if set(layer["fuses"]) & set(NODES)]
    assert f["model"] == model_layers and len(model_layers) >= 1
    assert f["same"], f
    assert as_chain.fusion_text(f).startswith("The chain's engine computes these nodes as the model's engine does")


@needs_trt
def test_folding_the_batchnormalization_into_the_convolution_by_hand_would_fuse_otherwise():
    """Why a BatchNormalization after a convolution whose output is the model's stays a Scale layer: folded into the
    convolution's kernel and bias by hand, TensorRT-RTX fuses the chain otherwise than the model; `fusion` says so and
    why."""
    digest, model, query = opened(conv_bn_relu())
    address = A.from_query(query)
    conv, scale = C.resolve(address.names, address.raw(), address.shape).links[:2]
    s, t = scale.params["scale"], scale.params["shift"]
    kernel = conv.params["kernel"] * s[:, None, None, None]
    bias = conv.params["bias"] * s + t
    folded = C.evaluate(
        ["convolution", "activation"],
        {"convolution": dict(conv.raw, kernel=kernel, bias=bias), "activation": {"type": "RELU"}},
        address.input(),
    )
    f = as_chain.fusion(as_chain.model_engine(digest), ("conv", "relu"), folded.engine, folded.chain.keys)
    if f["same"]:
        pytest.fail(f"this TensorRT fuses the folded chain as the model: the chain may fold it too ({f})")
    assert f["why"] and "bn" in as_chain.fusion_text(f)


def test_a_tampered_or_stale_model_reference_names_its_key():
    digest, model, query = opened(conv_bn_relu())
    bad = A.from_query(query | {A.ONNX_KEY: "../../etc/passwd"})
    assert bad.model is None and any(p.startswith("input.onnx: must be a model's content digest") for p in bad.problems)
    gone = A.from_query(query | {A.ONNX_KEY: "0" * 64})
    with pytest.raises(ValidationError, match=r"^input\.onnx: the model 000000000000… is not held by this server"):
        gone.input()
    with pytest.raises(ValidationError, match=r"^input\.tensor: the model has no tensor 'nope'"):
        A.from_query(query | {A.TENSOR_KEY: "nope"}).input()
    with pytest.raises(ValidationError, match=r"^input\.tensor: the model's tensor 'y' is \(1, 5, 7, 6\)"):
        A.from_query(query | {A.TENSOR_KEY: "y"}).input()  # another tensor of the model, of another shape
    empty = A.from_query(query | {A.TENSOR_KEY: ""})
    assert empty.model is None and any(p.startswith("input.tensor: must name") for p in empty.problems)
    fewer = A.from_query(query | {A.NODES_KEY: "conv,bn"})
    assert fewer.model.nodes == () and any(p.startswith("input.nodes: must name one node") for p in fewer.problems)


def test_a_run_the_parser_builds_as_several_layers_or_of_two_inputs_is_no_chain():
    _, model, _ = opened(conv_bn_relu())
    with pytest.raises(ValidationError, match="'relu'.*must be consecutive"):
        as_chain.query_of(model, ["pre", "relu"], "0" * 64)


@needs_trt
def test_the_chain_page_says_where_it_reads_and_that_it_fuses_as_the_model():
    from test_chain_page import open_chain, texts

    digest, model, query = opened(conv_bn_relu())
    kept.analysis(digest, "cbr.onnx", lambda: model)
    at = open_chain(**query)
    assert not at.error and not at.warning, (texts(at.error), texts(at.warning))
    assert "On ONNX Runtime's tensor 'r' of the model cbr.onnx" in texts(at.caption)
    assert "as the model's engine does: conv; bn + conv + relu" in texts(at.success)
    stale = open_chain(**query | {A.ONNX_KEY: "f" * 64})
    assert "input.onnx: the model ffffffffffff… is not held by this server" in texts(stale.error)


@needs_trt
def test_a_run_short_of_its_engine_layer_fuses_otherwise_and_says_why():
    """conv and bn without the relu the model's pointwise kernel also computes: the chain cannot fuse as the model,
    and the reason names the node outside it."""
    digest, model, _ = opened(conv_bn_relu())
    address = A.from_query(as_chain.query_of(model, ["conv", "bn"], digest, "cbr.onnx"))
    result = C.evaluate(address.names, address.raw(), address.input())
    f = as_chain.fusion(as_chain.model_engine(digest), address.model.nodes, result.engine, result.chain.keys)
    assert not f["same"], f
    assert any(w.endswith("also computes relu, outside the chain") for w in f["why"]), f["why"]
    assert "otherwise than the model's engine" in as_chain.fusion_text(f)
    refused = {"status": "not_built", "why": "the model has 1,001 nodes", "layers": []}
    f = as_chain.fusion(refused, address.model.nodes, result.engine, result.chain.keys)
    assert f["same"] is None and "model has 1,001 nodes" in as_chain.fusion_text(f)


@needs_trt
def test_editing_the_chains_layers_keeps_the_models_tensor_but_not_its_nodes():
    from test_chain_page import open_chain, seat_of

    from playground.serve import server

    digest, model, query = opened(conv_bn_relu())
    at = open_chain(**query)
    edit = {"convolution.stride_nd.h": "2", "convolution.stride_nd.w": "2"}
    assert "answer" in server.answer(seat_of(at), {"params": edit})  # moved on the stage: still the model's nodes
    at.sidebar.button(key="chain.remove.2").click().run()  # a layer removed: the model's tensor, no longer its nodes
    q = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert q["layers"] == "convolution,scale" and q[A.ONNX_KEY] == digest and q[A.TENSOR_KEY] == "r"
    assert A.NODES_KEY not in q and all(q[k] == "2" for k in edit)
    assert not at.exception and not at.error
