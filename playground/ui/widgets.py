"""Widgets generated from Param declarations, the input controls and the view toggles.

`param_widget` makes the widget(s) for any Param and returns the raw value `evaluate` takes;
`write_value` puts a canonical value into those widgets' state (dependent defaults now,
presets and URLs later). Nothing here knows a layer by name. Keys: see state.py.
"""
from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

from ..errors import ValidationError
from ..inputs import DIM_NAMES, KINDS, LIMITS, SEED_MAX, InputError, default_dims, make_input
from ..layer import Layer
from ..layers import get_layer
from ..numbers import float32
from ..params import Param, same_value
from .links import Field
from .keys import (COMPARE, COMPARE_OFF, CONTROLS_FRAGMENT, STAGE_FRAGMENT, VIEW_INSTRUMENT, VIEW_PRESENTER,
                   VIEW_SHARED_SCALE, control_key, input_key, key)
from .state import PageState, ViewOptions, guarded, inert

SLIDER_MAX_STEPS = 2000  # a sidebar slider cannot place more positions than this; beyond, a number input
PER_VALUE_MAX = 8  # arrays of up to this many values along one axis get one input per value
TABLE_MAX = 4096  # larger arrays are set by preset or as text
SLIDE = "slide"  # "{layer}.{param}.slide": the slider beside an exact-entry box (derived from the box)
CUSTOM = "custom"  # the preset selectbox's entry for hand-edited values
PERSIST = "session"  # a value survives page switches and being hidden
BIND = "query-params"  # the value is in the page URL under the widget key: links reproduce the state
# Every widget that holds state of its own (state.py) gets these, and only those: derived widgets are not
# bound (their URL value would fight the one they are derived from).
STATE = dict(persist_state=PERSIST, bind=BIND)
# The pattern selectbox shows the plain names (the URL holds what a selectbox shows); these describe them.
KIND_LABELS = {"spec": "the spec example's pattern, for any shape", "ramp": "evenly spaced from low to high",
               "random": "uniform between low and high, seeded", "checkerboard": "high and low alternating",
               "constant": "every value the same", "image": "an uploaded PNG/JPEG, resized to H × W "
                                                        "(C = 1 grey, 3 RGB); not carried by links"}
# Which error slot an InputError's param lands in.
INPUT_SLOTS = {"input.kind": "kind", "upload": "image", "input.low": "values", "input.high": "values",
               "input.seed": "values", "input.value": "values"}


