"""A model of an opset ONNX Runtime has no kernel for (its CPU kernels start at opset 7: Add-6, AveragePool-1),
converted for ONNX Runtime's run by onnx.version_converter to the lowest opset it runs, or refused naming the op and
the rule.

    for_runtime(model, name) → (the model, or its conversion; the note that says so, or None)
"""

from __future__ import annotations

import functools
import re

from ..base.errors import ValidationError

TARGETS = (7, 9, 11, 13, 17, 21)  # tried in order, the lowest above the model's first: the fewest ops rewritten
NO_KERNEL = "Could not find an implementation"  # ONNX Runtime's words for an op version it has no kernel for


@functools.lru_cache(maxsize=1)
def _kernels() -> dict[tuple[str, str], list[tuple[int, int]]]:
    """ONNX Runtime's CPU kernels: (domain, op) → the opset ranges they cover."""
    from onnxruntime.capi import onnxruntime_pybind11_state as C  # noqa: PLC0415

    out: dict = {}
    for k in C.get_all_opkernel_def():
        if k.provider == "CPUExecutionProvider":
            out.setdefault((k.domain or "", k.op_name), []).append(tuple(k.version_range))
    return out


def missing_kernel(model) -> str | None:
    """The first node (as "Op-version") whose op version no CPU kernel of ONNX Runtime covers, or None. An op
    without a kernel may still run as a function (ONNX Runtime expands it): the session decides (`runs`)."""
    import onnx  # noqa: PLC0415

    opsets = {o.domain or "": o.version for o in model.opset_import}
    kernels = _kernels()
    for node in model.graph.node:
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        if domain != "" or node.op_type == "Constant":
            continue
        try:
            since = onnx.defs.get_schema(node.op_type, opsets.get("", 1), "").since_version
        except Exception:  # noqa: BLE001 - an op ONNX does not know: its node says so when opened
            continue
        if not any(lo <= since <= hi for lo, hi in kernels.get(("", node.op_type), [])):
            return f"{node.op_type}-{since}"
    return None


def runs(model) -> str | None:
    """None where ONNX Runtime makes a session of the model, else its words where it has no kernel for an op."""
    from ..onnx import runtime  # noqa: PLC0415

    try:
        runtime.session(model.SerializeToString())
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime's refusal: only a missing kernel is ours to mend
        words = runtime.ort_words(exc)
        return words if NO_KERNEL in str(exc) else None
    return None


def for_runtime(model, name: str):
    """(model, None) where ONNX Runtime has a kernel for every op; else (the model converted by
    onnx.version_converter to the lowest of `TARGETS` ONNX Runtime runs, the note saying so); ValidationError
    naming the op and the rule where no conversion runs."""
    op = missing_kernel(model)
    if op is None:
        return model, None
    why = runs(model)
    if why is None:
        return model, None
    import onnx  # noqa: PLC0415
    from onnx import version_converter  # noqa: PLC0415

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    tried: dict[str, list[int]] = {}  # why → the opsets it stopped
    for target in (t for t in TARGETS if t > opset):
        try:
            converted = version_converter.convert_version(model, target)
            onnx.checker.check_model(converted)
        except Exception as exc:  # noqa: BLE001 - the converter has no adapter for an op: the next target may
            words = re.sub(r"\S+\.(?:h|cc|cpp):\d+: (?:\w+\(\): )?", "", " ".join(str(exc).split()))[:160]
            tried.setdefault(words, []).append(target)
            continue
        if runs(converted) is None:
            note = (
                f"{name} is opset {opset}; ONNX Runtime has no kernel for {op}: it runs the model converted to "
                f"opset {target} by onnx.version_converter (each node is read at opset {opset}, as the model has it "
                "and TensorRT's parser reads it)"
            )
            return converted, note
        tried.setdefault("ONNX Runtime still has no kernel", []).append(target)
    said = "; ".join(f"opset {', '.join(map(str, ts))}: {why}" for why, ts in tried.items())
    raise ValidationError(
        "onnx",
        "model",
        f"{name} is opset {opset} and ONNX Runtime has no kernel for {op}; onnx.version_converter did not convert "
        f"it to an opset ONNX Runtime runs ({said or 'no opset above it to try'})",
    )
