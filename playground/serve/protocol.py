"""What the stage component and the server say to each other, in plain data (no Streamlit, no TensorRT).

The browser holds a configuration as the page's URL holds it, one text per query parameter (`LAYER.PARAM`, per
axis `LAYER.PARAM.AXIS`, an optional per-axis value's switch `LAYER.PARAM.set`): `query_keys` names them,
`raw_params` reads them back into a layer's raw parameters, `query_of` writes resolved parameters as they are
spelled. `controls` describes every parameter's control from the layer's declaration (what to draw, its range,
the values it offers now, whether it is used and why not); `answer` is the evaluation as the stage draws it: of
each tensor the planes drawn (float32, in a binary frame) and the whole tensor's stats, the figures' titles, the
shapes, the output's source, the precision's error, the picked cell's read map and arithmetic, the explanation
under the stage. Python stays the only validator
(`Layer.resolve`), builder and source of outputs; the browser only draws, hovers and walks what it is sent.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
import json
import math
from typing import Any

import numpy as np

from ..base import blobs, chunks, numbers
from ..base.box import Box
from ..base.colours import spread
from ..base.errors import ValidationError
from ..base.layer import Layer
from ..base.memo import Memo
from ..base.params import Param, same_value
from ..trt.engine import ENGINE_STATUS, canonical  # ENGINE_STATUS: the stage says a status in its words

READ_MAP_CELLS = 1024  # output cells whose input windows are sent with an answer (hover, pick, step, play)
REGION_CELLS = 4096  # input cells of a layer's region (Layer.region) an answer outlines; beyond, none
CELL_LINES = 64  # output cells whose arithmetic line is sent (beyond: the picked cell's, asked for as it moves)
MAX_QUERY_KEYS = 256  # a request naming more keys than any layer has is refused before it is read
MAX_TEXT = 4096  # characters of one value (an array typed by hand, a preset's name)
PRESET_MATCH_VALUES = 1 << 16  # arrays up to this size are checked against the presets (a model's are not)
# The parameters a lesson is about come first: a windowed layer's geometry before its overrides.
FIRST = (
    "type",
    "resize_mode",
    "num_output_maps",
    "kernel_size_nd",
    "window_size_nd",
    "stride_nd",
    "padding_nd",
    "dilation_nd",
    "padding_mode",
    "num_groups",
)
LAST = ("pre_padding", "post_padding", "precision", "quantize_scale")


class RequestError(ValueError):
    """A request that is not one the stage sends (a 400 with this message, never a traceback); `key`: the query
    key it names, where it names one (the message is "KEY: rule"; a link's check drops that key)."""

    def __init__(self, rule: str, key: str | None = None):
        super().__init__(f"{key!s:.80}: {rule}" if key is not None else rule)
        self.key, self.rule = key, rule


def label(p: Param) -> str:
    """Plain words first, the API name second ("Stride (stride_nd)"); a parameter declared without words shows its
    API name."""
    return f"{p.label} ({p.name})" if p.label else p.name


def ordered(layer: Layer) -> list[Param]:
    """The parameters in the order the stage lists them: the lesson's geometry first, the overrides last."""
    rank = {n: i for i, n in enumerate(FIRST)}
    late = {n: i for i, n in enumerate(LAST)}
    return sorted(layer.params, key=lambda p: (p.name in late, late.get(p.name, 0), rank.get(p.name, len(FIRST))))


# -- the URL's spelling: every key a page's link holds is spelled here ------------------------------------------
# The page's view, shared by every page and no configuration's (a room's link leaves it out): presenter mode, one
# cell size for every figure (a documentation gallery's), the parts hidden. An example's name, which a page turns
# into the values it sets.
VIEW_PRESENTER, VIEW_CELL, HIDE, PRESET = "view.presenter", "view.cell", "hide", "preset"
VIEW_KEYS = (VIEW_PRESENTER, VIEW_CELL, HIDE)


def key(layer: Layer, p: Param | str, part: str | None = None) -> str:
    """A parameter's key, `LAYER.PARAM` (per axis `LAYER.PARAM.AXIS`; `part` "": the prefix of its parts); `p` a
    Param or a name (a legacy one's)."""
    return ".".join([layer.name, getattr(p, "name", p)] + ([part] if part is not None else []))


def input_key(layer: Layer, name: str, field: str) -> str:
    """An input control's key: `LAYER.input.FIELD`, or `LAYER.input.NAME.FIELD` for each input of a layer of
    several (`field` "": the prefix every input key of the page starts with)."""
    return ".".join([layer.name, "input", *([name] if layer.several and field else []), field])


def compare_key(layer: Layer | str) -> str:
    """Compare mode's second precision in the URL (`layer`: a Layer, or the name a page's stage goes by: a chain's)."""
    return f"{getattr(layer, 'name', layer)}.compare"


def cell_key(layer: Layer | str, axis: str, old: bool = False) -> str:
    """The picked output cell's index along `axis` in the URL (`LAYER.cell.AXIS`; `old`: older links' spelling,
    `LAYER.extra.AXIS`, read and never written)."""
    return f"{getattr(layer, 'name', layer)}.{'extra' if old else 'cell'}.{axis}"


def query_keys(layer: Layer, shape: tuple) -> list[str]:
    """Every query key a configuration of `layer` on an input of `shape` may set."""
    return [k for p in layer.params for k in param_keys(layer, p, shape)]


def param_keys(layer: Layer, p: Param, shape: tuple) -> list[str]:
    """The query keys of one parameter: one, or one per axis (and the switch of an optional one)."""
    if not p.along_axes:
        return [key(layer, p)]
    return ([key(layer, p, "set")] if p.optional else []) + [key(layer, p, ax) for ax in p.axis_names(len(shape))]


def raw_params(layer: Layer, shape: tuple, query: dict[str, str]) -> dict:
    """The raw parameters a configuration's query texts set (the used ones; the rest take their defaults). A key
    this page does not have, or a text of the wrong form, is a RequestError; a value the layer refuses is left to
    `Layer.resolve`, which names the parameter and the rule."""
    if not isinstance(query, dict) or len(query) > MAX_QUERY_KEYS:
        raise RequestError("params must be an object of at most 256 query keys")
    known = set(query_keys(layer, shape))
    for k, v in query.items():
        if k not in known:
            raise RequestError(f"not a parameter of this {layer.name} page", k)
        if not isinstance(v, str) or len(v) > MAX_TEXT:
            raise RequestError(f"must be text of at most {MAX_TEXT} characters", k)
    raw, canon = {}, {}
    for p in layer.params:
        value = _value_of(layer, p, shape, query, canon)
        if value is _UNSET:  # its default, which later parameters' used_when and defaults read
            try:
                canon[p.name] = p.coerce(p.default_for(canon, shape), layer.name, canon, shape)
            except Exception:  # noqa: BLE001 - a default that needs a broken parameter: resolve names the rule
                canon[p.name] = None
            continue
        try:  # only to know which later parameters this one leaves unused; resolve reports the error
            canon[p.name] = p.coerce(value, layer.name, canon, shape)
            used = p.is_used(canon)
        except Exception:  # noqa: BLE001 - refused, or unreadable while an earlier one is (a preset's shape)
            used = True
        if used:
            raw[p.name] = value
    return raw


_UNSET = object()


def _value_of(layer: Layer, p: Param, shape: tuple, query: dict[str, str], canon: dict):
    if not p.along_axes:
        return query.get(key(layer, p), _UNSET)
    names = p.axis_names(len(shape))
    given = [query.get(key(layer, p, ax)) for ax in names]
    if p.optional:
        switch = query.get(key(layer, p, "set"))
        if switch is not None and switch.strip().lower() not in ("true", "false"):
            raise RequestError("must be true or false", key(layer, p, "set"))
        if switch is None and all(v is None for v in given):
            return _UNSET
        if switch is not None and switch.strip().lower() == "false":
            return None
    elif all(v is None for v in given):
        return _UNSET
    for ax, v in zip(names, given):  # the axes are joined below: an empty one would take its neighbour's value
        if v is not None and not v.strip():
            raise RequestError("must be a whole number (it is empty)", key(layer, p, ax))
        if v is not None and "," in v:
            raise RequestError("must be one whole number, not a list", key(layer, p, ax))
    try:  # an axis the query leaves out keeps its default
        default = p.default_for(canon, shape)
    except Exception:  # noqa: BLE001 - a default that needs a broken parameter: the low end
        default = None
    fill = [str(d) for d in default] if isinstance(default, tuple) else [str(int(p.low or 0))] * len(names)
    return ",".join(v if v is not None else f for v, f in zip(given, fill))


def query_of(layer: Layer, params: dict, shape: tuple) -> dict[str, str]:
    """Resolved parameters as the URL spells them (every one, so the browser's copy is whole)."""
    out = {}
    for p in layer.params:
        value = params[p.name]
        if p.along_axes:
            if p.optional:
                out[key(layer, p, "set")] = "true" if value is not None else "false"
            names = p.axis_names(len(shape))
            shown = value if value is not None else (p.default_for(params, shape) if not p.optional else None)
            shown = params.get(p.fallback) if shown is None and p.fallback else shown  # what is in force
            for ax, v in zip(names, shown or ((int(p.low or 0),) * len(names))):
                out[key(layer, p, ax)] = str(int(v))
        elif isinstance(value, np.ndarray):
            out[key(layer, p)] = _array_text(p, value, params, shape)
        else:
            out[key(layer, p)] = p.to_text(value)
    return out


def _array_text(p: Param, value: np.ndarray, params: dict, shape: tuple) -> str:
    """An array as the URL spells it, so that it follows the configuration where it can: one value where all are
    equal (every array parameter repeats a single value to its size), a preset's name where the values are the
    preset's (the kernel stays powers_of_ten as num_output_maps moves), by reference where a model's weights are too
    many for a link (playground.base.blobs), else the numbers."""
    flat = value.ravel()
    if flat.size and np.all(flat == flat[0]):
        return p.to_text(flat[:1])
    if flat.size <= PRESET_MATCH_VALUES:
        for name, make in p.presets.items():
            try:
                made = np.asarray(make(params, shape), np.float32).ravel()
            except Exception:  # noqa: BLE001 - a preset that does not fit this configuration is not this value
                continue
            if made.shape == flat.shape and np.array_equal(made, flat):
                return name
    return blobs.weights_ref(value) if flat.size > blobs.URL_VALUES else p.to_text(value)


# -- the controls ---------------------------------------------------------------------------------------------
def controls(layer: Layer, params: dict, shape: tuple) -> list[dict]:
    """One entry per parameter, in the stage's order: what its control draws now."""
    out = []
    for p in ordered(layer):
        used = p.is_used(params)
        c = {
            "name": p.name,
            "label": label(p),
            "help": p.help,
            "kind": p.kind,
            "widget": p.of.widget(p),
            "used": used,
            "why_unused": "" if used else layer.why_unused(p.name, params),
            "weight": p.is_weight(params),
        }
        c.update(p.of.control(p, params.get(p.name), params, shape))
        if used and len(c.get("offered") or ()) == 1 and not c.get("names"):  # a slider with nowhere to go
            c["used"], c["why_unused"] = False, only_one(layer, p, params, shape, c["offered"][0])
        if p.along_axes:
            c["keys"] = {ax: key(layer, p, ax) for ax in p.axis_names(len(shape))}
        if p.along_axes and p.optional:
            c["set_key"] = key(layer, p, "set")
        c["key"] = key(layer, p)
        out.append(c)
    return out


def only_one(layer: Layer, p: Param, params: dict, shape: tuple, value) -> str:
    """Why a control that offers one value is disabled: that value, and the rule its next one breaks."""
    step = value + (p.step or 1)
    try:
        p.coerce(step, layer.name, params, shape)
        rule = None
    except ValidationError as exc:
        rule = exc.rule
    return f"only {value} fits this configuration" + (f": {step} {rule}" if rule else "")


def compare_choices(layer: Layer, params: dict) -> list[str]:
    """The precisions compare mode offers: every one but the configuration's own (beside itself it shows nothing)."""
    return [c for c in layer.param("precision").choices if c != params.get("precision")]


# -- the answer -----------------------------------------------------------------------------------------------
# An answer carries, of each figure's tensor, the planes the stage draws (its page: PAGE_PLANES from the first, or
# the page the request names) in binary, and the whole tensor's stats; the other planes are asked for by tensor id
# as the person turns a page (`planes`). A 4·8·512·512 tensor's answer is 4 of its 32 planes, 4 MiB, not 45 MiB of
# base64. PAGE_PLANES is the stage's MAX_PLANES (heatmap.js): a stage that draws more asks for the rest.
PAGE_PLANES = 4
FRAME_TYPE = "application/x-stage-frame"  # the route's binary answers (`frame`); errors stay JSON


def tensor_id(a: np.ndarray, values: bytes | None = None) -> str:
    """The id the browser names a tensor (and its planes) by: a hash of its shape and of its values' `core.digest`
    (`values`, where the caller has it: an input's, which its evaluation's cache key was made of)."""
    from ..network.core import digest

    return hashlib.sha256(str(a.shape).encode() + (values or digest(a))).hexdigest()[:24]


def plane_key(tid: str, plane: int) -> str:
    """How a request names one plane of a tensor it holds (`have`): "ID.PLANE"."""
    return f"{tid}.{plane}"


def grid(shape: tuple, lifted: tuple = ()) -> dict:
    """How a tensor of `shape` is drawn, decided here alone (heatmap.js and store.js read it, never work it out):
    the axes whose indices number its planes, the axis along its rows and the one along its columns (None: one
    row; one cell). The last two axes drawn are a plane's rows and columns; rank 1 is one row. The axes a model's
    node was lifted by to reach its layer's rank (`lifted`: Opened.lifted, 1s added) are not drawn, so the node's
    tensor is drawn at the model's rank: a (1, 16, 16) token tensor lifted to (1, 16, 16, 1) is one 16 × 16
    matrix, not 16 planes of 16 × 1."""
    drawn = [a for a in range(len(shape)) if not (a in lifted and shape[a] == 1)]
    return {
        "planes": drawn[:-2],
        "rows": drawn[-2] if len(drawn) >= 2 else None,
        "cols": drawn[-1] if drawn else None,
    }


def lifted_axes(shape: tuple, model: tuple) -> tuple:
    """The axes of `shape` left out to read it as the model's `model` shape: 1s, the others in order (the first
    fit); () where `shape` is not `model` with 1s added."""
    out, j = [], 0
    for k, n in enumerate(shape):
        if j < len(model) and n == model[j]:
            j += 1
        elif n == 1:
            out.append(k)
        else:
            return ()
    return tuple(out) if j == len(model) else ()


def drawn_shape(shape: tuple, g: dict) -> tuple:
    """The shape a tensor is drawn at: its axes that `g` draws (the lifted ones, all 1, left out)."""
    return tuple(int(shape[a]) for a in [*g["planes"], g["rows"], g["cols"]] if a is not None)


def as_planes(a: np.ndarray, g: dict | None = None) -> np.ndarray:
    """A tensor as its planes of rows × columns, as `grid` (`g`; None: of its shape alone) draws it. The axes left
    out are 1s, so the planes are the tensor's values in its own order."""
    g = g or grid(a.shape)
    h = a.shape[g["rows"]] if g["rows"] is not None else 1
    w = a.shape[g["cols"]] if g["cols"] is not None else 1
    return a.reshape(-1, h, w)


def page_bytes(shape: tuple, page: tuple[int, int]) -> int:
    """The bytes of the planes (first, count) of a tensor of `shape` (as `arrays` keeps it: its drawn shape) that
    `tensor` sends (the page clamped as it clamps it)."""
    g = grid(shape)
    h = shape[g["rows"]] if g["rows"] is not None else 1
    w = shape[g["cols"]] if g["cols"] is not None else 1
    total = math.prod(shape) // max(1, h * w)
    first = max(0, min(page[0], total - 1))
    return 4 * h * w * max(0, min(page[1], total - first))


def stats(a: np.ndarray) -> dict:
    """The whole tensor's min and max (of its finite values; None where there are none) and its NaN and ±Inf
    counts: the stats line of a figure whose planes came in part is the whole tensor's (its colour range too:
    `spread`)."""
    finite = np.isfinite(a)
    count = int(np.count_nonzero(finite))
    lo = float(a.min(where=finite, initial=np.inf)) if count else None
    hi = float(a.max(where=finite, initial=-np.inf)) if count else None
    nan = int(np.count_nonzero(np.isnan(a))) if count < a.size else 0
    return {"min": lo, "max": hi, "nan": nan, "inf": int(a.size - count - nan)}


_stats = Memo(256)  # by tensor id (its values and shape): a revisit, and the page's input at every change, are not
# passed over again


def ranged(t: dict, terms: float | None = None) -> list[float] | None:
    """The colour range (`colours.colour_range`) of a `tensor` entry, from its stats."""
    s = t["stats"]
    return spread(None if s["min"] is None else (s["min"], s["max"]), terms)


def tensor(
    a: np.ndarray,
    held: frozenset | None = frozenset(),
    page: tuple[int, int] | None = None,
    tid: str | None = None,
    values: bytes | None = None,
    lifted: tuple = (),
) -> dict:
    """A tensor as the browser reads it: shape, id, the whole tensor's stats, the page of planes drawn (first,
    count) and the planes of it to send, less those the browser says it holds (`held`: plane keys; None: no values
    at all, the page's first answer of a large configuration, whose stage asks the route). The planes' values
    travel in the answer's frame (`frame`, `inline`), which sets "sent": [[plane, offset], ...]; `values`: the
    values' `core.digest`, where the caller has it; `lifted`: the axes a model's node was lifted by (`grid`)."""
    a = np.ascontiguousarray(np.asarray(a, dtype="<f4"))
    g = grid(a.shape, lifted)
    tid, planes = tid or tensor_id(a, values), as_planes(a, g)
    first, count = page or (0, PAGE_PLANES)
    first = max(0, min(first, len(planes) - 1))
    count = max(0, min(count, len(planes) - first))
    send = [] if held is None else [p for p in range(first, first + count) if plane_key(tid, p) not in held]
    return {
        "shape": list(a.shape),
        "grid": g,
        "id": tid,
        "stats": _stats.get_or_make(tid, lambda: stats(a)),
        "page": [first, count],
        "_planes": [(p, planes[p]) for p in send],
        "_array": a,
    }


def _blob(out: dict) -> bytes:
    """Every figure's planes to send, one after another, each figure's `sent` naming its planes' offsets (in
    float32 values); the arrays the answer held for this are let go from it."""
    chunks, at = [], 0
    for t in [f["tensor"] for f in out.get("figures", [])] + out.get("tensors", []):
        t["sent"] = []
        for p, values in t.pop("_planes", []):
            t["sent"].append([p, at])
            chunks.append(values.tobytes())
            at += values.size
        t.pop("_array", None)
    return b"".join(chunks)


def frame(reply: dict) -> bytes:
    """A reply in the route's binary form: a little-endian uint32 n, n bytes of JSON (padded with spaces to 4
    bytes), then the planes' little-endian float32 values (`sent` gives each plane's offset in values)."""
    blob = _blob(reply.get("answer", reply))
    head = json.dumps(reply, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 4)
    return len(head).to_bytes(4, "little") + head + blob


def read_frame(data: bytes) -> tuple[dict, bytes]:
    """(the reply, its planes' bytes) of a frame: what the browser reads (store.js `readFrame`)."""
    n = int.from_bytes(data[:4], "little")
    return json.loads(data[4 : 4 + n]), data[4 + n :]


def inline(out: dict) -> dict:
    """An answer carried in the page's own message (JSON only): its planes' bytes as base64 in `blob`."""
    out["blob"] = base64.b64encode(_blob(out)).decode("ascii")
    return out


def within(out: dict, values: int) -> dict:
    """The answer with its planes where they are at most `values` values together, else with none (the page's
    first answer: its stage asks the route for them)."""
    tensors = [f["tensor"] for f in out["figures"]]
    if sum(v.size for t in tensors for _, v in t.get("_planes", [])) > values:
        for t in tensors:
            t["_planes"] = []
    return out


def arrays(out: dict) -> dict:
    """The tensors of an answer not yet framed, by id, whose planes it does not all send (the browser may ask
    for the rest: the server keeps these), each at its drawn shape (`drawn_shape`): the planes the route sends of
    it are those the answer numbered."""
    return {
        t["id"]: t["_array"].reshape(drawn_shape(t["_array"].shape, t["grid"]))
        for t in (f["tensor"] for f in out.get("figures", []))
        if "_array" in t and t["page"][1] < len(as_planes(t["_array"], t["grid"]))
    }


def whole(t: dict, blob: bytes) -> np.ndarray:
    """A tensor entry's values, whole, from its frame's bytes, where every plane was sent (tests and benchmarks;
    the browser draws planes)."""
    shape, g = t["shape"], t["grid"]
    h = shape[g["rows"]] if g["rows"] is not None else 1
    w = shape[g["cols"]] if g["cols"] is not None else 1
    planes = math.prod(shape) // max(h * w, 1)
    got = {p: np.frombuffer(blob, "<f4", h * w, off * 4) for p, off in t["sent"]}
    if sorted(got) != list(range(planes)):
        raise ValueError(f"planes {sorted(got)} of {planes} sent: not the whole tensor")
    return np.stack([got[p] for p in range(planes)]).reshape(shape) if planes else np.zeros(shape, np.float32)


SHARE_VALUES = 4096  # outputs up to this many values are checked for drawing their inputs' values (`shares_values`)
ALIKE = 2.5  # two ranges whose spans are within this factor of each other are alike (`figure_ranges`)


def shares_values(layer: Layer, ev) -> bool:
    """Whether every finite value of the output is one of its data inputs' (a concatenation, a MAX, a slice): it is
    then drawn on their colour scale, a value one colour on every figure (`figure_ranges`). Checked for outputs and
    inputs of up to SHARE_VALUES values each; larger ones go by their ranges alone."""
    y = ev.output
    data = [a for n, a in (ev.inputs or {"x": ev.input}).items() if n not in layer.index_inputs]
    if not data or y.size > SHARE_VALUES or any(a.size > SHARE_VALUES for a in data):
        return False
    finite = y[np.isfinite(y)]
    return finite.size > 0 and bool(np.isin(finite, np.concatenate([a.ravel() for a in data])).all())


def _output_range(layer: Layer, ev, y: dict, x: dict) -> list[float] | None:
    """colour_range of an output (its `tensor` entry `y`), with the magnitude of its terms only where the spread is
    small beside its input's (`x`: the first input's entry; a reference on |x| is worked out only then)."""
    r = ranged(y)
    big = max(abs(v) for v in (x["stats"]["min"], x["stats"]["max"], 0.0) if v is not None)
    if r is None or r[0] == r[1] or r[1] - r[0] > 1e-3 * big:
        return r
    from ..onnx.runtime import magnitude  # noqa: PLC0415 - needed only for a near-constant output

    return ranged(y, magnitude(layer, ev.input, ev.params))


def joined(ranges) -> list[float] | None:
    """The range that spans every one of `ranges` (None: nothing finite in any)."""
    found = [r for r in ranges if r is not None]
    return [min(r[0] for r in found), max(r[1] for r in found)] if found else None


def _span(r: list[float] | None) -> float:
    return max(r[1] - r[0], 1e-12) if r is not None else 1e-12


def figure_ranges(figures: list[dict], declared: str | None = None, shares: bool = False) -> None:
    """The colour rule, in one place: sets every figure's `range`, the values its colours span (heatmap.js only
    paints a range: `scaleFor`), so that figures which share values share one scale and a value is one colour on
    all of them. Each figure starts from its own range.

    - The data inputs (not indices: `index`; not error maps: `magnitude`) share one scale where their ranges are
      alike (spans within ALIKE× of their whole): an ElementWise's operands keep their colours as the operation
      changes.
    - The output (and compare mode's, which always shares with it) is of the inputs' kind where the layer says so
      (`declared` "": a sum, a concatenation, Layer.output_scale), or where its values are theirs (`shares`:
      `shares_values`) or lie within their range with a span alike (an average, a ReLU): then the inputs and the
      output share one scale, the range of them all, however the inputs' own ranges differ (a concatenation's
      parts). Where the layer says the output is of another kind (`declared` a reason: a product's magnitude, a
      comparison's 0 and 1) or its values lie apart (a softmax's 0…1 on an input's −4…4), it keeps its own; a
      declared reason is its figure's `scale` note, said under it.
    - A kernel, indices and error maps keep their own."""
    inputs = [f for f in figures if f["which"].startswith("input") and not f.get("index") and not f.get("magnitude")]
    outputs = [f for f in figures if f["which"] in ("output", "compared")]
    given, made = joined(f["range"] for f in inputs), joined(f["range"] for f in outputs)
    if declared is not None:
        alike = declared == ""
    else:
        slack = 1e-6 * _span(given)
        alike = shares or (
            given is not None
            and made is not None
            and made[0] >= given[0] - slack
            and made[1] <= given[1] + slack
            and _span(given) / _span(made) <= ALIKE
        )
    together = bool(inputs and outputs) and alike
    if together:
        for f in inputs + outputs:
            f["range"] = joined([given, made])
        return
    if all(_span(given) / _span(f["range"]) <= ALIKE for f in inputs):
        for f in inputs:
            f["range"] = given
    for f in outputs:
        f["range"] = made
        if declared:
            f["scale"] = declared


MAX_HELD = 64  # plane keys a request may say the browser holds
MAX_PAGES = 16  # figures a request may name a page of planes for
# A page's first answer carries its planes' values up to this many (the spec's and a lesson's sizes, many times
# over); beyond, they come by the route, so that megabytes never pass through the page's own messages (one
# event loop carries every page's, and a room would wait for them).
INLINE_VALUES = 1 << 20


def read_pages(value) -> dict[str, tuple[int, int]]:
    """A request's `pages` ({figure: [first, count]}: the planes the stage shows of each figure), checked."""
    if value is None:
        return {}
    if not (
        isinstance(value, dict)
        and len(value) <= MAX_PAGES
        and all(
            isinstance(k, str)
            and len(k) <= 32
            and isinstance(v, list)
            and len(v) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 1 << 24 for i in v)
            and v[1] <= 64
            for k, v in value.items()
        )
    ):
        raise RequestError(f"pages must map at most {MAX_PAGES} figures to [first, count] (count at most 64)")
    return {k: (v[0], v[1]) for k, v in value.items()}