# -- values as text ---------------------------------------------------------------------------
def value_text(p: Param, value: Any) -> str:
    """An array or ints value as the text its widget holds: a preset name, or numbers (empty: unset)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if p.kind == "ints":
        return ", ".join(str(int(v)) for v in value)
    return ", ".join(float32(v) for v in np.asarray(value, np.float32).ravel())


# -- writing state (callbacks only: Streamlit refuses writes to a widget drawn this run) --------
def write_value(layer: str, p: Param, value: Any, rank: int) -> None:
    """Set the widget state of `layer.p` to a canonical value."""
    kind_of(p).write(st.session_state, key(layer, p.name), p, value, rank)


def write_config(layer: Layer, params: dict, input: dict | None = None) -> None:
    """Set a layer page's controls to one configuration (a spec preset, a shared link). params: raw
    values as the CLI takes them, unset ones back to their defaults; input: make_input's keywords
    (kind, shape, low, high, seed, value). Raises ValidationError for an invalid configuration.
    Call it from a widget callback, or before the page draws its widgets."""
    ss, k = st.session_state, lambda name: input_key(layer.name, name)  # noqa: E731
    input = input or {}
    shape = tuple(input.get("shape") or layer.example_shape)
    canon = layer.resolve(params, shape)
    ss[k("kind")] = input.get("kind", "spec")
    ss[k("3d")] = len(shape) == 5
    for d, v in zip(DIM_NAMES[len(shape)], shape):
        ss[k(d)] = int(v)
    for name in ("low", "high", "value"):
        if name in input:
            ss[k(name)] = float(input[name])
    if "seed" in input:
        ss[k("seed")] = int(input["seed"])
    for p in layer.params:
        given = params.get(p.name, p.default_for(canon, shape))
        preset = p.kind == "array" and isinstance(given, str) and given.strip() in p.presets
        write_value(layer.name, p, given.strip() if preset else canon[p.name], len(shape))


def _later_defaults(layer: Layer, p: Param, params: dict, shape: tuple) -> dict:
    params, out = dict(params), {}
    for q in layer.params[layer.params.index(p) + 1:]:
        try:
            params[q.name] = out[q.name] = q.default_for(params, shape)
        except Exception:  # a default that needs a parameter not known yet: no dependency to follow
            params[q.name] = out[q.name] = None
    return out


def dependents(layer: Layer, p: Param, canon: dict, shape: tuple) -> tuple[str, ...]:
    """Later parameters whose default changes with p (activation alpha and beta with type)."""
    if p.kind not in ("enum", "bool"):
        return ()
    options = p.choices if p.kind == "enum" else (False, True)
    defaults = [_later_defaults(layer, p, {**canon, p.name: o}, shape) for o in options]
    return tuple(n for n in defaults[0] if any(not same_value(d[n], defaults[0][n]) for d in defaults[1:]))


def _reset_dependents(layer: Layer, p: Param, canon: dict, shape: tuple, names: tuple[str, ...]) -> None:
    defaults = _later_defaults(layer, p, {**canon, p.name: st.session_state[key(layer.name, p.name)]}, shape)
    for n in names:
        write_value(layer.name, layer.param(n), defaults[n], len(shape))


# -- one widget per kind ----------------------------------------------------------------------
def _slid(k: str, box_changed=None, args=()) -> None:
    """A slider of a slider + box pair moved: its value becomes the box's (which holds the state)."""
    st.session_state[k] = st.session_state[key(k, SLIDE)]
    if box_changed is not None:
        box_changed(*args)


def _number(label: str, k: str, lo, hi, step, value, integer: bool, slide=None, **kw):
    """A slider over the declared range where it has few enough steps to drag across; else a slider over the
    useful range `slide` with an exact-entry box beside it, which holds the value (values off the slider's range
    are typed there; the slider then rests at its nearest end)."""
    cast = int if integer else float
    step = int(step or 1) if integer else float(step or 0.1)
    lo, hi = (None if v is None else cast(v) for v in (lo, hi))
    value = None if value is None else cast(value)
    if lo is not None and hi is not None and (hi - lo) / step <= SLIDER_MAX_STEPS:
        return st.slider(label, lo, hi, value, step, key=k, **kw)
    s_lo, s_hi = (cast(v) for v in (slide or (lo if lo is not None else -10, hi if hi is not None else 10)))
    current = st.session_state.get(k, value)
    current = value if current is None else current
    st.session_state[key(k, SLIDE)] = min(max(cast(current), s_lo), s_hi)  # derived: the box's value, clamped
    on_change, args = kw.pop("on_change", None), kw.pop("args", ())
    if isinstance(on_change, Changed):  # the other half of the pair shows the new value: it is redrawn
        on_change = on_change.redrawing()
    derived = {n: v for n, v in kw.items() if n not in ("bind", "persist_state", "help")}  # the box holds state
    slide_col, box_col = st.columns([3, 2], vertical_alignment="bottom", gap="small")
    with slide_col:
        st.slider(label, s_lo, s_hi, step=step, key=key(k, SLIDE), on_change=_slid, args=(k, on_change, args),
                  help=f"Drag over {s_lo:g} … {s_hi:g}; type any value{_range_text(lo, hi)} in the box.", **derived)
    with box_col:
        return st.number_input(f"{label} (exact)", lo, hi, value, step, key=k, format=None if integer else "%g",
                               label_visibility="collapsed", on_change=on_change, args=args, **kw)


def _range_text(lo, hi) -> str:
    if lo is None and hi is None:
        return ""
    return f" from {'−∞' if lo is None else f'{lo:g}'} to {'∞' if hi is None else f'{hi:g}'}"


