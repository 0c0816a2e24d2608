"""Shareable links: what a URL may ask of a layer page, checked when the page opens.

A link holds the stage's configuration in the URL's spelling (serve.protocol.query_keys: `LAYER.PARAM`, per
axis `LAYER.PARAM.AXIS`, `LAYER.compare`), the input controls (bound to the URL: their widget keys,
`LAYER.input.NAME`) and presenter mode (`view.presenter`). What the layer refuses (`?convolution.num_groups=2`
with C = 1, `?prelu.slopes=1,2`, `?convolution.input.H=100000`, `?activation.alpha=1e999`) is checked here, with
the layer's own rules, before the page is drawn: each such value is removed from the URL (the page then uses its
default) and the page says "URL parameter NAME: rule — replaced by the default." (values that break a budget
together: one line naming each). A key no part of the page reads (another layer's, a size of a rank the input lacks,
a value option its pattern does not read) is named too, "— not used.", and removed: the URL, which Copy link and the
QR code carry, holds only what the page shows. A per-axis parameter's whole spelling (`LAYER.PARAM=2,2`, the CLI's
and the chain's) becomes its axes' keys.
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

from ..base.errors import ValidationError
from ..base.inputs import DIM_NAMES, KIND_OPTIONS, KINDS, LIMITS, SEED_MAX, default_dims
from ..base.layer import Layer
from ..base.numbers import exact
from ..layers import LAYERS
from ..serve import protocol
from ..serve.protocol import HIDE, VIEW_CELL, VIEW_PRESENTER, compare_key, input_key, key
from .keys import COMPARE_OFF, MODEL, NODE, ONNX, REAL, VIEW_CELL_RANGE, control_key, key_selector
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


def message(name: str, rule: str, value: str | None = None, outcome: str = "replaced by the default") -> str:
    got = f' (got "{quoted(value)}")' if value not in (None, "") else ""
    return f"URL parameter {name}: {rule}{got} — {outcome}."


BUDGET = "the budget is "  # how budget.over_elements and over_work begin a rule
NAMED = 16  # stray keys of a link named one by one (the rest counted in one line)
PROBES = 8  # parameters of a link over a budget tried one by one for their part in it (each probe makes its kernel)


def together(names: list[str], raw: dict[str, str], rule: str) -> str:
    """Several URL values that each pass on their own and break a budget together: every one named."""
    given = ", ".join(f'{k} (got "{quoted(raw[k])}")' if raw.get(k) else k for k in names)
    return f"URL parameters {given}: these together break the budget of {rule.removeprefix(BUDGET)} — replaced by the defaults."


class _Check:
    """One pass over a page's URL values: the keys this page does not use named (another page's spelling, a size of
    a rank the input does not have, a value option of another pattern), a per-axis parameter's whole spelling
    (`LAYER.PARAM=2,2`, as the CLI and the chain write it) read as its axes' keys, the input and view fields parsed
    one by one, then the parameters read as the stage reads them (serve.protocol) and checked by the layer's rules;
    every URL value that breaks one is dropped and reported."""

    def __init__(
        self,
        layer: Layer,
        raw: dict[str, str],
        others: dict[str, str] | None = None,
        fixed: dict[str, tuple] | None = None,
    ):
        self.layer, self.fields, self.fixed = layer, fields(layer), fixed or {}
        self.raw = {**(others or {}), **raw}  # key -> URL text: this page's keys, and those no part of it reads
        self.url: dict[str, Any] = {}  # input and view key -> parsed value still in force
        self.params: dict[str, str] = {}  # parameter key -> URL text still in force
        self.dropped: dict[str, str] = {}  # key -> message (keys dropped together share one)
        self.written: dict[str, str] = {}  # key -> text the page writes for a key given in another spelling
        for k, text in raw.items():
            if k not in self.fields:
                self.params[k] = text
                continue
            try:
                self.url[k] = parse(self.fields[k], text)
            except ValueError as exc:
                self.drop(k, str(exc))
        strays = [k for k in others or {} if not self._other(k)]  # its name too is the link's text: cut short
        raw_of = self.raw.get
        for k in strays[:NAMED]:
            whose = k.split(".")[0]
            whose = f", but of the {whose} page" if whose in LAYERS and whose != layer.name else ""
            self.drop(k, "", "not used")
            self.dropped[k] = message(
                quoted(k), f"is not a setting of the {layer.name} page{whose}", raw_of(k), "not used"
            )
        if len(strays) > NAMED:  # a link of a thousand stray keys: the first named, the rest in one line
            rest = strays[NAMED:]
            more = f" and {len(rest) - 3} more" if len(rest) > 3 else ""
            listed = ", ".join(quoted(k, 24) for k in rest[:3])
            line = f"URL parameters {listed}{more}: not settings of the {layer.name} page — not used."
            for k in rest:
                self.drop(k, "")
                self.dropped[k] = line
        self._unused_inputs()

    def drop(self, k: str, rule: str, outcome: str = "replaced by the default") -> None:
        self.url.pop(k, None)
        self.params.pop(k, None)
        self.dropped[k] = message(k, rule, self.raw.get(k), outcome)

    def drop_together(self, keys: list[str], rule: str) -> None:
        text = together(keys, self.raw, rule) if len(keys) > 1 else message(keys[0], rule, self.raw.get(keys[0]))
        for k in keys:
            self.drop(k, rule)
            self.dropped[k] = text

    def _other(self, k: str) -> bool:
        """A key no part of the page reads: a per-axis parameter's whole spelling becomes its axes' keys (or is
        named, where it cannot); False for any other (a stray, named by the caller)."""
        layer, rank = self.layer, len(self.shape())
        p = next((p for p in layer.params if p.along_axes and k == protocol.key(layer, p)), None)
        if p is None:
            return False
        text, axes = self.raw[k].strip(), p.axis_names(rank)
        values = text.split(",") * (len(axes) if "," not in text else 1)  # one value is every axis's, as the CLI's
        parts = {protocol.key(layer, p, a): v.strip() for a, v in zip(axes, values)}
        if p.optional and text.lower() in ("", "none"):
            parts = {protocol.key(layer, p, "set"): "false"}
        elif len(values) != len(axes):
            rule = f"must be one whole number or {len(axes)}, one per axis {', '.join(axes)}, for a {rank}-D input"
            self.drop(k, rule, "not used")
            return True
        elif p.optional:
            parts[protocol.key(layer, p, "set")] = "true"
        if any(a in self.raw for a in parts):  # the page's own spelling, given too, is the one read
            self.drop(k, "the link gives its per-axis keys too, which are used", "not used")
            return True
        self.dropped[k] = ""  # leaves the URL, its axes' keys written in its place (nothing to say)
        self.params.update(parts)
        self.raw.update(parts)
        self.written.update(parts)
        return True

    def _unused_inputs(self) -> None:
        """An input's size along an axis its rank lacks (D of a 4-D input) and a value option its pattern does not
        read (the seed of a ramp): named, not used."""
        layer = self.layer
        for name in layer.input_names:
            k = lambda field: input_key(layer, name, field)  # noqa: E731
            dims = DIM_NAMES[len(self.shape(name))]
            for d in sorted(set(DIM_NAMES[5]) - set(dims)):
                if k(d) in self.url:
                    why = f" ({k('3d')} is not true)" if k("3d") in self.fields else ""
                    self.drop(k(d), f"this input is {len(dims)}-D{why}: it has no {d}", "not used")
            kind = self.get(k("kind"), "spec")
            for option in ("low", "high", "seed", "value"):
                if k(option) in self.url and option not in KIND_OPTIONS.get(kind, ()):
                    self.drop(k(option), f"the {kind} pattern does not read {option}", "not used")

    def problems(self) -> list[str]:
        """What the page says: one line per message (keys dropped together share one)."""
        return list(dict.fromkeys(m for m in self.dropped.values() if m))

    def get(self, k: str, default: Any) -> Any:
        return self.url[k] if k in self.url else st.session_state.get(k, default)

    def shape(self, name: str | None = None) -> tuple:
        """The (first) input's shape the link asks for."""
        layer = self.layer
        name = name or layer.input_names[0]
        if name in self.fixed:
            return tuple(self.fixed[name])
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
            sizes = [
                k for k in self.url if k in {input_key(layer, n, d) for n in layer.input_names for d in DIM_NAMES[5]}
            ]
            if exc.rule.startswith(BUDGET):  # the values that break it together, all named (each alone may pass):
                # the input's sizes, or the parameters that count towards the output's
                counted = sizes if exc.param == "input" else self._counted(exc)
                if counted:
                    self.drop_together(counted, exc.rule)
                    return True
            blamed = [k for k in protocol.problem(exc, layer, shape)["keys"] if k in self.params]
            for k in blamed:
                self.drop(k, exc.rule)
            if blamed:
                return True
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

    def _counted(self, exc: ValidationError) -> list[str]:
        """The URL's parameter keys that count towards the refusal `exc`: a parameter counts where without its keys
        the layer says something else. Each probe evaluates the layer's rules once (a kernel is made): past
        PROBES parameters given, all of them are named together instead."""
        groups: dict[str, list[str]] = {}
        for k in self.params:
            p = next((p.name for p in self.layer.params if k.startswith(protocol.key(self.layer, p, ""))), k)
            groups.setdefault(p, []).append(k)
        if len(groups) > PROBES:
            return list(self.params)
        return [k for keys in groups.values() if self._counts(keys, exc) for k in keys]

    def _counts(self, keys: list[str], exc: ValidationError) -> bool:
        rest = {q: v for q, v in self.params.items() if q not in keys}
        try:
            self.layer.resolve(protocol.raw_params(self.layer, self.shape(), rest), self.shapes())
        except Exception as other:  # noqa: BLE001 - any other answer is another answer
            return str(other) != str(exc)
        return True