def problem(exc: ValidationError, layer: Layer, shape: tuple) -> dict:
    """A refused configuration: the message, the parameter and the query keys that set it (the stage marks
    them; its last good output stays drawn)."""
    keys = [
        k for k in query_keys(layer, shape) if k == key(layer, exc.param) or k.startswith(key(layer, exc.param, ""))
    ]
    return {"message": str(exc), "param": exc.param, "rule": exc.rule, "keys": keys}


def answer(
    layer: Layer,
    ev,
    pick: tuple | None = None,
    held: frozenset | None = frozenset(),
    lines: int = CELL_LINES,
    every: bool = True,
    opinion: bool = False,
    opened=None,
    pages: dict | None = None,
) -> dict:
    """The evaluation as the stage draws it (core.Evaluation in, JSON-friendly out once framed: `frame`,
    `inline`); `held`: the plane keys the browser already holds (not sent again; None: no values at all);
    `pages`: figure -> (first, count), the page of planes the stage shows of it (else the first PAGE_PLANES);
    `lines`: how many cells' arithmetic to write (the picked cell's always; a quick answer, while a slider is dragged, writes that one only); `every`: every output cell's window (else the picked cell's, `read_map`); `opinion`: with ONNX
    Runtime's (of the model's node `opened` where the evaluation is of it as it stands; else of the configuration's
    export). `opened`: the model's node the page opened, whose tensors are drawn at the model's rank (`grid`) as
    long as the layer's rank holds them (its parameters changed or not)."""
    shape = ev.input.shape

    def page(which: str) -> tuple[int, int] | None:
        return (pages or {}).get(which)

    def lift(a: np.ndarray, name: str | None = None) -> tuple:
        """A model's node: its tensors of the layer's rank drawn at the model's; an input at its own (`name`: a
        MatMul's constant B of (16, 16) beside A's (1, 16, 16), both run as (1, 1, 16, 16))."""
        if opened is None or a.ndim != len(opened.shape):
            return ()
        if name is None:
            return opened.lifted
        return lifted_axes(a.shape, (opened.onnx_shapes or {}).get(name, opened.onnx_shape))

    def figure(which: str, title: str, a: np.ndarray, values: bytes | None = None, name: str | None = None) -> dict:
        values = values if values is not None else hashing.get(id(a), lambda: None)()
        t = tensor(a, held, page(which), values=values, lifted=lift(a, name))
        return {"which": which, "title": title, "tensor": t, "range": ranged(t)}

    from ..network.core import digest

    # the outputs' and the error map's ids: their digests made side by side (on other cores, where they are large)
    if ev.compared is not None and ev.compared.output.shape == ev.output.shape:
        later = [ev.output, ev.compared.output] + ([ev.difference["log_error"]] if ev.difference is not None else [])
    else:
        later = [ev.output] + ([ev.precision_error["log_error"]] if ev.precision_error is not None else [])
    hashing = {
        id(a): chunks.beside(functools.partial(digest, a), a.size)
        for a in later
        if a.dtype == "<f4" and a.flags.c_contiguous  # hashed as `tensor` sends it
    }
    digests = getattr(ev, "digests", None) or {}
    figures = [
        figure(input_figure(layer, n), f"Input {n.upper()}" if layer.several else "Input", a, digests.get(n), n)
        | ({"index": True} if n in layer.index_inputs else {})  # indices, not values: a colour scale of their own
        for n, a in (ev.inputs or {"x": ev.input}).items()
    ]
    first = figures[0]["tensor"]
    for title, t in layer.stage_tensors(ev.params) if layer.stage_tensors else []:
        figures.append(figure(title.lower(), title, t))
    figures.append(figure("output", output_title(ev, named=ev.compared is not None), ev.output))
    figures[-1]["range"] = _output_range(layer, ev, figures[-1]["tensor"], first)
    if ev.compared is not None and ev.compared.output.shape == ev.output.shape:
        figures.append(figure("compared", output_title(ev.compared, named=True), ev.compared.output))
        figures[-1]["range"] = _output_range(layer, ev.compared, figures[-1]["tensor"], first)
        if ev.difference is not None:
            figures.append(
                {
                    "which": "difference",
                    "title": f"log₁₀ |{ev.difference['precision']}|",
                    "tensor": (t := tensor(d := ev.difference["log_error"], held, page("difference"), lifted=lift(d))),
                    "range": ranged(t),
                    "magnitude": True,
                }
            )
    elif ev.precision_error is not None:
        figures.append(
            {
                "which": "error",
                "title": "log₁₀ |error|",
                "tensor": (t := tensor(e := ev.precision_error["log_error"], held, page("error"), lifted=lift(e))),
                "range": ranged(t),
                "magnitude": True,
            }
        )
    figure_ranges(
        figures,
        layer.output_scale(ev.params) if layer.output_scale else None,
        layer.output_scale is None and shares_values(layer, ev),
    )
    out = {
        "layer": layer.name,
        "title": layer.title,
        "query": query_of(layer, ev.params, shape),
        "controls": controls(layer, ev.params, shape),
        "compare_choices": compare_choices(layer, ev.params),
        "figures": figures,
        "shapes": (
            " · ".join(f"{n.upper()} {tuple(a.shape)}" for n, a in ev.inputs.items())
            if layer.several
            else f"Input {tuple(shape)}"
        )
        + f" → Output {tuple(ev.output.shape)}",
        "formula": layer.formula(ev.params) if layer.formula else None,
        **verdict(ev),
        "precision": precision_line(ev),
        "explain": list(layer.explain(ev.params, ev.shapes)) if layer.explain else [],
    }
    if layer.reads is not None:
        out["cells"] = read_map(layer, ev, pick, lines, every)
    out["example"] = example(layer, ev)
    if opinion and has_opinion(layer):
        out["onnxruntime"] = onnxruntime_badge(ev, opened if opened is not None and opened.stands(ev) else None)
    return out


