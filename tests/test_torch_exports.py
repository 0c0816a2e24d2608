"""PyTorch's own ONNX exports (tests/fixtures/torch, made by its make.py with PyTorch 2.11's default exporter) open
here and agree with PyTorch: the whole model (ONNX Runtime, the `model` command's output), every node that opens on
its real input (its layer's reference against ONNX Runtime's tensor), and `run --onnx` of a one-node export (the
layer's reference against PyTorch's own answer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from playground import cli
from playground.cli import open_model
from playground.model import whole

HERE = Path(__file__).parent / "fixtures" / "torch"
CASES = sorted(p.stem for p in HERE.glob("*.onnx"))
# The modules the several-inputs work names: each of their nodes opens as a layer (a node of shape arithmetic,
# which no layer computes, aside).
EVERY_NODE_OPENS = (
    "add_broadcast",
    "mul_constant",
    "sub_div",
    "matmul_2d",
    "matmul_batched",
    "matmul_broadcast",
    "cat",
    "layernorm",
    "groupnorm",
    "instancenorm",
    "batchnorm",
    "mean_dim",
    "amax_dim",
    "sum_dims",
    "exp",
    "abs_neg",
    "sqrt",
    "erf",
    "floor",
    "sin",
    "gather_dim",
    "index_list",
    "linear",
    "gelu_tanh",
    "relu_of_double",
    "neg_softmax",
    "conv_relu",
    "conv_bn_relu",
    "conv_prelu",
    "residual",
    "external",
)
# Not yet: none today (nn.Linear's Gemm with a bias opens as TensorRT's parser builds it, a matrix multiply then an
# ElementWise SUM; a list of indices as Gather's ND mode). A module whose node cannot open is named here with its op.
NOT_YET: dict[str, str] = {}


def load(case: str):
    z = np.load(HERE / f"{case}.npz")
    return open_model(str(HERE / f"{case}.onnx")), {k: z[k] for k in z.files if k != "output"}, z["output"]


def test_the_fixtures_are_pytorchs_and_the_exports_external_data_beside_it():
    assert (HERE / "torch_version.txt").read_text().startswith("2.")
    assert (HERE / "external.onnx.data").stat().st_size > 0 and len(CASES) >= 30


@pytest.mark.parametrize("case", CASES)
def test_the_model_agrees_with_pytorch_and_every_opened_node_with_onnxruntime(case):
    model, given, want = load(case)
    outputs: dict = {}
    answer = whole.analyze(model, f"{case}.onnx", given, engine=False, outputs=outputs)
    (y,) = outputs.values()
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)  # the export and ONNX Runtime: PyTorch's answer
    opened = [n for n in answer["nodes"] if n["layer"]]
    assert all(n["agrees"] for n in opened), [(n["name"], n.get("max_abs_diff"), n.get("rule")) for n in opened]
    if case in EVERY_NODE_OPENS:
        assert len(opened) == len(answer["nodes"]), [(n["op_type"], n.get("reason")) for n in answer["nodes"]]
    else:  # what does not open is named, with its reason
        shut = [n for n in answer["nodes"] if not n["layer"]]
        assert [n["op_type"] for n in shut] == [NOT_YET[case]] and all(n["reason"] for n in shut)


def test_every_case_is_judged():
    assert set(CASES) == set(EVERY_NODE_OPENS) | set(NOT_YET)


@pytest.mark.parametrize(
    "case", [c for c in CASES if len(load(c)[0].graph.node) == 1 and len(load(c)[1]) == 1 and c not in NOT_YET]
)
def test_run_onnx_of_a_one_node_export_gives_pytorchs_answer(case, tmp_path, capsys):
    model, given, want = load(case)
    (x,) = given.values()
    np.save(tmp_path / "x.npy", x)
    rc = cli.main(
        [
            "run",
            "--onnx",
            str(HERE / f"{case}.onnx"),
            "--input",
            str(tmp_path / "x.npy"),
            "--output",
            str(tmp_path / "y.npy"),
        ]
    )
    assert rc == 0, capsys.readouterr()
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-4, atol=1e-4)


def _weights(case: str) -> dict[str, np.ndarray]:
    from onnx import numpy_helper

    return {t.name: numpy_helper.to_array(t) for t in open_model(str(HERE / f"{case}.onnx")).graph.initializer}


@pytest.mark.parametrize(
    "case, chain, sets",
    [
        ("conv_relu", "convolution+activation", {"convolution.padding_nd": "1,1", "activation.type": "RELU"}),
        ("conv_prelu", "convolution+prelu", {"prelu.granularity": "channel"}),
        (
            "residual",
            "activation+elementwise+activation",  # x + tanh(x): the ElementWise's B is the chain's input
            {"activation.type": "TANH", "elementwise.operation": "SUM", "activation2.type": "RELU"},
        ),
    ],
)
def test_a_chain_gives_pytorchs_answer(case, chain, sets, tmp_path, capsys):
    """The chain built by hand on the command line, with the PyTorch module's own weights (nn.Conv2d's `0.weight`
    and `0.bias`, nn.PReLU's slopes), against PyTorch."""
    _, given, want = load(case)
    (x,) = given.values()
    np.save(tmp_path / "x.npy", x)
    weights = _weights(case)
    named = {
        "convolution.kernel": weights.get("0.weight"),
        "convolution.bias": weights.get("0.bias"),
        "prelu.slopes": weights.get("val_1"),
    }
    for key, w in named.items():
        if w is not None:
            np.save(tmp_path / f"{key}.npy", w if w.ndim == 4 else w.ravel())
            sets = {**sets, key: f"@{tmp_path / f'{key}.npy'}"}
    if named["convolution.kernel"] is not None:
        k = named["convolution.kernel"].shape
        sets = {**sets, "convolution.num_output_maps": str(k[0]), "convolution.kernel_size_nd": f"{k[2]},{k[3]}"}
    args = ["run", chain, "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy")]
    for k, v in sets.items():
        args += ["--set", f"{k}={v}"]
    assert cli.main(args) == 0, capsys.readouterr()
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-4, atol=1e-4)
