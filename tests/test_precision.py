"""Precision: the emulation against hand-computed values, every layer × precision through the real builder,
the error figures, the CLI, the link and the exported script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from apptest import open_page, stage_data, tensor

from playground.base import precision as P
from playground.base.params import Enum, same_params
from playground.layers import LAYERS, get_layer
from playground.network import presets
from playground.network.core import evaluate
from playground.trt.backend import detect

ROOT = Path(__file__).resolve().parents[1]
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


# -- emulation, by hand ---------------------------------------------------------------------------
def test_fp16_rounds_half_to_even_keeps_subnormals_and_overflows_to_inf():
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 2**-24, 2**-25, 3 * 2**-26, 65504, 65520, -70000, np.nan], np.float32)
    got = P.round_to(x, "FP16")
    assert got[0] == 1.0 and got[1] == 1 + 2**-9  # ties: to the even neighbour (1, then 1 + 2^-9)
    assert got[2] == 2**-24 and got[3] == 0 and got[4] == 2**-24  # smallest subnormal; a tie to 0 (even); above it
    assert got[5] == 65504 and np.isposinf(got[6]) and np.isneginf(got[7]) and np.isnan(got[8])


def test_bf16_keeps_float32s_range_with_8_bits():
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.0e38, 1e-40, -2.5], np.float32)
    got = P.round_to(x, "BF16")
    assert got[0] == 1.0 and got[1] == 1 + 2**-6  # ties to even
    assert np.isfinite(got[2]) and abs(got[2] - 3.0e38) / 3.0e38 < 2**-8
    assert got[3] != 0 and got[4] == -2.5


def test_tf32_rounds_to_ten_mantissa_bits_ties_away_from_zero():
    x = np.array(
        [1 + 2**-11, -(1 + 2**-11), 1 + 2**-12, 1 + 3 * 2**-11, 3.0e38, np.inf, np.nan, 2**-136, 2**-140], np.float32
    )
    got = P.round_to(x, "TF32")
    assert got[0] == 1 + 2**-10 and got[1] == -(1 + 2**-10)  # a tie goes away from zero (not to even)
    assert got[2] == 1.0 and got[3] == 1 + 2**-9
    assert np.isfinite(got[4]) and np.isposinf(got[5]) and np.isnan(got[6])
    assert got[7] == 2**-136 and got[8] == 0  # TF32's smallest subnormal is 2^-136


def test_tf32_is_a_choice_where_the_layer_has_tensor_core_weights_only():
    assert "TF32" in get_layer("convolution").param("precision").choices
    for name, layer in LAYERS.items():
        assert ("TF32" in layer.param("precision").choices) == bool(layer.tf32), name
    with pytest.raises(ValueError, match="precision: must be one of FP32, FP16"):
        get_layer("activation").resolve({"precision": "TF32"}, (1, 1, 3, 3))


def test_tf32_rounds_the_input_and_the_kernel_but_not_the_bias_or_the_sums():
    x = np.full((1, 1, 1, 1), 1 + 2**-11, np.float32)  # rounds up to 1 + 2^-10
    r = evaluate(
        "convolution",
        {"kernel_size_nd": "1,1", "kernel": "1.0009765625", "bias": "0.00048828125", "precision": "TF32"},
        x,
        run=False,
    )
    want = np.float32((1 + 2**-10) * (1 + 2**-10) + 2**-11)  # the bias 2^-11 is kept although TF32 would drop it
    assert r.output.item() == want and r.truth.item() == (1 + 2**-11) * (1 + 2**-10) + 2**-11


def test_the_truth_is_the_layer_in_float64():
    """The spec's convolution: 12345.6789 exactly in float64, 12345.679 once rounded to float32."""
    r = evaluate("convolution", {"precision": "BF16"}, run=False)
    fp32 = evaluate("convolution", {}, run=False)
    assert r.truth.dtype == np.float64 and np.array_equal(r.truth.astype(np.float32), fp32.output)
    assert r.truth[0, 0, 0, 0] == pytest.approx(12345.6789, abs=1e-6) and not np.array_equal(r.truth, fp32.output)
    slopes = evaluate("prelu", {"precision": "FP16"}, run=False)
    assert slopes.truth.dtype == np.float64


def test_int8_quantizes_with_ties_to_even_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -0.5, 126.6, 300, -300, 3.3], np.float32)
    assert P.quantize(x, 1.0, "INT8").tolist() == [0, 2, 2, -0, 127, 127, -128, 3]
    assert P.fake_quantize(np.float32([0.26, 1.0]), 0.5, "INT8").tolist() == [0.5, 1.0]


