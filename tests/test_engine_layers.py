"""The engine's layers in every spelling TensorRT writes them (samples in tests/fixtures/engine_layers/)."""

from pathlib import Path

import pytest

from playground.trt.engine import layers_from_inspector_json, layers_from_log

SAMPLES = Path(__file__).parent / "fixtures" / "engine_layers"
CONV_IO = ([1, 1, 6, 9], [1, 1, 4, 7])


def log(name: str) -> list:
    """A build's log as the logger files it: the layer dump is one VERBOSE message among others."""
    return [("INFO", "Engine generation completed"), ("VERBOSE", (SAMPLES / name).read_text().rstrip("\n"))]


def test_tensorrt_rtx_build_log():
    layers = layers_from_log(log("tensorrt_rtx-1.7-build-log.txt"))
    assert [l["type"] for l in layers] == ["kgen", "correlation", "kgen"]
    assert layers[0]["inputs"] == [
        {"name": "inputT0", "shape": [1, 1, 6, 9], "format": "Float (Linear) Row major linear format"}
    ]
    assert layers[-1]["outputs"][0]["name"] == "outputT0" and layers[-1]["outputs"][0]["shape"] == CONV_IO[1]
    assert all(l["tactic"] for l in layers)


@pytest.mark.parametrize("sample", ["tensorrt-bracketed-build-log.txt", "tensorrt-parenthesised-build-log.txt"])
def test_full_tensorrt_build_log(sample):
    layers = layers_from_log(log(sample))
    conv = next(l for l in layers if l["type"] == "CaskConvolution")
    assert conv["name"] == "(Unnamed Layer* 0) [Convolution]" and conv["tactic"].startswith("0x")
    assert [t["shape"] for t in conv["inputs"] + conv["outputs"]] == list(CONV_IO)
    assert conv["outputs"] == [{"name": "outputT0", "shape": [1, 1, 4, 7], "format": "Float"}]


def test_full_tensorrt_build_log_with_names_that_hold_brackets_and_commas():
    layers = layers_from_log(log("tensorrt-bracketed-build-log.txt"))
    assert layers[0]["type"] == "Reformat"
    assert layers[0]["outputs"][0]["name"] == "Reformatted Input Tensor 0 to (Unnamed Layer* 0) [Convolution]"
    pwn = layers_from_log(log("tensorrt-parenthesised-build-log.txt"))[1]
    assert pwn["name"] == "PWN((Unnamed Layer* 1) [Scale], (Unnamed Layer* 3) [ElementWise])"
    assert [t["name"] for t in pwn["inputs"]] == ["outputT0", "inputT0"]
    assert pwn["outputs"] == [{"name": "sum", "shape": [1, 1, 4, 7], "format": "Half"}]


def test_a_log_without_a_layer_dump_has_no_layers():
    assert layers_from_log([("VERBOSE", "Layer(Conv) is not a dump"), ("INFO", "Layers are listed below")]) == []


@pytest.mark.parametrize(
    "sample, fmt",
    [
        ("tensorrt-10-inspector.json", "Row major linear FP32"),
        ("tensorrt-11-inspector.json", "Float (Linear) Row major linear format"),
    ],
)
def test_inspector_json(sample, fmt):
    layer = layers_from_inspector_json((SAMPLES / sample).read_text())[0]
    assert layer["inputs"][0] == {"name": "inputT0", "shape": [1, 1, 6, 9], "format": fmt}
    assert layer["outputs"][0]["format"] and layer["type"] != "?" and layer["tactic"]


def test_inspector_json_below_detailed_verbosity_lists_names():
    assert layers_from_inspector_json((SAMPLES / "inspector-names-only.json").read_text()) == [
        {"name": "(Unnamed Layer* 0) [Convolution]", "type": "?", "inputs": [], "outputs": [], "tactic": ""}
    ]