def _int_slider(label: str, k: str, lo: int, hi: int, value: int, offered=None, cap: int | None = None, **kw):
    """An int slider over lo..hi, or over the values the layer offers (a select slider; the arrow keys step it).
    The value already held stays offered even where it is no longer valid, so that moving another parameter never
    changes this one behind the user's back: the page names the rule it breaks instead."""
    current = st.session_state.get(k, value)
    current = int(current) if isinstance(current, (int, float)) else value
    if offered is not None and not isinstance(offered, int):
        options = sorted(set(offered) | {current})
        return st.select_slider(label, options, value=value if value in options else options[0], key=k, **kw)
    top = hi if offered is None else min(hi, int(offered))
    hi = max(top, min(current, cap or hi))  # the held value stays reachable (past the slider's span: up to cap)
    if hi <= lo:  # one value only: a slider needs two ends
        return st.select_slider(label, [lo], value=lo, key=k, **kw)
    return st.slider(label, lo, hi, min(max(value, lo), hi), 1, key=k, **kw)


def _sync(k: str, value) -> None:
    """Derived widgets follow their parameter: rewrite their state before they are drawn."""
    if st.session_state.get(k) != value:
        st.session_state[k] = value


def _label(text: str) -> None:
    st.markdown(f":small[**{text}**]")


def _per_axis(p: Param, k: str, default, rank: int, disabled: bool, tops, on_change: Changed):
    """One slider per spatial axis (up to the largest valid value, where the layer offers one); an optional
    param gets an override checkbox (off = None)."""
    on = True
    if p.optional:
        on = st.checkbox(f"{p.name} (override)", value=False, key=key(k, "set"), disabled=disabled, help=p.help,
                         on_change=on_change.redrawing(), **STATE)
    names = p.axis_names(rank)
    default = default if default is not None else (int(p.low or 0),) * len(names)
    tops = tops or (None,) * len(names)
    if p.per_dim and not p.optional:  # four or five columns: the name once above, the axes under it
        _label(p.name)
    values = []
    with st.container(horizontal=True, gap="small"):  # one block, where columns are three (fewer messages a change)
        for ax, v, top in zip(names, default, tops):
            label = ax if p.optional or p.per_dim else f"{p.name}.{ax}"
            values.append(_int_slider(label, key(k, ax), int(p.low or 0), int(p.high), int(v), top,
                                      disabled=disabled or not on, help=None if p.optional else p.help,
                                      on_change=on_change, **STATE))
    return tuple(values) if on else None


def _display_array(layer: Layer, p: Param, raw: dict, canon: dict, text: str, shape: tuple):
    """The array as TensorRT will get it (presets expanded, broadcast by the layer's check),
    or as the value alone coerces when other parameters are broken, or None."""
    try:
        return layer.resolve({**raw, p.name: text}, shape)[p.name]
    except Exception:
        try:
            return p.coerce(text, layer.name, canon, shape)
        except Exception:
            return None


def _grid(arr: np.ndarray, shape: tuple) -> tuple[np.ndarray, list[str], list[str]]:
    """A 2-D view for the table: rows over the leading axes, columns over the last one. A 1-D
    array that matches the input's trailing axes (per element) takes their shape."""
    if arr.ndim == 1:
        for k in range(len(shape)):
            if int(np.prod(shape[k:])) == arr.size and len(shape) - k >= 2:
                arr = arr.reshape(shape[k:])
                break
    arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
    lead = arr.shape[:-1]
    keep = [i for i, d in enumerate(lead) if d > 1] or [len(lead) - 1]
    rows = [",".join(str(idx[i]) for i in keep) for idx in np.ndindex(*lead)]
    return arr.reshape(-1, arr.shape[-1]), rows, [str(j) for j in range(arr.shape[-1])]


def _value_edited(k: str, i: int, base: np.ndarray) -> None:
    v = st.session_state.get(key(k, i))
    if v is not None:
        a = base.ravel().copy()
        a[i] = v
        st.session_state[k] = ", ".join(float32(x) for x in a)


def _table_edited(k: str, base: np.ndarray) -> None:
    edits = st.session_state.get(key(k, "table")) or {}
    a = base.copy()
    for row, cells in edits.get("edited_rows", {}).items():
        for col, v in cells.items():
            a[int(row), int(col)] = 0.0 if v is None else v
    st.session_state[k] = ", ".join(float32(x) for x in a.ravel())