def verdict(ev) -> dict:
    """The engine's part of an answer: its status, the output's source, the messages (what a pending engine's
    build, which follows the answer where no engine runs, changes)."""
    return {
        "source": {"label": source_badge(ev), "detail": source_detail(ev), "tensorrt": ev.output_source == "tensorrt"},
        "engine": {
            "status": ev.engine_status,
            "refusal": ev.error if ev.engine_status == "refused" else None,
            "error": ev.error if ev.engine_status == "failed" else None,
            "build_ms": ev.report.build_ms if ev.report else None,
        },
        "messages": list(ev.messages),
    }


def has_opinion(layer: Layer) -> bool:
    """Whether ONNX Runtime judges this layer: it has an ONNX export (one graph input per input in use)."""
    return layer.onnx is not None


def onnxruntime_badge(ev, opened=None) -> dict | None:
    """ONNX Runtime's opinion as the stage's badge says it: agrees, or the rule where ONNX differs."""
    try:
        from ..onnx.opinions import onnxruntime_opinion
    except ImportError:  # onnx or onnxruntime not installed: no badge
        return None
    o = onnxruntime_opinion(ev, opened)
    if o.get("version") is None:
        return None
    if o["agrees"]:
        text = "ONNX Runtime ✓"
    elif o.get("rule"):
        text = "ONNX differs: " + o["rule"].split(":")[0]
    else:
        text = "ONNX Runtime ✗ " + ("refused" if o.get("status") == "refused" else "differs")
    why = o.get("rule") or o.get("why") or o.get("error") or ""
    masked = o.get("masked")  # cells the layer leaves undefined (NaN here, −inf in ONNX Runtime): counted, not compared
    if masked:
        text += f" ({masked['cells']} undefined)"
        why = (why + " " if why else "") + (
            f"{masked['cells']} cell(s) not compared, ONNX Runtime gives "
            f"{', '.join(masked['onnxruntime_gives'])} there: {masked['rule']}"
        )
    diff = o.get("max_abs_diff")
    title = (
        f"ONNX Runtime {o['version']} on {o['model']} against {o['compared_to']}"
        + (f": max |difference| {numbers.shortest(diff)}" if diff is not None else "")
        + (f". {why}" if why else "")
    )
    return {"agrees": bool(o["agrees"]), "text": text, "title": title}


