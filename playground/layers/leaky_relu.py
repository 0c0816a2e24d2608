"""Leaky ReLU three ways: the activation type, a PReLU with one slope, and the spec's
Scale(x·alpha) + Scale(ReLU(x)·(1−alpha)) summed by an ElementWise layer."""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import precision as P
from ..base import reference as ref
from ..base.examples import EXACT_SMALL, Preset, lesson, spec_input, table
from ..base.inputs import centered_ramp
from ..base.layer import Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, OnnxMap
from ..base.params import Param
from ..base.section import Chart, Columns, Heatmaps, Note, OnRequest, Table, Text
from .prelu import FUSION_NOTE  # one of the constructions is a PReLU

CONSTRUCTIONS = ("activation", "parametric_relu", "scale_relu_sum")


def reference(x, p):
    # Each construction's own float32 arithmetic, so rounding differences between them are real (float64 for the
    # truth, reference.exact).
    t = ref.result_type()
    alpha = np.float32(p["alpha"])
    if p["construction"] == "scale_relu_sum":
        # Under FP16/BF16 each of the three layers gives its output in that type, and the scale weights alpha and
        # 1 − alpha (computed in float32, as build() does) are typed: round where TensorRT's types round.
        typed = lambda v: P.round_to(v, p.get("precision")) if p.get("precision") in P.FLOAT_TYPES else v  # noqa: E731
        w1, w0 = typed(np.float32(alpha)), typed(np.float32(1) - np.float32(alpha))
        return typed(typed(x.astype(t) * t(w1)) + typed(ref.activation(x, "RELU").astype(t) * t(w0))).astype(t)
    if p["construction"] == "parametric_relu":
        return ref.prelu(x, alpha)
    return ref.activation(x, "LEAKY_RELU", float(alpha))


def build(trt, network, x, p):
    alpha = p["alpha"]
    if p["construction"] == "activation":
        layer = network.add_activation(x, trt.ActivationType.LEAKY_RELU)
        layer.alpha = alpha
        return layer.get_output(0)
    if p["construction"] == "parametric_relu":
        ones = (1,) * len(x.shape)
        slope = network.add_constant(ones, np.full(ones, alpha, dtype=np.float32))
        return network.add_parametric_relu(x, slope.get_output(0)).get_output(0)
    # The spec's construction. TensorRT's Python API keeps these weight arrays alive until the
    # build; the C++ original's pitfall was weights on a stack that died before it.
    empty = trt.Weights()
    scaled = network.add_scale(x, trt.ScaleMode.UNIFORM, empty, np.array([alpha], np.float32), empty)
    relu = network.add_activation(x, trt.ActivationType.RELU)
    scaled_relu = network.add_scale(
        relu.get_output(0), trt.ScaleMode.UNIFORM, empty, np.array([1.0 - alpha], np.float32), empty
    )
    total = network.add_elementwise(scaled.get_output(0), scaled_relu.get_output(0), trt.ElementWiseOperation.SUM)
    return total.get_output(0)


# -- examples: the spec's (001_59716ba8d3a90fcb.txt) and a precision lesson --------------------
LEAKY_DOC = "001_59716ba8d3a90fcb.txt"