def _preset_chosen(k: str, current: np.ndarray | None) -> None:
    choice = st.session_state[key(k, "preset")]
    if choice != CUSTOM:
        st.session_state[k] = choice
    elif current is not None:  # "custom": the values as numbers, ready to edit
        st.session_state[k] = ", ".join(float32(x) for x in current.ravel())


def _overridden(k: str, p: Param) -> None:
    """An optional array's override box ticked (a first value: 1, or the lowest allowed) or cleared (unset)."""
    on = st.session_state[key(k, "set")]
    st.session_state[k] = float32(1.0 if p.low is None or p.low <= 1.0 else p.low) if on else ""


def _array(layer: Layer, p: Param, k: str, default, raw: dict, canon: dict, shape: tuple, disabled: bool,
           changed: Changed):
    """A row with the preset selectbox (or the label) and an "as text" popover, then one input per
    value (few, along one axis) or a table. The text in the popover (a preset name or numbers) is
    the one widget holding the value; the others are rewritten from it on every run. An optional array
    has an override box above (off: unset, the text empty). Each widget's change rewrites the others: the
    parameter's control is redrawn with the stage."""
    redraw = lambda then=None, args=(): dict(on_change=replace(changed, then=then, args=args, redraw=True))  # noqa: E731
    default_text = value_text(p, default)
    # the text box below takes its URL value when drawn: read it now, for the widgets drawn before it
    text = st.session_state.get(k, st.query_params.get(k, default_text))
    if p.optional:
        _sync(key(k, "set"), bool(text.strip()))
        st.checkbox(f"{p.name} (override)", key=key(k, "set"), disabled=disabled, help=p.help,
                    **redraw(_overridden, (k, p)))
    arr = _display_array(layer, p, raw, canon, text, shape)
    per_value = arr is not None and arr.size <= PER_VALUE_MAX and sum(d > 1 for d in arr.shape) <= 1

    def edit_value(i: int, v: float, label: str) -> None:
        _sync(key(k, i), v)
        _number(label, key(k, i), p.low, p.high, p.step, v, False, slide=p.slide, disabled=disabled,
                help=p.help, **redraw(_value_edited, (k, i, arr)))

    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        if p.presets:
            pk = key(k, "preset")
            _sync(pk, text.strip() if text.strip() in p.presets else CUSTOM)
            st.selectbox(p.name, [*p.presets, CUSTOM], key=pk, disabled=disabled, **redraw(_preset_chosen, (k, arr)))
        elif per_value and arr.size == 1:  # a single value is its own label
            edit_value(0, float(arr.ravel()[0]), p.name)
        elif not p.optional:  # an optional one is named by its override box
            _label(p.name)
        with st.popover("", icon=":material/edit_note:", help="Edit as text", disabled=disabled):
            value = st.text_input(f"{p.name}: a preset name, or numbers separated by commas", value=default_text,
                                  key=k, disabled=disabled, **redraw(), **STATE)
    if per_value and (p.presets or arr.size > 1):
        for i, v in enumerate(arr.ravel()):
            edit_value(i, float(v), f"{p.name}[{i}]")
    elif arr is not None and not per_value and arr.size <= TABLE_MAX:
        view, rows, cols = _grid(arr, shape)
        # float32 -> the float64 it spells (0.01, not 0.009999999776482582), for the browser's display
        shown = np.vectorize(lambda v: float(float32(v)))(view)
        st.data_editor(pd.DataFrame(shown, index=rows, columns=cols), key=key(k, "table"), disabled=disabled,
                       **redraw(_table_edited, (k, view)))
    elif arr is not None and not per_value:
        st.caption(f"{arr.size:,} values: too many to edit one by one; choose a preset or paste numbers as text.")
    return value


def _unused_note(layer: Layer, p: Param, canon: dict) -> str:
    """Layer.why_unused, in parentheses (the note stays as another unused value is picked: nothing is redrawn)."""
    return f"({layer.why_unused(p.name, canon)})"


