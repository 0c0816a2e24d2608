"""The type a layer computes in: FP32, TF32 (a convolution's multiplies on tensor cores), FP16, BF16 (casts
around the layer, its weights in that type) or INT8, FP8 E4M3 (quantize/dequantize pairs), built by TensorRT and
emulated in NumPy; measured against the layer computed in float64 (`TRUTH`).

Emulation: a value in FP16 or BF16 is the float32 value rounded to that type (round half to even; beyond its
range: ±inf, as a cast gives); TF32 rounds the multiplied operands (the input and the weights the layer names in
`Layer.tf32`) to 10 mantissa bits, ties away from zero as the tensor cores' conversion does, and keeps sums and
the output in FP32; INT8 and FP8 are quantized as TensorRT's developer guide describes the kernels, by the
reciprocal scale, q = saturate(round(x · (1 / scale))) with ties to even (see `reference.quantize_int8`), then
dequantized as q · scale. bfloat16 and float8 come from `ml_dtypes`.

The network side (`precision_input`, `precision_output`, `TypedNetwork`) is self-contained (trt, np and the
arguments only), so the exported script carries the same code.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from . import chunks
from . import reference as ref

PRECISIONS = ("FP32", "TF32", "FP16", "BF16", "INT8", "FP8")
FLOAT_TYPES = ("FP16", "BF16")
QUANTIZED = ("INT8", "FP8")
TRUTH = "FP64"  # not a choice: the layer's arithmetic in float64 from the same float32 input and weights
# One unit of relative error of each type (2^-mantissa bits); INT8's unit is the output's own step (`output_step`).
EPSILON = {"FP32": 2.0**-23, "TF32": 2.0**-10, "FP16": 2.0**-10, "BF16": 2.0**-7, "FP8": 2.0**-3}
QUANT_MAX = {"INT8": 127.0, "FP8": 448.0}  # |q| of the largest quantized value: amax / this is "from the data"


def numpy_type(precision: str):
    import ml_dtypes  # only where a low precision is asked for

    return {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP8": ml_dtypes.float8_e4m3fn}[precision]


def round_to(a, precision: str) -> np.ndarray:
    """float32 values rounded to TF32, FP16 or BF16 and back (other precisions: unchanged)."""
    a = np.asarray(a, dtype=np.float32)
    if precision == "TF32":
        return _tf32(a)
    if precision not in FLOAT_TYPES:
        return a
    kind = numpy_type(precision)
    with np.errstate(over="ignore"):
        return chunks.apply(a, lambda v: v.astype(kind).astype(np.float32), np.float32)


def _tf32(a: np.ndarray) -> np.ndarray:
    """Round to 10 mantissa bits, ties away from zero (cvt.rna.tf32.f32); NaN and ±inf unchanged."""
    bits = a.view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(a), rounded, a)


def quantize(a, scale: float, precision: str) -> np.ndarray:
    """IQuantizeLayer: saturate(round(a · (1 / scale))) to INT8 (reference.quantize_int8: ties to even, clamped to
    [-128, 127]) or to FP8 E4M3 (clamped to ±448, then the nearest E4M3 value); float32 values of the codes."""
    if precision == "INT8":
        return ref.quantize_int8(a, scale).astype(np.float32)
    if precision == "FP8":
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            v = np.asarray(a, dtype=np.float32) * ref.reciprocal(scale)  # see reference.quantize_int8
            return np.clip(v, -448, 448).astype(numpy_type("FP8")).astype(np.float32)
    raise ValueError(f"quantize: precision must be INT8 or FP8 (got {precision!r}, scale {scale!r})")


def fake_quantize(a, scale, precision: str) -> np.ndarray:
    """Dequantize(quantize(a)): the float32 values a Q/DQ pair lets through (`scale`: one, or one per channel shaped
    to broadcast, as `channel_scales` gives them)."""
    return quantize(a, scale, precision) * np.asarray(scale, np.float32)


def scale_from_data(a, precision: str) -> float:
    """ "From the data": amax / 127 (INT8) or amax / 448 (FP8), amax over the finite values (1 if none or 0)."""
    a = np.asarray(a, dtype=np.float32)
    finite = np.abs(a[np.isfinite(a)])
    amax = float(finite.max()) if finite.size else 0.0
    return float(np.float32(amax / QUANT_MAX[precision])) if amax > 0 else 1.0


def channel_scales(w, precision: str, axis: int) -> np.ndarray:
    """Weights' scales per output channel, as TensorRT quantizes weights ("per-channel quantization of weights": one
    scale per index of the kernel's output-channel axis; activations stay per tensor): amax over every other axis
    / 127 or / 448 (`scale_from_data` of each channel), shaped to broadcast against `w` (1s but at `axis`)."""
    w = np.asarray(w, np.float32)
    axis = axis % w.ndim
    moved = np.abs(np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1))
    amax = np.where(np.isfinite(moved), moved, 0).max(axis=1, initial=0).astype(np.float64)
    scales = np.where(amax > 0, (amax / QUANT_MAX[precision]).astype(np.float32), np.float32(1))  # as above, each
    return scales.astype(np.float32).reshape([-1 if i == axis else 1 for i in range(w.ndim)])


def weight_scales(w, precision: str, axis: int | None):
    """Weights' scales from their own data: per output channel along `axis` (`channel_scales`), one per tensor
    where `axis` is None (a weight with no output-channel axis: a vector, an elementwise constant)."""
    return scale_from_data(w, precision) if axis is None else channel_scales(w, precision, axis)


def fake_quantize_weights(w, precision: str, axis: int | None) -> np.ndarray:
    """Weights through their Q/DQ pair with their own scales (`weight_scales`)."""
    return fake_quantize(w, weight_scales(w, precision, axis), precision)


def with_data_scale(params: dict, x) -> dict:
    """quantize_scale 0 under INT8/FP8 means "from the data": amax/127 or amax/448 of this input (of every input
    where `x` is a feed dict: one scale for all their Q/DQ pairs)."""
    if params["precision"] in QUANTIZED and params["quantize_scale"] == 0:
        arrays = list(x.values()) if isinstance(x, dict) else [x]
        values = arrays[0] if len(arrays) == 1 else np.concatenate([np.ravel(v) for v in arrays] or [np.zeros(1)])
        return {**params, "quantize_scale": scale_from_data(values, params["precision"])}
    return params


def emulate(layer, x, params: dict) -> np.ndarray:
    """What the engine of `layer` computes from `x` (its one input's array, or the feed dict by input name) in
    params["precision"]: FP16/BF16 round every input, the parameters that reach TensorRT as weights or constants
    (`Param.weight`; attributes such as resize scales stay float32, as a strongly typed network keeps them) and the
    output to that type, with the arithmetic between in float64 and float32 (the layer's reference); TF32 rounds the
    inputs and the weights in `layer.tf32`; INT8/FP8 pass each input through its Q/DQ pair (the layer's reference
    quantizes its own weights, as its construction does). TRUTH: the layer in float64, unrounded (float64 out)."""
    if isinstance(x, dict):  # several inputs: each rounded or quantized, indices left exact
        run = layer.forward
        each = lambda f: {k: v if k in layer.index_inputs else f(v) for k, v in x.items()}  # noqa: E731
    else:
        run, each = layer.reference, (lambda f: f(x))
    precision = params.get("precision", "FP32")
    if precision == TRUTH:
        with ref.exact():
            return run(x, {**params, "precision": "FP32"})
    if precision in QUANTIZED:
        return run(each(lambda v: fake_quantize(v, params["quantize_scale"], precision)), params)
    if precision in FLOAT_TYPES:  # only weights and constants take the type; attributes stay float32
        rounded = {
            p.name: _rounded(params[p.name], precision) if p.is_weight(params) else params[p.name] for p in layer.params
        }
        return round_to(run(each(lambda v: round_to(v, precision)), rounded), precision)
    if precision == "TF32":  # the multiplies' operands only: sums, bias and output stay FP32
        rounded = {k: _rounded(v, precision) if k in layer.tf32 else v for k, v in params.items()}
        return run(each(lambda v: round_to(v, precision)), rounded)
    return run(x, params)


def _rounded(value, precision: str):
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return round_to(value, precision)
    if isinstance(value, float):
        return float(round_to(value, precision))
    return value


@functools.lru_cache(maxsize=1)
def _crosscheck() -> dict:
    """bench/gpu_crosscheck.py's figures (playground/base/gpu_crosscheck.json): the emulation against PyTorch/cuDNN on
    a GPU, per layer and precision."""
    try:
        return json.loads((Path(__file__).parent / "gpu_crosscheck.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def gpu_agreement(layer: str, precision: str) -> str | None:
    """How close the emulation of `layer` in `precision` came to a GPU's arithmetic (cuDNN, not TensorRT), in
    words; None where it was not measured."""
    figures = _crosscheck().get("layers", {}).get(layer, {}).get(precision)
    if not figures:
        return None
    device = _crosscheck()["device"].split(" (")[0]
    return (
        f"emulation within 1 ε of cuDNN on an {device.removeprefix('NVIDIA ')} for "
        f"{100 * figures['within_1']:.1f} % of cells (worst {figures['worst']:.3g} ε; PyTorch's arithmetic, not "
        f"TensorRT's)"
    )


def output_step(truth) -> float:
    """INT8's unit of error: the step of the output itself were it INT8 with the scale from its data, amax/127 of
    the FP64 output's finite values (1 where they are all 0). An error under half of it is as close as INT8 can
    hold this output; 127 of them span the output's whole range (a scale that saturates the input or the weights).
    The input's step would not do: a convolution multiplies it by its weights and sums (10⁶ input steps where the
    output is off by its own size)."""
    return scale_from_data(truth, "INT8")


def errors(y, truth, precision: str, scale: float) -> dict:
    """Max |y − truth|, max relative error (where truth ≠ 0), and the error in units of the precision: ε for the
    float types (relative), the output's own INT8 step for INT8 (`output_step`); none for a precision with no unit
    (a comparison of two outputs). NaN/Inf in both at the same place agree. `scale`: the quantize scale (kept in
    the figures' memo key). Worked in float64 a slice at a time (`chunks`): the same values as one pass over the
    whole tensors, without their float64 copies."""
    y, t = np.asarray(y), np.asarray(truth)
    if y.shape != t.shape:
        y, t = np.broadcast_arrays(y, t)
    shape, n = y.shape, y.size
    ys, ts = chunks.flat(y), chunks.flat(t)
    error, log_error = np.empty(shape, np.float32), np.empty(shape, np.float32)  # the arrays themselves, no views:
    errs, logs, exact = error.reshape(-1), log_error.reshape(-1), np.empty(n, bool)  # core.digest knows them

    def part(s):
        yb, tb = ys[s].astype(np.float64), ts[s].astype(np.float64, copy=False)
        with np.errstate(invalid="ignore"):
            diff = np.abs(yb - tb)  # NaN where either is NaN, or both the same infinity
        odd = np.isnan(diff)
        if odd.any():  # rare: only these cells need the slower rule
            agree = (yb[odd] == tb[odd]) | (np.isnan(yb[odd]) & np.isnan(tb[odd]))
            diff[odd] = np.where(agree, 0.0, np.inf)
        # where the truth is 0 only the absolute error speaks; selected after, not masked (a masked loop over a
        # ReLU's half of zeros is several times slower)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(tb != 0, diff / np.abs(tb), 0.0)
        zero = exact[s] = diff == 0
        errs[s] = diff
        with np.errstate(divide="ignore"):
            np.log10(diff, out=logs[s])  # worked in float64, written float32
        return (
            float(diff.max()),
            float(np.fmax.reduce(rel, axis=None)),  # NaN (∞/∞, a NaN truth) passed over
            float(np.where(zero, np.inf, diff).min()),  # the least error that is not 0
            int(zero.sum()),
        )

    parts = chunks.each(n, part)
    max_abs = max((p[0] for p in parts), default=0.0)
    max_rel = float(np.fmax.reduce(np.array([p[1] for p in parts]))) if parts else 0.0
    max_rel = 0.0 if np.isnan(max_rel) else max_rel  # an overflow to inf counts: inf
    if precision == "INT8":
        step = output_step(np.asarray(t, np.float64))
        units, unit = max_abs / step, f"output steps (amax/127 = {step:.4g} of the FP64 output)"
    elif precision not in EPSILON:  # two outputs compared with each other: no unit of their own
        units, unit = None, ""
    else:
        units, unit = max_rel / EPSILON[precision], f"ε = 2^{int(np.log2(EPSILON[precision]))}"
    # exact cells are drawn at one decade below the smallest error (log₁₀ 0 has no place on a colour scale)
    least = min((p[2] for p in parts), default=np.inf)  # an infinity only where every error is one
    floor = float(np.log10(least)) - 1 if 0 < least < np.inf else -8.0
    at = np.float32(floor)

    def place(s):  # log_error[exact] = floor, selected rather than masked, a slice at a time
        logs[s] = np.where(exact[s], at, logs[s])

    chunks.each(n, place)
    return {
        "precision": precision,
        "max_abs_error": max_abs,
        "max_rel_error": max_rel,
        "error_units": units,
        "unit": unit,
        "exact_cells": sum(p[3] for p in parts),
        "error": error,
        "log_error": log_error,
        "exact_at": float(floor),
    }


# -- the network side (copied into exported scripts: only trt, np and the arguments) --------------------------
def precision_input(trt, network, x, precision, scale):
    """The tensor the layer reads: `x` cast to FP16/BF16, or through an INT8/FP8 quantize/dequantize pair."""
    if precision in ("FP16", "BF16"):
        return network.add_cast(x, trt.DataType.HALF if precision == "FP16" else trt.DataType.BF16).get_output(0)
    if precision in ("INT8", "FP8"):
        s = network.add_constant((), np.array(scale, np.float32)).get_output(0)
        q = network.add_quantize(x, s, trt.DataType.INT8 if precision == "INT8" else trt.DataType.FP8)
        return network.add_dequantize(q.get_output(0), s, trt.DataType.FLOAT).get_output(0)
    return x


def precision_output(trt, network, y, precision):
    """The layer's output as FLOAT again (the engine's output stays float32 for every precision)."""
    return network.add_cast(y, trt.DataType.FLOAT).get_output(0) if precision in ("FP16", "BF16") else y


class TypedNetwork:
    """The network as a layer's construction sees it under FP16/BF16: every float array or empty Weights it
    passes becomes Weights of that type (a strongly typed network needs a layer's weights in its input's type).
    The arrays are kept here until the build, since TensorRT reads them only then."""

    def __init__(self, trt, network, precision):
        self._trt, self._network, self._precision, self.kept = trt, network, precision, []

    def _weights(self, value):
        trt = self._trt
        kind = trt.DataType.HALF if self._precision == "FP16" else trt.DataType.BF16
        if isinstance(value, trt.Weights) and value.size == 0:
            return trt.Weights(kind)
        if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
            import ml_dtypes  # bfloat16 for NumPy; FP16 needs only NumPy

            with np.errstate(over="ignore"):  # beyond the type's range: ±inf, as the engine's cast gives
                typed = np.ascontiguousarray(
                    value, dtype=np.float16 if self._precision == "FP16" else ml_dtypes.bfloat16
                )
            self.kept.append(typed)
            return trt.Weights(kind, typed.ctypes.data, typed.size)
        return value

    def __getattr__(self, name):
        attr = getattr(self._network, name)
        if not callable(attr):
            return attr
        return lambda *args, **kwargs: attr(
            *map(self._weights, args), **{k: self._weights(v) for k, v in kwargs.items()}
        )