def example(layer: Layer, ev) -> dict | None:
    """The spec example or lesson this configuration is (its input too), with the verdict against what it
    documents; None where it is none of them."""
    from ..network import presets

    found = presets.matching(layer.name, ev.params, ev.inputs if layer.several else ev.input)
    if not found:
        return None
    p = found[0]
    cmp = presets.compare(p, ev.output, ev.precision_error)
    return {
        "name": p.name,
        "title": p.title,
        "kind": p.kind,
        "matches": cmp.matches,
        "message": cmp.message,
        "note": p.note or "",
        "badge": example_badge(p, cmp),
    }


def example_badge(p, cmp) -> str:
    """The example's verdict in plain words, saying what it compares (the cookbook's table, or the figures a lesson
    states: never a bare ✓ beside an error it does not judge); the tolerance and the numbers are in `message`, on
    hover."""
    if p.is_lesson:
        return "error figures as the lesson states" if cmp.matches else "error figures differ from the lesson's"
    if not cmp.shape_ok:
        return "output shape differs from the cookbook's"
    if cmp.max_abs_diff is None:
        return "shape as the cookbook prints (it prints no table)"
    return "matches the cookbook's table" if cmp.matches else "differs from the cookbook's table"


def examples(layer: Layer) -> list[dict]:
    """The layer's examples and lessons, as the stage's picker lists them."""
    from ..network import presets

    return [{"name": p.name, "title": p.title, "kind": p.kind} for p in presets.examples(layer.name)]


