"""Numbers as the server and the CLI write them: one module, six spellings.

The stage's browser side spells the values of the tensors it draws (stage/format.js: cells, hover, stats line);
everything the server writes comes spelled from here (messages, explanations, the picked cell's arithmetic, the
precision line, the Details tab's figures, the CLI, files, links). `digits` and `precise` are spelled alike in
both, held to one table (tests/fixtures/spellings.json) by tests/test_numbers.py and tests/js/format.test.mjs.

exact(v)     as typed and read back (messages' bounds): 2, 0.25, 1e-05; None is ∞
float32(v)   float32's shortest spelling (what a widget holds): 0.1 for float32(0.1), 12345.679
shortest(v)  the shortest text that reads back to the same value (CLI and link values): float32's spelling where
             v is a float32 value (1.4 for float32(1.4), not 1.399999976158142), else exact(v)
digits(v, n) n significant digits, exponent form from 1e6 and under 1e-4 (heatmap cells): 12345.7 at 6
precise(v)   whole numbers in full, else 7 significant digits (explanations, the Σ of a picked cell): 12345.68
compact(v)   about 4 significant digits, at least 2 decimals (the precision line's errors): 12345.68, 1.23e6
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

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


def digits(v, n: int) -> str:
    """`n` significant digits, trailing zeros dropped; exponent form from 1e6 and under 1e-4 ("1.23457e6"); the
    non-finite by name. Halves round away from zero, as JavaScript's toPrecision does (format.js `digits`)."""
    v = float(v)
    if _nonfinite(v):
        return _nonfinite(v)
    if v == 0:
        return "0"
    # Three digits past the last kept read "500" at a half (an exact tie has a short decimal form), or too near one
    # to tell: worked out exactly. Any other value rounds alike half-even or half-up.
    if f"{abs(v):.{n + 2}e}"[n + 1 : n + 4] == "500":
        d = Decimal(v)
        text = f"{d.quantize(Decimal(1).scaleb(d.adjusted() - n + 1), rounding=ROUND_HALF_UP):e}"
    else:  # Python rounds a half to even, and this is no half: the same digits
        text = f"{v:.{n - 1}e}"
    if abs(v) >= 1e6 or abs(v) < 1e-4:
        mant, exp = text.split("e")
        return f"{mant.rstrip('0').rstrip('.') if '.' in mant else mant}e{int(exp)}"
    r = float(text)
    return str(int(r)) if r.is_integer() else repr(r)


def precise(v) -> str:
    v = float(v)
    if math.isfinite(v) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return digits(v, 7)


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
