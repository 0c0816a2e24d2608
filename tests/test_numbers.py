"""The server's spellings (numbers.py) against the table the stage's (format.js) is held to as well: a value drawn in
a cell or hovered reads as the server writes it in an explanation."""

import json
from pathlib import Path

import numpy as np
import pytest

from playground.base import numbers

TABLE = json.loads((Path(__file__).parent / "fixtures" / "spellings.json").read_text())


@pytest.mark.parametrize("value, n, text", TABLE["digits"])
def test_digits_as_the_stage_spells_them(value, n, text):
    assert numbers.digits(float(value), n) == text


@pytest.mark.parametrize("value, text", TABLE["precise"])
def test_precise_as_the_stage_hovers_it(value, text):
    assert numbers.precise(float(value)) == text


def test_digits_read_back_within_their_last_digit():
    rng = np.random.default_rng(0)
    for v in rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 9, 2000):
        for n in (3, 5, 7):
            back = float(numbers.digits(v, n))
            assert abs(back - v) <= 0.5 * 10.0 ** (np.floor(np.log10(abs(v))) - n + 1) * (1 + 1e-9), (v, n)


def test_the_other_spellings():
    assert numbers.exact(None) == "∞" and numbers.exact(2.0) == "2" and numbers.exact(1e-05) == "1e-05"
    assert numbers.float32(np.float32(0.1)) == "0.1" and numbers.float32(3.0) == "3"
    assert numbers.shortest(float(np.float32(1.4))) == "1.4" and numbers.shortest(0.1) == "0.1"
    assert numbers.compact(12345.68) == "12345.68" and numbers.compact(1.23e6) == "1.23e6"


def _exact(v: float, n: int) -> str:
    """digits' rule worked out in decimal arithmetic on the float's exact value (halves away from zero)."""
    import re
    from decimal import ROUND_HALF_UP, Decimal

    d = Decimal(v)
    q = d.quantize(Decimal(1).scaleb(d.adjusted() - n + 1), rounding=ROUND_HALF_UP)
    if abs(v) >= 1e6 or abs(v) < 1e-4:
        return re.sub(r"\.?0+e", "e", f"{q:e}").replace("e+", "e")
    r = float(q)
    return str(int(r)) if r.is_integer() else repr(r)


def test_digits_round_halves_away_from_zero_as_the_browser_does():
    rng = np.random.default_rng(1)
    values = [*(rng.standard_normal(3000) * 10.0 ** rng.integers(-9, 10, 3000))]
    values += [k + 0.5 for k in range(-300, 300)] + [k / 8 for k in range(-800, 800) if k] + [12344.5, 0.125, -2.5]
    for v in values:
        for n in (1, 3, 5, 6, 7):
            assert numbers.digits(v, n) == _exact(v, n), (v, n)
