"""ONNX's own `pytorch-operator` backend models (shipped in the onnx wheel, exported from PyTorch with their inputs
and PyTorch's outputs as protobufs): each opens, every node that opens agrees with ONNX Runtime on its real input,
and where one layer computes the whole model, its reference gives the stored output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from playground.base.errors import ValidationError
from playground.model import whole
from playground.onnx import reading

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data" / "pytorch-operator"
CASES = sorted(p.name for p in DATA.iterdir() if (p / "model.onnx").exists()) if DATA.exists() else []


def load(case: str):
    folder = DATA / case
    model = reading.load_model((folder / "model.onnx").read_bytes(), f"{case}.onnx")
    data = folder / "test_data_set_0"
    read = lambda f: numpy_helper.to_array(onnx.load_tensor(str(f)))  # noqa: E731
    inputs = [read(f) for f in sorted(data.glob("input_*.pb"))]
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    return model, dict(zip(names, inputs)), read(data / "output_0.pb")


def test_the_models_are_there():
    assert len(CASES) >= 30


def judge(case: str) -> str:
    """ "compared" (the model's output is PyTorch's, every opened node agrees with ONNX Runtime on its real input,
    and every node that does not open says why), or why it cannot be compared, itself checked."""
    outputs: dict = {}
    try:
        model, given, want = load(case)
        if any(a.dtype.kind != "f" for a in given.values()):
            return "integer inputs"  # the seeded patterns are float
        answer = whole.analyze(model, case, given, engine=False, outputs=outputs)
    except ValidationError as exc:  # a model or input the door refuses names the rule (float64 beyond float32)
        assert exc.param and exc.rule
        return "refused"
    if "onnxruntime_error" in answer:
        assert answer["onnxruntime_error"]  # ONNX Runtime's own words
        return "onnxruntime refuses it"
    (y, *_) = outputs.values()
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-4)  # the model as exported: PyTorch's answer
    opened = [n for n in answer["nodes"] if n["layer"]]
    assert all(n.get("agrees") is not False for n in opened), [(n["name"], n.get("max_abs_diff")) for n in opened]
    assert all(n["reason"] for n in answer["nodes"] if not n["layer"])
    return "compared"


@pytest.mark.parametrize("case", CASES)
def test_each_model_is_judged(case):
    assert judge(case) in ("compared", "refused", "integer inputs", "onnxruntime refuses it")


def test_most_models_are_compared_whole():
    verdicts = {c: judge(c) for c in CASES}
    compared = [c for c, v in verdicts.items() if v == "compared"]
    # the rest: float64 models (refused: the playground computes in float32), integer inputs; the opset 6 models
    # ONNX Runtime has no kernels for run converted by onnx.version_converter (24 were compared before)
    assert len(compared) >= 29, {c: v for c, v in verdicts.items() if v != "compared"}
