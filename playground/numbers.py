"""Numbers as the playground writes them: one module, five spellings.

exact(v)    as typed and read back (messages' bounds): 2, 0.25, 1e-05; None is ∞
float32(v)  float32's shortest spelling (what a widget holds): 0.1 for float32(0.1), 12345.679
shortest(v) the shortest text that reads back to the same value (CLI and link values): float32's spelling where
            v is a float32 value (1.4 for float32(1.4), not 1.399999976158142), else exact(v)
precise(v)  7 significant digits with NaN/±Inf (explanations, hover values): 12345.68
compact(v)  about 4 significant digits (heatmap cells, figures on the stage): 12345.68, 1.23e6
"""

from __future__ import annotations

import math

import numpy as np


def exact(v) -> str:
    if v is None:
        return "∞"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v)


def float32(v) -> str:
    s = str(np.float32(v))
    return s[:-2] if s.endswith(".0") else s


def shortest(v) -> str:
    v = float(v)
    with np.errstate(over="ignore"):  # beyond float32: not one of its values
        is_float32 = math.isfinite(v) and float(np.float32(v)) == v
    return float32(v) if is_float32 else exact(v)


def _nonfinite(v: float) -> str | None:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return None


def precise(v) -> str:
    v = float(v)
    if _nonfinite(v):
        return _nonfinite(v)
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.7g}"


def compact(v) -> str:
    v = float(v)
    if _nonfinite(v):
        return _nonfinite(v)
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e6 or a < 1e-3:
        mant, exp = f"{v:.2e}".split("e")
        return f"{mant.rstrip('0').rstrip('.')}e{int(exp)}"
    s = f"{v:.{max(2, 3 - math.floor(math.log10(a)))}f}"  # ~4 significant digits, at least 2 decimals
    return s.rstrip("0").rstrip(".")
