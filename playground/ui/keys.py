"""The page's keys, without Streamlit: widget keys (each one is its URL query parameter), the containers
`hide` can hide, the tabs' names, and the CSS selector Streamlit gives a keyed element (for the page's own
scripts and the browser tests).

Key scheme (stable, derived from names, so links and presenter mode can address every control):

    "{layer}.input.{name}"       input controls: kind, 3d, N, C, D, H, W, low, high, seed, value, image
                                 (serve.protocol.input_key, which names the input too for a layer of several)
    "view.presenter"             presenter mode, shared by every page (serve.protocol.VIEW_PRESENTER)
    "{layer}.download.{what}"    download buttons (script, onnx, input/output .npy and .csv)
    "{layer}.tabs"               the tabs under the stage (of those only the open one is drawn)

The input controls and the presenter toggle hold state of their own and are bound to the page URL
(widgets.STATE, bind="query-params"): the query parameter is the widget key, spelled by serve.protocol as every
key a link holds is: `LAYER.PARAM[.AXIS]` (query_keys), `LAYER.compare`, `LAYER.cell.AXIS`, the input's, the
view's; ui.links checks all of them when a page opens.

Containers keyed "ctl.{layer}.{name}" wrap what `hide` can hide (Streamlit gives a keyed element the CSS
class `st-key-` + the key with every character outside [A-Za-z0-9_-] as "-": key_selector).
Keys starting with "_" are plain session state, not widgets (state.PageState).
"""

from __future__ import annotations

import re

VIEW_CELL_RANGE = (8, 160)  # view.cell's px
COMPARE_OFF = "off"  # no second precision (links of earlier releases spell it)
SPEC_TAB = "Spec example"  # the tab under the stage with the example's verdict, note and documented table


def key(layer: str, *parts) -> str:
    return ".".join([layer, *map(str, parts)])


def key_selector(key: str) -> str:
    """CSS selector of the element container Streamlit draws for a widget/container `key`:
    Streamlit (1.67) adds the class `st-key-<key>` with every character outside [A-Za-z0-9_-]
    replaced by "-" (so "convolution.stride_nd.h" -> ".st-key-convolution-stride_nd-h")."""
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def control_key(layer: str, name: str) -> str:
    """The key of the container around a control that `?hide=name` can hide."""
    return f"ctl.{layer}.{name}"


ONNX, NODE, MODEL = "onnx", "node", "model"  # a model node's link keys (ui.models)
REAL = "real"  # real=1: the stage opens on the tensor the node reads in its model (the model page's links)
