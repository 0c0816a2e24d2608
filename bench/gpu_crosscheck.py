"""The precision emulation against real GPU arithmetic: PyTorch and cuDNN on a CUDA GPU (not TensorRT, which no
machine here can run), in FP32, TF32, FP16 and BF16, for a seeded spread of every layer PyTorch has.

    python bench/gpu_crosscheck.py [--out DIR]      (on a machine with a CUDA GPU and PyTorch)

Per layer (and activation type) and precision it prints the share of output cells where the GPU's value equals the
playground's emulation, and where they differ by at most 1, 2 and 4 units of the type's ε, and the worst case. A
unit is ε · max(|truth|, 2⁻¹⁰ · max |truth|): relative to the cell's own exact (float64) value, or, for cells
near 0, to the tensor's scale, where a relative error says nothing. It also checks INT8 fake quantization at
ties against PyTorch's (which multiplies by the float32 reciprocal scale, as playground.base.reference.reciprocal
does).

It writes to --out: `crosscheck.md` (the table for bench/RESULTS.md), `crosscheck.json` (the figures per layer
and precision, which the stage quotes: copy it to playground/base/gpu_crosscheck.json) and `gpu_crosscheck.npz`
(one case per layer and precision, GPU outputs and the bound measured: copy it to tests/fixtures/, where
tests/test_gpu_crosscheck.py holds the emulation to it on any machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playground.base import precision as P  # noqa: E402
from playground.base.params import jsonable  # noqa: E402
from playground.layers import get_layer  # noqa: E402

SEED = 2027
PRECISIONS = ("FP32", "TF32", "FP16", "BF16")
UNITS = (0, 1, 2, 4)  # equal, then within this many ε


def _activation_cases():
    from playground.layers.activation import DEFAULTS

    return [("activation", t, {"type": t}, (1, 4, 16, 16)) for t in DEFAULTS]


def _cases(rng):
    """(layer, label, raw params, input shape): a spread PyTorch can compute the same way."""
    cases = _activation_cases()
    cases += [("prelu", "channel", {"granularity": "channel", "slopes": rng.uniform(-0.5, 0.5, 4)}, (1, 4, 16, 16))]
    for k, s, pad, d, g, c, maps in [
        (3, 1, 1, 1, 1, 4, 8),
        (3, 2, 1, 1, 1, 8, 8),
        (5, 1, 2, 2, 1, 4, 4),
        (3, 1, 1, 1, 4, 8, 8),
        (1, 1, 0, 1, 1, 16, 8),
        (7, 2, 3, 1, 1, 3, 8),
    ]:
        raw = {
            "num_output_maps": maps,
            "kernel_size_nd": f"{k},{k}",
            "num_groups": g,
            "stride_nd": f"{s},{s}",
            "padding_nd": f"{pad},{pad}",
            "dilation_nd": f"{d},{d}",
            "kernel": rng.normal(0, 0.5, (maps, c // g, k, k)),
            "bias": rng.normal(0, 1, maps),
        }
        cases.append(("convolution", f"k{k} s{s} p{pad} d{d} g{g}", raw, (1, c, 16, 16)))
    for k, s, pad, d, g in [(3, 1, 0, 1, 1), (3, 2, 1, 1, 1), (4, 2, 1, 1, 2), (3, 1, 1, 2, 1)]:
        c, maps = 4, 4
        raw = {
            "num_output_maps": maps,
            "kernel_size_nd": f"{k},{k}",
            "num_groups": g,
            "stride_nd": f"{s},{s}",
            "padding_nd": f"{pad},{pad}",
            "dilation_nd": f"{d},{d}",
            "kernel": rng.normal(0, 0.5, (c, maps // g, k, k)),
            "bias": rng.normal(0, 1, maps),
        }
        cases.append(("deconvolution", f"k{k} s{s} p{pad} d{d} g{g}", raw, (1, c, 8, 8)))
    for t, k, s, pad, exclude in [
        ("MAX", 2, 2, 0, True),
        ("MAX", 3, 2, 1, True),
        ("AVERAGE", 2, 2, 0, True),
        ("AVERAGE", 3, 1, 1, False),
        ("AVERAGE", 3, 2, 1, True),
    ]:
        raw = {
            "type": t,
            "window_size_nd": f"{k},{k}",
            "stride_nd": f"{s},{s}",
            "padding_nd": f"{pad},{pad}",
            "average_count_excludes_padding": exclude,
        }
        cases.append(("pooling", f"{t} k{k} s{s} p{pad}{' excl' if exclude else ''}", raw, (1, 4, 16, 16)))
    for mode, transform in [
        ("NEAREST", "ASYMMETRIC"),
        ("LINEAR", "HALF_PIXEL"),
        ("LINEAR", "ALIGN_CORNERS"),
        ("CUBIC", "HALF_PIXEL"),
        ("CUBIC", "ALIGN_CORNERS"),
    ]:
        raw = {"resize_mode": mode, "coordinate_transformation": transform, "shape": "24,40"}
        cases.append(("resize", f"{mode} {transform}", raw, (1, 4, 12, 16)))
    cases += [("softmax", f"axis {a}", {"axes": 1 << a}, (2, 4, 8, 8)) for a in (1, 3)]
    cases += [
        (
            "scale",
            "x·s + t",
            {"mode": "CHANNEL", "scale": rng.uniform(-2, 2, 4), "shift": rng.uniform(-1, 1, 4), "power": np.ones(4)},
            (1, 4, 16, 16),
        )
    ]
    # layers of several inputs: the input shape is {input name: shape}
    cases += [
        ("elementwise", f"{op} broadcast", {"operation": op}, {"a": (1, 4, 16, 16), "b": (1, 4, 1, 16)})
        for op in ("SUM", "PROD", "SUB", "MAX", "DIV")
    ]
    cases += [
        ("matrix_multiply", f"{op0}·{op1}", {"op0": op0, "op1": op1}, {"a": (2, 3, 16, 32), "b": (2, 3, b, c)})
        for op0, op1, b, c in (("NONE", "NONE", 32, 8), ("NONE", "TRANSPOSE", 8, 32))
    ]
    cases += [
        (
            "normalization",
            "layer (W)",
            {"axes": 8},
            {"x": (1, 4, 8, 16), "scale": (1, 1, 1, 16), "bias": (1, 1, 1, 16)},
        ),
        (
            "normalization",
            "instance (H, W)",
            {"axes": 12},
            {"x": (1, 4, 8, 16), "scale": (1, 4, 1, 1), "bias": (1, 4, 1, 1)},
        ),
    ]
    cases += [
        ("reduce", f"{op} over W", {"operation": op, "axes": 8, "keep_dims": True}, (1, 4, 16, 64))
        for op in ("SUM", "AVG", "MAX")
    ]
    cases += [("unary", op, {"operation": op}, (1, 4, 16, 16)) for op in ("EXP", "SIN", "COS", "ERF", "ATAN", "SINH")]
    cases += [("lrn", "window 5", {"window": 5, "alpha": 1.0, "beta": 0.75, "k": 2.0}, (1, 8, 8, 8))]
    return cases


def torch_output(torch, layer: str, p: dict, x, dtype):
    """The layer on the GPU in `dtype`: the input and the weights in that type, as the engine would hold them."""
    F = torch.nn.functional
    w = lambda a: torch.as_tensor(np.asarray(a, np.float32), device="cuda").to(dtype)  # noqa: E731
    if layer == "activation":
        t, a, b = p["type"], p["alpha"], p["beta"]
        return {
            "RELU": lambda: F.relu(x),
            "SIGMOID": lambda: torch.sigmoid(x),
            "TANH": lambda: torch.tanh(x),
            "LEAKY_RELU": lambda: F.leaky_relu(x, a),
            "ELU": lambda: F.elu(x, a),
            "SELU": lambda: b * torch.where(x > 0, x, a * torch.expm1(x)),
            "SOFTSIGN": lambda: F.softsign(x),
            "SOFTPLUS": lambda: a * F.softplus(x, beta=b),
            "CLIP": lambda: F.hardtanh(x, a, b),
            "HARD_SIGMOID": lambda: torch.clamp(a * x + b, 0, 1),
            "SCALED_TANH": lambda: a * torch.tanh(b * x),
            "THRESHOLDED_RELU": lambda: F.threshold(x, a, 0.0),
            "GELU_ERF": lambda: F.gelu(x),
            "GELU_TANH": lambda: F.gelu(x, approximate="tanh"),
        }[t]()
    if layer == "prelu":
        return F.prelu(x, w(p["slopes"]).reshape(-1))
    if layer in ("convolution", "deconvolution"):
        kernel, bias = w(p["kernel"]), w(p["bias"]).reshape(-1)
        pad = tuple(p["padding_nd"])
        if layer == "convolution":
            return F.conv2d(x, kernel, bias, tuple(p["stride_nd"]), pad, tuple(p["dilation_nd"]), p["num_groups"])
        return F.conv_transpose2d(
            x, kernel, bias, tuple(p["stride_nd"]), pad, 0, p["num_groups"], tuple(p["dilation_nd"])
        )
    if layer == "pooling":
        k, s, pad = tuple(p["window_size_nd"]), tuple(p["stride_nd"]), tuple(p["padding_nd"])
        if p["type"] == "MAX":
            return F.max_pool2d(x, k, s, pad)
        return F.avg_pool2d(x, k, s, pad, count_include_pad=not p["average_count_excludes_padding"])
    if layer == "resize":
        size = tuple(p["shape"])
        mode = {"NEAREST": "nearest", "LINEAR": "bilinear", "CUBIC": "bicubic"}[p["resize_mode"]]
        if mode == "nearest":
            return F.interpolate(x, size=size, mode=mode)
        return F.interpolate(x, size=size, mode=mode, align_corners=p["coordinate_transformation"] == "ALIGN_CORNERS")
    if layer == "softmax":
        return torch.softmax(x, dim=int(p["axes"]).bit_length() - 1)
    if layer == "scale":
        return x * w(p["scale"]).reshape(1, -1, 1, 1) + w(p["shift"]).reshape(1, -1, 1, 1)
    if layer == "elementwise":
        a, b = x["a"], x["b"]
        return {"SUM": a + b, "PROD": a * b, "SUB": a - b, "MAX": torch.maximum(a, b), "DIV": a / b}[p["operation"]]
    if layer == "matrix_multiply":
        return torch.matmul(x["a"], x["b"].transpose(-1, -2) if p["op1"] == "TRANSPOSE" else x["b"])
    if layer == "normalization":
        v, scale, bias = x["x"], x["scale"], x["bias"]
        if p["axes"] == 8:
            return F.layer_norm(v, v.shape[-1:], scale.reshape(-1), bias.reshape(-1), p["epsilon"])
        return F.instance_norm(v, weight=scale.reshape(-1), bias=bias.reshape(-1), eps=p["epsilon"])
    if layer == "reduce":
        dim = int(p["axes"]).bit_length() - 1
        return {
            "SUM": lambda: x.sum(dim, keepdim=True),
            "AVG": lambda: x.mean(dim, keepdim=True),
            "MAX": lambda: x.amax(dim, keepdim=True),
        }[p["operation"]]()
    if layer == "unary":
        return getattr(torch, p["operation"].lower())(x)
    if layer == "lrn":
        return F.local_response_norm(x, p["window"], p["alpha"], p["beta"], p["k"])
    raise KeyError(layer)


def units(gpu: np.ndarray, emulated: np.ndarray, truth: np.ndarray, precision: str) -> np.ndarray:
    """|gpu − emulated| in units of ε · max(|truth|, 2⁻¹⁰ · max |truth|); 0 where both are the same (NaN too)."""
    g, e, t = (np.asarray(a, np.float64) for a in (gpu, emulated, truth))
    finite = np.abs(t[np.isfinite(t)])
    floor = (finite.max() if finite.size else 1.0) * 2.0**-10
    same = (g == e) | (np.isnan(g) & np.isnan(e))
    with np.errstate(invalid="ignore"):
        u = np.abs(g - e) / (P.EPSILON[precision] * np.maximum(np.abs(t), max(floor, 1e-30)))
    return np.where(same, 0.0, np.where(np.isnan(u), np.inf, u))


def summary(u: np.ndarray) -> dict:
    return {
        "cells": int(u.size),
        **{f"within_{n}": float((u <= n).mean()) for n in UNITS},
        "worst": float(u.max()) if u.size else 0.0,
    }


def quantize_ties(torch) -> dict:
    """INT8 fake quantization at ties: PyTorch's (on the GPU) against the playground's."""
    rng = np.random.default_rng(SEED)
    scales = rng.uniform(0.001, 2, 2000).astype(np.float32)
    steps = rng.integers(-120, 120, 2000).astype(np.float32) + np.float32(0.5)
    x = (steps * scales).astype(np.float32)  # a tie or the float32 value next to one
    ours = np.array([P.fake_quantize(v, s, "INT8") for v, s in zip(x, scales)], np.float32)
    divided = np.array([np.clip(np.rint(v / s), -128, 127) * s for v, s in zip(x, scales)], np.float32)
    theirs = np.array(
        [
            torch.fake_quantize_per_tensor_affine(torch.tensor([v], device="cuda"), float(s), 0, -128, 127)
            .cpu()
            .numpy()[0]
            for v, s in zip(x, scales)
        ],
        np.float32,
    )
    return {
        "values": int(x.size),
        "reciprocal_agrees": int((ours == theirs).sum()),
        "division_agrees": int((divided == theirs).sum()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu-crosscheck")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU: this benchmark compares the emulation with a GPU's arithmetic", file=sys.stderr)
        return 2
    device = f"{torch.cuda.get_device_name()} (PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()})"
    rng = np.random.default_rng(SEED)
    per = defaultdict(list)  # (layer, label, precision) -> units arrays
    fixture, meta = {}, []
    for layer_name, label, raw, shape in _cases(rng):
        layer = get_layer(layer_name)
        several = isinstance(shape, dict)
        x = (
            {n: rng.uniform(-4, 4, s).astype(np.float32) for n, s in shape.items()}
            if several
            else rng.uniform(-4, 4, shape).astype(np.float32)
        )
        shapes = {n: a.shape for n, a in x.items()} if several else x.shape
        for precision in PRECISIONS:
            if precision not in layer.param("precision").choices:
                continue
            params = layer.resolve({**raw, "precision": precision}, shapes)
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = precision == "TF32"
            dtype = {"FP16": torch.float16, "BF16": torch.bfloat16}.get(precision, torch.float32)
            on_gpu = lambda a: torch.as_tensor(a, device="cuda").to(dtype)  # noqa: E731
            with torch.no_grad():
                gpu = torch_output(
                    torch, layer_name, params, {n: on_gpu(a) for n, a in x.items()} if several else on_gpu(x), dtype
                )
            gpu = gpu.float().cpu().numpy()
            with np.errstate(all="ignore"):
                emulated = P.emulate(layer, x, params)
                truth = P.emulate(layer, x, {**params, "precision": P.TRUTH})
            u = units(gpu, emulated, truth, precision)
            per[(layer_name, label, precision)].append(u)
            key = f"{layer_name}|{precision}"
            if key not in {m["key"] for m in meta}:  # the first case of each layer and precision: the fixture
                i = len(meta)
                fixture.update({f"input_{i}_{n}": a for n, a in x.items()} if several else {f"input_{i}": x})
                fixture[f"gpu_{i}"] = gpu
                meta.append(
                    {
                        "key": key,
                        "layer": layer_name,
                        "label": label,
                        "precision": precision,
                        "inputs": list(x) if several else None,
                        "params": {k: jsonable(v) for k, v in params.items()},
                    }
                )
    rows, table = [], {}
    for (layer_name, label, precision), us in per.items():
        s = summary(np.concatenate([u.ravel() for u in us]))
        rows.append((layer_name, label, precision, s))
        whole = table.setdefault(layer_name, {}).setdefault(precision, [])
        whole.append(np.concatenate([u.ravel() for u in us]))
    figures = {layer: {prec: summary(np.concatenate(us)) for prec, us in by.items()} for layer, by in table.items()}
    for m in meta:  # each fixture case is held to the worst its layer and precision showed over the whole spread
        m["bound"] = figures[m["layer"]][m["precision"]]["worst"]
    ties = quantize_ties(torch)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        f"GPU: {device}. cuDNN/PyTorch arithmetic, not TensorRT. Units: ε of the precision × max(|exact|, "
        "2⁻¹⁰ · max |exact|).",
        "",
        "| layer | case | precision | cells | equal | ≤ 1 ε | ≤ 2 ε | ≤ 4 ε | worst (ε) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for layer_name, label, precision, s in rows:
        lines.append(
            f"| {layer_name} | {label} | {precision} | {s['cells']} | {100 * s['within_0']:.1f} % | "
            f"{100 * s['within_1']:.1f} % | {100 * s['within_2']:.1f} % | {100 * s['within_4']:.1f} % | "
            f"{s['worst']:.3g} |"
        )
    lines += [
        "",
        f"INT8 fake quantization at {ties['values']} ties (x = (k + 0.5)·scale in float32): the "
        f"reciprocal scale agrees with PyTorch's on {ties['reciprocal_agrees']}, division on "
        f"{ties['division_agrees']}.",
    ]
    text = "\n".join(lines)
    print(text)
    (out / "crosscheck.md").write_text(text + "\n")
    (out / "crosscheck.json").write_text(
        json.dumps({"device": device, "layers": figures, "quantize_ties": ties}, indent=1) + "\n"
    )
    np.savez_compressed(out / "gpu_crosscheck.npz", meta=json.dumps({"device": device, "cases": meta}), **fixture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