def test_quantization_multiplies_by_the_reciprocal_scale_which_decides_a_tie():
    # −3.2500002 / 0.1 is −32.5 in float32 (a tie: −32), −3.2500002 · float32(1 / 0.1) is −32.500004 (−33)
    x = np.float32([-3.2500002, 3.2500002])
    assert (x / np.float32(0.1)).tolist() == [-32.5, 32.5]
    assert P.quantize(x, 0.1, "INT8").tolist() == [-33, 33]
    assert P.quantize(x * 4, 0.1, "FP8").tolist() == [-128, 128]  # 130.00002 rounds to E4M3's 128 either way
    lesson = presets.find("activation", "int8_tie")
    r = evaluate(lesson.layer, lesson.params, presets.input_for(lesson), run=False)
    assert r.output.ravel().tolist() == [np.float32(-33) * np.float32(0.1), 0, np.float32(33) * np.float32(0.1)]


def test_fp8_e4m3_saturates_at_448_and_rounds_to_three_mantissa_bits():
    x = np.array([448, 500, -1e6, 1.0625, 1.1875, 0.001953125, np.nan], np.float32)
    q = P.quantize(x, 1.0, "FP8")
    assert q[0] == 448 and q[1] == 448 and q[2] == -448  # saturated, never NaN
    assert q[3] == 1.0 and q[4] == 1.25  # 1 + 1/16 ties to 1 (even), 1 + 3/16 to 1.25
    assert q[5] == 2.0**-9 and np.isnan(q[6])  # the smallest subnormal; NaN stays NaN
    assert P.scale_from_data(np.float32([-896, 3]), "FP8") == 2.0 and P.scale_from_data(np.zeros(3), "INT8") == 1.0


def test_error_figures():
    e = P.errors(np.float32([1.0, 2.001, np.nan]), np.float64([1.0, 2.0, np.nan]), "FP16", 1.0)
    assert e["max_abs_error"] == pytest.approx(0.001, rel=1e-3) and e["max_rel_error"] == pytest.approx(
        0.0005, rel=1e-3
    )
    assert e["error_units"] == pytest.approx(0.0005 * 1024, rel=1e-3) and e["error"].tolist()[2] == 0
    q = P.errors(np.float32([1.5, 0.0]), np.float64([1.0, -0.5]), "INT8", 0.25)  # steps of the output's own scale
    assert q["error_units"] == pytest.approx(0.5 / (1.0 / 127)) and "output steps" in q["unit"]


# -- every layer × every precision, built by the real builder -------------------------------------------------
# The type each precision's engine computes the layer in, as TensorRT for RTX's build log names it.
ENGINE_TYPE = {"TF32": "Float", "FP16": "Half", "BF16": "BFloat16", "INT8": "Int8", "FP8": "FP8"}
# What TensorRT for RTX refuses, recorded: (layer, enum parameter = choice, precision) -> words of its message. Its
# builder cannot type a BF16 deconvolution (Myelin: "Could not infer output types"), whatever the padding mode; every
# other layer builds in every precision with every choice of its enum parameters. A change fails this test.
REFUSED = {
    ("deconvolution", label, "BF16"): "Could not infer output types for operation"
    for label in (
        "",
        *(f"padding_mode={m}" for m in ("EXPLICIT_ROUND_DOWN", "EXPLICIT_ROUND_UP", "SAME_UPPER", "SAME_LOWER")),
    )
}


@needs_trt
def test_every_layer_builds_in_every_precision_and_computes_in_it():
    from playground.trt import engine

    backend, refused = detect(), {}
    for name, layer in LAYERS.items():
        enums = [p for p in layer.params if isinstance(p.of, Enum) and p.name != "precision"]
        configs = [({}, "")] + [({p.name: c}, f"{p.name}={c}") for p in enums for c in p.choices]
        for raw, label in configs:
            for prec in layer.param("precision").choices[1:]:  # every one but FP32
                try:
                    params = layer.resolve({**raw, "precision": prec}, layer.example_shape)
                except ValueError:
                    continue  # a choice that needs other parameters to be valid
                report = engine.build_engine(backend, layer, params, layer.example_shape)
                if report.status != "built":
                    refused[(name, label, prec)] = report.error
                    continue
                if label == "" and name == "convolution":  # its engine layer's own tensors are in that type (the
                    # elementwise layers fuse with their casts into one kernel whose tensors are the float32 I/O)
                    formats = {t["format"].split()[0] for l in report.layers for t in l["inputs"] + l["outputs"]}
                    assert ENGINE_TYPE[prec] in formats, (name, prec, formats)
    assert set(refused) == set(REFUSED), {k: v[:300] for k, v in refused.items()}
    assert all(REFUSED[k] in refused[k] for k in refused), refused