def read_map(layer: Layer, ev, pick: tuple | None, lines: int = CELL_LINES, every: bool = True) -> dict:
    """The output cells' input windows (hover, pick, step and play run on them in the browser) and their
    arithmetic lines, for outputs up to READ_MAP_CELLS (CELL_LINES) cells; the picked cell's always; and the
    input's padded extent (`extent`), which the input's figure is drawn with. A change's answer has the picked
    cell's window alone (`every` false: a new geometry's windows are most of its time); its follow-up
    (`finish`) brings them all."""
    out_shape, shape = tuple(ev.reference.shape), ev.shapes
    count = math.prod(out_shape)
    every = every and count <= READ_MAP_CELLS
    indices = [tuple(int(v) for v in i) for i in np.ndindex(*out_shape)] if every else []
    picked = (
        tuple(pick)
        if pick is not None and len(pick) == len(out_shape) and all(0 <= v < n for v, n in zip(pick, out_shape))
        else tuple([0] * len(out_shape))
    )
    if picked not in indices:
        indices.append(picked)
    reads, written, also = _reads(layer, ev.params, shape, tuple(indices)), {}, {}
    corners = _reads(layer, ev.params, shape, _corners(out_shape))
    if layer.several:  # {input: cells} per output cell: the first input's are `reads`, the others' `also`
        first, *others = [n for n in layer.input_names if n in ev.inputs]  # the inputs in use
        also = {input_figure(layer, n): {k: v[n] for k, v in reads.items()} for n in others}
        reads = {k: v[first] for k, v in reads.items()}
        corners = {k: v[first] for k, v in corners.items()}
    for i, index in enumerate(indices):
        where = ",".join(map(str, index))
        if layer.cell is not None and (i < lines or index == picked):
            try:
                written[where] = layer.cell(
                    ev.inputs if layer.several else ev.input, ev.params, index, ev.reference
                ).line
            except Exception:  # noqa: BLE001 - an explanation that fails names the cell's value instead
                written[where] = numbers.precise(float(ev.reference[index]))
    region = layer.region(ev.params, shape) if layer.region is not None else []
    return (
        {
            "axes": list(layer.axes_of_cell(len(out_shape))),
            "shape": list(out_shape),
            "picked": list(picked),
            "reads": reads,
            "lines": written,
            "complete": every,
            "extent": extent(ev.input.shape, corners.values()),
        }
        | ({"also": also} if also else {})
        | ({"region": [list(c) for c in region]} if 0 < len(region) <= REGION_CELLS else {})
    )