def param_widget(layer: Layer, p: Param, raw: dict, canon: dict, shape: tuple, current: dict | None = None) -> Any:
    """Draw the widget for p under the current parameters and return its raw value.

    raw: the earlier parameters' raw values (used ones); canon: their canonical values; current: every
    parameter's value as its widget holds it now (what a layer's `offers` reads about later parameters).
    An unused parameter is drawn disabled with a note saying what makes it unused. The help line is the
    widget's tooltip, so the controls stay compact beside the figures."""
    k = key(layer.name, p.name)
    used = p.is_used(canon)
    default = p.default_for(canon, shape)
    names = dependents(layer, p, canon, shape)
    changed = Changed(layer.name, shape, p.name)
    if names:  # a choice that resets later parameters' defaults rewrites their widgets: they are redrawn too
        changed = replace(changed, then=_reset_dependents, args=(layer, p, dict(canon), shape, names), also=names)
    common = dict(disabled=not used, help=p.help, on_change=changed, **STATE)
    offered = p.offered({**(current or {}), **canon}, shape)
    value = kind_of(p).draw(layer, p, k, default, raw, canon, shape, offered, common)
    if not used:
        st.caption(_unused_note(layer, p, canon))
    return value


# -- one entry per kind of Param: its widget, its state, its URL fields, its value read back from state ----------
def _write_axes(ss, k, p, value, rank):
    if p.optional:
        ss[key(k, "set")] = value is not None
    for ax, v in zip(p.axis_names(rank), value or ()):
        ss[key(k, ax)] = int(v)


def _read_axes(p, k, default, shape, get):
    on = bool(get(key(k, "set"), False)) if p.optional else True
    names = p.axis_names(len(shape))
    shown = default if default is not None else (int(p.low or 0),) * len(names)
    values = tuple(int(get(key(k, ax), v)) for ax, v in zip(names, shown))
    return values if on else None


def _axes_fields(p, k):
    out = {key(k, "set"): Field("bool", param=p.name)} if p.optional else {}
    return out | {key(k, ax): Field("int", p.low, p.high, param=p.name) for ax in p.axis_names(5)}


def _write_text(ss, k, p, value, rank):
    ss[k] = value_text(p, value)


def _read_text(p, k, default, shape, get):
    return get(k, value_text(p, default) if default is not None else "")


def _read(p, k, default, shape, get):
    return get(k, default)


def _field(kind):
    return lambda p, k: {k: Field(kind, p.low, p.high, choices=p.choices, param=p.name)}


def _writes(cast):
    def write(ss, k, p, value, rank):
        ss[k] = cast(value)
    return write


@dataclass(frozen=True)
class Kind:
    """How one kind of Param lives on a page. draw(layer, p, key, default, raw, canon, shape, offered, common) ->
    the raw value (common: disabled, help, state and reset keywords); write(session state, key, p, canonical value,
    rank); fields(p, key) -> {URL key: links.Field}; read(p, key, default, shape, get) -> the raw value the widget
    would return, through get(key, default) (the link check and `offers` read without drawing)."""
    draw: Callable[..., Any]
    write: Callable[..., None]
    fields: Callable[[Param, str], dict]
    read: Callable[..., Any] = _read


KIND_TABLE = {
    "int": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                _int_slider(p.name, k, int(p.low), int((p.slide or (0, p.high))[1]), int(d), offered,
                            cap=int(p.high), **common), _writes(int), _field("int")),
    "float": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                  _number(p.name, k, p.low, p.high, p.step, d, False, slide=p.slide, **common), _writes(float),
                  _field("float")),
    "bool": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                 st.toggle(p.name, value=bool(d), key=k, **common), _writes(bool), _field("bool")),
    # a select slider: the arrow keys step through the members
    "enum": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                 st.select_slider(p.name, p.choices, value=d, key=k, **common), _writes(str), _field("choice")),
    # ints per axis or per dimension: a slider each (and an override box where optional)
    "axes": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                 _per_axis(p, k, d, len(shape), common["disabled"], offered, common["on_change"]), _write_axes,
                 _axes_fields, _read_axes),
    "ints": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                 st.text_input(p.name, value=value_text(p, d), key=k, **common), _write_text, _field("text"),
                 _read_text),
    # a preset name or numbers: one input per value, or a table
    "array": Kind(lambda layer, p, k, d, raw, canon, shape, offered, common:
                  _array(layer, p, k, d, raw, canon, shape, common["disabled"], common["on_change"]), _write_text,
                  _field("text"), _read_text),
}


