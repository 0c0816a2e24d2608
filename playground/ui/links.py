"""Shareable links: what a URL may ask of a layer page, checked before any widget exists.

Every widget that holds state is bound to the URL (widgets.STATE, bind="query-params"): the query
parameter is the widget key (state.py), e.g. `?convolution.stride_nd.h=2&view.presenter=true`,
and Streamlit seeds the widget from it when the page first draws it. Streamlit itself drops what a
widget cannot hold (`?convolution.num_groups=abc`); what it would accept but the layer refuses
(`?convolution.num_groups=2` with C = 1, `?prelu.slopes=1,2`, `?convolution.input.H=100000`,
`?activation.alpha=1e999`) is checked here, with the layer's own rules, before the widgets are
drawn: each such parameter is removed from the URL (its widget then starts at its default) and
the page says "URL parameter NAME: rule — replaced by the default.".

Two query parameters are not widgets:
    preset=NAME     apply the spec example NAME (presets.PRESETS) once, as if chosen on the page;
                    the next run writes its values into the URL and drops `preset`
    hide=a,b,...    hide these controls (hide_names: parameter names, input, view, ...);
                    unknown names are ignored
"""
from __future__ import annotations

import math
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import streamlit as st

from .. import presets
from ..errors import ValidationError
from ..inputs import DIM_NAMES, KINDS, LIMITS, SEED_MAX, default_dims
from ..layer import Layer
from ..numbers import exact
from .state import SPEC_TAB, PageState, open_tab
from .keys import (COMPARE, COMPARE_OFF, VIEW_INSTRUMENT, VIEW_PRESENTER, VIEW_SHARED_SCALE, control_key, input_key,
                   key, key_selector)

PRESET_PARAM, HIDE_PARAM = "preset", "hide"
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# Things `hide` can name besides the layer's parameters: container name -> what it is.
PAGE_PARTS = {"input": "the Input tab", "parameters": "the parameters beside the figures", "view": "the View tab",
              "sidebar": "the whole sidebar", "link": "the link box", "preset": "the Spec example picker",
              "title": "the title and summary", "compare": "the compare-with control",
              "formula": "the formula box", "spec": "the spec comparison", "downloads": "the download buttons",
              "explanation": "the layer's explanation", "engine": "the engine panel"}
TABS = ("input", "view")  # the sidebar's tabs, in order


# -- the URL-bound fields of a page -------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    kind: str  # bool | int | float | choice | text: what the widget holds
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    param: str | None = None  # the layer parameter it feeds; None for input and view controls


def fields(layer: Layer) -> dict[str, Field]:
    """Every URL-bound widget key of a layer page, in drawing order (input, parameters, view); a parameter's
    come from its kind (widgets.KIND_TABLE)."""
    from .widgets import kind_of

    k = lambda name: input_key(layer.name, name)  # noqa: E731
    out = {k("kind"): Field("choice", choices=KINDS)}
    if 4 in layer.ranks and 5 in layer.ranks:
        out[k("3d")] = Field("bool")
    for d in DIM_NAMES[max(layer.ranks)]:
        out[k(d)] = Field("int", *LIMITS[d])
    for name in ("low", "high", "value"):
        out[k(name)] = Field("float")
    out[k("seed")] = Field("int", 0, SEED_MAX)
    for p in layer.params:
        out.update(kind_of(p).fields(p, key(layer.name, p.name)))
    out[key(layer.name, COMPARE)] = Field("choice", choices=(COMPARE_OFF, *layer.param("precision").choices))
    out[key(layer.name, VIEW_SHARED_SCALE)] = Field("bool")
    out[VIEW_PRESENTER] = Field("bool")
    out[VIEW_INSTRUMENT] = Field("bool")
    return out


