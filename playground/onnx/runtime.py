"""ONNX Runtime's opinion on a model (CPU, one thread): its session, its words where it refuses, and its output
against the layer's reference (`compare`: cell by cell, as Polygraphy judges, within atol + rtol·|reference| or,
where a cell is a sum, of its terms' magnitude, `terms`; the cells a layer leaves undefined set apart).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

import numpy as np

from ..base.errors import ValidationError
from ..base.layer import Layer

# Polygraphy's defaults for its per-cell rule (`polygraphy run --atol --rtol`). Its own check fails a cell only over
# both atol and rtol·|reference|; the sum here (NumPy's allclose) is at most twice as wide, and says one number.
ATOL = RTOL = 1e-5
AGREEMENT = (
    "each cell: |ONNX Runtime − reference| ≤ atol + rtol·|reference| (Polygraphy's defaults); a NaN or ±inf only "
    "with the same"
)
SUMS = (
    "where the layer's cell is a sum of terms: ≤ atol + rtol·Σ|terms| too (float32 rounds a sum at its terms' "
    "magnitude, though it cancels)"
)


def _on_absolute(layer: Layer, x, params: dict):
    """|The layer's output| on |x| (every input's, where `x` is a feed dict) with its weights' |values|: each cell's
    sum of |terms| where the cell is a sum; a scalar (the inputs' largest |value|) where the reference needs signed
    weights."""
    absolute = {
        k: np.abs(v) if isinstance(v, np.ndarray) and layer.param(k).is_weight(params) else v for k, v in params.items()
    }
    xs = x if isinstance(x, dict) else {layer.input_names[0]: x}
    try:
        with np.errstate(all="ignore"):
            return np.abs(np.asarray(layer.forward({n: np.abs(a) for n, a in xs.items()}, absolute), np.float64))
    except Exception:  # noqa: BLE001 - a layer whose reference needs signed weights: the input's size then
        return np.float64(max(np.abs(a).max(initial=0.0) for a in xs.values()))


def magnitude(layer: Layer, x, params: dict) -> float:
    """The largest output of the layer on |x| with its weights' |values| (`_on_absolute`): what a float32 sum's
    rounding scales with (a sum that cancels to 0 from terms of 10⁵ is still rounded at 10⁵)."""
    m = np.asarray(_on_absolute(layer, x, params))
    m = m[np.isfinite(m)]
    return float(m.max(initial=0.0))


_arena = threading.Lock()
_arena_bytes: list[int] = []  # the arena's cap, once registered (the process's one CPU arena)


def memory_cap() -> int:
    """The bytes ONNX Runtime's runs may hold at once: PLAYGROUND_MODEL_MAX_MB (`budget.model_max_bytes`)."""
    from ..base import budget

    return budget.model_max_bytes()


def _shared_arena(ort) -> bool:
    """ONNX Runtime's CPU arena, shared by the process's sessions and capped at `memory_cap` bytes (registered once):
    a tensor a model grows at run time (an Expand to a size computed from its input) is refused by the arena, not
    allocated. False where this ONNX Runtime cannot register one."""
    with _arena:
        if not _arena_bytes:
            try:
                info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
                ort.create_and_register_allocator(
                    info, ort.OrtArenaCfg({"max_mem": memory_cap(), "arena_extend_strategy": 1})
                )
                _arena_bytes.append(memory_cap())
            except Exception:  # noqa: BLE001 - an older ONNX Runtime: its own arena, unbounded
                _arena_bytes.append(0)
        return _arena_bytes[0] > 0


_OUT_OF_ARENA = re.compile(
    r"running (\S+) node\. Name:'([^']*)'.*?Available memory of (\d+) is smaller than requested bytes of (\d+)"
)


def over_memory(exc: Exception) -> ValidationError | None:
    """The refusal of a run the arena's cap stopped (naming the node and the rule), or None."""
    if _OUT_OF_ARENA.search(" ".join(str(exc).split())):
        return ValidationError("model", "memory", ort_words(exc))
    return None


def terms(layer: Layer, x, params: dict):
    """Each output cell's sum of |terms| (`_on_absolute`) where the layer's cells are sums (`Layer.sums`), for
    `compare`'s second term; None where they are not (a max, a product, a lookup: no sum to round)."""
    if layer.sums is None or not layer.sums(params):
        return None
    return _on_absolute(layer, x, params)


def ort_words(exc: Exception) -> str:
    """ONNX Runtime's message without its source paths and C++ signatures: "Pad should be smaller than kernel."; a
    node refused by the arena's cap, named with the bytes it asked and the rule."""
    text = " ".join(str(exc).split())
    over = _OUT_OF_ARENA.search(text)
    if over:
        op, name, cap, asked = over.groups()
        return (
            f"node {name!r} ({op}) needs {int(asked):,} bytes at once beyond what its run may hold: ONNX Runtime's "
            f"runs hold at most {int(cap):,} bytes (PLAYGROUND_MODEL_MAX_MB)"
        )
    text = text.split("Status Message: ")[-1]
    text = re.sub(
        r"\[ONNXRuntimeError\] : \d+ : \w+ : |\S+\.(?:h|cc):\d+ |onnxruntime::\S+\(.*?\) (?:\[with .*?\] )?", "", text
    )
    return text.strip()[:300]


def session(model_bytes: bytes, initializers: dict | None = None):
    """ONNX Runtime's CPU session on the model, one thread, its own log quiet (its refusals are answers).
    `initializers`: arrays by name, the data of the model's initializers of those names that it holds as external
    data: the session reads them where they are, without a copy of its own."""
    import onnxruntime as ort  # noqa: PLC0415

    # its refusals (errors, severity 3) are reported in the answer, not on the server's stderr: fatal ones only
    ort.set_default_logger_severity(4)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one request's work stays on one core of a shared server
    options.log_severity_level = 4
    # a session here runs once or a few times: packing its weights for its kernels' repeated runs only copies them
    # (light_vgg19's first open peaked 0.4 GB higher with the packed copies)
    options.add_session_config_entry("session.disable_prepacking", "1")
    if _shared_arena(ort):  # every run's tensors from the capped arena
        options.add_session_config_entry("session.use_env_allocators", "1")
    held = [ort.OrtValue.ortvalue_from_numpy(a) for a in (initializers or {}).values()]
    if held:
        options.add_external_initializers(list(initializers), held)
    s = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    s.initializers_held = held  # ONNX Runtime reads them while the session lives
    return s


def onnxruntime_check(
    model_bytes: bytes,
    x,
    reference: np.ndarray,
    scale: Callable[[], np.ndarray | None],
    differs=(),
    undefined: np.ndarray | None = None,
    compared_to: str = "the reference",
    undefined_rule: str | None = None,
    rtol: float = RTOL,
) -> dict:
    """ONNX Runtime (CPU) on the model: its version, and `compare`'s verdict on its output against `reference`."""
    try:
        import onnxruntime as ort  # noqa: PLC0415
    except ImportError:
        return {"version": None, "agrees": None, "status": "not installed (pip install onnxruntime)"}
    out = {"version": ort.__version__, "compared_to": compared_to}
    try:
        s = session(model_bytes)
        given = list(x.values()) if isinstance(x, dict) else [x]  # several inputs: in the model's input order
        y = s.run(None, {i.name: np.ascontiguousarray(a, np.float32) for i, a in zip(s.get_inputs(), given)})[0]
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime refused or failed the model: its words are the answer
        return out | {"status": "refused", "agrees": False, "error": ort_words(exc)}
    return out | {"status": "ran"} | compare(y, reference, scale, differs, undefined, undefined_rule, rtol)


def worst_text(verdict: dict, fmt=lambda v: f"{v:.6g}") -> str:
    """`compare`'s worst cell in words: "worst cell [0, 2]: 1.5 against 1.50001, |diff| 1e-05 ≤ 2.5e-05
    (atol + rtol·|reference|)"; "" where there is none."""
    w = verdict.get("worst")
    if not w:
        return ""
    head = f"worst cell {w['index']}: {fmt(w['onnxruntime'])} against {fmt(w['reference'])}"
    if w["abs_diff"] is None:
        return f"{head} (a NaN or ±inf only with the same)"
    within = "≤" if w["abs_diff"] <= w["tolerance"] else ">"
    term = "atol + rtol·Σ|terms|" if w["term"] == "sums" else w["term"]
    return f"{head}, |diff| {fmt(w['abs_diff'])} {within} {fmt(w['tolerance'])} ({term})"


def undefined_rule(layer: Layer) -> str | None:
    """The layer's rule for the output cells it leaves undefined: its `undefined`'s own first sentence."""
    doc = (layer.undefined.__doc__ or "") if layer.undefined else ""
    return f"{layer.name}: {' '.join(doc.split())}" if doc else None


def compare(
    y: np.ndarray,
    reference: np.ndarray,
    scale: Callable[[], np.ndarray | None] | None = None,
    differs=(),
    undefined: np.ndarray | None = None,
    rule_undefined: str | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> dict:
    """ONNX Runtime's output `y` against the layer's `reference`, cell by cell as Polygraphy judges: a cell agrees
    where |y − ref| ≤ atol + rtol·|ref| (`AGREEMENT`) or, where the layer's cells are sums (`scale()`: each cell's
    sum of |terms|, `terms`; worked out only where the first term is not enough), ≤ atol + rtol·Σ|terms| (`SUMS`);
    a non-finite cell agrees only with the same value (NaN with NaN, +inf with +inf). Where they do not agree, the
    rule in play that says why (`differs`), or that no known rule does. The cells the layer leaves `undefined` (a
    max over padding only: NaN in the reference, −inf in ONNX Runtime) are not compared: `masked` counts them and
    names the rule (`rule_undefined`). `worst`: the cell furthest over (or nearest to) its tolerance."""
    reference = np.asarray(reference, np.float32)
    if y.shape != reference.shape:
        return {
            "agrees": False,
            "output_shape": list(y.shape),
            "max_abs_diff": None,
            "rule": differs[0] if differs else None,
            "why": f"output shape {tuple(y.shape)} where the layer gives {tuple(reference.shape)}",
        }
    undefined = undefined if undefined is not None and undefined.shape == y.shape else np.zeros(y.shape, bool)
    a, b = np.asarray(y, np.float64), np.asarray(reference, np.float64)
    finite = ~undefined & np.isfinite(a) & np.isfinite(b)
    unequal = ~undefined & ~finite & ~(np.isnan(a) & np.isnan(b)) & (a != b)  # NaN ≠ ±inf, +inf ≠ −inf, inf ≠ 1
    with np.errstate(all="ignore"):
        diff = np.where(finite, np.abs(a - b), 0.0)
    tolerance = atol + rtol * np.abs(np.where(finite, b, 0.0))
    by = np.zeros(y.shape, bool)  # the cells the sum's term decides
    if scale is not None and (finite & (diff > tolerance)).any():
        sums = scale()
        if sums is not None:
            sums = np.asarray(sums, np.float64)
            sums = sums.reshape(y.shape) if sums.size == y.size else np.full(y.shape, np.nanmax(sums, initial=0.0))
            wider = atol + rtol * np.where(np.isfinite(sums), sums, 0.0)
            by = wider > tolerance
            tolerance = np.maximum(tolerance, wider)
    over = finite & (diff > tolerance)
    agrees = not (over.any() or unequal.any())
    out = {
        "agrees": agrees,
        "output_shape": list(y.shape),
        "max_abs_diff": float(diff.max(initial=0.0)),
        "rule": None if agrees else (differs[0] if differs else None),
        "tolerance": {"rule": AGREEMENT, "atol": atol, "rtol": rtol} | ({"sums": SUMS} if scale is not None else {}),
    }
    if over.any() or unequal.any():
        out["cells_differ"] = int(over.sum() + unequal.sum())
    if unequal.any():
        cell = np.unravel_index(int(np.flatnonzero(unequal)[0]), y.shape)
    elif finite.any():
        with np.errstate(all="ignore"):
            cell = np.unravel_index(int(np.argmax(np.where(finite, diff / tolerance, -1.0))), y.shape)
    else:
        cell = None
    if cell is not None:
        out["worst"] = {
            "index": [int(i) for i in cell],
            "onnxruntime": float(a[cell]),
            "reference": float(b[cell]),
            "abs_diff": float(diff[cell]) if finite[cell] else None,
            "tolerance": float(tolerance[cell]) if finite[cell] else 0.0,
            "term": "sums" if by[cell] else "atol + rtol·|reference|" if finite[cell] else "non-finite: equal",
        }
    if undefined.any():
        theirs = sorted({str(v) for v in np.unique(y[undefined])})[:4]
        out["masked"] = {
            "cells": int(undefined.sum()),
            "rule": rule_undefined or "the layer leaves these cells undefined",
            "onnxruntime_gives": theirs,
        }
    return out