def kind_of(p: Param) -> Kind:
    return KIND_TABLE["axes" if p.along_axes else p.kind]



@dataclass
class ParamForm:
    raw: dict = field(default_factory=dict)  # the used parameters' widget values: what evaluate gets
    canon: dict = field(default_factory=dict)  # every parameter's canonical value, where it has one


def param_controls(layer: Layer, shape: tuple, places: dict | None = None) -> None:
    """Every parameter's widget, in the layer's order, in the current container or in `places[name]`; each in a
    fragment of its own, so that a change redraws only the parameters whose controls it changes (`Changed`)."""
    for p in layer.params:
        with (places or {}).get(p.name) or contextlib.nullcontext():
            st.fragment(_param_control, key=fragment_key(p.name))(layer.name, p.name, shape)
    PageState(layer.name).set("controls_plan", controls_plan(layer, shape))


def fragment_key(param: str) -> str:
    return key(CONTROLS_FRAGMENT, param)


def _param_control(layer_name: str, name: str, shape: tuple) -> None:
    """One parameter's widget, under the earlier parameters as their widgets hold them, and the rule the
    configuration breaks where it names this parameter (a fragment: it reruns on its own)."""
    guarded(lambda: _draw_param_control(get_layer(layer_name), name, shape))


def _draw_param_control(layer: Layer, name: str, shape: tuple) -> None:
    form = ParamForm()
    for p, _ in _held(layer, shape, form):
        if p.name == name:
            raw, canon = dict(form.raw), dict(form.canon)  # the earlier parameters'
    with st.container(key=control_key(layer.name, name)):  # ?hide=NAME hides it (ui.links)
        param_widget(layer, layer.param(name), raw, canon, shape, form.canon)
        broken = _broken(layer, form.raw, shape)
        if broken is not None and broken[0] == name:
            st.error(inert(broken[1]), icon=":material/error:")


def _held(layer: Layer, shape: tuple, form: ParamForm):
    """Each parameter with its widget's value, as the widgets hold them, while `form` fills on: when a parameter
    comes, `form` holds the ones before it; once all came, every one (defaults where a value is broken)."""
    from .links import widget_value

    for p in layer.params:
        value = widget_value(layer, p, form.canon, shape, st.session_state.get)
        yield p, value
        if p.is_used(form.canon):
            form.raw[p.name] = value
        form.canon[p.name] = _canonical(layer, p, value, form.canon, shape)


def param_form(layer: Layer, shape: tuple) -> ParamForm:
    """The parameters as their widgets hold them: what the stage evaluates."""
    form = ParamForm()
    for _ in _held(layer, shape, form):
        pass
    return form


def compare_control(layer: Layer, shape: tuple) -> None:
    """Compare mode: a second precision the same configuration is shown in, beside the first."""
    st.select_slider("compare with", (COMPARE_OFF, *layer.param("precision").choices), value=COMPARE_OFF,
                     key=key(layer.name, COMPARE), on_change=Changed(layer.name, shape),
                     help="Show the output in a second precision beside the first, and the difference "
                          "between the two (log₁₀ |difference|).", **STATE)


def compare_choice(layer: Layer) -> str | None:
    """Compare mode's second precision, None when off."""
    choice = st.session_state.get(key(layer.name, COMPARE), COMPARE_OFF)
    return None if choice == COMPARE_OFF else choice


def _canonical(layer: Layer, p: Param, value, canon: dict, shape: tuple):
    for v in (value, p.default_for(canon, shape)):  # a broken value: later defaults follow the default
        try:
            return p.coerce(v, layer.name, canon, shape)
        except ValidationError:
            continue
    return None


