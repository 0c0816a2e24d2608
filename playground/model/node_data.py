"""A model's verdicts as Model Explorer's node data (the JSON its node data provider reads, `ModelNodeData`): per
graph id, `results` keyed by node id, each `{"value": max |diff|, "bgColor": …}`: the node's layer reference against
ONNX Runtime on its real input, green where they agree, red where they differ (agreement is judged against the
output's magnitude, so the colour says it, not a fixed range of values). The graph id is the model's graph name
(`<main>` where it has none, as Model Explorer's ONNX adapter names it); a node id is the node's name as listed
(`OP_INDEX` for a node the file leaves unnamed). A node no layer computes, or not compared, has no result."""

from __future__ import annotations

import math

AGREES, DIFFERS = "#c8e6c9", "#ffcdd2"


def node_data(answer: dict) -> dict:
    """`{graph id: {"results": {node id: {"value": max |diff|, "bgColor": …}}}}` of a `model` answer."""
    results = {
        n["name"]: {"value": float(n["max_abs_diff"]), "bgColor": AGREES if n["agrees"] else DIFFERS}
        for n in answer["nodes"]
        if n.get("layer")
        and n.get("agrees") is not None
        and isinstance(n.get("max_abs_diff"), (int, float))
        and math.isfinite(n["max_abs_diff"])
    }
    return {answer.get("graph") or "<main>": {"results": results}}