def test_fp16_emulation_of_the_spec_convolution_shows_what_fp16_loses():
    """The spec's powers-of-ten kernel in FP16: 10^-4 … 10^-1 round, and outputs above 65504 overflow to +Inf."""
    r = evaluate("convolution", {"precision": "FP16"}, run=False)
    fp32 = evaluate("convolution", {}, run=False)
    assert np.isposinf(r.reference).sum() == 7 and np.isfinite(fp32.output).all()  # 7 sums exceed 65504
    e = r.precision_error
    assert np.isposinf(e["max_abs_error"]) and np.isposinf(e["max_rel_error"])  # an overflow is an infinite error
    finite = np.isfinite(r.reference)
    assert (e["error"][finite] / r.truth[finite]).max() < 2**-10  # the others: within one FP16 ε
    assert r.source_label.startswith("NumPy emulation of FP16") or r.output_source == "tensorrt"


@pytest.mark.parametrize("prec, most", [("BF16", 2.0**-8), ("FP8", 2.0**-4)])
def test_activation_error_stays_within_half_an_epsilon_of_the_precision(prec, most):
    r = evaluate("activation", {"type": "SELU", "precision": prec, "quantize_scale": 0}, run=False)
    e = r.precision_error
    assert 0 < e["max_rel_error"] and e["error_units"] > 0
    if prec == "BF16":  # input, alpha, beta and output each rounded once: a few half-ε
        assert e["max_rel_error"] < 4 * most
    else:
        assert r.params["quantize_scale"] == pytest.approx(P.scale_from_data(r.input, "FP8"))  # "from the data"


def test_int8_scale_too_small_saturates_and_the_error_says_so():
    r = evaluate("activation", {"type": "RELU", "precision": "INT8", "quantize_scale": 0.01}, run=False)
    assert r.reference.max() == pytest.approx(1.27)  # 127 steps of 0.01: everything above is clamped
    assert r.precision_error["max_abs_error"] == pytest.approx(r.truth.max() - 1.27, rel=1e-5)