# -- what a change reruns -----------------------------------------------------------------------
def _broken(layer: Layer, raw: dict, shape: tuple) -> tuple[str, str] | None:
    """The rule the configuration breaks, as (param, message), or None."""
    return _broken_rule(layer.name, tuple(shape), tuple((n, _frozen(v)) for n, v in raw.items()))


@functools.lru_cache(maxsize=64)  # every control of a page asks in each full run
def _broken_rule(layer_name: str, shape: tuple, raw: tuple) -> tuple[str, str] | None:
    try:
        get_layer(layer_name).resolve(dict(raw), shape)
    except ValidationError as exc:
        return exc.param, str(exc)
    return None


def controls_plan(layer: Layer, shape: tuple) -> dict[str, tuple]:
    """What each parameter's control draws besides its widget's own value: whether it is used (and the note saying
    why not), what the layer offers for it (and the value held, which stays offered), what a choice resets, an
    array's values as shown, and the rule broken where it names this parameter. A control whose entry a change
    leaves equal is not redrawn."""
    form, plan, held = ParamForm(), {}, {}
    for p, value in _held(layer, shape, form):
        used = p.is_used(form.canon)
        entry = [used, None if used else _unused_note(layer, p, form.canon)]
        if p.kind in ("enum", "bool"):
            entry.append(dependents(layer, p, form.canon, shape))
        if kind_of(p) is KIND_TABLE["array"]:
            arr = _display_array(layer, p, form.raw, form.canon, value, shape)
            entry.append(None if arr is None else (arr.shape, arr.tobytes()))
        plan[p.name], held[p.name] = entry, value
    for p in layer.params:  # what a layer offers may read later parameters: every one is known now
        if p.offers is not None:
            plan[p.name] += [_frozen(p.offered(form.canon, shape)), _frozen(held[p.name])]
    broken = _broken(layer, form.raw, shape)
    return {name: (*entry, broken[1] if broken and broken[0] == name else None) for name, entry in plan.items()}


def _frozen(value):
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class Changed:
    """A control's on_change: `then(*args)` (the control's own callback), then a rerun of the stage and of the
    parameters' controls that now draw differently (`controls_plan`); the browser keeps the rest. `param`: the
    control's parameter, redrawn too where `redraw` (the other half of a slider and box pair shows its value);
    `also`: parameters whose widgets `then` rewrote."""
    layer: str
    shape: tuple
    param: str | None = None
    then: Callable[..., None] | None = None
    args: tuple = ()
    also: tuple = ()
    redraw: bool = False

    def redrawing(self) -> "Changed":
        return replace(self, redraw=True)

    def __call__(self) -> None:
        if self.then is not None:
            self.then(*self.args)
        if st.context.url is None:  # a headless run (Streamlit's AppTest) keeps nothing: the whole page reruns
            return
        layer, page = get_layer(self.layer), PageState(self.layer)
        try:
            plan, before = controls_plan(layer, self.shape), page.get("controls_plan") or {}
        except Exception:  # a bug: the whole page reruns (and its own guards say what broke), no traceback here
            st.rerun()
        page.set("controls_plan", plan)
        redraw = {*self.also, *([self.param] if self.redraw else [])}
        st.rerun([*(fragment_key(n) for n in layer.param_names if n in redraw or plan[n] != before.get(n)),
                  STAGE_FRAGMENT])


# -- input ------------------------------------------------------------------------------------
@dataclass
class InputForm:
    x: np.ndarray | None
    error: InputError | None
    shape: tuple
    slots: dict  # "kind" | "shape" | "values" | "image" -> placeholder for an error there

    def slot_for(self, param: str):
        """The placeholder for an error about `param` (an InputError's or ValidationError's)."""
        return self.slots[INPUT_SLOTS.get(param, "shape")] if param in INPUT_SLOTS or param.startswith("input") else None


@st.cache_data(max_entries=8, show_spinner=False)
def _image_tensor(data: bytes, shape: tuple) -> np.ndarray:
    return make_input("image", shape, image=data)  # decoding and resizing is the slow part