def parse(f: Field, text: str) -> Any:
    """The value a widget would hold for this URL text, or ValueError(the rule it breaks)."""
    t = text.strip()
    if f.kind == "bool":  # Streamlit's own spelling for toggles and checkboxes
        if t.lower() in ("true", "false"):
            return t.lower() == "true"
        raise ValueError("must be true or false")
    if f.kind == "choice":
        if text in f.choices:
            return text
        raise ValueError("must be one of " + ", ".join(f.choices))
    if f.kind == "text":
        return text
    if f.kind == "int":
        try:
            v: float = int(t)
        except ValueError:  # 1e3 and 1e400 are whole numbers too: the range check below names the rule
            try:
                v = float(t)
            except ValueError:
                raise ValueError("must be a whole number") from None
            if not (v.is_integer() or (math.isinf(v) and "inf" not in t.lower())):
                raise ValueError("must be a whole number") from None
    else:
        try:
            v = float(t)
        except ValueError:
            raise ValueError("must be a number") from None
        if not math.isfinite(v) or abs(v) > _FLOAT32_MAX:
            raise ValueError("must be a finite float32 number")
    if (f.low is not None and v < f.low) or (f.high is not None and v > f.high):
        raise ValueError(f"must be between {exact(f.low)} and {exact(f.high)}")
    if f.kind == "int":
        if math.isinf(v):
            raise ValueError("must be a finite whole number")
        return int(v)
    return v


