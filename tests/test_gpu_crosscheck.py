"""The precision emulation against GPU outputs kept from bench/gpu_crosscheck.py (PyTorch and cuDNN on an H100, not
TensorRT): one case per layer and precision, each held to the worst difference its layer and precision showed over
the whole spread on the GPU. Runs anywhere: the GPU's outputs are in tests/fixtures/gpu_crosscheck.npz."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from playground.base import precision as P
from playground.layers import get_layer

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = np.load(ROOT / "tests/fixtures/gpu_crosscheck.npz")
META = json.loads(str(FIXTURE["meta"]))
_spec = importlib.util.spec_from_file_location("gpu_crosscheck", ROOT / "bench/gpu_crosscheck.py")
crosscheck = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(crosscheck)


def case_input(i: int, case: dict):
    """The case's input: an array, or the feed dict of a layer of several inputs."""
    if case.get("inputs"):
        return {n: FIXTURE[f"input_{i}_{n}"] for n in case["inputs"]}
    return FIXTURE[f"input_{i}"]


def test_the_fixture_came_from_a_gpu_and_covers_every_layer_pytorch_has():
    assert "NVIDIA" in META["device"] and "PyTorch" in META["device"]
    layers = {c["layer"] for c in META["cases"]}
    assert layers == {
        "activation",
        "prelu",
        "convolution",
        "deconvolution",
        "pooling",
        "resize",
        "softmax",
        "scale",
        "elementwise",
        "matrix_multiply",
        "normalization",
        "reduce",
        "unary",
        "lrn",
    }
    assert {c["precision"] for c in META["cases"]} == set(crosscheck.PRECISIONS)
    assert (ROOT / "tests/fixtures/gpu_crosscheck.npz").stat().st_size <= 2 << 20


@pytest.mark.parametrize("i, case", list(enumerate(META["cases"])), ids=[c["key"] for c in META["cases"]])
def test_the_emulation_stays_within_what_the_gpu_measured(i, case):
    layer = get_layer(case["layer"])
    x, gpu = case_input(i, case), FIXTURE[f"gpu_{i}"]
    params = layer.resolve(case["params"], {n: a.shape for n, a in x.items()} if isinstance(x, dict) else x.shape)
    with np.errstate(all="ignore"):
        emulated = P.emulate(layer, x, params)
        truth = P.emulate(layer, x, {**params, "precision": P.TRUTH})
    u = crosscheck.units(gpu, emulated, truth, case["precision"])
    assert emulated.shape == gpu.shape
    assert u.max() <= case["bound"], (case["key"], float(u.max()), case["bound"])


def test_a_changed_emulation_is_caught():
    """Rounding a BF16 convolution's output to FP16 instead moves it past the GPU's bound."""
    i, case = next((i, c) for i, c in enumerate(META["cases"]) if c["key"] == "convolution|BF16")
    layer = get_layer("convolution")
    x, gpu = FIXTURE[f"input_{i}"], FIXTURE[f"gpu_{i}"]
    params = layer.resolve(case["params"], x.shape)
    wrong = P.round_to(P.emulate(layer, x, {**params, "precision": "FP32"}), "FP16")
    truth = P.emulate(layer, x, {**params, "precision": P.TRUTH})
    assert crosscheck.units(gpu, wrong, truth, "BF16").max() > case["bound"]


def test_the_stage_quotes_the_measured_figure():
    text = P.gpu_agreement("convolution", "FP16")
    figures = json.loads((ROOT / "playground/base/gpu_crosscheck.json").read_text())["layers"]["convolution"]["FP16"]
    assert f"{100 * figures['within_1']:.1f} % of cells" in text and "not TensorRT" in text and "cuDNN" in text
    assert P.gpu_agreement("slice", "FP16") is None  # not measured: nothing claimed
