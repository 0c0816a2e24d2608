"""Shareable links: what a URL may ask of a layer page, checked when the page opens.

A link holds the stage's configuration in the URL's spelling (stage.protocol.query_keys: `LAYER.PARAM`, per
axis `LAYER.PARAM.AXIS`, `LAYER.compare`), the input controls (bound to the URL: their widget keys,
`LAYER.input.NAME`) and presenter mode (`view.presenter`). What the layer refuses (`?convolution.num_groups=2`
with C = 1, `?prelu.slopes=1,2`, `?convolution.input.H=100000`, `?activation.alpha=1e999`) is checked here, with
the layer's own rules, before the page is drawn: each such value is removed from the URL (the page then uses its
default) and the page says "URL parameter NAME: rule — replaced by the default.".
For a layer of several inputs the input controls' keys name the input too: `LAYER.input.INPUT.NAME`.

Two query parameters are neither:
    preset=NAME     open the example NAME (presets.PRESETS): its input and parameters are written into the URL
                    and `preset` goes (ui.page)
    hide=a,b,...    hide these controls (hide_names: parameter names, input, view, ...);
                    unknown names are ignored
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from ..errors import ValidationError
from ..inputs import DIM_NAMES, KINDS, LIMITS, SEED_MAX, default_dims
from ..layer import Layer
from ..numbers import exact
from ..stage import protocol
from ..stage.protocol import HIDE, VIEW_CELL, VIEW_PRESENTER, compare_key, input_key, key
from .keys import COMPARE_OFF, VIEW_CELL_RANGE, control_key, key_selector
from .state import PageState

_FLOAT32_MAX = float(np.finfo(np.float32).max)
# Things `hide` can name besides the layer's parameters: container name -> what it is.
PAGE_PARTS = {
    "input": "the Input tab",
    "parameters": "the parameters beside the figures",
    "view": "the View tab",
    "sidebar": "the whole sidebar",
    "link": "the link box",
    "preset": "the example picker",
    "title": "the title and summary",
    "compare": "the compare-with control",
    "formula": "the formula box",
    "spec": "the spec comparison",
    "downloads": "the download buttons",
    "explanation": "the layer's explanation",
    "engine": "the engine panel",
}
TABS = ("input", "view")  # the sidebar's tabs, in order


# -- the URL-bound fields of a page -------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    kind: str  # a parameter kind's name (params.KINDS: bool, int, float, enum): what the widget holds, in Streamlit's
    # own spellings (a toggle's URL text is true or false, a selectbox's its option as shown)
    low: float | None = None
    high: float | None = None
    choices: tuple = ()


def fields(layer: Layer) -> dict[str, Field]:
    """Every URL-bound widget key of a layer page besides the stage's parameters (param_keys): the input controls,
    compare mode and presenter mode."""
    out = {}
    for i in layer.input_names:  # LAYER.input.FIELD for one input; LAYER.input.NAME.FIELD for each of several
        k = lambda field: input_key(layer, i, field)  # noqa: E731
        out[k("kind")] = Field("enum", choices=KINDS)
        if 4 in layer.ranks and 5 in layer.ranks:
            out[k("3d")] = Field("bool")
        for d in DIM_NAMES[max(layer.ranks)]:
            out[k(d)] = Field("int", *LIMITS[d])
        for name in ("low", "high", "value"):
            out[k(name)] = Field("float")
        out[k("seed")] = Field("int", 0, SEED_MAX)
    out[compare_key(layer)] = Field("enum", choices=(COMPARE_OFF, *layer.param("precision").choices))
    out[VIEW_PRESENTER] = Field("bool")
    out[VIEW_CELL] = Field("int", *VIEW_CELL_RANGE)
    return out


def param_keys(layer: Layer) -> set[str]:
    """The query keys of the stage's parameters, for an input of any rank the layer takes."""
    return set().union(*(protocol.query_keys(layer, (1,) * rank) for rank in layer.ranks))


def parse(f: Field, text: str) -> Any:
    """The value a widget would hold for this URL text, or ValueError(the rule it breaks)."""
    return _PARSERS[f.kind](f, text.strip())


def _bool(f: Field, t: str) -> bool:  # Streamlit's own spelling for toggles and checkboxes
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    raise ValueError("must be true or false")


def _choice(f: Field, t: str) -> str:
    if t in f.choices:
        return t
    raise ValueError("must be one of " + ", ".join(f.choices))


