"""Every control a newcomer can reach, touched once from the layer's default, gives a valid and visibly different
result, on every layer.

From the page's default (the layer's example input, its default parameters, as the stage opens), each control the
stage draws enabled is moved to the next value it offers, one at a time: a choice to its next option (the one before
where it is the last), a switch flipped, a slider one step up (down at its top; to the next value it offers where it
offers some), an axis of a per-axis control likewise (an optional one's switch set first: its sliders are disabled
until it is), a short array's value slider one step, a long array's text to its next preset, compare mode to the first
precision it offers. The configuration goes through what the stage's route does with it (protocol.raw_params, the
choices' resets, core.evaluate, protocol.answer) and must (a) be accepted and (b) draw something else than the
default: a figure's shape or values, or which figures there are; or, where by the layer's own arithmetic nothing can
change at the default, a note that names the control and says why. A disabled control says why it is unused. A text
box with neither presets nor per-value sliders (a typed list) has no next value, and is left out.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from playground.base.numbers import shortest
from playground.layers import LAYERS
from playground.network.core import evaluate
from playground.serve import protocol

NAMES = sorted(LAYERS)


def _shapes(layer):
    return {n: layer.input_shape(n) for n in layer.input_names}


def _answer(layer, query: dict, compare: str | None = None):
    """The stage's answer to `query` (the route's path without its speculative builds), or the refusal's rule."""
    feed = layer.feed()
    shape = feed[layer.input_names[0]].shape
    raw = protocol.raw_params(layer, shape, query)
    try:
        ev = evaluate(layer.name, raw, feed, compare=compare, build=False, fit=True)
    except Exception as exc:  # noqa: BLE001 - the refusal is the finding
        return None, str(exc)
    return protocol.answer(layer, ev, lines=0, every=False), None


def _drawing(answer: dict) -> dict:
    """What the stage draws of an answer: each figure's shape and values, by figure."""
    return {f["which"]: np.asarray(f["tensor"]["_array"]) for f in answer["figures"]}


