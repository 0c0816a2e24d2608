"""A chain's read maps, for the stage's hover trace, and the kernel an engine layer's box is labelled with.

The browser composes a trace from the read maps (trace.js): a hovered cell's windows in its sources, theirs in
theirs, back to the input, and the cells downstream that read it. The maps are each layer's declared `reads`, the
same windows a layer page outlines (protocol's read maps, kept by geometry: a value change makes none again), bounded
so that an answer never carries a huge list: a layer of more than TRACE_CELLS output cells, or a chain whose windows
would list more than TRACE_INTS numbers, sends no map for the layers past the bound, and says so (`stopped`).
"""

from __future__ import annotations

import itertools
import math

from .. import chain as ch
from . import protocol

TRACE_CELLS = 16_384  # output cells a layer's map covers at most (a 1×3×64×64 tensor is 12,288)
TRACE_INTS = 400_000  # numbers the chain's maps list together (about 2 MB of JSON): a whole window is a region


def kernel_of(engine_layer: dict) -> str:
    """The kernel an engine layer runs, as the builder named it: its tactic, else (a stub standing for a library's
    kernel, as Myelin's `__myelin_CASK_STUB`) its type and name."""
    tactic = engine_layer.get("tactic") or ""
    if tactic and "STUB" not in tactic.upper():
        return tactic
    name, kind = engine_layer.get("name", ""), engine_layer.get("type") or ""
    return f"{name} ({kind})" if kind else name


def _ints(window) -> int:
    """The numbers a window lists: a region's two corners, or its cells'."""
    if isinstance(window, dict) and "lo" in window:
        return 2 * len(window["lo"])
    if isinstance(window, dict):  # {input: window}
        return sum(_ints(w) for w in window.values())
    return sum(len(c) for c in window)


def trace_maps(chain: ch.Chain) -> dict:
    """{key: {"sources": {input: source key}, "reads": {"n,c,h,w": window or {input: window}}}} for each layer
    within the bounds, and {"stopped": why} for the rest (the browser traces no further than a map it holds).
    A window is protocol.window's: the cells of the input a cell reads, or their region; a layer without declared
    reads computes each cell from the same cell of its first input (a pointwise layer), sent as no map at all
    ("same": true)."""
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
        indices = tuple(itertools.product(*(range(d) for d in link.output_shape)))
        reads = protocol._reads(link.layer, link.params, link.layer.shape_arg(link.shapes), indices)
        if not isinstance(next(iter(reads.values())), dict):  # one input: named, as a layer of several's are
            reads = {k: {link.layer.inputs[0].name: w} for k, w in reads.items()}
        ints += sum(_ints(w) for w in reads.values())
        if ints > TRACE_INTS:
            out[link.key] = entry | {
                "stopped": f"the chain's read maps up to {link.key} list more than {TRACE_INTS:,} numbers"
            }
            continue
        out[link.key] = entry | {"reads": reads}
    return out