def _corners(shape: tuple) -> tuple:
    """The output's corner cells (every axis at its first or last index): a window moves monotonically with its
    output cell, so the corners' windows reach as far past the input as any cell's does."""
    return tuple(dict.fromkeys(itertools.product(*((0, n - 1) for n in shape))))


def extent(shape: tuple, windows) -> dict | None:
    """The input as far as `windows` read it, along every axis ({"lo": [index], "hi": [index]}, inclusive): past
    [0, size) is the padding, drawn dashed around the input's rows and columns (heatmap.js takes those of its
    `grid`). None: a scalar input."""
    if not shape:
        return None
    lo, hi = [0] * len(shape), [int(n) - 1 for n in shape]
    for cells in windows:
        for cell in [cells["lo"], cells["hi"]] if isinstance(cells, dict) else cells:  # a region: its bounds
            cell = (0,) * (len(shape) - len(cell)) + tuple(cell)  # a shorter cell: its axes the last ones
            lo, hi = [min(a, b) for a, b in zip(lo, cell)], [max(a, b) for a, b in zip(hi, cell)]
    return {"lo": lo, "hi": hi}


WINDOW_CELLS = 64  # a window of more cells that fills its bounds is sent as its bounds, not as its cells
READ_MAP_BYTES = 64 << 20  # read maps kept together, by the bytes they hold (a map of one Normalization on 1 M
# values listed every cell of its group: 17 MB a message, and 64 of them kept)


