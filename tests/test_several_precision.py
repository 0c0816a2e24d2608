"""Every precision of every layer of several inputs answers `run --json` (no traceback), and its precision export
is the configuration's: one model input per layer input, of the configuration's shapes (not the example's)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from playground.cli import main  # noqa: E402
from playground.layers import LAYERS  # noqa: E402

SEVERAL = [name for name, layer in LAYERS.items() if layer.several]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    from playground.network import core
    from playground.trt.cache import EngineCache

    monkeypatch.setattr(core, "_default_cache", EngineCache(tmp_path / "cache"))


def _run(capsys, *argv) -> dict:
    code = main(["run", *argv, "--json"])
    answer = json.loads(capsys.readouterr().out)
    assert code == 0, answer.get("error")
    return answer


@pytest.mark.parametrize("precision", ["FP16", "BF16", "INT8", "FP8"])
@pytest.mark.parametrize("name", SEVERAL)
def test_every_precision_of_a_layer_of_several_inputs_answers(name, precision, capsys):
    answer = _run(capsys, name, "--set", f"precision={precision}")
    ort = answer["precision_export"]["onnxruntime"]
    assert ort["status"] in ("ran", "refused")
    if ort["status"] == "refused":  # ONNX Runtime's CPU has no bfloat16 kernel for some ops: its words, never a feed
        assert precision == "BF16" and "implementation" in ort["error"], ort
    else:
        assert ort["agrees"] is True, ort
    assert "missing" not in json.dumps(answer["precision_export"])


@pytest.mark.parametrize("precision", ["FP16", "INT8"])
def test_the_precision_export_takes_the_configurations_shapes(precision, tmp_path, capsys):
    rng = np.random.default_rng(3)
    files = {}
    for name, shape in {"a": (1, 1, 2, 5), "b": (1, 1, 5, 3), "c1": (1, 2, 2, 3), "c2": (1, 3, 2, 3)}.items():
        files[name] = str(tmp_path / f"{name}.npy")
        np.save(files[name], rng.uniform(-2, 2, shape).astype(np.float32))
    mm = _run(
        capsys, "matrix_multiply", "--set", f"precision={precision}", "--input", files["a"], "--input", files["b"]
    )
    assert mm["precision_export"]["onnxruntime"]["output_shape"] == [1, 1, 2, 3]
    assert mm["precision_export"]["onnxruntime"]["agrees"] is True
    cat = _run(
        capsys, "concatenation", "--set", f"precision={precision}", "--input", files["c1"], "--input", files["c2"]
    )
    assert cat["precision_export"]["onnxruntime"]["output_shape"] == [1, 5, 2, 3]
    assert cat["precision_export"]["onnxruntime"]["agrees"] is True
