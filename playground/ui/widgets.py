"""The sidebar's widgets: the input controls (pattern, shape, values, an uploaded image) and the view toggles. The
parameters' controls are the stage's (playground.stage); keys: see keys.py."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import streamlit as st
from streamlit.errors import StreamlitAPIException

from ..base.inputs import DIM_NAMES, KIND_OPTIONS, KINDS, LIMITS, SEED_MAX, InputError, default_dims, make_input
from ..base.layer import Layer
from ..serve.protocol import VIEW_PRESENTER, input_key
from . import links
from .view import ViewOptions

PERSIST = "session"  # a value survives page switches and being hidden
BIND = "query-params"  # the value is in the page URL under the widget key: links reproduce the state
STATE = dict(persist_state=PERSIST, bind=BIND)  # every widget that holds state of its own gets these
INPUT_DEFAULTS = {"low": -4.0, "high": 4.0, "value": 1.0, "seed": 0}  # the value controls' own defaults
# The pattern selectbox shows the plain names (the URL holds what a selectbox shows); these describe them.
KIND_LABELS = {
    "spec": "the spec example's pattern, for any shape (the convolution's: each channel its own phase)",
    "spec_repeat": "the spec example's pattern, channel 0's in every channel (as the spec's examples)",
    "ramp": "evenly spaced from low to high",
    "random": "uniform between low and high, seeded",
    "checkerboard": "high and low alternating",
    "constant": "every value the same",
    "image": "an uploaded PNG/JPEG, resized to H × W (C = 1 grey, 3 RGB); not carried by links",
}


def write_input(layer: Layer, input: dict | None = None) -> None:
    """Set a layer page's input controls (an example's input, a model node's) before they are drawn: make_input's
    keywords (kind, shape, low, high, seed, value), or {input name: those} for a layer of several inputs. A bound
    widget's value reaches the URL only once it is drawn, so before that the URL is written here (the keys that
    differ from the controls' defaults): a link copied at once reopens the same input."""
    input = input or {}
    if layer.several and "shape" in input:  # one input's keywords (a model node's data input): the first's
        input = {layer.input_names[0]: input}
    for name in layer.input_names:
        if layer.several and name not in input:
            continue  # an input not named keeps its controls
        _write_one(layer, name, input.get(name, {}) if layer.several else input)


def _write_one(layer: Layer, name: str, input: dict) -> None:
    example = layer.input_shape(name)
    shape = tuple(input.get("shape") or example)
    dims = default_dims(example)
    values = {"kind": (input.get("kind", "spec"), "spec")}
    if 4 in layer.ranks and 5 in layer.ranks:
        values["3d"] = (len(shape) == 5, len(example) == 5)
    for d, v in zip(DIM_NAMES[len(shape)], shape):
        values[d] = (int(v), int(dims[d]))
    for field, default in INPUT_DEFAULTS.items():
        values[field] = (type(default)(input.get(field, default)), default)
    for field, (value, default) in values.items():
        k = input_key(layer, name, field)
        st.session_state[k] = value
        try:
            if value == default:
                st.query_params.pop(k, None)
            else:
                st.query_params[k] = (
                    str(value).lower()
                    if isinstance(value, bool)
                    else f"{value:g}"
                    if isinstance(value, float)
                    else str(value)
                )
        except StreamlitAPIException:  # drawn already (a pick on the stage): the widget writes its URL itself
            pass


# -- input ------------------------------------------------------------------------------------
@dataclass
class InputForm:
    # The input (the feed dict {name: array} for a layer of several); where the input controls ask for an input
    # that cannot be made (error says why): the last good one, or None.
    x: np.ndarray | dict | None
    error: InputError | None
    shape: tuple  # the (first) input's


@st.cache_data(max_entries=8, show_spinner=False)
def _image_tensor(data: bytes, shape: tuple) -> np.ndarray:
    return make_input("image", shape, image=data)  # decoding and resizing is the slow part


def input_controls(layer: Layer, ui=st) -> InputForm:
    """The input's controls; for a layer of several inputs, one group per input under its name. `ui`: Streamlit,
    or `Unseen(layer)`: the same input, its controls not drawn."""
    if not layer.several:
        return _one_input(layer, layer.input_names[0], ui)
    forms = {}
    for i in layer.inputs:
        ui.markdown(f"**Input {i.name.upper()}**" + (f" · {i.help}" if i.help else ""))
        forms[i.name] = _one_input(layer, i.name, ui)
    bad = next((f for f in forms.values() if f.error is not None), None)
    first = forms[layer.input_names[0]]
    feed = {n: f.x for n, f in forms.items()}
    if any(a is None for a in feed.values()):
        feed = None
    return InputForm(feed, bad.error if bad else None, first.shape)