def check_url(layer: Layer, fixed: dict[str, tuple] | None = None) -> None:
    """The first time a page runs in a session, drop the URL values its layer would refuse, say so,
    and run again (a widget takes its URL value when first drawn, whatever the session state says). `fixed`: the
    shapes of inputs the page feeds whatever their controls say (a model node's constant operands), judged as fed."""
    page = PageState(layer.name)
    if page.get("url_checked"):
        return
    if _modernise(layer):
        st.rerun()  # the page reads the new spelling's values
    known = fields(layer).keys() | param_keys(layer)
    given = {k: st.query_params[k] for k in st.query_params if k in known}
    others = {k: st.query_params[k] for k in st.query_params if k not in known and _unknown(layer, k)}
    check = _Check(layer, given, others, fixed)
    check.run()
    removed = False
    for k in check.dropped:
        try:
            del st.query_params[k]
            removed = True
        except Exception:  # noqa: BLE001 - bound already (not a fresh page): the widget's own error shows instead
            pass
    for k, v in check.written.items():
        if k not in check.dropped:
            st.query_params[k] = v
    problems = check.problems()
    if problems:
        page.setdefault("url_problems", []).extend(problems)
        page.set("url_dropped", {**page.get("url_dropped", {}), **{k: m for k, m in check.dropped.items() if m}})
        page.pop("url_problems_seen")  # shown afresh
    if removed:
        st.rerun()
    page.set("url_checked", True)