def window(cells) -> list | dict:
    """A window as the stage reads it: its cells ([[index], ...]), or, where it is more than WINDOW_CELLS cells that
    are every cell of their bounds in row-major order (a whole group, a reduced axis, a convolution's full window),
    its region {"lo": [index], "hi": [index]} (inclusive): heatmap.js outlines it, tests a cell against it, and
    counts its cells in the same order."""
    if len(cells) <= WINDOW_CELLS:
        return [list(c) for c in cells]
    if isinstance(cells, Box):  # a layer's whole group, declared as its bounds
        return {"lo": list(cells.lo), "hi": list(cells.hi)}
    a = np.asarray(cells, np.int64)
    lo, hi = a.min(axis=0), a.max(axis=0)
    dims = tuple(int(d) for d in hi - lo + 1)
    if math.prod(dims) == len(a) and np.array_equal(np.ravel_multi_index(tuple((a - lo).T), dims), np.arange(len(a))):
        return {"lo": lo.tolist(), "hi": hi.tolist()}
    return a.tolist()


def _map_bytes(reads: dict) -> int:
    """About what a read map holds in Python: a listed cell's ints and its list, a region's two lists."""

    def size(w):
        if isinstance(w, dict) and "lo" in w:
            return 200
        if isinstance(w, dict):  # {input: window}
            return sum(size(v) for v in w.values())
        return 64 + sum(64 + 36 * len(c) for c in w)

    return sum(100 + size(w) for w in reads.values())


_read_maps = Memo(READ_MAP_BYTES, _map_bytes)  # a geometry's read map, kept: the values change far more often