def _one_input(layer: Layer, name: str, ui=st) -> InputForm:
    k = lambda field: input_key(layer, name, field)  # noqa: E731
    kind = ui.selectbox("pattern", KINDS, key=k("kind"), **STATE)
    ui.caption(KIND_LABELS.get(kind, ""))
    example = layer.input_shape(name)
    rank = len(example)
    if 5 in layer.ranks and 4 in layer.ranks:
        rank = 5 if ui.toggle("3-D input (N, C, D, H, W)", value=rank == 5, key=k("3d"), **STATE) else 4
    default = default_dims(example)
    dims = DIM_NAMES[rank]
    values = {}
    for row in (dims[:-2], dims[-2:]):  # batch and channels (and depth), then the plane
        for col, d in zip(ui.columns(len(row)), row):
            lo, hi = LIMITS[d]
            with col:
                values[d] = int(ui.number_input(d, lo, hi, int(default[d]), 1, key=k(d), **STATE))
    shape = tuple(values[d] for d in dims)
    opts: dict = {}
    options = KIND_OPTIONS.get(kind, ())
    if "low" in options:
        lo_col, hi_col = ui.columns(2)
        with lo_col:
            opts["low"] = ui.number_input(
                "low", value=INPUT_DEFAULTS["low"], step=0.5, key=k("low"), format="%g", **STATE
            )
        with hi_col:
            opts["high"] = ui.number_input(
                "high", value=INPUT_DEFAULTS["high"], step=0.5, key=k("high"), format="%g", **STATE
            )
    if "seed" in options:
        opts["seed"] = int(ui.number_input("seed", 0, SEED_MAX, INPUT_DEFAULTS["seed"], 1, key=k("seed"), **STATE))
    if "value" in options:
        opts["value"] = ui.number_input(
            "value", value=INPUT_DEFAULTS["value"], step=0.5, key=k("value"), format="%g", **STATE
        )
    upload = None
    if kind == "image":
        upload = ui.file_uploader(
            "image (resized to H × W; C = 1 grey, 3 RGB)",
            type=["png", "jpg", "jpeg"],
            key=k("image"),
            max_upload_size=LIMITS["upload_bytes"] // 10**6,
        )
    try:
        if kind == "image" and upload is not None:
            x = _image_tensor(upload.getvalue(), shape)
        else:
            x = make_input(kind, shape, spec_fn=lambda s: layer.example_of(name, s), **opts)
    except InputError as exc:  # the last good input stays (and the stage's figures of it): the error says why
        if layer.several:  # name the input whose control it is
            exc = InputError(f"input {name.upper()}: {exc.param}", exc.rule)
        return InputForm(st.session_state.get(_last_good_key(layer, name)), exc, shape)
    st.session_state[_last_good_key(layer, name)] = x
    return InputForm(x, None, shape)


def _last_good_key(layer: Layer, name: str) -> str:
    return f"_last_good_input.{layer.name}.{name}"


def view_controls(ui=st) -> ViewOptions:
    presenter = ui.toggle(
        "Presenter mode",
        value=False,
        key=VIEW_PRESENTER,
        help="Large type, bigger cells and strong colours for a projector.",
        **STATE,
    )
    return ViewOptions.of(presenter)


class Unseen:
    """The input and view controls' values without drawing them, for `input_controls` and `view_controls` in place
    of Streamlit: what each bound widget takes when first drawn (its URL value as `links.parse` reads it, else the
    session state an example wrote, else its default). A layer page's first run draws the stage alone; the sidebar,
    collapsed, follows the stage's first paint (its widgets cost the browser more than the stage), with these
    values."""

    def __init__(self, layer: Layer):
        self.fields = links.fields(layer)

    def value(self, key: str, default):
        text = st.query_params.get(key)
        if text is not None and key in self.fields:
            with contextlib.suppress(ValueError):  # a value the link check let stand is read the same way
                return links.parse(self.fields[key], text)
        return st.session_state.get(key, default)

    def selectbox(self, label, options, index=0, *, key, **_):
        return self.value(key, options[index])

    def toggle(self, label, value=False, *, key, **_):
        return self.value(key, value)

    def number_input(self, label, min_value=None, max_value=None, value=None, step=None, *, key, **_):
        return self.value(key, value)

    def file_uploader(self, *_, **__):
        return None  # an upload is in no link: an image input waits for its control

    def columns(self, spec, **_):
        return [contextlib.nullcontext() for _ in range(spec if isinstance(spec, int) else len(spec))]

    def caption(self, *_, **__):
        pass

    markdown = caption