STREAMLIT_KEYS = ("embed", "embed_options")  # Streamlit's own: how the app is framed


def _unknown(layer: Layer, k: str) -> bool:
    """A key no part of this page reads: not its own (fields, param_keys), nor the picked cell's (the stage's), a
    model's node's (ui.models), `hide`, `preset` or Streamlit's."""
    cell = (protocol.cell_key(layer, "", old) for old in (False, True))
    return k not in (HIDE, protocol.PRESET, ONNX, NODE, MODEL, REAL, *STREAMLIT_KEYS) and not any(
        k.startswith(c) for c in cell
    )


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
        page.pop("url_problems"), page.pop("url_problems_seen"), page.pop("url_dropped")
        return []
    seen.update(controls)  # controls drawn since the problems were found count from now on
    return problems


def dropped(layer: Layer) -> dict[str, str]:
    """The link's keys the page does not use, each with its message, while the page names them (take_problems):
    their controls are marked."""
    return PageState(layer.name).get("url_dropped") or {}


def dropped_css(keys) -> str:
    """The sidebar's controls of keys the link gave and the page does not use, outlined as the stage's are."""
    rules = [key_selector(k) for k in keys]
    return ("<style>" + ", ".join(rules) + " { outline: 2px solid #b45309; }</style>") if rules else ""


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
