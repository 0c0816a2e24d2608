"""What one configuration may cost, checked before anything is allocated or built.

Every parameter has its own bounds, but their product does not: N4 C8 512×512 with 64 output maps and
a 15×15 kernel is inside every bound and is 10^11 multiply-adds. A whole room shares one server, so
the work of a configuration is bounded too:

- `PLAYGROUND_MAX_ELEMENTS` (default 8,388,608 = N4·C8·512·512, 32 MiB of float32): values in the
  input and in the output.
- `PLAYGROUND_MAX_MACS` (default 100,000,000): multiply-adds of the layer (a convolution's
  N·K·out·C/groups·kernel; one per element elsewhere): about 0.4 s of float64 NumPy reference on one
  core of a 2-CPU server, so one participant's largest convolution leaves the other core to the room.
- `REFERENCE_CHUNK_BYTES`: the most temporary memory the convolution reference takes at once (it
  computes in slices of output rows rather than materialising every window).

A bigger machine raises them through the environment; the README says how.
"""

from __future__ import annotations

import math
import os

from .errors import ValidationError

REFERENCE_CHUNK_BYTES = 16 << 20  # smaller slices ran no slower here (they stay in cache)


def env_number(name: str, default, low, high, cast=int):
    """A setting from the environment, or ValidationError naming the variable and its rule."""
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    rule = f"must be a {'whole ' if cast is int else ''}number between {low:,} and {high:,}"
    try:
        value = float(text)
        if cast is int and not value.is_integer():
            raise ValueError
        value = cast(value)
    except (ValueError, OverflowError):
        raise ValidationError("settings", name, rule, text) from None
    if not (math.isfinite(value) and low <= value <= high):
        raise ValidationError("settings", name, rule, text)
    return value


def max_elements() -> int:
    return env_number("PLAYGROUND_MAX_ELEMENTS", 8 * 2**20, 1, 2**31)


def max_macs() -> int:
    return env_number("PLAYGROUND_MAX_MACS", 100_000_000, 1, 10**13)


def over_elements(shape: tuple, what: str, lower: str) -> str | None:
    """The rule a tensor of `shape` breaks by holding more values than the budget, or None."""
    n, cap = math.prod(shape), max_elements()
    if n <= cap:
        return None
    return (
        f"the budget is {cap:,} values per tensor (PLAYGROUND_MAX_ELEMENTS) and this {what} would hold "
        f"{n:,} ({'×'.join(map(str, shape))}); lower {lower}"
    )


def over_work(macs: int, formula: str, lower: str) -> str | None:
    """The rule a configuration of `macs` multiply-adds breaks, or None."""
    cap = max_macs()
    if macs <= cap:
        return None
    return (
        f"the budget is {cap:,} multiply-adds per configuration (PLAYGROUND_MAX_MACS) and this one needs "
        f"{macs:,} ({formula}); lower {lower}"
    )