LEAKY_TABLE = table("-0.4 -0.3 -0.2 -0.1 0. 1. 2. 3. 4.", (1, 1, 3, 3))
_LEAKY_TITLES = {
    "scale_relu_sum": "Scale(x·0.1) + Scale(ReLU(x)·0.9), ElementWise SUM",
    "activation": "ActivationType.LEAKY_RELU, alpha 0.1",
    "parametric_relu": "add_parametric_relu, one slope 0.1",
}
LEAKY_RELU = [
    Preset(
        c,
        "leaky_relu",
        _LEAKY_TITLES[c],
        {"alpha": 0.1, "construction": c},
        spec_input((1, 1, 3, 3)),
        LEAKY_TABLE,
        (1, 1, 3, 3),
        EXACT_SMALL,
        f"{LEAKY_DOC} § 实现方式",
        note="The spec (C++, no run) prints no input or output; the input is the activation spec's "
        "arange(-4, 5) and the values are leaky ReLU's definition, x if x ≥ 0 else 0.1·x. "
        "All three constructions must give them.",
        printed=False,
    )
    for c in ("scale_relu_sum", "activation", "parametric_relu")
]
LEAKY_RELU.append(
    lesson(
        "leaky_relu",
        "bf16_alpha",
        "BF16's 0.1 is 0.10009765625",
        {"alpha": 0.1, "precision": "BF16"},
        {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -4.0, "high": 4.0},
        {"max_abs_error": 0.02331, "max_rel_error": 0.009149, "error_units": 1.171},
        "alpha = 0.1 has no exact BF16 value, nor has 0.9: the scale construction's weights become 0.10009765625 "
        "and 0.8984375, which no longer add up to 1, so even the positive side is off; the input and each of the "
        "three layers' outputs are rounded to 8 bits too, and the error passes one ε (2⁻⁷). The activation "
        "construction keeps alpha in float32 (an attribute) and does better.",
    )
)


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """The construction as ONNX spells it: LeakyRelu; PRelu with one slope; Mul(x, alpha) + Mul(Relu(x), 1 − alpha)."""
    alpha = p["alpha"]
    if p["construction"] == "activation":
        return g.op("LeakyRelu", [x], alpha=alpha)
    if p["construction"] == "parametric_relu":
        return g.op("PRelu", [x, g.const(np.full((1,) * len(shape), alpha))])
    relu = g.op("Mul", [g.op("Relu", [x]), g.const(np.float32(1.0) - np.float32(alpha))])
    return g.op("Add", [g.op("Mul", [x, g.const(alpha)]), relu])


def _engine_layers(layers: list[dict]) -> list[dict]:
    return [{"name": l.get("name", "?"), "type": l.get("type", "?"), "tactic": l.get("tactic", "")} for l in layers]


# -- the explanations under the stage ----------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _leaky_builds() -> ThreadPoolExecutor:
    """Kept for the process: in the busy server, starting three threads took ~10 ms of a slider change."""
    return ThreadPoolExecutor(len(CONSTRUCTIONS), thread_name_prefix="leaky-build")


def leaky_comparison(x: np.ndarray, alpha: float, evaluate_fn: Callable, own=None) -> dict:
    """Evaluate the three Leaky ReLU constructions on x with the same alpha.

    evaluate_fn(layer, raw_params, x, run=True) -> Evaluation (the section context's `evaluate`: a layer's file
    imports no core, which imports the layers); own: the caller's
    Evaluation of one construction on this x and alpha, used as it is. Returns
    constructions, outputs, sources ('tensorrt' | 'reference'), max_diff (3×3 matrix of pairwise
    max |difference|), layers (the engine's layer dicts per construction), latency_ms (None without
    a GPU) and errors (None where the engine built)."""
    names = CONSTRUCTIONS
    configs = {c: {"alpha": alpha, "construction": c} for c in names}
    todo = [c for c in names if own is None or c != own.params["construction"]]
    # Built side by side (engine's builder pool); where a GPU runs them, run one at a time so the latencies compare.
    evals = dict(zip(todo, _leaky_builds().map(lambda c: evaluate_fn("leaky_relu", configs[c], x, run=False), todo)))
    for c, e in evals.items():
        if e.backend.can_run and e.engine_status in ("built", "cached"):
            evals[c] = evaluate_fn("leaky_relu", configs[c], x)
    if own is not None:
        evals[own.params["construction"]] = own
    evals = {c: evals[c] for c in names}
    outputs = {c: e.output for c, e in evals.items()}
    diff = np.array([[ref.max_abs_diff(outputs[a], outputs[b]) for b in names] for a in names])
    return {
        "constructions": names,
        "outputs": outputs,
        "sources": {c: e.output_source for c, e in evals.items()},
        "max_diff": diff,
        "layers": {c: list(e.report.layers) if e.report else [] for c, e in evals.items()},
        "latency_ms": {c: e.latency_ms for c, e in evals.items()},
        "errors": {c: e.error for c, e in evals.items()},
    }