# -- checking a link ------------------------------------------------------------------------------
def quoted(text: str, limit: int = 40) -> str:
    """The offending value for a message: one line, short, inside a code span (never markup)."""
    t = " ".join(str(text).replace("`", "'").split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def message(name: str, rule: str, value: str | None = None) -> str:
    got = f' (got "{quoted(value)}")' if value not in (None, "") else ""
    return f"URL parameter {name}: {rule}{got} — replaced by the default."


def _safe_default(p, canon: dict, shape: tuple):
    try:
        return p.default_for(canon, shape)
    except Exception:  # a default that needs a parameter that is broken right now
        return None


def widget_value(layer: Layer, p, canon: dict, shape: tuple, get: Callable[[str, Any], Any]) -> Any:
    """What param_widget would return for p, reading each widget's value through get(key, default)."""
    from .widgets import kind_of

    return kind_of(p).read(p, key(layer.name, p.name), _safe_default(p, canon, shape), shape, get)


class _Check:
    """One pass over a page's URL values: per-field parsing, then the input shape and the layer's
    rules in drawing order; every URL value that breaks one is dropped and reported."""

    def __init__(self, layer: Layer, raw: dict[str, str]):
        self.layer, self.fields = layer, fields(layer)
        self.raw = raw  # key -> URL text, only keys of this page
        self.url: dict[str, Any] = {}  # key -> parsed value still in force
        self.dropped: dict[str, str] = {}  # key -> message
        for k, text in raw.items():
            try:
                self.url[k] = parse(self.fields[k], text)
            except ValueError as exc:
                self.drop(k, str(exc))

    def drop(self, k: str, rule: str) -> None:
        self.url.pop(k, None)
        self.dropped[k] = message(k, rule, self.raw.get(k))

    def get(self, k: str, default: Any) -> Any:
        return self.url[k] if k in self.url else st.session_state.get(k, default)

    def drop_param(self, param: str, rule: str) -> bool:
        """Drop the URL values that set `param`; False when none did (the value came from the session)."""
        blamed = self.keys_of(param)
        for k in blamed:
            self.drop(k, rule)
        return bool(blamed)

    def keys_of(self, param: str) -> list[str]:
        return [k for k in self.url if self.fields[k].param == param]

    def shape(self) -> tuple:
        layer, k = self.layer, lambda name: input_key(self.layer.name, name)  # noqa: E731
        default, rank = default_dims(layer.example_shape), len(layer.example_shape)
        if k("3d") in self.fields:
            rank = 5 if self.get(k("3d"), rank == 5) else 4
        return tuple(int(self.get(k(d), default[d])) for d in DIM_NAMES[rank])

    def run(self) -> None:
        k = lambda name: input_key(self.layer.name, name)  # noqa: E731
        if self.url.get(k("kind")) == "image":
            self.drop(k("kind"), "an uploaded image cannot travel in a link; upload it again")
        for _ in range(len(self.url) + 1):  # each round drops at least one value, or ends
            if not self._round():
                return

    def _round(self) -> bool:
        """Validate once; drop the URL values to blame for the first failure. False: nothing to drop."""
        layer, shape = self.layer, self.shape()
        raw, canon = {}, {}
        for p in layer.params:
            value = widget_value(layer, p, canon, shape, self.get)
            try:
                canon[p.name] = p.coerce(value, layer.name, canon, shape)
            except ValidationError as exc:
                if self.drop_param(p.name, exc.rule):
                    return True
                try:  # a value held by the session, not the URL: the page reports it as usual
                    canon[p.name] = p.coerce(_safe_default(p, canon, shape), layer.name, canon, shape)
                except Exception:
                    canon[p.name] = None
            if p.is_used(canon):
                raw[p.name] = value
        try:
            layer.resolve(raw, shape)
        except ValidationError as exc:
            if self.drop_param(exc.param, exc.rule):
                return True
            if self.url:  # a URL value made another setting invalid: drop the last one given
                last = list(self.url)[-1]
                self.drop(last, f"makes {layer.name}.{exc.param} invalid ({exc.rule})")
                return True
        except Exception:
            return False
        return False


def check_url(layer: Layer) -> None:
    """The first time a page runs in a session, drop the URL values its layer would refuse, say so,
    and run again (a widget takes its URL value when first drawn, whatever the session state says)."""
    page = PageState(layer.name)
    if page.get("url_checked"):
        return
    if _modernise(layer):
        st.rerun()  # the widgets take the new spelling's values when first drawn
    page_fields = fields(layer)
    given = {k: st.query_params[k] for k in st.query_params if k in page_fields}
    check = _Check(layer, given)
    check.run()
    removed = False
    for k in check.dropped:
        try:
            del st.query_params[k]
            removed = True
        except Exception:  # bound already (not a fresh page): the widget's own error shows instead
            pass
    if check.dropped:
        page.setdefault("url_problems", []).extend(check.dropped.values())
        page.pop("url_problems_seen")  # shown afresh
    if removed:
        st.rerun()
    page.set("url_checked", True)


def _modernise(layer: Layer) -> bool:
    """Old links keep working: a parameter's old spelling (convolution.int8=true) becomes what it stands for
    (convolution.precision=INT8) in the address, unless the link also gives the new one. True if it did."""
    changed = False
    for name, translate in layer.legacy.items():
        old = key(layer.name, name)
        if old not in st.query_params:
            continue
        try:
            new = translate(st.query_params[old])
        except ValueError as exc:
            PageState(layer.name).setdefault("url_problems", []).append(
                f"URL parameter {old}: {exc} (got \"{quoted(st.query_params[old])}\") — ignored.")
            new = {}
        for param, value in new.items():
            if key(layer.name, param) not in st.query_params:
                st.query_params[key(layer.name, param)] = layer.param(param).to_text(value)
        del st.query_params[old]
        changed = True
    return changed


def take_problems(layer: Layer) -> list[str]:
    """The link problems found for this page, shown until one of its controls changes: runs that change
    nothing (the window-size probe's first report, say) keep them on screen."""
    page = PageState(layer.name)
    problems = page.get("url_problems")
    if not problems:
        return []
    controls = {k: repr(v) for k, v in st.session_state.items() if isinstance(k, str) and k.startswith(layer.name + ".")}
    seen = page.setdefault("url_problems_seen", {})
    if any(k in controls and controls[k] != v for k, v in seen.items()):  # a control drawn before has changed
        page.pop("url_problems"), page.pop("url_problems_seen")
        return []
    seen.update(controls)  # controls drawn since the problems were found count from now on
    return problems


# -- ?preset=NAME -----------------------------------------------------------------------------------
def apply_preset(layer: Layer, preset: presets.Preset) -> None:
    """Set every control of the page to a spec example (before its widgets are drawn, or in a callback)."""
    from .widgets import write_config

    write_config(layer, preset.params, preset.input)
    PageState(layer.name).set("preset_chosen", preset.name)
    open_tab(layer.name, SPEC_TAB)  # where its verdict and note are seen


def preset_from_url(layer: Layer) -> presets.Preset | None:
    """Apply ?preset=NAME once. Values written before a widget's first drawing do not reach the URL, so
    `preset` stays in it (the link still reproduces the page) until the next run, which writes every
    control again (now they do) and removes it. Returns the preset applied by this call, if any."""
    name = st.query_params.get(PRESET_PARAM)
    page = PageState(layer.name)
    seen = page.get("url_preset")
    if name is None:
        page.pop("url_preset")
        return None
    if seen and seen["name"] == name:
        if seen["drawn"]:
            resync(layer)
            _drop_param(PRESET_PARAM)
            page.pop("url_preset")
        return None
    page.set("url_preset", {"name": name, "drawn": False})
    try:
        preset = presets.find(layer.name, name)
    except KeyError:
        names = ", ".join(p.name for p in presets.examples(layer.name)) or "none"
        page.setdefault("url_problems", []).append(
            f"URL parameter preset: {layer.name} has no spec example \"{quoted(name)}\" (it has: {names}) — ignored.")
        page.pop("url_problems_seen")
        _drop_param(PRESET_PARAM)
        return None
    apply_preset(layer, preset)
    return preset


def preset_pending(layer: Layer) -> bool:
    """A ?preset= link's page has been drawn and the next full run is to write its values into the URL."""
    seen = PageState(layer.name).get("url_preset")
    return bool(seen and seen["drawn"] and PRESET_PARAM in st.query_params)


def page_drawn(layer: Layer) -> None:
    """End of a completed page run: the widgets a URL preset set are now drawn."""
    page = PageState(layer.name)
    seen = page.get("url_preset")
    if seen and not seen["drawn"]:
        page.set("url_preset", {**seen, "drawn": True})


def resync(layer: Layer) -> None:
    """Write every URL-bound control of the page again, so Streamlit puts the non-default ones in the URL."""
    ss = st.session_state
    for k in fields(layer):
        if k in ss:
            ss[k] = ss[k]


def _drop_param(name: str) -> None:
    try:
        del st.query_params[name]
    except Exception:
        pass


# -- the link -------------------------------------------------------------------------------------
def share_link() -> str:
    """This page's URL with its current query string (what a colleague opens to see the same)."""
    base = st.context.url or ""
    query = urllib.parse.urlencode(list(st.query_params.to_dict().items()), safe=",")
    return base + (f"?{query}" if query else "")


# -- ?hide=a,b --------------------------------------------------------------------------------------
def hide_names(layer: Layer) -> tuple[str, ...]:
    """What `hide` can name on this page: its parameters, then the page's parts."""
    return (*layer.param_names, *PAGE_PARTS)


_HIDE = "_hide"  # plain session state: the names `hide` listed, kept across page changes


def hidden(layer: Layer) -> list[str]:
    """The known names the URL's `hide` lists (comma-separated, repeated or not); unknown ones are ignored. The
    list holds for the session: a page opened from the navigation (whose URL has no `hide`) gets it back in its
    URL, so its share link hides the same."""
    given = [n.strip().lower() for v in st.query_params.get_all(HIDE_PARAM) for n in v.split(",") if n.strip()]
    if given:
        st.session_state[_HIDE] = list(dict.fromkeys(given))
    elif st.session_state.get(_HIDE):
        st.query_params[HIDE_PARAM] = ",".join(st.session_state[_HIDE])
    known = hide_names(layer)
    return [n for n in st.session_state.get(_HIDE, []) if n in known]


def show_all() -> None:
    """Forget `hide` (the View tab's button)."""
    st.session_state.pop(_HIDE, None)
    _drop_param(HIDE_PARAM)


def hide_css(layer: Layer, names: list[str]) -> str:
    """CSS that hides the named controls (names from hidden(): known names only, so nothing else reaches
    the style sheet)."""
    rules = [key_selector(control_key(layer.name, n)) for n in names if n != "sidebar"]
    tab = '[data-testid="stSidebar"] [data-testid="stTab"][data-key="{}"]'  # the tab's button, by position
    rules += [tab.format(TABS.index(n)) for n in names if n in TABS]
    if "sidebar" in names:
        rules += ['[data-testid="stSidebar"]', '[data-testid="stSidebarCollapsedControl"]',
                  '[data-testid="stExpandSidebarButton"]']
    return ("<style>" + ", ".join(rules) + " { display: none !important; }</style>") if rules else ""