def _int(f: Field, t: str) -> int:
    try:
        v: float = int(t)
    except ValueError:  # 1e3 and 1e400 are whole numbers too: the range check below names the rule
        try:
            v = float(t)
        except ValueError:
            raise ValueError("must be a whole number") from None
        if not (v.is_integer() or (math.isinf(v) and "inf" not in t.lower())):
            raise ValueError("must be a whole number") from None
    _in_range(f, v)
    if math.isinf(v):
        raise ValueError("must be a finite whole number")
    return int(v)


def _float(f: Field, t: str) -> float:
    try:
        v = float(t)
    except ValueError:
        raise ValueError("must be a number") from None
    if not math.isfinite(v) or abs(v) > _FLOAT32_MAX:
        raise ValueError("must be a finite float32 number")
    return _in_range(f, v)


def _in_range(f: Field, v: float) -> float:
    if (f.low is not None and v < f.low) or (f.high is not None and v > f.high):
        raise ValueError(f"must be between {exact(f.low)} and {exact(f.high)}")
    return v


_PARSERS = {"bool": _bool, "enum": _choice, "int": _int, "float": _float}


# -- checking a link ------------------------------------------------------------------------------
def quoted(text: str, limit: int = 40) -> str:
    """The offending value for a message: one line, short, inside a code span (never markup)."""
    t = " ".join(str(text).replace("`", "'").split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def message(name: str, rule: str, value: str | None = None) -> str:
    got = f' (got "{quoted(value)}")' if value not in (None, "") else ""
    return f"URL parameter {name}: {rule}{got} — replaced by the default."


class _Check:
    """One pass over a page's URL values: the input and view fields parsed one by one, then the parameters read as
    the stage reads them (stage.protocol) and checked by the layer's rules; every URL value that breaks one is
    dropped and reported."""

    def __init__(self, layer: Layer, raw: dict[str, str]):
        self.layer, self.fields = layer, fields(layer)
        self.raw = raw  # key -> URL text, only keys of this page
        self.url: dict[str, Any] = {}  # input and view key -> parsed value still in force
        self.params: dict[str, str] = {}  # parameter key -> URL text still in force
        self.dropped: dict[str, str] = {}  # key -> message
        for k, text in raw.items():
            if k not in self.fields:
                self.params[k] = text
                continue
            try:
                self.url[k] = parse(self.fields[k], text)
            except ValueError as exc:
                self.drop(k, str(exc))

    def drop(self, k: str, rule: str) -> None:
        self.url.pop(k, None)
        self.params.pop(k, None)
        self.dropped[k] = message(k, rule, self.raw.get(k))

    def get(self, k: str, default: Any) -> Any:
        return self.url[k] if k in self.url else st.session_state.get(k, default)

    def shape(self, name: str | None = None) -> tuple:
        """The (first) input's shape the link asks for."""
        layer = self.layer
        name = name or layer.input_names[0]
        k = lambda field: input_key(layer, name, field)  # noqa: E731
        default, rank = default_dims(layer.input_shape(name)), len(layer.input_shape(name))
        if k("3d") in self.fields:
            rank = 5 if self.get(k("3d"), rank == 5) else 4
        return tuple(int(self.get(k(d), default[d])) for d in DIM_NAMES[rank])

    def shapes(self):
        """What the layer's rules read: the input's shape, or {input name: shape} for a layer of several."""
        return {n: self.shape(n) for n in self.layer.input_names} if self.layer.several else self.shape()

    def run(self) -> None:
        for i in self.layer.input_names:
            k = input_key(self.layer, i, "kind")
            if self.url.get(k) == "image":
                self.drop(k, "an uploaded image cannot travel in a link; upload it again")
        for _ in range(len(self.raw) + 1):  # each round drops at least one value, or ends
            if not self._round():
                return

    def _round(self) -> bool:
        """Validate once; drop the URL values to blame for the first failure. False: nothing to drop."""
        layer, shape = self.layer, self.shape()
        try:
            layer.resolve(protocol.raw_params(layer, shape, self.params), self.shapes())
        except protocol.RequestError as exc:
            if exc.key in self.params:
                self.drop(exc.key, exc.rule)
                return True
            return False
        except ValidationError as exc:
            if layer.fitted(protocol.raw_params(layer, shape, self.params), self.shapes()) is not None:
                return False  # valid on the inputs the page brings along (Layer.fit): the page's evaluation does
            blamed = [k for k in protocol.problem(exc, layer, shape)["keys"] if k in self.params]
            for k in blamed:
                self.drop(k, exc.rule)
            if blamed:
                return True
            sizes = [
                k for k in self.url if k in {input_key(layer, n, d) for n in layer.input_names for d in DIM_NAMES[5]}
            ]
            if exc.param == "input" and sizes:  # the sizes given, together, make an input beyond the budget:
                for k in sizes:  # each is named (the input's defaults replace them all)
                    self.drop(k, f"with the other sizes given, makes {layer.name}.input invalid ({exc.rule})")
                return True
            given = list(self.params) or [k for k in self.url if k.startswith(input_key(layer, "", ""))]
            if given:  # a value given made another setting invalid (an input size, a later default): drop the last
                self.drop(given[-1], f"makes {layer.name}.{exc.param} invalid ({exc.rule})")
                return True
        except Exception:  # noqa: BLE001 - the page itself reports what it cannot draw
            return False
        return False


def check_url(layer: Layer) -> None:
    """The first time a page runs in a session, drop the URL values its layer would refuse, say so,
    and run again (a widget takes its URL value when first drawn, whatever the session state says)."""
    page = PageState(layer.name)
    if page.get("url_checked"):
        return
    if _modernise(layer):
        st.rerun()  # the page reads the new spelling's values
    known = fields(layer).keys() | param_keys(layer)
    given = {k: st.query_params[k] for k in st.query_params if k in known}
    check = _Check(layer, given)
    check.run()
    removed = False
    for k in check.dropped:
        try:
            del st.query_params[k]
            removed = True
        except Exception:  # noqa: BLE001 - bound already (not a fresh page): the widget's own error shows instead
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
        old = key(layer, name)
        if old not in st.query_params:
            continue
        try:
            new = translate(st.query_params[old])
        except ValueError as exc:
            PageState(layer.name).setdefault("url_problems", []).append(
                f'URL parameter {old}: {exc} (got "{quoted(st.query_params[old])}") — ignored.'
            )
            new = {}
        for param, value in new.items():
            if key(layer, param) not in st.query_params:
                st.query_params[key(layer, param)] = layer.param(param).to_text(value)
        del st.query_params[old]
        changed = True
    return changed


def take_problems(layer: Layer) -> list[str]:
    """The link problems found for this page, shown until one of its controls changes: runs that change
    nothing (the stage's settle, say) keep them on screen."""
    page = PageState(layer.name)
    problems = page.get("url_problems")
    if not problems:
        return []
    controls = {
        k: repr(v) for k, v in st.session_state.items() if isinstance(k, str) and k.startswith(layer.name + ".")
    }
    seen = page.setdefault("url_problems_seen", {})
    if any(k in controls and controls[k] != v for k, v in seen.items()):  # a control drawn before has changed
        page.pop("url_problems"), page.pop("url_problems_seen")
        return []
    seen.update(controls)  # controls drawn since the problems were found count from now on
    return problems


# -- ?hide=a,b --------------------------------------------------------------------------------------
def hide_names(layer: Layer) -> tuple[str, ...]:
    """What `hide` can name on this page: its parameters, then the page's parts."""
    return (*layer.param_names, *PAGE_PARTS)


_HIDE = "_hide"  # plain session state: the names `hide` listed, kept across page changes


def hidden(layer: Layer) -> list[str]:
    """The known names the URL's `hide` lists (comma-separated, repeated or not); unknown ones are ignored. The
    list holds for the session: a page opened from the navigation (whose URL has no `hide`) gets it back in its
    URL, so its share link hides the same."""
    given = [n.strip().lower() for v in st.query_params.get_all(HIDE) for n in v.split(",") if n.strip()]
    if given:
        st.session_state[_HIDE] = list(dict.fromkeys(given))
    elif st.session_state.get(_HIDE):
        st.query_params[HIDE] = ",".join(st.session_state[_HIDE])
    known = hide_names(layer)
    return [n for n in st.session_state.get(_HIDE, []) if n in known]


def _drop_param(name: str) -> None:
    try:
        del st.query_params[name]
    except Exception:  # noqa: BLE001 - the key is bound already: nothing to remove
        pass


def show_all() -> None:
    """Forget `hide` (the View tab's button)."""
    st.session_state.pop(_HIDE, None)
    _drop_param(HIDE)


def hide_css(layer: Layer, names: list[str]) -> str:
    """CSS that hides the named controls (names from hidden(): known names only, so nothing else reaches
    the style sheet)."""
    rules = [key_selector(control_key(layer.name, n)) for n in names if n != "sidebar"]
    tab = '[data-testid="stSidebar"] [data-testid="stTab"][data-key="{}"]'  # the tab's button, by position
    rules += [tab.format(TABS.index(n)) for n in names if n in TABS]
    if "sidebar" in names:
        rules += [
            '[data-testid="stSidebar"]',
            '[data-testid="stSidebarCollapsedControl"]',
            '[data-testid="stExpandSidebarButton"]',
        ]
    return ("<style>" + ", ".join(rules) + " { display: none !important; }</style>") if rules else ""
