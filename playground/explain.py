"""The picked output cell on the stage, for any layer that declares `Layer.reads`: which input cells to outline
(per drawn slice), every output cell's cells for hover outlines, and the slice a cell lies in.

Pure functions (NumPy, no Streamlit). A layer's own explanations live in its file (`Layer.explain`,
`Layer.cell`, `Layer.section`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

HOVER_MAX_CELLS = 256  # output cells whose windows go to the browser for hover outlines (spec-sized outputs)
SMALL_ARRAY = 16  # arrays up to this size are part of the geometry hover outlines are remembered by


def drawn_cells(reads, input_shape: tuple) -> dict[int, list[tuple[int, int]]]:
    """Full input indices as the input heatmap draws them: slice index (plots.slices order) -> (h, w) cells,
    each once; cells outside the input's h and w are padding (drawn dashed), an index outside its other axes
    (depth padding, another batch) has no slice to be drawn in."""
    lead = tuple(int(d) for d in input_shape[:-2])
    place = [math.prod(lead[i + 1:]) for i in range(len(lead))]  # a slice's index, as np.ravel_multi_index
    out: dict[int, dict[tuple[int, int], None]] = {}  # a dict of cells: each once, in the order read
    for *head, h, w in reads:
        if all(0 <= v < n for v, n in zip(head, lead)):
            out.setdefault(sum(int(v) * k for v, k in zip(head, place)), {})[int(h), int(w)] = None
    return {s: list(cells) for s, cells in out.items()}


@dataclass(frozen=True)
class _Small:
    """A small array as a cache key holds it."""
    shape: tuple
    values: tuple


def hover_windows(layer, params: dict, input_shape: tuple, output_shape: tuple) -> dict[str, list[list[int]]] | None:
    """Every output cell's input cells, for outlining them on hover: "n,c,[d,]h,w" -> [[input slice, h, w], ...].
    None for outputs too large to send. Geometry only, so it is remembered by the parameters that are not large
    arrays (a kernel's shape follows from the others; a few values, like Resize's scales, may be geometry)."""
    if layer.reads is None or int(np.prod(output_shape)) > HOVER_MAX_CELLS:
        return None
    geometry = tuple((k, _Small(v.shape, tuple(v.ravel().tolist())) if isinstance(v, np.ndarray) else v)
                     for k, v in params.items() if not isinstance(v, np.ndarray) or v.size <= SMALL_ARRAY)
    return _hover_windows(layer.name, geometry, tuple(int(d) for d in input_shape), tuple(output_shape))


@functools.lru_cache(maxsize=64)
def _hover_windows(name: str, geometry: tuple, shape: tuple, out_shape: tuple) -> dict[str, list[list[int]]]:
    from .layers import get_layer
    reads = get_layer(name).reads
    params = {k: np.reshape(v.values, v.shape) if isinstance(v, _Small) else v for k, v in geometry}
    return {",".join(map(str, index)): [[s, h, w] for s, cells in drawn_cells(reads(params, shape, index), shape).items()
                                        for h, w in cells]
            for index in np.ndindex(*out_shape)}


def output_slice_index(out_index, out_shape) -> int:
    """Position of the slice holding out_index in plots.slices order."""
    lead = tuple(out_shape[:-2])
    return int(np.ravel_multi_index(tuple(out_index[:-2]), lead)) if lead else 0
