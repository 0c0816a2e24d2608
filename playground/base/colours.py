"""The range a tensor's colours span, for every heatmap the playground draws: the stage's (through its answer's
`range`, heatmap.js; protocol.figure_ranges joins the ranges of figures that share values). A leaf: NumPy only."""

from __future__ import annotations

import numpy as np

# A tensor's values that differ by no more than this many float32 ε of the terms behind them (the largest of them,
# or of the values themselves) are rounding noise: a convolution of [w, −w] gives 0 ± 10⁻¹¹ from terms of 10⁵.
NOISE_EPS = 16


def colour_range(a: np.ndarray, terms: float | None = None) -> list[float] | None:
    """The range a tensor's colours should span: its finite values' [min, max], or one value ([m, m], drawn as a
    constant) where the spread is rounding noise: within NOISE_EPS float32 ε of the largest |value| or of `terms`,
    the magnitude of what was summed (onnx.runtime.magnitude). None where no value is finite."""
    return spread(finite_range(a), terms)


def spread(found: tuple[float, float] | None, terms: float | None = None) -> list[float] | None:
    """`colour_range` of a tensor whose finite range is `found` (`finite_range`'s, made once for its stats too)."""
    if found is None:
        return None
    lo, hi = found
    scale = max(abs(lo), abs(hi), terms or 0.0)
    if hi - lo <= NOISE_EPS * float(np.finfo(np.float32).eps) * scale:
        mid = 0.0 if lo <= 0.0 <= hi else (lo + hi) / 2  # noise about zero is zero
        return [mid, mid]
    return [lo, hi]


def finite_range(a: np.ndarray) -> tuple[float, float] | None:
    """(min, max) of a tensor's finite values, None where there are none (in its own type: no float64 copy of a
    32 MiB tensor)."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    finite = np.isfinite(a)
    if not finite.any():
        return None
    return float(a.min(where=finite, initial=np.inf)), float(a.max(where=finite, initial=-np.inf))