def input_controls(layer: Layer) -> InputForm:
    k = lambda name: input_key(layer.name, name)  # noqa: E731
    slots = {}
    kind = st.selectbox("pattern", KINDS, key=k("kind"), **STATE)
    st.caption(KIND_LABELS.get(kind, ""))
    slots["kind"] = st.empty()
    rank = len(layer.example_shape)
    if 5 in layer.ranks and 4 in layer.ranks:
        rank = 5 if st.toggle("3-D input (N, C, D, H, W)", value=rank == 5, key=k("3d"), **STATE) else 4
    default = default_dims(layer.example_shape)
    dims = DIM_NAMES[rank]
    values = {}
    for row in (dims[:-2], dims[-2:]):  # batch and channels (and depth), then the plane
        for col, d in zip(st.columns(len(row)), row):
            lo, hi = LIMITS[d]
            with col:
                values[d] = int(st.number_input(d, lo, hi, int(default[d]), 1, key=k(d), **STATE))
    shape = tuple(values[d] for d in dims)
    slots["shape"] = st.empty()
    opts: dict = {}
    if kind in ("ramp", "random", "checkerboard"):
        lo_col, hi_col = st.columns(2)
        with lo_col:
            opts["low"] = st.number_input("low", value=-4.0, step=0.5, key=k("low"), format="%g", **STATE)
        with hi_col:
            opts["high"] = st.number_input("high", value=4.0, step=0.5, key=k("high"), format="%g", **STATE)
    if kind == "random":
        opts["seed"] = int(st.number_input("seed", 0, SEED_MAX, 0, 1, key=k("seed"), **STATE))
    if kind == "constant":
        opts["value"] = st.number_input("value", value=1.0, step=0.5, key=k("value"), format="%g", **STATE)
    slots["values"] = st.empty()
    upload = None
    if kind == "image":
        upload = st.file_uploader("image (resized to H × W; C = 1 grey, 3 RGB)", type=["png", "jpg", "jpeg"],
                                  key=k("image"), max_upload_size=LIMITS["upload_bytes"] // 10**6)
    slots["image"] = st.empty()
    try:
        if kind == "image" and upload is not None:
            x = _image_tensor(upload.getvalue(), shape)
        else:
            x = make_input(kind, shape, spec_fn=layer.example_input, **opts)
        return InputForm(x, None, shape, slots)
    except InputError as exc:
        return InputForm(None, exc, shape, slots)


@functools.lru_cache(maxsize=None)
def shared_scale_default(layer_name: str) -> bool:
    """One colour scale for input and output where the spec example's output stays within 10× of the
    input's magnitude (elementwise layers); else (convolution: 9 in, 97831 out) one per heatmap, or
    the input would be drawn in a single colour."""
    layer = get_layer(layer_name)
    x = layer.example_input(layer.example_shape)
    with np.errstate(all="ignore"):
        y = layer.reference(x, layer.defaults())
    size = lambda a: float(np.abs(a[np.isfinite(a)]).max(initial=0.0))  # noqa: E731
    lo, hi = sorted((size(x), size(y)))
    return hi <= 10 * max(lo, 1e-12)


def instrument_default() -> bool:
    """The instrument stage unless PLAYGROUND_STAGE=streamlit (the Streamlit stage, kept for this release: its own
    test suites run on it); a link's view.instrument=true|false decides for its page."""
    return os.environ.get("PLAYGROUND_STAGE", "instrument").strip().lower() != "streamlit"


def view_controls(layer: Layer) -> ViewOptions:
    shared = st.toggle("One colour scale for input and output", value=shared_scale_default(layer.name),
                       key=key(layer.name, VIEW_SHARED_SCALE), help="Off: every heatmap gets its own colour scale.",
                       **STATE)
    presenter = st.toggle("Presenter mode", value=False, key=VIEW_PRESENTER,
                          help="Large type, bigger cells and strong colours for a projector.", **STATE)
    instrument = st.toggle("Instrument stage", value=instrument_default(), key=VIEW_INSTRUMENT,
                           help="The stage as one component: a change is answered by the server without a page run, "
                                "and a dragged slider's output follows the hand. Off: the Streamlit stage (a script "
                                "run per change), kept for this release.", **STATE)
    return ViewOptions.of(shared, presenter, instrument)