def _differs(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return True
    return any(x.shape != y.shape or not np.array_equal(x, y, equal_nan=True) for x, y in zip(a.values(), b.values()))


def _said(answer: dict, default: dict, name: str) -> bool:
    """A line under the stage the default's answer has not, naming the parameter and saying that it changes nothing
    here (and why): the explanations and the messages, which the stage draws together."""
    new = set(answer["explain"] + answer["messages"]) - set(default["explain"] + default["messages"])
    return any(name in m and "changes nothing" in m for m in new)


def _text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else shortest(round(v, 9))


def _step(value: float, low, high, step, offered=None) -> float | None:
    """A slider's next value: the next offered one up (else down), or one step up (down at its top)."""
    if offered is not None:
        up = [o for o in offered if o > value]
        down = [o for o in offered if o < value]
        return min(up) if up else max(down) if down else None
    for v in (value + step, value - step):
        if (low is None or v >= low - 1e-12) and (high is None or v <= high + 1e-12):
            return v
    return None


def touches(c: dict, query: dict, current: str | None = None) -> list[tuple[str, dict]]:
    """(what the hand does, the query keys it changes) for each part of control `c` a hand can move once;
    `current`: the preset an array's values are, where they are one."""
    w, k = c["widget"], c["key"]
    if w == "choice":
        i = c["choices"].index(query[k])
        j = i + 1 if i + 1 < len(c["choices"]) else i - 1
        return [(f"{k} → {c['choices'][j]}", {k: c["choices"][j]})]
    if w == "toggle":
        flip = "false" if query[k] == "true" else "true"
        return [(f"{k} → {flip}", {k: flip})]
    if w in ("slider", "named"):
        v = _step(float(query[k]), c["low"], c["high"], c["step"], c.get("offered"))
        return [(f"{k}: no other value offered", None)] if v is None else [(f"{k} → {_text(v)}", {k: _text(v)})]
    if w == "axes":
        out, first = [], {c["set_key"]: "true"} if c.get("set_key") and query[c["set_key"]] != "true" else {}
        if first:  # an optional one's switch, touched alone: its sliders are disabled until it is set
            out.append((f"{c['set_key']} → true", first))
        for i, ax in enumerate(c["axes"]):
            kk = c["keys"][ax]
            top = min(c["high"], c["low"] + 32)
            if c.get("tops"):
                top = max(c["tops"][i], int(query[kk]))
            v = _step(int(query[kk]), c["low"], top, 1)
            what = ("set, " if first else "") + f"{kk}"
            out.append(
                (
                    f"{what}: no other value" if v is None else f"{what} → {_text(v)}",
                    None if v is None else {**first, kk: _text(v)},
                )
            )
        return out
    if w == "permutation":
        keys = [c["keys"][a] for a in c["axes"]] if c.get("axes") else None
        now = [int(query[kk]) for kk in keys] if keys else [int(v) for v in query[k].split(",")]
        perms = list(itertools.permutations(range(len(now))))
        nxt = perms[(perms.index(tuple(now)) + 1) % len(perms)]
        changes = dict(zip(keys, map(str, nxt))) if keys else {k: ",".join(map(str, nxt))}
        return [(f"{k} → {','.join(map(str, nxt))}", changes)]
    if w == "text" and c.get("values"):
        out = []
        for i, v in enumerate(c["values"]):
            lo, hi = c.get("slide") or (c.get("min"), c.get("max"))
            reach = max(1.0, 2 * abs(v))  # controls.js valueRange: around the value where none is declared
            lo, hi = (
                (lo, hi)
                if c.get("slide")
                else (max(-reach if lo is None else lo, -reach), min(reach if hi is None else hi, reach))
            )
            n = _step(v, lo, hi, c["step"])
            values = [*c["values"][:i], n, *c["values"][i + 1 :]]
            out.append((f"{k}.{i} → {_text(n)}", {k: ",".join(_text(x) for x in values)}))
        return out
    if w == "text" and c.get("presets"):  # the preset after the one the values are (`current`), else the first
        names = c["presets"]
        i = names.index(current) + 1 if current in names else 0
        return [(f"{k} → {names[i % len(names)]}", {k: names[i % len(names)]})]
    return []  # a typed list (reshape_dims, scales): no next value to take


def _preset_of(layer, name: str, params: dict, shape: tuple) -> str | None:
    """The preset an array parameter's values are (a uniform array is spelled by its one value in the URL)."""
    p = layer.param(name)
    for preset, make in p.presets.items():
        made = np.asarray(make(params, shape), np.float32)
        if made.shape == np.shape(params[name]) and np.array_equal(made, params[name]):
            return preset
    return None


def walk(layer) -> tuple[list[str], int]:
    """The first touches of `layer`'s controls that fail (each: what the hand did and what went wrong), and how many
    touches there were."""
    default, problem = _answer(layer, {})
    assert problem is None, f"{layer.name}'s default is refused: {problem}"
    query, base = default["query"], _drawing(default)
    params, shape = layer.defaults(_shapes(layer)), layer.input_shape(layer.input_names[0])
    resets = protocol.resets(layer, params, shape)
    failed, count = [], 0
    for c in default["controls"]:
        if not c["used"]:
            if not c["why_unused"]:
                failed.append(f"{c['key']}: disabled with no word why")
            continue
        for what, changes in touches(c, query, _preset_of(layer, c["name"], params, shape)):
            count += 1
            if changes is None:
                failed.append(f"{what}: the control cannot move")
                continue
            q = {**query, **changes}
            for kk in changes:  # a choice that decides later defaults lets them take their new ones (state.js)
                for r in resets.get(kk, []):
                    if r not in changes:
                        q.pop(r, None)
            answer, problem = _answer(layer, q)
            if problem:
                failed.append(f"{what}: refused: {problem}")
            elif not _differs(_drawing(answer), base) and not _said(answer, default, c["name"]):
                failed.append(f"{what}: draws the same as the default, with no word why")
    offered = default.get("compare_choices", list(layer.param("precision").choices))
    count += 1
    answer, problem = _answer(layer, query, offered[0])
    if problem or not _differs(_drawing(answer), base):
        failed.append(f"compare → {offered[0]}: " + (problem or "draws the same as the default"))
    return failed, count


@pytest.mark.parametrize("name", NAMES)
def test_every_control_touched_once_from_the_default_is_valid_and_visible(name):
    failed, count = walk(LAYERS[name])
    assert count > 1
    assert not failed, "\n".join(failed)


if __name__ == "__main__":  # the figures: failed first touches per layer
    total = 0
    for n in NAMES:
        failed, count = walk(LAYERS[n])
        total += len(failed)
        print(f"{n:16} {len(failed):2} of {count:2} failed" + "".join(f"\n    {f}" for f in failed))
    print(f"{total} first touches failed on {len(NAMES)} layers")