CONSTRUCTION_LABELS = {
    "activation": "ActivationType.LEAKY_RELU",
    "parametric_relu": "add_parametric_relu (one slope)",
    "scale_relu_sum": "Scale + ReLU + Scale + SUM",
}


def section(ev, ctx):
    """The three constructions side by side on the same input: their engine layers, their outputs (on request),
    how far apart they are and, where a GPU runs them, their latency."""
    from ..base import plots

    alpha = ev.params["alpha"]
    with ctx.busy("Building the three constructions' TensorRT engines …"):
        cmp = leaky_comparison(ev.input, alpha, ctx.evaluate, own=ev)
    names = cmp["constructions"]
    columns = []
    for name in names:
        current = " (shown above)" if name == ev.params["construction"] else ""
        layers = cmp["layers"][name]
        column = [Text(f"**{CONSTRUCTION_LABELS[name]}**{current}")]
        column += [Note(cmp["errors"][name], "error")] if cmp["errors"][name] else []
        column.append(Note(f"Engine layers: {len(layers)}" if layers else "No engine layers (no engine was built)."))
        column += [Table(f"layers_{name}", _engine_layers(layers))] if layers else []
        columns.append(column + [Note(f"output from {cmp['sources'][name]}")])
    worst = float(np.max(cmp["max_diff"]))
    verdict = f"Largest difference {worst:.3g}: " + (
        "the three agree to float32 rounding." if worst <= 1e-6 else "they disagree by more than float32 rounding."
    )
    blocks = [
        Text(f"The three constructions of Leaky ReLU with alpha = {precise(alpha)}, on the same input:"),
        Columns(tuple(columns)),
        # three more heatmaps per change, of outputs the difference table below already compares: on request
        OnRequest(
            "draw_outputs",
            "Draw each construction's output",
            lambda: [Heatmaps("outputs", tuple((n, CONSTRUCTION_LABELS[n], cmp["outputs"][n]) for n in names))],
        ),
        Text("**Pairwise max |difference|**"),
        Table(
            "max_diff",
            [
                {"construction": a, **{b: f"{v:.3g}" for b, v in zip(names, row)}}
                for a, row in zip(names, cmp["max_diff"])
            ],
        ),
        Note(verdict, "success" if worst <= 1e-6 else "warning"),
    ]
    latency = cmp["latency_ms"]
    if not any(v is not None for v in latency.values()):
        return blocks + [Note("Latency needs a GPU that runs the engines; none here. " + FUSION_NOTE)]
    fig = plots.comparison_bar_figure(
        [CONSTRUCTION_LABELS[n] for n in names],
        [np.nan if latency[n] is None else latency[n] for n in names],
        title="Latency (median of timed runs)",
        unit="ms",
        theme=ctx.theme,
    )
    return blocks + [Chart("latency", fig), Note(FUSION_NOTE, "info")]


LAYER = Layer(
    name="leaky_relu",
    order=30,
    title="Leaky ReLU",
    icon=":material/call_split:",
    summary="y = x if x ≥ 0 else alpha·x, built three ways that must agree.",
    params=(
        # The PReLU's slope is a constant (typed); the activation's alpha an attribute (float32); the scale
        # construction's weights are alpha and 1 − alpha, which its reference rounds itself.
        Param(
            "alpha",
            "float",
            0.1,
            "Slope of the negative part.",
            low=-2.0,
            high=2.0,
            step=0.01,
            weight=lambda p: p["construction"] == "parametric_relu",
            label="Alpha",
        ),
        Param(
            "construction",
            "enum",
            "scale_relu_sum",
            "activation: ActivationType.LEAKY_RELU; parametric_relu: add_parametric_relu with one slope; "
            "scale_relu_sum: Scale(x·alpha) + Scale(ReLU(x)·(1−alpha)), ElementWise SUM.",
            choices=CONSTRUCTIONS,
            label="Construction",
        ),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=centered_ramp,
    reference=reference,
    build=build,
    formula=lambda p: f"y = x if x ≥ 0 else {p['alpha']:g}·x",
    ranks=(4, 5),
    examples=tuple(LEAKY_RELU),
    section=section,
    onnx=OnnxMap((), None, onnx_write, lift="trailing"),
)