# -- the CLI, the old spelling, the exported script -------------------------------------------------------------
def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "playground", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_cli_json_carries_the_precision_and_its_error_figures():
    done = run_cli("run", "activation", "--set", "type=GELU_TANH", "--set", "precision=BF16", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["params"]["precision"] == "BF16"
    e = out["precision"]
    assert e["precision"] == "BF16" and e["unit"] == "ε = 2^-7" and e["source"] == out["output_source"]
    assert 0 < e["max_abs_error"] and e["error_units"] == pytest.approx(e["max_rel_error"] / 2**-7)
    fp32 = json.loads(run_cli("run", "activation", "--json").stdout)
    assert fp32["precision"] is None


def test_the_old_int8_spelling_is_precision_int8():
    old = evaluate("convolution", {"int8": "true", "quantize_scale": 1}, run=False)
    new = evaluate("convolution", {"precision": "INT8", "quantize_scale": 1}, run=False)
    assert same_params(old.params, new.params)
    assert np.array_equal(old.output, new.output) and old.output.min() == 726  # the spec's INT8 table
    assert any("the old spelling of precision=INT8" in m for m in old.messages)


def test_an_old_int8_link_opens_as_precision_int8():
    at = open_page("convolution", **{"convolution.int8": "true", "convolution.quantize_scale": "1"})
    answer = stage_data(at)["answer"]
    assert at.query_params["convolution.precision"] == "INT8" and "convolution.int8" not in at.query_params
    assert tensor(answer, "output").min() == 726  # the spec's INT8 table on the stage
    assert answer["precision"].startswith("INT8 against FP64")


@needs_trt
@pytest.mark.parametrize("prec", ["TF32", "FP16", "BF16", "INT8", "FP8"])
def test_exported_script_builds_the_same_precision(prec, tmp_path):
    script = tmp_path / "conv.py"
    done = run_cli("export", "convolution", "--set", f"precision={prec}", "--out", str(script))
    assert done.returncode == 0, done.stderr
    text = script.read_text()
    assert f"'precision': '{prec}'" in text and "def precision_input(trt, network, x, precision, scale):" in text
    assert 'if precision == "TF32":\n        config.set_flag(trt.BuilderFlag.TF32)' in text
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and "engine: built by" in done.stdout, done.stderr


# -- compare mode ---------------------------------------------------------------------------------------------------
def test_compare_mode_evaluates_the_second_precision_and_their_difference():
    r = evaluate("activation", {"type": "GELU_TANH", "precision": "BF16"}, compare="FP32", run=False)
    other = r.compared
    assert other.params["precision"] == "FP32" and np.array_equal(other.input, r.input)
    want = np.abs(r.output.astype(np.float64) - other.output)
    assert r.difference["max_abs_error"] == want.max() > 0
    assert r.compare_summary()["max_abs_difference"] == want.max()
    same = evaluate("activation", {"precision": "BF16"}, compare="BF16", run=False)
    assert same.compared is None and same.compare_summary() is None  # nothing to compare with itself


def test_cli_compare_reports_the_difference_and_names_a_bad_choice():
    done = run_cli("run", "convolution", "--set", "precision=FP16", "--compare", "FP32", "--json")
    assert done.returncode == 0, done.stderr
    c = json.loads(done.stdout)["compare"]
    assert c["precision"] == "FP32" and c["max_abs_difference"] == "inf"  # FP16's overflow, as text in JSON
    bad = run_cli("run", "activation", "--compare", "TF32")
    assert bad.returncode == 2 and "--compare: must be one of FP32, FP16, BF16, INT8, FP8" in bad.stderr


# -- the lessons ----------------------------------------------------------------------------------------------------
LESSONS = presets.all_lessons()


@pytest.mark.parametrize("lesson", LESSONS, ids=[f"{p.layer}-{p.name}" for p in LESSONS])
def test_every_lesson_states_the_error_figures_the_playground_measures(lesson):
    r = evaluate(lesson.layer, lesson.params, presets.input_for(lesson), run=False)
    cmp = presets.compare(lesson, r.output, r.precision_error)
    assert cmp.matches, cmp.message
    assert lesson.title.startswith("Precision: ") and lesson.params["precision"] in lesson.title


def test_lessons_by_hand():
    def errors(name):
        lesson = presets.find(*name.split("."))
        r = evaluate(lesson.layer, lesson.params, presets.input_for(lesson), run=False)
        return r, r.precision_error

    r, e = errors("activation.int8_saturation")
    assert e["max_abs_error"] == pytest.approx(4 - 127 * 0.01, rel=1e-6)  # the ramp's 4 clamped to 127 steps
    r, e = errors("convolution.fp16_overflow")
    assert np.isposinf(r.output).sum() == (r.truth > 65504).sum() == 7  # FP16's largest value is 65504
    r, e = errors("activation.fp8_from_data")
    assert r.params["quantize_scale"] == pytest.approx(4 / 448) and e["max_rel_error"] <= 2**-4  # half of ε = 2^-3
    r, e = errors("convolution.tf32_operands")
    assert 0 < e["error_units"] < 1 and np.isfinite(r.output).all()
    r, e = errors("scale.fp16_cube_overflow")
    assert np.isposinf(r.output).sum() == (r.truth >= 65520).sum() == 13  # x³ rounds to +Inf from 65520 up
    r, e = errors("leaky_relu.bf16_alpha")  # the scale construction's weights 0.1 and 0.9 in BF16: 1.17 ε
    assert float(P.round_to(0.1, "BF16")) == 0.10009765625 and float(P.round_to(0.9, "BF16")) == 0.8984375
    assert 1 < e["error_units"] < 1.5
    attribute = evaluate("leaky_relu", {**r.params, "construction": "activation"}, r.input, run=False)
    assert attribute.precision_error["error_units"] < 1  # the activation's alpha stays float32


def test_a_lesson_whose_figures_differ_is_reported():
    lesson = presets.find("activation", "int8_saturation")
    r = evaluate(lesson.layer, {**lesson.params, "quantize_scale": 0.02}, presets.input_for(lesson), run=False)
    cmp = presets.compare(lesson, r.output, r.precision_error)
    assert not cmp.matches and "max_abs_error" in cmp.message and "2.73" in cmp.message
    overflow = presets.find("scale", "fp16_cube_overflow")  # an infinite figure is matched only by inf
    r = evaluate("scale", {**overflow.params, "power": "2"}, presets.input_for(overflow), run=False)
    assert not presets.compare(overflow, r.output, r.precision_error).matches


def test_a_lesson_opens_from_its_link_with_its_verdict_and_note():
    answer = stage_data(open_page("activation", preset="int8_saturation"))["answer"]
    assert answer["query"]["activation.precision"] == "INT8"
    assert answer["example"]["name"] == "int8_saturation" and answer["example"]["matches"]
    assert answer["example"]["kind"] == "Lesson" and answer["example"]["note"]
    assert answer["precision"].startswith("INT8 against FP64: max |error| 2.73")


def test_compare_mode_on_the_stage():
    data = stage_data(open_page("convolution", **{"convolution.precision": "BF16", "convolution.compare": "FP32"}))
    assert data["compare"] == "FP32" and data["answer"]["precision"].startswith("BF16 − FP32: max |difference| ")
    difference = next(f for f in data["answer"]["figures"] if f["which"] == "difference")
    assert difference["title"] == "log₁₀ |BF16 − FP32|" and difference["magnitude"]
