"""The home page's three ways in, drawn: a layer (an input, the window one output cell reads, the output), a chain
(tensors in a flow, the layers TensorRT fused in one dashed box) and a model (a graph whose nodes agree, differ or
open on no layer). Small SVGs written here: nothing to fetch, the same on every screen."""

from __future__ import annotations

import base64

# The stage's sequential scale (heatmap.js SEQUENTIAL) at 0, 1/7, …, 1, as it paints them: a tensor's colours are
# the same here as on every page (tests/js/colour_rule.test.mjs holds them to heatmap.js)
VIRIDIS = ("#440154", "#3f2f73", "#375b8b", "#287f8c", "#32a180", "#55c168", "#a2d648", "#fde725")
INK, MUTED = "#111827", "#6b7280"


def _grid(x: int, y: int, values: list[list[int]], cell: int = 16) -> str:
    return "".join(
        f'<rect x="{x + j * cell}" y="{y + i * cell}" width="{cell}" height="{cell}" fill="{VIRIDIS[v % 8]}" '
        'stroke="#ffffff" stroke-width="1"/>'
        for i, row in enumerate(values)
        for j, v in enumerate(row)
    )


def _arrow(x1: int, y1: int, x2: int, y2: int) -> str:
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{MUTED}" stroke-width="2" marker-end="url(#pg-arrow)"/>'
    )


def _svg(body: str, label: str) -> str:
    """The picture as an image (st.html keeps an <img> and drops inline SVG), its words as the alt text."""
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 110" font-family="sans-serif">'
        '<defs><marker id="pg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
        f'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{MUTED}"/></marker></defs>{body}</svg>'
    )
    data = base64.b64encode(svg.encode()).decode()
    return f'<img src="data:image/svg+xml;base64,{data}" alt="{label}" style="width: 100%; max-height: 150px">'


def layer() -> str:
    ramp = [[(i + j) % 8 for j in range(5)] for i in range(5)]
    out = [[(2 * (i + j) + 1) % 8 for j in range(3)] for i in range(3)]
    return _svg(
        _grid(10, 15, ramp)
        + '<rect x="10" y="15" width="48" height="48" fill="none" stroke="#000" stroke-width="2.5"/>'
        + _arrow(100, 55, 140, 55)
        + _grid(160, 31, out)
        + '<rect x="160" y="31" width="16" height="16" fill="none" stroke="#ff6600" stroke-width="2.5"/>',
        "an input, the window one output cell reads, and the output",
    )


def chain() -> str:
    tensors = "".join(
        _grid(x, 40, [[(x // 20 + i + j) % 8 for j in range(2)] for i in range(2)], 12) for x in (8, 96, 184)
    )
    boxes = "".join(
        f'<rect x="{x}" y="44" width="34" height="16" rx="3" fill="#ffffff" stroke="{INK}"/>'
        f'<text x="{x + 17}" y="56" font-size="10" text-anchor="middle" fill="{INK}">{name}</text>'
        for x, name in ((46, "Conv"), (136, "ReLU"))
    )
    return _svg(
        tensors
        + _arrow(34, 52, 44, 52)
        + _arrow(80, 52, 94, 52)
        + _arrow(122, 52, 134, 52)
        + _arrow(170, 52, 182, 52)
        + boxes
        + f'<rect x="40" y="30" width="136" height="44" rx="8" fill="none" stroke="{INK}" stroke-dasharray="5 3"/>'
        + f'<text x="108" y="92" font-size="11" text-anchor="middle" fill="{MUTED}">one engine layer</text>',
        "a chain of tensors; the layers TensorRT fused in one dashed box",
    )


def model() -> str:
    nodes = {"a": (100, 8, "#dcfce7"), "b": (40, 44, "#dcfce7"), "c": (160, 44, "#fee2e2"), "d": (100, 82, "#e5e7eb")}
    edges = (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"))
    lines = "".join(_arrow(nodes[s][0] + 20, nodes[s][1] + 18, nodes[t][0] + 20, nodes[t][1] - 1) for s, t in edges)
    boxes = "".join(
        f'<rect x="{x}" y="{y}" width="40" height="18" rx="4" fill="{fill}" stroke="{INK}"/>'
        for x, y, fill in nodes.values()
    )
    return _svg(lines + boxes, "a model's graph: nodes that agree (green), differ (red) or open on no layer (grey)")


PICTURES = (layer(), chain(), model())