def _reads(layer: Layer, params: dict, shape: tuple, indices: tuple) -> dict:
    shapes = {n: list(v) for n, v in shape.items()} if isinstance(shape, dict) else list(shape)
    key = hashlib.blake2b(
        json.dumps(
            [layer.name, {k: canonical(v) for k, v in params.items()}, shapes, indices], sort_keys=True
        ).encode(),
        digest_size=16,
    ).hexdigest()

    def listed(cells):  # a layer of several inputs reads {input: cells}
        if isinstance(cells, dict):
            return {n: window(v) for n, v in cells.items()}
        return window(cells)

    return _read_maps.get_or_make(
        key, lambda: {",".join(map(str, i)): listed(layer.reads(params, shape, i)) for i in indices}
    )


def input_figure(layer: Layer, name: str) -> str:
    """The figure an input is drawn in: "input" for the first (the read map's windows outline it), "input.NAME" for
    each other input of a layer of several."""
    return "input" if name == layer.input_names[0] else f"input.{name}"


def output_title(ev, named: bool = False) -> str:
    """ "Output (TensorRT)", "Output (reference)", "Output (FP16, emulated)": the precision named below FP32, or
    always (`named`, compare mode)."""
    precision = ev.params.get("precision", "FP32")
    how = "TensorRT" if ev.output_source == "tensorrt" else "reference" if precision == "FP32" else "emulated"
    return f"Output ({precision}, {how})" if named or precision != "FP32" else f"Output ({how})"


def source_badge(ev) -> str:
    """Where the output shown comes from, in plain words: the badge's hover (its face is `source_detail`'s words)."""
    if ev.output_source == "tensorrt":
        return ev.source_label
    precision = ev.params.get("precision", "FP32")
    what = "the NumPy reference" if precision == "FP32" else f"the NumPy emulation of {precision}"
    if ev.engine_status in ("built", "cached"):
        return f"TensorRT built this engine; this machine can't run it — the output is {what}"
    if ev.engine_status == "refused":
        return f"TensorRT's builder refused this configuration — the output is {what}"
    if not ev.backend.can_build:
        return f"No TensorRT builder on this machine — the output is {what}"
    return f"The engine is {ENGINE_STATUS['pending']} — the output is {what}"


def source_detail(ev) -> str:
    """The badge's face, a few words that read whole in the stage's head at 1280 px: the builder and its engine's
    status (built now, from cache, refused), or that no builder is here."""
    if not ev.backend.can_build:
        return f"no TensorRT builder: engine {ENGINE_STATUS['not_built']}"
    how = {k: ENGINE_STATUS[k] for k in ("built", "cached", "refused")}.get(ev.engine_status)
    return f"{ev.backend.title} engine " + (how or ENGINE_STATUS["pending"])


def precision_line(ev) -> str | None:
    """The precision's error against FP64 (and compare mode's difference), as the stage states it."""
    c = numbers.compact
    if ev.compared is not None and ev.difference is not None:
        d = ev.difference
        parts = [f"{d['precision']}: max |difference| {c(d['max_abs_error'])} · max relative {c(d['max_rel_error'])}"]
        for e in (ev.precision_error, ev.compared.precision_error):
            if e is not None:
                parts.append(f"{e['precision']} {c(e['error_units'])} {e['unit'].split(' (')[0]} from FP64")
        return " · ".join(parts)
    e = ev.precision_error
    if e is None:
        return None
    gpu = ev.gpu_agreement
    return (
        f"{e['precision']} against FP64: max |error| {c(e['max_abs_error'])} · max relative error "
        f"{c(e['max_rel_error'])} · {c(e['error_units'])} {e['unit']}" + (f" · {gpu}" if gpu else "")
    )


def describe(layer: Layer, shape: tuple, shapes: dict | None = None) -> dict[str, Any]:
    """What the page tells its stage before any evaluation: the layer, its query keys and the default controls
    (`shapes`: every input's, where the layer has several; `shape` is the first's)."""
    params = layer.defaults(shapes or shape)
    return {
        "layer": layer.name,
        "title": layer.title,
        "summary": layer.summary,
        "keys": query_keys(layer, shape),
        "controls": controls(layer, params, shape),
        "defaults": query_of(layer, params, shape),
        "examples": examples(layer),
        "precisions": list(layer.param("precision").choices),
        "compare_choices": compare_choices(layer, params),
        "resets": resets(layer, params, shape),
        "url": {
            "compare": compare_key(layer),
            "cell": cell_key(layer, ""),
            "old_cell": cell_key(layer, "", old=True),
            "view": list(VIEW_KEYS),
            "dropped": [PRESET],
            "switched": switched(layer, shape),
        },
    }


def switched(layer: Layer, shape: tuple) -> dict[str, str]:
    """Each axis key of an optional per-axis parameter, to its `.set` key: a link carries the axes only while the
    parameter is set (unset, its control shows what is in force, `Param.fallback`, which a link must not read as
    set)."""
    return {
        key(layer, p, ax): key(layer, p, "set")
        for p in layer.params
        if p.along_axes and p.optional
        for ax in p.axis_names(len(shape))
    }


def resets(layer: Layer, params: dict, shape: tuple) -> dict[str, list[str]]:
    """For each choice (enum or bool) whose value decides later parameters' defaults (activation's alpha and beta
    follow its type), the query keys of those parameters: a change of the choice lets them take their new
    defaults, as a fresh page of that choice would (CLIP's 0 and 0 left from RELU would draw zeros)."""
    out = {}
    for i, p in enumerate(layer.params):
        if not p.of.options(p):
            continue
        later = layer.params[i + 1 :]

        def defaults(value) -> dict:
            now, found = {**params, p.name: value}, {}
            for q in later:
                try:
                    now[q.name] = found[q.name] = q.default_for(now, shape)
                except Exception:  # noqa: BLE001 - a default that needs a parameter not known yet
                    now[q.name] = found[q.name] = None
            return found

        each = [defaults(v) for v in p.of.options(p)]
        moved = [q for q in later if any(not same_value(d[q.name], each[0][q.name]) for d in each[1:])]
        if moved:
            out[key(layer, p)] = [k for q in moved for k in param_keys(layer, q, shape)]
    return out


def model_name(given) -> str:
    """A link's model name (the model page's `model=`, a chain's `input.model=`) as the pages say it: 80 characters
    at most, model.onnx where it gives none."""
    return str(given or "model.onnx")[:80]
