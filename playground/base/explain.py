"""The input cells an output cell reads, as a heatmap of the input draws them (per slice), for any layer that
declares `Layer.reads`.

Pure functions (no Streamlit). A layer's own explanations live in its file (`Layer.explain`,
`Layer.cell`, `Layer.section`).
"""

from __future__ import annotations

import math


def drawn_cells(reads, input_shape: tuple) -> dict[int, list[tuple[int, int]]]:
    """Full input indices as the input heatmap draws them: slice index (the leading axes' row-major order) -> (h, w) cells,
    each once; cells outside the input's h and w are padding (drawn dashed), an index outside its other axes
    (depth padding, another batch) has no slice to be drawn in."""
    lead = tuple(int(d) for d in input_shape[:-2])
    place = [math.prod(lead[i + 1 :]) for i in range(len(lead))]  # a slice's index, as np.ravel_multi_index
    out: dict[int, dict[tuple[int, int], None]] = {}  # a dict of cells: each once, in the order read
    for *head, h, w in reads:
        if all(0 <= v < n for v, n in zip(head, lead)):
            out.setdefault(sum(int(v) * k for v, k in zip(head, place)), {})[int(h), int(w)] = None
    return {s: list(cells) for s, cells in out.items()}
