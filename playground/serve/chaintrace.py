"""A chain's read maps, for the stage's hover trace, and the kernel an engine layer's box is labelled with.

The browser composes a trace from the read maps (trace.js): a hovered cell's windows in its sources, theirs in
theirs, back to the input, and the cells downstream that read it. The maps are each layer's declared `reads`, the
same windows a layer page outlines, kept by geometry (a value change makes none again). A window that is every cell
of its bounds (a convolution's, a group's) travels as its region, a layer whose every cell reads the same cell of
each input as "same", and the maps are bounded: a layer of more than TRACE_CELLS output cells, or a chain whose
windows would list more than TRACE_INTS numbers, sends no map for the layers past the bound, and says so
(`stopped`). They follow an answer with the engine's verdict, off a key press's way.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math

from ..base.box import Box
from ..base.memo import Memo
from ..network import chain as ch
from ..trt.engine import canonical

TRACE_CELLS = 16_384  # output cells a layer's map covers at most (a 1×3×64×64 tensor is 12,288)
TRACE_INTS = 200_000  # numbers the chain's maps list together (about 1 MB of JSON): a whole window is a region
_MAPS = Memo(256)  # a layer's map by its geometry: its name, parameters and input shapes


def kernel_of(engine_layer: dict) -> str:
    """The kernel an engine layer runs, as the builder named it: its tactic, else (a stub standing for a library's
    kernel, as Myelin's `__myelin_CASK_STUB`) its type and name."""
    tactic = engine_layer.get("tactic") or ""
    if tactic and "STUB" not in tactic.upper():
        return tactic
    name, kind = engine_layer.get("name", ""), engine_layer.get("type") or ""
    return f"{name} ({kind})" if kind else name


def region(cells) -> list | dict:
    """A window as the trace reads it: {"lo", "hi"} (inclusive corners) where it is every cell of its bounds in
    row-major order (a Box always is), else its cells."""
    if isinstance(cells, Box):
        return {"lo": list(cells.lo), "hi": list(cells.hi)}
    cells = [tuple(int(v) for v in c) for c in cells]
    if len(cells) < 2:
        return [list(c) for c in cells]
    lo, hi = [min(a) for a in zip(*cells)], [max(a) for a in zip(*cells)]
    if math.prod(h - lo_ + 1 for lo_, h in zip(lo, hi)) == len(cells) and cells == list(
        itertools.product(*(range(lo_, h + 1) for lo_, h in zip(lo, hi)))
    ):
        return {"lo": lo, "hi": hi}
    return [list(c) for c in cells]


def _ints(window) -> int:
    """The numbers a window lists: a region's two corners, or its cells'."""
    if isinstance(window, dict) and "lo" in window:
        return 2 * len(window["lo"])
    if isinstance(window, dict):  # {input: window}
        return sum(_ints(w) for w in window.values())
    return sum(len(c) for c in window)


def layer_map(link: ch.Link) -> dict:
    """{"same": True} where every output cell reads its own cell of each input, else {"reads": {"n,c,h,w": {input:
    window}}, "ints": the numbers it lists}; kept by the layer's geometry."""
    arg = link.layer.shape_arg(link.shapes)
    key = hashlib.blake2b(
        json.dumps(
            [link.layer.name, {k: canonical(v) for k, v in link.params.items()}, repr(arg)], sort_keys=True
        ).encode(),
        digest_size=16,
    ).hexdigest()

    def make() -> dict:
        first, reads, same = link.layer.inputs[0].name, {}, True
        for index in itertools.product(*(range(d) for d in link.output_shape)):
            read = link.layer.reads(link.params, arg, index)
            by_input = read if isinstance(read, dict) else {first: read}
            windows = {n: region(w) for n, w in by_input.items()}
            same = same and all(w == [list(index)] for w in windows.values())
            reads[",".join(map(str, index))] = windows
        return {"same": True} if same else {"reads": reads, "ints": sum(_ints(w) for w in reads.values())}

    return _MAPS.get_or_make(key, make)


def trace_maps(chain: ch.Chain) -> dict:
    """{key: {"sources": {input: source key}, and "reads": {"n,c,h,w": {input: window}} or "same": true}} for each
    layer within the bounds, {"sources", "stopped": why} for the rest (the browser traces no further than a map it
    holds). A layer without declared reads computes each cell from the same cell of its first input (a pointwise
    layer): "same"."""
    out: dict[str, dict] = {}
    ints = 0
    for link in chain.links:
        cells = math.prod(link.output_shape)
        entry: dict = {"sources": dict(link.sources)}
        if link.layer.reads is None:
            out[link.key] = entry | {"same": True}
            continue
        if cells > TRACE_CELLS:
            out[link.key] = entry | {
                "stopped": f"{link.key} has {cells:,} cells, more than the {TRACE_CELLS:,} a trace maps"
            }
            continue
        made = layer_map(link)
        ints += made.get("ints", 0)
        if ints > TRACE_INTS:
            out[link.key] = entry | {
                "stopped": f"the chain's read maps up to {link.key} list more than {TRACE_INTS:,} numbers"
            }
            continue
        out[link.key] = entry | {k: v for k, v in made.items() if k != "ints"}
    return out
